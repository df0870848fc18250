// Durations in the graph's diagnostics, as the replay report gives times: "194.070 ms" from
// 1 ms up, below it µs with at most three decimals and no trailing zeros ("2 µs", "0.25 µs").
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace lumos::modeler {

inline std::string DurationText(int64_t ns) {
  char text[64];
  if (ns >= 1'000'000 || ns <= -1'000'000) {
    std::snprintf(text, sizeof(text), "%.3f ms", static_cast<double>(ns) / 1e6);
    return text;
  }
  std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ns) / 1e3);
  std::string us = text;
  us.erase(us.find_last_not_of('0') + 1);  // "2.000" -> "2.", "0.250" -> "0.25".
  if (us.back() == '.') us.pop_back();
  return us + " µs";
}

}  // namespace lumos::modeler
