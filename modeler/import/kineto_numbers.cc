#include "modeler/import/kineto_numbers.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace lumos::modeler::kineto {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Whether the decimal digits [d, d + n) (no leading zero) exceed `limit` (same form).
bool Exceeds(const char* d, size_t n, const char* limit) {
  size_t m = std::strlen(limit);
  return n != m ? n > m : std::memcmp(d, limit, n) > 0;
}

}  // namespace

NumberScan MarkOutOfRangeNumbers(char* data, size_t size) {
  NumberScan scan;
  size_t i = 0;
  while (i < size) {
    const char c = data[i];
    if (c == '"') {  // Skip the string, escapes included.
      ++i;
      while (i < size && data[i] != '"') i += data[i] == '\\' ? 2 : 1;
      ++i;
      continue;
    }
    if (c != '-' && !IsDigit(c)) {
      ++i;
      continue;
    }
    // A number: -? int frac? exp?, as RFC 8259 has it.
    const size_t start = i;
    size_t j = i + (c == '-' ? 1 : 0);
    const size_t int_start = j;
    while (j < size && IsDigit(data[j])) ++j;
    const size_t int_digits = j - int_start;
    bool valid = int_digits > 0 && !(data[int_start] == '0' && int_digits > 1);
    bool integer = true;
    if (j < size && data[j] == '.') {
      integer = false;
      const size_t from = ++j;
      while (j < size && IsDigit(data[j])) ++j;
      valid = valid && j > from;
    }
    if (j < size && (data[j] == 'e' || data[j] == 'E')) {
      integer = false;
      ++j;
      if (j < size && (data[j] == '+' || data[j] == '-')) ++j;
      const size_t from = j;
      while (j < size && IsDigit(data[j])) ++j;
      valid = valid && j > from;
    }
    if (!valid) {
      scan.malformed = true;
      scan.malformed_offset = start;
      return scan;
    }
    bool out_of_range = false;
    if (integer) {
      out_of_range = c == '-' ? Exceeds(data + int_start, int_digits, "9223372036854775808")
                              : Exceeds(data + int_start, int_digits, "18446744073709551615");
    } else {
      const std::string token(data + start, j - start);
      out_of_range = std::isinf(std::strtod(token.c_str(), nullptr));
    }
    if (out_of_range) {  // Always 5 bytes or more ("1e309"): room for the quotes.
      scan.out_of_range.push_back(start);
      data[start] = '"';
      std::memset(data + start + 1, kOutOfRangeByte, j - start - 2);
      data[j - 1] = '"';
    }
    i = j;
  }
  return scan;
}

bool FindOutOfRange(dom::element value, std::string* path) {
  switch (value.type()) {
    case dom::element_type::STRING: {
      std::string_view s = AsString(value);
      if (s.empty()) return false;
      for (char ch : s) {
        if (ch != kOutOfRangeByte) return false;
      }
      path->clear();
      return true;
    }
    case dom::element_type::OBJECT: {
      dom::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) return false;
      for (auto [key, field] : object) {
        if (FindOutOfRange(field, path)) {
          *path = std::string(key) + (path->empty() || (*path)[0] == '[' ? "" : ".") + *path;
          return true;
        }
      }
      return false;
    }
    case dom::element_type::ARRAY: {
      dom::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) return false;
      size_t index = 0;
      for (dom::element item : array) {
        if (FindOutOfRange(item, path)) {
          *path = "[" + std::to_string(index) + "]" +
                  (path->empty() || (*path)[0] == '[' ? "" : ".") + *path;
          return true;
        }
        ++index;
      }
      return false;
    }
    default:
      return false;
  }
}

}  // namespace lumos::modeler::kineto
