// Design: a cheap CLOCK_MONOTONIC for the capture hot path (STYLE.md 5.7), computed from the
// CPU's time-stamp counter. The trace keeps holding CLOCK_MONOTONIC ns: the conversion happens
// on the hot path (one rdtsc, one 64x64->128 multiply), so no reader or schema changes.
//   Mapping: monotonic_ns = anchor_ns + ((tsc - anchor_tsc) * mult) >> kTscShift, a fixed-point
//     rate of ns per tick. The delta is signed: a reader may read the counter a little before
//     the anchor of a record published meanwhile.
//   Publication: the writer thread is the only writer. It fills one of kTscMappingSlots
//     preallocated records and publishes it through one atomic pointer (no lock, no
//     allocation). Each record also carries a sequence number (a seqlock): a reader stalled so
//     long that its record is being reused sees the change and reads clock_gettime instead, so
//     a torn record can never produce a value. Null pointer = use clock_gettime.
//   Calibration (TscCalibrator, pure, tested with synthetic ticks): the rate always comes from
//     the longest baseline, the first bracketed (tsc, clock_gettime) pair to the latest one.
//     Refinements start 10 ms after start and double their spacing up to the writer's flush
//     interval, so the error stays at the level of the bracket noise from the start.
//     A refinement never jumps: its anchor is the current mapping's own value at the new pair
//     (the mapping stays continuous and monotonic, so a span's end never precedes its start),
//     and the measured error is slewed away over the time to the next refinement (bounded to
//     kMaxSlewPpm), as NTP slews the kernel clock.
//   Fail safe: no invariant TSC (CPUID 0x80000007 EDX bit 8; x86-64 only), a rate that moves
//     more than 1% from the first estimate, time going backwards, or an error above 1 ms:
//     the pointer goes null for the rest of the run (one warning), i.e. clock_gettime as before.
// Code that needs the exact clock (clock snapshots, clock-domain offsets, calibration itself)
// calls ReadMonotonicNs().
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <string>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace lumos::agent {

// CLOCK_MONOTONIC in ns through clock_gettime (vDSO, ~20 ns; more under a hypervisor).
inline int64_t ReadMonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The raw time-stamp counter; 0 where there is none (never used then: TscUsable() is false).
inline uint64_t ReadTsc() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return 0;
#endif
}

// Whether the TSC ticks at a constant rate in every power state (invariant TSC).
bool TscUsable();

// ns per tick, fixed point: 40 fraction bits keep the rounding under 0.01 ns per second of
// distance from the anchor, and leave room for rates up to 2^23 ns per tick.
inline constexpr int kTscShift = 40;

// The pure mapping (also what the hot path computes).
inline int64_t TscToNs(uint64_t anchor_tsc, int64_t anchor_ns, uint64_t mult, uint64_t tsc) {
  const auto delta = static_cast<int64_t>(tsc - anchor_tsc);
  const __int128 scaled = static_cast<__int128>(delta) * static_cast<__int128>(mult);
  return anchor_ns + static_cast<int64_t>(scaled >> kTscShift);
}

// One published mapping. Fields are atomics because a slot is rewritten while a (very late)
// reader may still read it; `sequence` is odd while it is being rewritten.
struct TscMapping {
  std::atomic<uint64_t> sequence{0};
  std::atomic<uint64_t> anchor_tsc{0};
  std::atomic<int64_t> anchor_ns{0};
  std::atomic<uint64_t> mult{0};
};

// The published mapping; null = use clock_gettime. Written by FastClock only.
extern std::atomic<const TscMapping*> g_tsc_mapping;

