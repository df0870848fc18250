// Design: iteration boundaries from the kernel stream, for windows in jobs that show no NVTX
// iteration marker (docs/fleet-capture.md "Iterations without a marker"). The CUPTI callback
// channel hands every kernel launch's function (ENTER of the runtime/driver launch callbacks)
// to OnLaunch() while wanted(); a PeriodDetector finds the stream's period, and each boundary it
// reports goes to the window controller as an iteration boundary (OnKernelBoundary), counted
// (the index is the count of boundaries: ranks agree on it only when they armed together).
//   Wanted: set by the writer thread while a window that needs iterations is armed or capturing
//   and no marker was ever seen (a marker wins: it is the job's own word for an iteration).
//   Dormant cost: none (CUPTI's callbacks are off between windows); armed: one relaxed load per
//   API callback, and per launch the detector's Feed (no allocation, lock or system call).
//   The detector is kept across windows: a later window finds the period again after one
//   copy of it (launches between windows are not fed: the detector resumes after that gap and
//   compares nothing across it), its boundaries at the same kernel as before.
// Threading: OnLaunch from any thread; launches from several threads at once are serialized by
// a try-lock and the loser's launch is dropped (noise to the detector). Everything else on the
// writer thread. The detector's memory (about 1.2 MiB) is allocated at construction, never on a
// launch.
// Needs a GPU to run for real (CUPTI calling the launch callbacks while armed);
// scripts/gpu-check.sh checks a loop without NVTX. Tests feed the callback fabricated launches.
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/control/period_detector.h"
#include "agent/control/window_controller.h"

namespace lumos::agent::control {

class KernelBoundaries {
 public:
  explicit KernelBoundaries(WindowController* windows,
                            uint32_t max_period = PeriodDetector::kDefaultMaxPeriod)
      : windows_(windows), detector_(max_period) {}
  KernelBoundaries(const KernelBoundaries&) = delete;
  KernelBoundaries& operator=(const KernelBoundaries&) = delete;

  // Any thread: whether launches are wanted now (one relaxed load), and one launch.
  bool wanted() const { return wanted_.load(std::memory_order_relaxed); }
  void OnLaunch(uint64_t function, int64_t now_ns) noexcept;

  // Writer thread. Wanted again after a pause: the next launch fed resumes the detector (a gap).
  // Release: a feeder that sees wanted_ true (its acquire fence in OnLaunch) sees the gap count.
  void SetWanted(bool wanted) {
    if (wanted && !wanted_.load(std::memory_order_relaxed)) {
      gaps_.fetch_add(1, std::memory_order_relaxed);
    }
    wanted_.store(wanted, std::memory_order_release);
  }
  // The detector's lock (0: none) and the launches it was fed; launches dropped because another
  // thread was feeding. Approximate while launches come in (statistics).
  uint32_t period() const { return period_.load(std::memory_order_relaxed); }
  uint64_t launches() const { return launches_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  WindowController* const windows_;
  std::atomic<bool> wanted_{false};
  std::atomic<bool> feeding_{false};
  std::atomic<uint32_t> gaps_{0};  // Times wanted_ turned true (writer thread).
  PeriodDetector detector_;        // Under feeding_, as fed_gaps_.
  uint32_t fed_gaps_ = 0;          // The gaps the detector has resumed after.
  std::atomic<uint32_t> period_{0};
  std::atomic<uint64_t> launches_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace lumos::agent::control
