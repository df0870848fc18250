#include "agent/control/window_controller.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace lumos::agent::control {
namespace {

// splitmix64: a well-mixed hash of (job, slot) for the periodic jitter.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t Fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string Seconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace

const char* WindowStateName(WindowState state) {
  switch (state) {
    case WindowState::kDormant:
      return "dormant";
    case WindowState::kArmed:
      return "armed";
    case WindowState::kStarting:
    case WindowState::kCapturing:
      return "capturing";
    case WindowState::kEnding:
    case WindowState::kClosing:
      return "closing";
  }
  return "unknown";
}

bool WindowController::MatchesStart(uint64_t index, int64_t now_ns) const {
  if (now_ns < plan_not_before_ns_.load(std::memory_order_relaxed)) return false;
  if (index < plan_min_iteration_.load(std::memory_order_relaxed)) return false;
  const uint32_t multiple = plan_multiple_.load(std::memory_order_relaxed);
  return multiple == 0 || index % multiple == 0;
}

void WindowController::OnIterationBoundary(std::optional<uint64_t> numbered, int64_t now_ns) {
  const uint64_t seq = boundaries_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t index = numbered.value_or(seq);
  const int64_t last = last_boundary_ns_.exchange(now_ns, std::memory_order_relaxed);
  if (seq > 0 && now_ns > last) period_ns_.store(now_ns - last, std::memory_order_relaxed);
  last_index_.store(index, std::memory_order_relaxed);
  switch (state_.load(std::memory_order_acquire)) {
    case WindowState::kArmed:
      if (MatchesStart(index, now_ns)) TryStart(now_ns, true, index, nullptr);
      break;
    case WindowState::kCapturing: {
      const uint32_t k = plan_iterations_.load(std::memory_order_relaxed);
      if (k > 0 && seq - first_boundary_seq_.load(std::memory_order_relaxed) >= k) {
        TryEnd(now_ns, nullptr);
      }
      break;
    }
    default:
      break;
  }
}

bool WindowController::TryStart(int64_t start_ns, bool at_boundary, uint64_t index,
                                std::string* missed) {
  WindowState expected = WindowState::kArmed;
  if (!state_.compare_exchange_strong(expected, WindowState::kStarting,
                                      std::memory_order_acq_rel)) {
    return false;
  }
  start_ns_ = start_ns;
  end_ns_ = 0;
  at_boundary_ = at_boundary;
  first_index_ = index;
  iterations_ = 0;
  // The boundary that started it is boundaries_ - 1 (its fetch_add came first); a timer start
  // counts from the next one.
  const uint64_t seen = boundaries_.load(std::memory_order_relaxed);
  first_boundary_seq_.store(at_boundary && seen > 0 ? seen - 1 : seen, std::memory_order_relaxed);
  if (missed != nullptr && !missed->empty()) {
    if (!missed_.empty()) missed_ += "; ";
    missed_ += *missed;
  }
  starts_.fetch_add(1, std::memory_order_relaxed);
  capture_start_ns_.store(start_ns, std::memory_order_release);
  state_.store(WindowState::kCapturing, std::memory_order_release);
  gate_->Set(true);
  return true;
}

bool WindowController::TryEnd(int64_t end_ns, std::string* why) {
  WindowState expected = WindowState::kCapturing;
  if (!state_.compare_exchange_strong(expected, WindowState::kEnding, std::memory_order_acq_rel)) {
    return false;
  }
  gate_->Set(false);
  end_ns_ = end_ns;
  const uint64_t seen = boundaries_.load(std::memory_order_relaxed);
  const uint64_t first = first_boundary_seq_.load(std::memory_order_relaxed);
  // Whole iterations: the boundaries after the first, up to this end (an end at a boundary
  // counts the boundary that ended it, which opened no iteration inside the window).
  // A timer's end: the last boundary began an iteration that did not finish inside.
  iterations_ = at_boundary_ && seen > first ? seen - first - 1 : 0;
  if (why != nullptr) {
    if (!missed_.empty()) missed_ += "; ";
    missed_ += *why;
  }
  state_.store(WindowState::kClosing, std::memory_order_release);
  return true;
}

bool WindowController::Arm(const WindowPlan& plan, int64_t now_ns) {
  (void)now_ns;
  if (state_.load(std::memory_order_acquire) != WindowState::kDormant) return false;
  plan_ = plan;
  missed_ = plan.missed_at_arm;
  plan_not_before_ns_.store(plan.not_before_ns, std::memory_order_relaxed);
  plan_min_iteration_.store(plan.min_iteration, std::memory_order_relaxed);
  plan_multiple_.store(plan.iteration_multiple, std::memory_order_relaxed);
  plan_iterations_.store(plan.iterations, std::memory_order_relaxed);
  state_.store(WindowState::kArmed, std::memory_order_release);
  return true;
}

void WindowController::Tick(int64_t now_ns) {
  switch (state()) {
    case WindowState::kArmed: {
      if (now_ns < plan_.not_before_ns) return;
      const bool timed = plan_.iterations == 0;
      if (timed && plan_.iteration_multiple == 0 && plan_.min_iteration == 0) {
        TryStart(now_ns, false, 0, nullptr);  // A timed window needs no boundary.
      } else if (boundaries() == 0) {
        std::string why = "no iteration marker seen; a timed window of " +
                          Seconds(plan_.duration_ns) + " instead";
        TryStart(now_ns, false, 0, &why);
      } else if (plan_.give_up_ns > 0 && now_ns >= plan_.give_up_ns) {
        std::string why = "no matching iteration boundary " +
                          Seconds(plan_.give_up_ns - plan_.not_before_ns) +
                          " after the target (last iteration " + std::to_string(last_iteration()) +
                          "); a timed window of " + Seconds(plan_.duration_ns) + " instead";
        TryStart(now_ns, false, 0, &why);
      }
      return;
    }
    case WindowState::kCapturing: {
      if (plan_.iterations == 0 || !at_boundary_) {
        if (now_ns - start_ns_ >= plan_.duration_ns) TryEnd(now_ns, nullptr);
        return;
      }
      const int64_t since = now_ns - std::max(start_ns_, last_boundary_ns());
      const int64_t stall = std::max(kStallNs, 10 * iteration_period_ns());
      if (since >= stall) {
        std::string why = "no iteration boundary for " + Seconds(since) + ": the window ends there";
        TryEnd(now_ns, &why);
      }
      return;
    }
    default:
      return;
  }
}

bool WindowController::EndForExit(int64_t now_ns, const char* why) {
  WindowState expected = WindowState::kArmed;
  if (state_.compare_exchange_strong(expected, WindowState::kDormant, std::memory_order_acq_rel)) {
    return false;
  }
  // A job thread may be starting or ending it right now: those finish in a few stores.
  while (state() == WindowState::kStarting || state() == WindowState::kEnding) sched_yield();
  if (state() == WindowState::kCapturing) {
    std::string text = why;
    TryEnd(now_ns, &text);
  }
  return state() == WindowState::kClosing;
}

void WindowController::FinishClose() {
  capture_start_ns_.store(INT64_MAX, std::memory_order_release);
  state_.store(WindowState::kDormant, std::memory_order_release);
}

WindowSpan WindowController::span() const {
  WindowSpan span;
  span.start_ns = start_ns_;
  span.end_ns = end_ns_;
  span.started_at_boundary = at_boundary_;
  span.first_iteration = first_index_;
  span.iterations = iterations_;
  span.missed_target = missed_;
  return span;
}

int64_t NextPeriodicStart(int64_t now_realtime_ns, int64_t period_ns, double jitter,
                          const std::string& job_id) {
  if (period_ns <= 0) return now_realtime_ns;
  const uint64_t job = Fnv1a(job_id);
  const double fraction = std::clamp(jitter, 0.0, 0.5);
  // The slot whose (jittered) start is the first after now: this slot's or the next one's.
  for (int64_t slot = now_realtime_ns / period_ns;; ++slot) {
    const double unit = static_cast<double>(Mix(job ^ Mix(static_cast<uint64_t>(slot))) >> 11) /
                        static_cast<double>(uint64_t{1} << 53);
    const int64_t start =
        slot * period_ns + static_cast<int64_t>(unit * fraction * static_cast<double>(period_ns));
    if (start > now_realtime_ns) return start;
  }
}

}  // namespace lumos::agent::control
