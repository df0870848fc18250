// User patterns, compiled by RE2; see name_pattern.h.
#include "modeler/io/name_pattern.h"

#include <re2/re2.h>

namespace lumos::modeler {

StatusOr<NamePattern> NamePattern::Compile(const std::string& text, bool ignore_case) {
  if (text.empty()) return Status::Error("an empty pattern");
  if (text.size() > kMaxPatternChars) {
    return Status::Error("a pattern of " + std::to_string(text.size()) + " characters (at most " +
                         std::to_string(kMaxPatternChars) + ")");
  }
  RE2::Options options;
  options.set_log_errors(false);  // The error goes to the caller, once, not to stderr.
  options.set_case_sensitive(!ignore_case);
  options.set_max_mem(kMaxProgramBytes);
  auto regex = std::make_shared<const RE2>(text, options);
  if (!regex->ok()) {
    if (regex->error_code() == RE2::ErrorPatternTooLarge) {
      return Status::Error("the pattern compiles to more than " +
                           std::to_string(kMaxProgramBytes >> 20) + " MiB (" + regex->error() +
                           ")");
    }
    return Status::Error("not a valid regular expression (RE2 syntax): " + regex->error());
  }
  NamePattern out;
  out.regex_ = std::move(regex);
  out.text_ = text;
  return out;
}

bool NamePattern::Search(std::string_view name) const {
  if (regex_ == nullptr) return false;
  return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *regex_);
}

}  // namespace lumos::modeler
