// Design: the regular expressions users give on the command line (--iteration, --scale
// kernel:REGEX, synth's kernel scales), matched against names read from traces that may come
// from anywhere (a kernel name 100,000 characters long is legal). RE2 (Perl-like syntax, no
// backreferences or look-around): matching is linear in the name and never recurses on it, so a
// long name cannot overflow the stack the way std::regex's backtracking executor does. A pattern
// longer than kMaxPatternChars or compiling to more than kMaxProgramBytes is refused.
// Threading: a compiled NamePattern is immutable and may be searched from any thread; copies
// share one compiled program.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace re2 {
class RE2;
}

namespace lumos::modeler {

class NamePattern {
 public:
  static constexpr size_t kMaxPatternChars = 4096;
  static constexpr int64_t kMaxProgramBytes = 8 << 20;

  NamePattern() = default;  // Matches nothing until assigned a compiled one.

  // `text` compiled; an error (without the option's name: callers prefix it) when it is empty,
  // too long, not valid RE2 syntax or too big a program.
  static StatusOr<NamePattern> Compile(const std::string& text, bool ignore_case = false);

  // Whether the pattern matches anywhere in `name` (a search, not a full match).
  bool Search(std::string_view name) const;

  const std::string& text() const { return text_; }
  bool empty() const { return regex_ == nullptr; }

 private:
  std::shared_ptr<const re2::RE2> regex_;
  std::string text_;
};

// The syntax line every option that takes a pattern shows in its help.
inline constexpr const char* kPatternSyntax =
    "RE2 syntax (Perl-like; no backreferences or look-around), searched anywhere in the name";

}  // namespace lumos::modeler
