#include "lib/bench/text_table.h"

#include <algorithm>

namespace mt::bench {

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(const std::string& indent) const {
  std::vector<size_t> widths;
  for (const Column& column : columns_) widths.push_back(column.title.size());
  for (const auto& row : rows_)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());

  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      const size_t pad = widths[c] - cells[c].size();
      const bool last = c + 1 == cells.size();
      if (c > 0) text += "  ";
      if (columns_[c].align == Align::right) text.append(pad, ' ');
      text += cells[c];
      if (columns_[c].align == Align::left && !last) text.append(pad, ' ');
    }
    return text + "\n";
  };
  std::vector<std::string> titles;
  for (const Column& column : columns_) titles.push_back(column.title);
  std::string text = line(titles);
  for (const auto& row : rows_) text += line(row);
  return text;
}

}  // namespace mt::bench
