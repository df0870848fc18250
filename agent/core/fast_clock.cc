#include "agent/core/fast_clock.h"

#include <algorithm>
#include <limits>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "agent/core/no_destructor.h"
#include "base/logging.h"

namespace lumos::agent {

std::atomic<const TscMapping*> g_tsc_mapping{nullptr};

namespace {

// A pair whose bracket is wider than this was interrupted (preempted, a VM exit) in every try:
// a refinement skips it and waits for the next loop.
constexpr int64_t kMaxRefinePairWidthNs = 10'000;
constexpr int kPairTries = 5;

int64_t AbsNs(int64_t value) { return value < 0 ? -value : value; }

}  // namespace

bool TscUsable() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;  // Invariant TSC.
#else
  return false;
#endif
}

ClockPair ReadClockPair() {
  ClockPair best;
  best.width_ns = std::numeric_limits<int64_t>::max();
  for (int i = 0; i < kPairTries; ++i) {
    const int64_t before = ReadMonotonicNs();
    const uint64_t tsc = ReadTsc();
    const int64_t after = ReadMonotonicNs();
    if (after - before < best.width_ns) {
      best.tsc = tsc;
      best.width_ns = after - before;
      best.mono_ns = before + best.width_ns / 2;
    }
  }
  return best;
}

void TscCalibrator::Begin(const ClockPair& first) {
  first_ = first;
  last_ = first;
  has_params_ = false;
  params_ = {};
  first_mult_ = 0;
  max_abs_error_ns_ = 0;
}

TscCalibrator::Result TscCalibrator::Refine(const ClockPair& now, int64_t horizon_ns) {
  Result result;
  if (now.tsc <= last_.tsc || now.mono_ns < last_.mono_ns) {
    result.why = "the TSC or CLOCK_MONOTONIC went backwards";
    return result;
  }
  const uint64_t ticks = now.tsc - first_.tsc;
  const int64_t elapsed_ns = now.mono_ns - first_.mono_ns;
  if (elapsed_ns <= 0) {
    result.why = "CLOCK_MONOTONIC did not advance while the TSC did";
    return result;
  }
  // The rate over the longest baseline: its error is the pairs' uncertainty over the baseline.
  const auto base_mult =
      static_cast<uint64_t>((static_cast<unsigned __int128>(elapsed_ns) << kTscShift) / ticks);
  if (base_mult == 0) {
    result.why = "the TSC ticks faster than the fixed-point rate can hold";
    return result;
  }
  last_ = now;
  result.ok = true;
  result.publish = true;
  if (!has_params_) {
    first_mult_ = base_mult;
    params_ = {now.tsc, now.mono_ns, base_mult};
    has_params_ = true;
    result.params = params_;
    return result;
  }
  const uint64_t rate_change =
      base_mult > first_mult_ ? base_mult - first_mult_ : first_mult_ - base_mult;
  if (static_cast<unsigned __int128>(rate_change) * 1'000'000 >
      static_cast<unsigned __int128>(first_mult_) * kMaxRateChangePpm) {
    result.ok = false;
    result.publish = false;
    result.why = "the TSC rate moved more than 1% from its first estimate";
    return result;
  }
  const int64_t predicted_ns =
      TscToNs(params_.anchor_tsc, params_.anchor_ns, params_.mult, now.tsc);
  const int64_t error_ns = predicted_ns - now.mono_ns;
  result.error_ns = error_ns;
  max_abs_error_ns_ = std::max(max_abs_error_ns_, AbsNs(error_ns));
  if (AbsNs(error_ns) > kMaxErrorNs) {
    result.ok = false;
    result.publish = false;
    result.why = "the TSC drifted more than 1 ms from CLOCK_MONOTONIC";
    return result;
  }
  // Continuous: the new mapping starts where the current one is now (no jump, so times stay
  // monotonic), and runs slower or faster until the error is gone at about the next refinement.
  const int64_t horizon = std::max<int64_t>(horizon_ns, 1);
  __int128 correction = static_cast<__int128>(base_mult) * error_ns / horizon;
  const __int128 max_correction = static_cast<__int128>(base_mult) * kMaxSlewPpm / 1'000'000;
  correction = std::clamp(correction, -max_correction, max_correction);
  params_ = {now.tsc, predicted_ns, static_cast<uint64_t>(base_mult - correction)};
  result.params = params_;
  return result;
}

FastClock& FastClock::Get() {
  static NoDestructor<FastClock> clock;
  return *clock;
}

bool FastClock::Start(int64_t steady_refine_ns) {
  if (started_ || disabled_ || !TscUsable()) return false;
  started_ = true;
  steady_refine_ns_ = std::max(steady_refine_ns, kFirstRefineDelayNs);
  calibrator_.Begin(ReadClockPair());
  refine_delay_ns_ = kFirstRefineDelayNs;
  next_refine_ns_ = ReadMonotonicNs() + refine_delay_ns_;
  return true;
}

int64_t FastClock::NsUntilRefine() const {
  if (!started_ || disabled_) return -1;
  return std::max<int64_t>(next_refine_ns_ - ReadMonotonicNs(), 0);
}

void FastClock::RefineIfDue() {
  if (!started_ || disabled_) return;
  const int64_t now_ns = ReadMonotonicNs();
  // A little early counts: the writer's poll rounds to milliseconds.
  if (now_ns + refine_delay_ns_ / 16 < next_refine_ns_) return;
  const ClockPair pair = ReadClockPair();
  if (pair.width_ns > kMaxRefinePairWidthNs) return;  // Interrupted: next loop.
  const int64_t next_delay_ns = std::min(refine_delay_ns_ * 2, steady_refine_ns_);
  const TscCalibrator::Result result = calibrator_.Refine(pair, next_delay_ns);
  if (!result.ok) {
    Disable(result.why);
    return;
  }
  if (result.publish) Publish(result.params);
  refine_delay_ns_ = next_delay_ns;
  next_refine_ns_ = pair.mono_ns + refine_delay_ns_;
}

void FastClock::Disable(const std::string& why) {
  if (disabled_) return;
  disabled_ = true;
  g_tsc_mapping.store(nullptr, std::memory_order_release);
  if (started_) LUMOS_LOG(Warn, "fast clock off, timestamps use clock_gettime: %s", why.c_str());
}

void FastClock::Publish(const TscCalibrator::Params& params) {
  // The slot least recently published; a reader still on it sees the sequence move.
  TscMapping& slot = slots_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kTscMappingSlots;
  const uint64_t sequence = slot.sequence.load(std::memory_order_relaxed);
  slot.sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  slot.anchor_tsc.store(params.anchor_tsc, std::memory_order_relaxed);
  slot.anchor_ns.store(params.anchor_ns, std::memory_order_relaxed);
  slot.mult.store(params.mult, std::memory_order_relaxed);
  slot.sequence.store(sequence + 2, std::memory_order_release);
  g_tsc_mapping.store(&slot, std::memory_order_release);
}

}  // namespace lumos::agent
