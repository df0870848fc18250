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

}  // namespace

std::string SecondsText(int64_t ns) {
  char text[48];  // |ns| < 2^63: at most 10 integer digits of seconds.
  std::snprintf(text, sizeof(text), "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

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

WindowController::Boundary WindowController::NoteBoundary(std::optional<uint64_t> numbered,
                                                          int64_t now_ns) {
  Boundary boundary;
  boundary.seq = boundaries_.fetch_add(1, std::memory_order_relaxed);
  boundary.index = numbered.value_or(boundary.seq);
  boundary.now_ns = now_ns;
  const int64_t last = last_boundary_ns_.exchange(now_ns, std::memory_order_relaxed);
  if (boundary.seq > 0 && now_ns > last) {
    period_ns_.store(now_ns - last, std::memory_order_relaxed);
  }
  last_index_.store(boundary.index, std::memory_order_relaxed);
  boundary.word = word_.load(std::memory_order_acquire);
  return boundary;
}

void WindowController::ActOnBoundary(const Boundary& b) {
  switch (StateOf(b.word)) {
    case WindowState::kArmed:
      if (MatchesStart(b.index, b.now_ns))
        TryStart(b.word, b.now_ns, true, b.index, b.seq, nullptr);
      break;
    case WindowState::kCapturing: {
      // Relaxed: the acquire load of the word published them (the CAS in TryEnd fails should
      // they belong to a later window).
      if (!ends_at_boundary_.load(std::memory_order_relaxed)) break;
      const uint32_t k = plan_iterations_.load(std::memory_order_relaxed);
      const uint64_t first = first_boundary_seq_.load(std::memory_order_relaxed);
      if (b.seq >= first && b.seq - first >= k) TryEnd(b.word, b.now_ns, nullptr, b.seq);
      break;
    }
    default:
      break;
  }
}

bool WindowController::TryStart(uint64_t armed, int64_t start_ns, bool at_boundary, uint64_t index,
                                uint64_t seq, std::string* missed) {
  uint64_t expected = armed;
  if (StateOf(armed) != WindowState::kArmed ||
      !word_.compare_exchange_strong(expected, With(armed, WindowState::kStarting),
                                     std::memory_order_acq_rel)) {
    return false;
  }
  start_ns_ = start_ns;
  end_ns_.store(0, std::memory_order_relaxed);
  at_boundary_ = at_boundary;
  first_index_ = index;
  iterations_.store(0, std::memory_order_relaxed);
  // At a boundary: the boundary that started it. A timer start counts from the next one.
  first_boundary_seq_.store(at_boundary ? seq : boundaries_.load(std::memory_order_relaxed),
                            std::memory_order_relaxed);
  // A timer's window is a timed one (see the design above): boundaries do not end it.
  ends_at_boundary_.store(at_boundary && plan_iterations_.load(std::memory_order_relaxed) > 0,
                          std::memory_order_relaxed);
  if (missed != nullptr && !missed->empty()) {
    if (!missed_.empty()) missed_ += "; ";
    missed_ += *missed;
  }
  starts_.fetch_add(1, std::memory_order_relaxed);
  capture_start_ns_.store(start_ns, std::memory_order_release);
  // Open before kCapturing is published: the thread that ends the window acts on kCapturing,
  // so its Set(false) comes after this Set(true) (it used to come after, and a window ended in
  // between left the gate open while dormant).
  gate_->Set(true);
  word_.store(With(armed, WindowState::kCapturing), std::memory_order_release);
  return true;
}

bool WindowController::TryEnd(uint64_t capturing, int64_t end_ns, std::string* why, uint64_t seq) {
  uint64_t expected = capturing;
  if (StateOf(capturing) != WindowState::kCapturing ||
      !word_.compare_exchange_strong(expected, With(capturing, WindowState::kEnding),
                                     std::memory_order_acq_rel)) {
    return false;
  }
  gate_->Set(false);
  end_ns_.store(end_ns, std::memory_order_relaxed);
  const uint64_t first = first_boundary_seq_.load(std::memory_order_relaxed);
  uint64_t iterations = 0;
  if (at_boundary_ && why == nullptr) {
    // Ended at the boundary `seq`: the iterations that began at boundaries first .. seq - 1.
    iterations = seq > first ? seq - first : 0;
  } else if (at_boundary_) {
    // A timer's end: the last boundary began an iteration that did not finish inside.
    const uint64_t seen = boundaries_.load(std::memory_order_relaxed);
    iterations = seen > first + 1 ? seen - first - 1 : 0;
  }
  iterations_.store(iterations, std::memory_order_relaxed);
  if (why != nullptr) {
    if (!missed_.empty()) missed_ += "; ";
    missed_ += *why;
  }
  word_.store(With(capturing, WindowState::kClosing), std::memory_order_release);
  return true;
}

bool WindowController::Arm(const WindowPlan& plan, int64_t now_ns) {
  (void)now_ns;
  const uint64_t word = word_.load(std::memory_order_acquire);
  if (StateOf(word) != WindowState::kDormant) return false;
  plan_ = plan;
  missed_ = plan.missed_at_arm;
  plan_not_before_ns_.store(plan.not_before_ns, std::memory_order_relaxed);
  plan_min_iteration_.store(plan.min_iteration, std::memory_order_relaxed);
  plan_multiple_.store(plan.iteration_multiple, std::memory_order_relaxed);
  plan_iterations_.store(plan.iterations, std::memory_order_relaxed);
  plan_request_id_.store(plan.request_id, std::memory_order_relaxed);
  // A new generation: what a job thread read of an earlier window cannot act on this one.
  word_.store(With(word + 0x100, WindowState::kArmed), std::memory_order_release);
  return true;
}

void WindowController::Tick(int64_t now_ns) {
  const uint64_t word = word_.load(std::memory_order_acquire);
  switch (StateOf(word)) {
    case WindowState::kArmed: {
      if (now_ns < plan_.not_before_ns) return;
      const bool timed = plan_.iterations == 0;
      if (timed && plan_.iteration_multiple == 0 && plan_.min_iteration == 0) {
        TryStart(word, now_ns, false, 0, 0, nullptr);  // A timed window needs no boundary.
      } else if (boundaries() == 0 && plan_.kernel_boundaries && now_ns < plan_.give_up_ns) {
        return;  // Waiting for the kernel stream's period (KernelBoundaries).
      } else if (boundaries() == 0) {
        std::string why = plan_.kernel_boundaries
                              ? "no iteration marker seen and no repeating kernel stream found "
                                "in " +
                                    SecondsText(plan_.give_up_ns - plan_.not_before_ns) +
                                    "; a timed window of " + SecondsText(plan_.duration_ns) +
                                    " instead"
                              : "no iteration marker seen; a timed window of " +
                                    SecondsText(plan_.duration_ns) + " instead";
        TryStart(word, now_ns, false, 0, 0, &why);
      } else if (plan_.give_up_ns > 0 && now_ns >= plan_.give_up_ns) {
        std::string why = "no matching iteration boundary " +
                          SecondsText(plan_.give_up_ns - plan_.not_before_ns) +
                          " after the target (last iteration " + std::to_string(last_iteration()) +
                          "); a timed window of " + SecondsText(plan_.duration_ns) + " instead";
        TryStart(word, now_ns, false, 0, 0, &why);
      }
      return;
    }
    case WindowState::kCapturing: {
      if (plan_.iterations == 0 || !at_boundary_) {
        if (now_ns - start_ns_ >= plan_.duration_ns) TryEnd(word, now_ns, nullptr, 0);
        return;
      }
      const int64_t since = now_ns - std::max(start_ns_, last_boundary_ns());
      const int64_t stall = std::max(kStallNs, 10 * iteration_period_ns());
      if (since >= stall) {
        std::string why =
            "no iteration boundary for " + SecondsText(since) + ": the window ends there";
        TryEnd(word, now_ns, &why, 0);
      }
      return;
    }
    default:
      return;
  }
}

bool WindowController::EndForExit(int64_t now_ns, const char* why) {
  for (;;) {
    uint64_t word = word_.load(std::memory_order_acquire);
    switch (StateOf(word)) {
      case WindowState::kDormant:
        return false;
      case WindowState::kArmed:
        // Dropped; a job thread that read this word fails its CAS.
        if (word_.compare_exchange_strong(word, With(word, WindowState::kDormant),
                                          std::memory_order_acq_rel)) {
          return false;
        }
        break;
      case WindowState::kStarting:
      case WindowState::kEnding:
        // A job thread is starting or ending it right now: a few stores.
        sched_yield();
        break;
      case WindowState::kCapturing: {
        std::string text = why;
        if (TryEnd(word, now_ns, &text, 0)) return true;
        break;
      }
      case WindowState::kClosing:
        return true;
    }
  }
}

WindowController::Cancelled WindowController::Cancel(uint64_t seen_word, int64_t now_ns,
                                                     const std::string& why) {
  for (;;) {
    uint64_t word = word_.load(std::memory_order_acquire);
    if ((word >> 8) != (seen_word >> 8)) return Cancelled::kNothing;  // A later window.
    switch (StateOf(word)) {
      case WindowState::kArmed:
        // Dropped; a job thread that read this word fails its CAS.
        if (word_.compare_exchange_strong(word, With(word, WindowState::kDormant),
                                          std::memory_order_acq_rel)) {
          return Cancelled::kDropped;
        }
        break;
      case WindowState::kStarting:
      case WindowState::kEnding:
        sched_yield();  // A job thread's few stores.
        break;
      case WindowState::kCapturing: {
        std::string text = why;
        if (TryEnd(word, now_ns, &text, 0)) return Cancelled::kEnded;
        break;
      }
      default:  // Dormant or closing: it ended by itself meanwhile.
        return Cancelled::kNothing;
    }
  }
}

void WindowController::FinishClose() {
  capture_start_ns_.store(INT64_MAX, std::memory_order_release);
  word_.store(With(word_.load(std::memory_order_relaxed), WindowState::kDormant),
              std::memory_order_release);
}

void WindowController::DisableInForkChild() {
  // The child's only thread: plain stores are enough.
  capture_start_ns_.store(INT64_MAX, std::memory_order_relaxed);
  word_.store(With(word_.load(std::memory_order_relaxed), WindowState::kDormant),
              std::memory_order_relaxed);
  gate_->Set(false);
}

WindowSpan WindowController::span() const {
  WindowSpan span;
  span.start_ns = start_ns_;
  span.end_ns = end_ns_.load(std::memory_order_relaxed);
  span.started_at_boundary = at_boundary_;
  span.first_iteration = first_index_;
  span.iterations = iterations_.load(std::memory_order_relaxed);
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
