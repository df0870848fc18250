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

IterationMarker::IterationMarker(std::string pattern) : pattern_(std::move(pattern)) {
  if (!pattern_.empty() && pattern_[0] != '*' && pattern_[0] != '?') first_ = pattern_[0];
}

}  // namespace lumos::agent::control
