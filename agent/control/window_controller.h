// Design: when a capture window starts and ends (periodic and on-demand modes, issue 15).
// States: kDormant -> (writer: Arm) -> kArmed -> (a job thread at a matching iteration boundary,
// or the writer's timer) -> kCapturing -> (a job thread at the boundary after the last
// iteration, or the writer's timer, or the process's exit) -> kClosing -> (writer: FinishClose)
// -> kDormant. Two transient states, kStarting and kEnding, belong to the one thread that won
// the CAS into them while it writes the start or end fields; nobody else acts on them.
//   Starting at an iteration boundary: the job's own thread, inside its NVTX call, decides and
//   opens the capture gate (one CAS and a few stores: no lock, syscall or allocation), so the
//   window begins exactly at the boundary and no job thread ever waits for the writer. The
//   writer opens the file on its next pass; records made meanwhile wait in the rings.
//   A matching boundary: index >= plan.min_iteration, index % plan.iteration_multiple == 0
//   (when set), time >= plan.not_before_ns. A window of K iterations ends at the boundary of
//   index first + K (an index that jumps, a restarted loop: at the K-th boundary seen).
//   Without boundaries: when no marker was ever seen by the time the plan is due, the writer
//   starts a timed window at once (with plan.kernel_boundaries: when none came from the kernel
//   stream either by plan.give_up_ns); when markers were seen but none matched by plan.give_up_ns,
//   it starts one then. Either way the window says why it missed its target. A timed window
//   (plan.iterations 0) ends after plan.duration_ns; an iteration window that sees no boundary
//   for kStallNs (or 10 iteration periods, whichever is longer) ends there, saying so.
// Clock: every time is a parameter (CLOCK_MONOTONIC ns in the agent), so tests drive it.
// Threading: OnIterationBoundary from any job thread (lock-free); everything else from the
// writer thread only. The plan fields job threads read are atomics written before the release
// store of kArmed. The state word carries a generation that every Arm advances, and a job
// thread's CAS expects the exact word it read at its boundary: a thread preempted between
// reading kArmed (or kCapturing) and acting on it, while that window started, ended and the
// next was armed, fails its CAS instead of starting (or ending) a later window with its old
// boundary's time and index. The gate opens before kCapturing is published, so whoever ends
// the window (and closes the gate) comes after the opening; the gate never stays open past the
// window.
// Windows the writer's timer started (no marker seen, or no matching boundary in time) are
// timed: they end after plan.duration_ns, never at a boundary.
// Cancel (lumos-ctl cancel): the control thread reads which window it would cancel (word() and
// armed_request_id(), any thread) and hands the word to the writer, whose Cancel() acts on that
// generation only: an armed window goes back to kDormant (a job thread that read kArmed fails
// its CAS; if the job thread won, the window is capturing and is ended instead), a capturing one
// ends now (kClosing) saying why. A window that ended meanwhile, or a later one, is left alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/core/thread_rings.h"
#include "schema/enums.h"

namespace lumos::agent::control {

enum class WindowState : uint32_t {
  kDormant = 0,
  kArmed = 1,
  kStarting = 2,
  kCapturing = 3,
  kEnding = 4,
  kClosing = 5,
};
// "dormant", "armed", "capturing", "closing" (the transient states read as their target).
const char* WindowStateName(WindowState state);
// "12.3 s": the durations the windows' reasons (missed_target) name.
std::string SecondsText(int64_t ns);

// What the next window is to be: from the periodic schedule or a lumos-ctl request.
struct WindowPlan {
  schema::WindowTrigger trigger = schema::WindowTrigger::kPeriodic;
  uint32_t iterations = 0;          // K whole iterations; 0: a timed window of duration_ns.
  int64_t duration_ns = 0;          // Timed windows, and the length of one that found no marker.
  int64_t not_before_ns = 0;        // Start at the first boundary at or after this.
  uint64_t min_iteration = 0;       // ... whose index is at least this,
  uint32_t iteration_multiple = 0;  // ... and a multiple of this (0: any).
  int64_t give_up_ns = 0;           // No matching boundary by then: a timed window starts.
  // No marker seen yet, but the kernel stream may give boundaries (KernelBoundaries): wait for
  // them until give_up_ns instead of a timed window at once.
  bool kernel_boundaries = false;
  // Carried into the window's header and packet, unused here.
  int64_t window_realtime_ns = 0;
  uint64_t request_id = 0;
  std::string requested_by;
  std::string target;
  std::string output_dir;
  std::string missed_at_arm;  // Known when armed (a request that arrived after its --at).
};

// How the current window started and ended (writer thread, from kCapturing on).
struct WindowSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;  // 0 until kClosing.
  bool started_at_boundary = false;
  uint64_t first_iteration = 0;  // Index of the boundary it started at.
  uint64_t iterations = 0;       // Whole iterations inside (known at kClosing).
  std::string missed_target;     // Why it did not start (or end) where planned; "" = it did.
};

