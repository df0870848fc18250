#include "agent/control/kernel_boundaries.h"

#include <atomic>

namespace lumos::agent::control {

void KernelBoundaries::OnLaunch(uint64_t function, int64_t now_ns) noexcept {
  // Acquire: the previous feeder's writes to the detector (its release below) are seen.
  if (feeding_.exchange(true, std::memory_order_acquire)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // The callers read wanted() (relaxed) before calling: this fence makes that read an acquire of
  // SetWanted's release, so a launch of a window armed again sees its gap.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (const uint32_t gaps = gaps_.load(std::memory_order_relaxed); gaps != fed_gaps_) {
    fed_gaps_ = gaps;
    detector_.Resume();
  }
  const bool boundary = detector_.Feed(function);
  period_.store(detector_.period(), std::memory_order_relaxed);
  launches_.store(detector_.launches(), std::memory_order_relaxed);
  feeding_.store(false, std::memory_order_release);
  if (boundary) windows_->OnKernelBoundary(now_ns);
}

}  // namespace lumos::agent::control
