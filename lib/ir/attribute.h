// Node attributes: a small typed variant (int, float, string, int list, float list).
// The op registry states which type each attribute of each op has.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace mt {

enum class AttrType { integer, real, string, integers, reals };

using Attribute = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;
using Attributes = std::map<std::string, Attribute, std::less<>>;

AttrType attr_type(const Attribute& value);
std::string_view attr_type_name(AttrType type);  // "int", "float", "string", "ints", "floats"
std::string attr_str(const Attribute& value);    // for logs and reports

}  // namespace mt