class WindowController {
 public:
  // A window longer than this without any boundary ends (the loop ended or hangs).
  static constexpr int64_t kStallNs = 60'000'000'000;

  // `gate`: the flag every capture callback checks; open exactly while capturing.
  explicit WindowController(EnabledFlag* gate) : gate_(gate) {}
  WindowController(const WindowController&) = delete;
  WindowController& operator=(const WindowController&) = delete;

  // Job threads: an iteration marker range began at now_ns; `numbered` is the index its name
  // carries (IterationMarker), else the controller counts. NoteBoundary then ActOnBoundary.
  void OnIterationBoundary(std::optional<uint64_t> numbered, int64_t now_ns) {
    // Once per process: a load per marker after that (no write to a shared line).
    if (!marker_seen_.load(std::memory_order_relaxed)) {
      marker_seen_.store(true, std::memory_order_relaxed);
    }
    ActOnBoundary(NoteBoundary(numbered, now_ns));
  }
  // Any thread: a boundary from the kernel stream (KernelBoundaries), counted; ignored once an
  // NVTX marker was seen (the job's own word for an iteration wins at once, not at the writer's
  // next pass: counted beside the markers', each iteration would count twice). Relaxed: a
  // boundary racing the first marker may still count, one at most per feeding thread.
  void OnKernelBoundary(int64_t now_ns) {
    if (marker_seen_.load(std::memory_order_relaxed)) return;
    kernel_boundaries_.fetch_add(1, std::memory_order_relaxed);
    ActOnBoundary(NoteBoundary(std::nullopt, now_ns));
  }
  // The two halves of OnIterationBoundary: NoteBoundary counts the boundary and reads the state
  // word it acts on; ActOnBoundary starts or ends a window from that word only. Public so tests
  // can put a whole window between them, as a job thread preempted there sees it.
  struct Boundary {
    uint64_t word = 0;  // The state word read (generation and state).
    uint64_t seq = 0;   // Boundaries seen before this one.
    uint64_t index = 0;
    int64_t now_ns = 0;
  };
  Boundary NoteBoundary(std::optional<uint64_t> numbered, int64_t now_ns);
  void ActOnBoundary(const Boundary& boundary);

  // Writer thread. Arm: kDormant -> kArmed (false in any other state).
  bool Arm(const WindowPlan& plan, int64_t now_ns);
  // The timers (see above): may start or end a window.
  void Tick(int64_t now_ns);
  // The process ends (or the agent stops): a window that is armed is dropped (back to
  // kDormant, returns false), one that is capturing goes to kClosing (returns true).
  bool EndForExit(int64_t now_ns, const char* why);
  // lumos-ctl cancel, for the window whose state word (generation) the control thread read.
  enum class Cancelled { kNothing, kDropped, kEnded };
  // kDropped: it was armed and will not start; kEnded: it was capturing and is kClosing now,
  // `why` in its missed_target; kNothing: that window is no longer armed or capturing.
  Cancelled Cancel(uint64_t seen_word, int64_t now_ns, const std::string& why);
  // kClosing -> kDormant, after the writer closed the file.
  void FinishClose();
  // The fork child (one thread, no writer): kDormant for good, the gate closed; a boundary in
  // the child never starts a window (nothing would ever write or end it).
  void DisableInForkChild();

  WindowState state() const { return StateOf(word_.load(std::memory_order_acquire)); }
  // The state word (generation << 8 | state) and the request id of the window armed in it (0:
  // periodic); any thread. A reader checks that the word is unchanged after the id.
  uint64_t word() const { return word_.load(std::memory_order_acquire); }
  static WindowState StateOfWord(uint64_t word) { return StateOf(word); }
  uint64_t armed_request_id() const { return plan_request_id_.load(std::memory_order_acquire); }
  const WindowPlan& plan() const { return plan_; }
  // Valid from kCapturing on; end_ns and iterations from kClosing.
  WindowSpan span() const;
  // The start of the window being captured (the rings' records from then on belong to it);
  // INT64_MAX when none is. Any thread.
  int64_t capture_start_ns() const { return capture_start_ns_.load(std::memory_order_acquire); }