// CLOCK_MONOTONIC ns, from the TSC when the fast clock runs, else clock_gettime.
// Async-signal-safe and lock-free either way.
inline int64_t FastMonotonicNs() {
  const TscMapping* mapping = g_tsc_mapping.load(std::memory_order_acquire);
  if (mapping == nullptr) return ReadMonotonicNs();
  const uint64_t sequence = mapping->sequence.load(std::memory_order_acquire);
  const uint64_t anchor_tsc = mapping->anchor_tsc.load(std::memory_order_relaxed);
  const int64_t anchor_ns = mapping->anchor_ns.load(std::memory_order_relaxed);
  const uint64_t mult = mapping->mult.load(std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
  if ((sequence & 1) != 0 || mapping->sequence.load(std::memory_order_relaxed) != sequence) {
    return ReadMonotonicNs();  // The slot is being reused under a very late reader.
  }
  return TscToNs(anchor_tsc, anchor_ns, mult, ReadTsc());
}

// One (tsc, CLOCK_MONOTONIC) pair: the TSC read between two clock reads, the best (narrowest)
// of a few tries; mono_ns is the midpoint, width_ns the bracket (uncertainty = width / 2).
struct ClockPair {
  uint64_t tsc = 0;
  int64_t mono_ns = 0;
  int64_t width_ns = 0;
};
ClockPair ReadClockPair();

// The calibration arithmetic, no clocks read here: fed pairs, it says what to publish.
class TscCalibrator {
 public:
  static constexpr int64_t kMaxErrorNs = 1'000'000;     // Above this, the TSC is not trusted.
  static constexpr int64_t kMaxRateChangePpm = 10'000;  // 1% from the first estimate.
  static constexpr int64_t kMaxSlewPpm = 100;           // Correction speed bound.

  struct Params {
    uint64_t anchor_tsc = 0;
    int64_t anchor_ns = 0;
    uint64_t mult = 0;
  };
  struct Result {
    bool ok = false;       // False: stop using the TSC; `why` says why.
    bool publish = false;  // True: publish `params`.
    Params params;
    int64_t error_ns = 0;  // The current mapping minus the clock at this pair (0 for the first).
    std::string why;
  };

  // The first pair: nothing to publish yet (a rate needs two).
  void Begin(const ClockPair& first);
  // A later pair; `horizon_ns`: about when the next refinement comes (the slew's length).
  Result Refine(const ClockPair& now, int64_t horizon_ns);

  bool has_params() const { return has_params_; }
  const Params& params() const { return params_; }
  // The largest |error_ns| seen by Refine: the clock error just before each correction.
  int64_t max_abs_error_ns() const { return max_abs_error_ns_; }

 private:
  ClockPair first_;
  ClockPair last_;
  bool has_params_ = false;
  Params params_;
  uint64_t first_mult_ = 0;
  int64_t max_abs_error_ns_ = 0;
};

// The process's fast clock. Start, Refine and Disable are for ONE thread (the agent's writer
// thread, or a test/benchmark); readers only call FastMonotonicNs().
class FastClock {
 public:
  static constexpr int kTscMappingSlots = 8;
  static constexpr int64_t kFirstRefineDelayNs = 10'000'000;

  static FastClock& Get();

  // Takes the first pair when the TSC is usable. `steady_refine_ns`: the refinement spacing
  // once warmed up (the writer's flush interval). False: the TSC is not used (no warning: the
  // caller knows why it asked). Cheap (a few clock reads), no sleeping.
  bool Start(int64_t steady_refine_ns);
  // Refines when due (see the design above), publishing a new mapping. Cheap when not due.
  void RefineIfDue();
  // ns until the next refinement is due, for the writer's poll timeout; -1 when none will be.
  int64_t NsUntilRefine() const;
  // Back to clock_gettime for the rest of the run; logs `why` once as a warning.
  void Disable(const std::string& why);

  bool running() const { return g_tsc_mapping.load(std::memory_order_relaxed) != nullptr; }
  int64_t max_abs_error_ns() const { return calibrator_.max_abs_error_ns(); }

 private:
  void Publish(const TscCalibrator::Params& params);

  TscCalibrator calibrator_;
  TscMapping slots_[kTscMappingSlots];
  int next_slot_ = 0;
  bool started_ = false;
  bool disabled_ = false;
  int64_t steady_refine_ns_ = 0;
  int64_t refine_delay_ns_ = 0;
  int64_t next_refine_ns_ = 0;
};

}  // namespace lumos::agent
