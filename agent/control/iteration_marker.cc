#include "agent/control/iteration_marker.h"

#include <utility>

namespace lumos::agent::control {

bool GlobMatch(std::string_view pattern, std::string_view text) {
  // Greedy with one backtrack point (the last '*'): linear in practice, O(p * t) at worst, and
  // both are short (patterns are at most 256 bytes, names a few dozen).
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<uint64_t> TrailingNumber(std::string_view text) {
  size_t begin = text.size();
  while (begin > 0 && text[begin - 1] >= '0' && text[begin - 1] <= '9') --begin;
  if (begin == text.size() || text.size() - begin > 18) return std::nullopt;  // < 2^63.
  uint64_t value = 0;
  for (size_t i = begin; i < text.size(); ++i) value = value * 10 + (text[i] - '0');
  return value;
}

namespace {

// The code point a UTF-8 string starts with; 0 when it does not start with a valid one.
char32_t FirstCodePoint(std::string_view text) {
  if (text.empty()) return 0;
  const auto lead = static_cast<unsigned char>(text[0]);
  if (lead < 0x80) return lead;
  const size_t length = lead >= 0xF0 && lead <= 0xF4   ? 4
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xC2 && lead <= 0xDF ? 2
                                                       : 0;
  if (length == 0 || text.size() < length) return 0;
  char32_t code = lead & (0xFF >> (length + 1));
  for (size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[i]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  const char32_t smallest = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000;
  if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return code;
}

}  // namespace

IterationMarker::IterationMarker(std::string pattern) : pattern_(std::move(pattern)) {
  if (!pattern_.empty() && pattern_[0] != '*' && pattern_[0] != '?') {
    first_ = pattern_[0];
    first_wide_ = FirstCodePoint(pattern_);
  }
}

}  // namespace lumos::agent::control
