#include "modeler/structure/base_values.h"

#include <string>
#include <utility>

namespace lumos::modeler::structure {

StatusOr<Setup> ParseBaseValues(std::string_view text) {
  Setup setup;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string_view item =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const std::string quoted = "--base '" + std::string(item) + "'";
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos) {
      return Status::Error(quoted + ": expected KEY=N");
    }
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    Value* field = SetupField(&setup, key);
    if (field == nullptr) {
      std::string keys;
      for (std::string_view k : SetupKeys()) {
        if (!keys.empty()) keys += ", ";
        keys += k;
      }
      std::string message = quoted;
      message += ": unknown key '";
      message += key;
      message += "' (keys: ";
      message += keys;
      message += ")";
      return Status::Error(std::move(message));
    }
    int64_t number = 0;
    bool ok = !value.empty() && value.size() <= 15;  // Below 2^53: exact in any JSON reader.
    for (char c : value) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) number = number * 10 + (c - '0');
    }
    if (!ok || number <= 0) {
      return Status::Error(quoted + ": '" + std::string(value) +
                           "' is not a whole positive number");
    }
    if (field->known()) return Status::Error(quoted + ": " + std::string(key) + " given twice");
    field->value = number;
    field->origin = Origin::kGiven;
    field->how = "--base";
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return setup;
}

}  // namespace lumos::modeler::structure