  // Windows started so far (1 inside the first). Any thread.
  uint64_t starts() const { return starts_.load(std::memory_order_relaxed); }
  // Iteration boundaries seen, the last one's index and time (0 before the first).
  uint64_t boundaries() const { return boundaries_.load(std::memory_order_relaxed); }
  // Of those, the kernel stream's; and whether an NVTX marker was ever seen.
  uint64_t kernel_boundaries() const { return kernel_boundaries_.load(std::memory_order_relaxed); }
  bool marker_seen() const { return marker_seen_.load(std::memory_order_relaxed); }
  uint64_t last_iteration() const { return last_index_.load(std::memory_order_relaxed); }
  int64_t last_boundary_ns() const { return last_boundary_ns_.load(std::memory_order_relaxed); }
  // The last interval between two boundaries; 0 before the second.
  int64_t iteration_period_ns() const { return period_ns_.load(std::memory_order_relaxed); }

 private:
  // The state word: generation << 8 | state.
  static WindowState StateOf(uint64_t word) { return static_cast<WindowState>(word & 0xff); }
  static uint64_t With(uint64_t word, WindowState state) {
    return (word & ~uint64_t{0xff}) | static_cast<uint64_t>(state);
  }
  bool MatchesStart(uint64_t index, int64_t now_ns) const;
  // (generation, kArmed) `armed` -> kCapturing. At a boundary (a job thread): `seq` is the
  // boundary's; `missed`: the writer's reason (nullptr from a job thread, which only starts
  // windows that met their target).
  bool TryStart(uint64_t armed, int64_t start_ns, bool at_boundary, uint64_t index, uint64_t seq,
                std::string* missed);
  // (generation, kCapturing) `capturing` -> kClosing. `why`: the writer's reason (nullptr:
  // ended as planned, at the boundary numbered `seq`).
  bool TryEnd(uint64_t capturing, int64_t end_ns, std::string* why, uint64_t seq);

  EnabledFlag* const gate_;
  std::atomic<uint64_t> word_{static_cast<uint64_t>(WindowState::kDormant)};
  // The plan, as the writer armed it; the fields job threads test are mirrored in atomics.
  WindowPlan plan_;
  std::atomic<int64_t> plan_not_before_ns_{0};
  std::atomic<uint64_t> plan_min_iteration_{0};
  std::atomic<uint32_t> plan_multiple_{0};
  std::atomic<uint32_t> plan_iterations_{0};
  std::atomic<uint64_t> plan_request_id_{0};
  // The window: written by the thread that won kStarting / kEnding, published by the release
  // store of the state after it. start_ns_ and first_index_ are written at the start only; the
  // end's fields are atomics (relaxed; the state's release publishes them) because the writer
  // reads the span while capturing, when a job thread may be ending the window.
  std::atomic<int64_t> capture_start_ns_{INT64_MAX};
  int64_t start_ns_ = 0;
  std::atomic<int64_t> end_ns_{0};
  bool at_boundary_ = false;
  uint64_t first_index_ = 0;
  std::atomic<uint64_t> iterations_{0};
  std::atomic<uint64_t> first_boundary_seq_{0};  // The seq of the boundary it started at.
  // Job threads end this window at its K-th boundary: it started at one, with K > 0.
  std::atomic<bool> ends_at_boundary_{false};
  std::string missed_;  // Written by the writer only (Arm clears it).
  // Boundaries.
  std::atomic<uint64_t> starts_{0};
  std::atomic<uint64_t> boundaries_{0};
  std::atomic<uint64_t> kernel_boundaries_{0};
  std::atomic<bool> marker_seen_{false};
  std::atomic<uint64_t> last_index_{0};
  std::atomic<int64_t> last_boundary_ns_{0};
  std::atomic<int64_t> period_ns_{0};
};

// Periodic mode: the next window's realtime start after now_realtime_ns. Slots are aligned to
// the period on the realtime clock (every rank of a job computes the same slots, whenever it
// started) and shifted by a jitter in [0, jitter x period) drawn from the job id and the slot's
// number, so the ranks of one job agree and different jobs of a fleet do not fire together.
int64_t NextPeriodicStart(int64_t now_realtime_ns, int64_t period_ns, double jitter,
                          const std::string& job_id);

}  // namespace lumos::agent::control
