#include "agent/control/kernel_boundaries.h"

namespace lumos::agent::control {

void KernelBoundaries::OnLaunch(uint64_t function, int64_t now_ns) noexcept {
  // Acquire: the previous feeder's writes to the detector (its release below) are seen.
  if (feeding_.exchange(true, std::memory_order_acquire)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const bool boundary = detector_.Feed(function);
  period_.store(detector_.period(), std::memory_order_relaxed);
  launches_.store(detector_.launches(), std::memory_order_relaxed);
  feeding_.store(false, std::memory_order_release);
  if (boundary) windows_->OnKernelBoundary(now_ns);
}

}  // namespace lumos::agent::control
