#include "agent/core/env_lookup.h"

#include <unistd.h>  // environ

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace lumos::agent {

EnvLookup ProcessEnvLookup() {
  return [](const char* name) -> std::optional<std::string> {
    // getenv is only ever reached from here, at start, before the agent's threads exist.
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::vector<std::string> ProcessEnvNames(std::string_view prefix) {
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (text.substr(0, prefix.size()) != prefix) continue;
    names.emplace_back(text.substr(0, text.find('=')));
  }
  return names;
}

EnvLookup MapEnvLookup(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

namespace internal {

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::string ToLowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<uint64_t> ParseDecimal(std::string_view text, int decimals) {
  text = TrimSpaces(text);
  if (decimals < 0 || decimals > 9) return std::nullopt;
  const size_t point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (whole.empty() || whole.size() > 19 || (point != std::string_view::npos && fraction.empty()) ||
      fraction.size() > static_cast<size_t>(decimals)) {
    return std::nullopt;
  }
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  uint64_t value = 0;
  for (char c : whole) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  for (int i = 0; i < decimals; ++i) {
    const size_t at = static_cast<size_t>(i);
    const char c = at < fraction.size() ? fraction[at] : '0';
    if (c < '0' || c > '9') return std::nullopt;
    if (value > kLimit / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > kLimit) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  text = TrimSpaces(text);
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 19) return std::nullopt;  // 19 digits hold any int64.
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  // INT64_MIN itself is rejected too: no variable of ours needs it.
  if (value > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
}

std::string QuoteForLog(std::string_view text) {
  constexpr size_t kMaxBytes = 64;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMaxBytes; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    }
  }
  if (text.size() > kMaxBytes) out += "...";
  out += "'";
  return out;
}

}  // namespace internal
}  // namespace lumos::agent
