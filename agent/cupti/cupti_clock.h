// Design: converts CUPTI timestamps to CLOCK_MONOTONIC ns, the clock of every record the agent
// writes. CUPTI's clock counts ns since the epoch (close to CLOCK_REALTIME, but its own source),
// so the offset is measured, not assumed: Measure() reads monotonic, cuptiGetTimestamp, monotonic
// again, kTries times, and keeps the read with the narrowest bracket; the offset is CUPTI minus
// the bracket's midpoint.
// Precision: the conversion is exact to +/- half that bracket (uncertainty_ns(), typically
// 20-100 ns: two vDSO reads and one CUPTI call) plus the drift of the two clocks between
// measurements. The writer re-measures every kRefreshIntervalNs, so a step of the realtime clock
// (NTP, if CUPTI follows it) moves at most one refresh interval's worth of records; every clock
// snapshot also carries a raw CUPTI reading (ClockId CUPTI), so a reader can check the offset.
// Threading: Measure() and the accessors on one thread (the writer); ToMonotonic is pure.
#pragma once

#include <cupti.h>

#include <cstdint>

namespace lumos::agent::cupti {

class CuptiClock {
 public:
  static constexpr int kTries = 5;
  static constexpr int64_t kRefreshIntervalNs = 1'000'000'000;

  explicit CuptiClock(CUptiResult (*get_timestamp)(uint64_t*)) : get_timestamp_(get_timestamp) {}

  // False (offset unchanged) when cuptiGetTimestamp fails.
  bool Measure();
  // Measure() when the last one is older than kRefreshIntervalNs (or never succeeded).
  void MaybeRefresh(int64_t monotonic_now_ns);

  bool measured() const { return measured_; }
  int64_t offset_ns() const { return offset_ns_; }  // CUPTI minus monotonic.
  int64_t uncertainty_ns() const { return uncertainty_ns_; }

  // 0 stays 0 (CUPTI's "not recorded").
  static int64_t ToMonotonic(uint64_t cupti_ns, int64_t offset_ns) {
    return cupti_ns == 0 ? 0 : static_cast<int64_t>(cupti_ns) - offset_ns;
  }

 private:
  CUptiResult (*get_timestamp_)(uint64_t*);
  bool measured_ = false;
  int64_t offset_ns_ = 0;
  int64_t uncertainty_ns_ = 0;
  int64_t measured_at_ns_ = 0;
};

}  // namespace lumos::agent::cupti
