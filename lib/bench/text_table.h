// A table aligned for a terminal: columns as wide as their widest cell, text left-aligned and
// numbers right-aligned, two spaces between columns.
#pragma once

#include <string>
#include <vector>

namespace mt::bench {

class TextTable {
 public:
  enum class Align { left, right };
  struct Column {
    std::string title;
    Align align = Align::right;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
  // A row with fewer cells than columns is padded with empty cells; extra cells are an error
  // of the caller and are dropped.
  void add_row(std::vector<std::string> cells);
  // Header line, then one line per row, each prefixed with `indent` and ending in '\n'.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mt::bench
