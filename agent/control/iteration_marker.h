// Design: which NVTX ranges mark an iteration (LUMOS_ITERATION_MARKER, a glob with '*' and '?':
// PyTorch's "ProfilerStep*", a user's "step"), and the iteration's index: the number at the end
// of the range's name when it has one ("ProfilerStep#120" is 120: PyTorch numbers its steps the
// same on every rank), else the count of marker ranges seen by this process. A window that starts
// at "the next iteration whose index is a multiple of N" relies on that index agreeing across the
// ranks of a job: true for numbered names, and for counted ones when every rank runs the same
// loop from its start.
// Hot path: MayMatch() is one byte compare (the pattern's first literal byte), so an NVTX call of
// a dormant agent stays within a few ns; Matches() runs only on the rare candidates. Wide names
// (nvtxRangePushW, NVTX_MESSAGE_TYPE_UNICODE): MayMatchWide() compares the first wchar_t with
// the pattern's first code point; the candidates are then matched as UTF-8 (the pattern is
// bytes: a '?' matches one byte of a non-ASCII character).
// Threading: immutable after construction; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lumos::agent::control {

// '*' matches any run of bytes (also none), '?' any one byte; everything else itself.
bool GlobMatch(std::string_view pattern, std::string_view text);

// The decimal number that ends `text` ("ProfilerStep#12" -> 12, "step 7" -> 7); nullopt when
// it does not end in a digit or the number does not fit in 63 bits.
std::optional<uint64_t> TrailingNumber(std::string_view text);

class IterationMarker {
 public:
  IterationMarker() = default;  // Matches nothing.
  explicit IterationMarker(std::string pattern);

  bool empty() const { return pattern_.empty(); }
  const std::string& pattern() const { return pattern_; }

  // False when `text` cannot match (its first byte differs from the pattern's literal first
  // byte); true means "ask Matches".
  bool MayMatch(const char* text) const {
    return text != nullptr && !pattern_.empty() && (first_ == 0 || text[0] == first_);
  }
  // The same for a wide (UTF-32) name: its first character against the pattern's first code
  // point.
  bool MayMatchWide(const wchar_t* text) const {
    return text != nullptr && !pattern_.empty() &&
           (first_wide_ == 0 || static_cast<char32_t>(text[0]) == first_wide_);
  }
  bool Matches(std::string_view text) const { return !empty() && GlobMatch(pattern_, text); }

 private:
  std::string pattern_;
  char first_ = 0;  // The pattern's first byte when literal; 0 when it starts with '*' or '?'.
  // The pattern's first code point when literal (decoded from UTF-8); 0 when it starts with a
  // wildcard or is not valid UTF-8 there (every wide name is then a candidate).
  char32_t first_wide_ = 0;
};

}  // namespace lumos::agent::control
