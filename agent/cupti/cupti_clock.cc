#include "agent/cupti/cupti_clock.h"

#include <limits>

#include "agent/runtime/agent_runtime.h"

namespace lumos::agent::cupti {

bool CuptiClock::Measure() {
  if (get_timestamp_ == nullptr) return false;
  int64_t best_width = std::numeric_limits<int64_t>::max();
  int64_t best_offset = 0;
  int64_t last_after = 0;
  for (int i = 0; i < kTries; ++i) {
    uint64_t cupti_ns = 0;
    // The exact clock: this offset maps CUPTI's domain onto CLOCK_MONOTONIC itself.
    const int64_t before = ReadMonotonicNs();
    const CUptiResult result = get_timestamp_(&cupti_ns);
    const int64_t after = ReadMonotonicNs();
    if (result != CUPTI_SUCCESS || cupti_ns == 0) return false;
    last_after = after;
    if (after - before < best_width) {
      best_width = after - before;
      best_offset = static_cast<int64_t>(cupti_ns) - (before + (after - before) / 2);
    }
  }
  offset_ns_ = best_offset;
  uncertainty_ns_ = (best_width + 1) / 2;
  measured_at_ns_ = last_after;
  measured_ = true;
  return true;
}

void CuptiClock::MaybeRefresh(int64_t monotonic_now_ns) {
  if (!measured_ || monotonic_now_ns - measured_at_ns_ >= kRefreshIntervalNs) Measure();
}

}  // namespace lumos::agent::cupti
