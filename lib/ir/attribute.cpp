#include "lib/ir/attribute.h"

#include <fmt/format.h>

namespace mt {

AttrType attr_type(const Attribute& value) { return static_cast<AttrType>(value.index()); }

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::integer: return "int";
    case AttrType::real: return "float";
    case AttrType::string: return "string";
    case AttrType::integers: return "ints";
    case AttrType::reals: return "floats";
  }
  return "?";
}

std::string attr_str(const Attribute& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>)
          return fmt::format("[{}]", fmt::join(v, ","));
        else
          return fmt::format("{}", v);
      },
      value);
}

}  // namespace mt
