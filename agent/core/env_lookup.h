// Design: how the agent reads its environment. The agent reads LUMOS_* (and a few launcher)
// variables exactly once, at start, through an EnvLookup, so that tests pass a map and
// production passes getenv (STYLE.md 6.3: no getenv anywhere else). The parsers here are strict
// (STYLE.md 3.4): a value is either wholly valid or rejected, never half-read like atoi().
// Not for the hot path (they allocate); start-up only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/memory_budget.h"

namespace lumos::agent {

// Returns the value of an environment variable, or nullopt when it is not set.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

// The process environment (getenv). Call it once, at start.
EnvLookup ProcessEnvLookup();
// A fixed map (tests, tools).
EnvLookup MapEnvLookup(std::map<std::string, std::string> values);
// The names of the process's environment variables that start with `prefix` (environ). Call it
// once, at start, like ProcessEnvLookup.
std::vector<std::string> ProcessEnvNames(std::string_view prefix = "LUMOS_");

namespace internal {

// A byte size ("64K", "2GB"): base/memory_budget.h's, shared with the modeler's --max-memory.
using ::lumos::ParseSizeBytes;
// A decimal integer with an optional leading '-'; nullopt when malformed or out of range.
std::optional<int64_t> ParseInt64(std::string_view text);
// A non-negative decimal "D[.F]" (digits, optionally a point and at most `decimals` digits)
// scaled by 10^decimals: ParseDecimal("1.5", 3) == 1500. nullopt when malformed (a sign, an
// exponent, ".5", "5.", more fraction digits than `decimals`) or above 2^62. decimals <= 9.
std::optional<uint64_t> ParseDecimal(std::string_view text, int decimals);
// Printable for a log line: at most 64 bytes, control and non-ASCII bytes as \xNN, so a hostile
// value cannot forge log lines.
std::string QuoteForLog(std::string_view text);
// Leading and trailing spaces and tabs removed.
std::string_view TrimSpaces(std::string_view text);
// ASCII lower case.
std::string ToLowerAscii(std::string_view text);

// Largest power of two <= value (value >= 1).
inline uint64_t RoundDownToPowerOfTwo(uint64_t value) {
  uint64_t result = 1;
  while (result <= value / 2) result *= 2;
  return result;
}

}  // namespace internal
}  // namespace lumos::agent
