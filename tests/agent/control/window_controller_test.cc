// The window state machine with an injected clock (every time is a parameter): windows start and
// end on iteration boundaries, targets (index multiples, a time), timers for marker-less jobs,
// stalls and the exit; the periodic schedule's slots and jitter; the iteration marker.
#include "agent/control/window_controller.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "agent/control/iteration_marker.h"

namespace lumos::agent::control {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

WindowPlan IterationPlan(uint32_t k) {
  WindowPlan plan;
  plan.iterations = k;
  plan.duration_ns = 10 * kS;
  return plan;
}

TEST(WindowControllerTest, StartsAtTheNextBoundaryAndEndsAfterKIterations) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(std::nullopt, 100 * kMs);  // Iteration 0, before any window.
  ASSERT_TRUE(c.Arm(IterationPlan(3), 150 * kMs));
  EXPECT_EQ(c.state(), WindowState::kArmed);
  EXPECT_FALSE(gate.enabled());
  c.Tick(160 * kMs);  // Markers were seen: the timer leaves it to the next boundary.
  EXPECT_EQ(c.state(), WindowState::kArmed);
  c.OnIterationBoundary(std::nullopt, 200 * kMs);  // Iteration 1: the window starts here.
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_TRUE(gate.enabled());
  EXPECT_EQ(c.capture_start_ns(), 200 * kMs);
  c.OnIterationBoundary(std::nullopt, 300 * kMs);
  c.OnIterationBoundary(std::nullopt, 400 * kMs);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.OnIterationBoundary(std::nullopt, 500 * kMs);  // Iteration 4 begins: 1, 2, 3 are inside.
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_FALSE(gate.enabled());
  WindowSpan span = c.span();
  EXPECT_EQ(span.start_ns, 200 * kMs);
  EXPECT_EQ(span.end_ns, 500 * kMs);
  EXPECT_TRUE(span.started_at_boundary);
  EXPECT_EQ(span.first_iteration, 1u);
  EXPECT_EQ(span.iterations, 3u);
  EXPECT_EQ(span.missed_target, "");
  c.FinishClose();
  EXPECT_EQ(c.state(), WindowState::kDormant);
  EXPECT_EQ(c.capture_start_ns(), INT64_MAX);
}

TEST(WindowControllerTest, NumberedMarkersStartAtTheNextMultiple) {
  EnabledFlag gate;
  WindowController c(&gate);
  WindowPlan plan = IterationPlan(2);
  plan.iteration_multiple = 10;
  ASSERT_TRUE(c.Arm(plan, 0));
  for (uint64_t step = 17; step < 20; ++step) {
    c.OnIterationBoundary(step, static_cast<int64_t>(step) * kS);
    EXPECT_EQ(c.state(), WindowState::kArmed) << step;
  }
  c.OnIterationBoundary(20, 20 * kS);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.OnIterationBoundary(21, 21 * kS);
  c.OnIterationBoundary(22, 22 * kS);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().first_iteration, 20u);
  EXPECT_EQ(c.span().iterations, 2u);
}

TEST(WindowControllerTest, ATimeTargetWaitsForTheFirstBoundaryAfterIt) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(std::nullopt, 0);
  WindowPlan plan = IterationPlan(1);
  plan.not_before_ns = 5 * kS;
  plan.give_up_ns = 65 * kS;
  ASSERT_TRUE(c.Arm(plan, 1 * kS));
  c.OnIterationBoundary(std::nullopt, 4 * kS);
  EXPECT_EQ(c.state(), WindowState::kArmed);
  c.Tick(5 * kS);
  EXPECT_EQ(c.state(), WindowState::kArmed);
  c.OnIterationBoundary(std::nullopt, 6 * kS);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_EQ(c.span().start_ns, 6 * kS);
}

TEST(WindowControllerTest, NoMarkerEverSeenGivesATimedWindowThatSaysWhy) {
  EnabledFlag gate;
  WindowController c(&gate);
  ASSERT_TRUE(c.Arm(IterationPlan(3), 0));
  c.Tick(1 * kMs);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_FALSE(c.span().started_at_boundary);
  EXPECT_NE(c.span().missed_target.find("no iteration marker seen"), std::string::npos);
  c.Tick(5 * kS);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.Tick(10 * kS + 1 * kMs);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().iterations, 0u);
  EXPECT_EQ(c.span().end_ns, 10 * kS + 1 * kMs);
}

TEST(WindowControllerTest, ATargetNeverReachedGivesUpAtItsDeadline) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(3, 0);
  WindowPlan plan = IterationPlan(1);
  plan.iteration_multiple = 1000;
  plan.give_up_ns = 30 * kS;
  ASSERT_TRUE(c.Arm(plan, 0));
  c.OnIterationBoundary(4, 1 * kS);
  c.Tick(29 * kS);
  EXPECT_EQ(c.state(), WindowState::kArmed);
  c.Tick(30 * kS);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_NE(c.span().missed_target.find("no matching iteration boundary"), std::string::npos);
  EXPECT_NE(c.span().missed_target.find("last iteration 4"), std::string::npos);
}

TEST(WindowControllerTest, ATimedWindowEndsAfterItsDuration) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(std::nullopt, 0);
  WindowPlan plan;
  plan.duration_ns = 2 * kS;
  ASSERT_TRUE(c.Arm(plan, 0));
  c.Tick(1 * kMs);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_EQ(c.span().missed_target, "");
  c.OnIterationBoundary(std::nullopt, 1 * kS);  // Boundaries do not end a timed window.
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.Tick(2 * kS + 1 * kMs);
  EXPECT_EQ(c.state(), WindowState::kClosing);
}

TEST(WindowControllerTest, AStalledLoopEndsTheWindowAndSaysSo) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(std::nullopt, 0);
  ASSERT_TRUE(c.Arm(IterationPlan(5), 0));
  c.OnIterationBoundary(std::nullopt, 1 * kS);
  c.OnIterationBoundary(std::nullopt, 2 * kS);
  c.Tick(2 * kS + WindowController::kStallNs - 1);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.Tick(2 * kS + WindowController::kStallNs);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_NE(c.span().missed_target.find("no iteration boundary for"), std::string::npos);
  EXPECT_EQ(c.span().iterations, 1u);  // The one from 1 s to 2 s; the next never finished.
}

TEST(WindowControllerTest, ExitClosesACapturingWindowAndDropsAnArmedOne) {
  EnabledFlag gate;
  WindowController c(&gate);
  ASSERT_TRUE(c.Arm(IterationPlan(2), 0));
  c.OnIterationBoundary(std::nullopt, 0);
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_TRUE(c.EndForExit(1 * kS, "the process exited"));
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_NE(c.span().missed_target.find("the process exited"), std::string::npos);
  c.FinishClose();
  ASSERT_TRUE(c.Arm(IterationPlan(2), 2 * kS));
  EXPECT_FALSE(c.EndForExit(3 * kS, "the process exited"));
  EXPECT_EQ(c.state(), WindowState::kDormant);
  EXPECT_FALSE(gate.enabled());
}

// lumos-ctl cancel: the window whose word the control thread read, and only that one.
TEST(WindowControllerTest, CancelDropsAnArmedWindowAndEndsACapturingOne) {
  using Cancelled = WindowController::Cancelled;
  EnabledFlag gate;
  WindowController c(&gate);
  EXPECT_EQ(c.Cancel(c.word(), 0, "x"), Cancelled::kNothing);  // Dormant: nothing.
  WindowPlan plan = IterationPlan(3);
  plan.request_id = 12;
  ASSERT_TRUE(c.Arm(plan, 0));
  EXPECT_EQ(c.armed_request_id(), 12u);
  uint64_t armed = c.word();
  EXPECT_EQ(WindowController::StateOfWord(armed), WindowState::kArmed);
  EXPECT_EQ(c.Cancel(armed, 1 * kS, "cancelled"), Cancelled::kDropped);
  EXPECT_EQ(c.state(), WindowState::kDormant);
  EXPECT_FALSE(gate.enabled());
  c.OnIterationBoundary(std::nullopt, 2 * kS);  // Dropped: no boundary starts it any more.
  EXPECT_EQ(c.state(), WindowState::kDormant);
  EXPECT_EQ(c.starts(), 0u);

  // Read while armed, started by a job thread before the writer acts: ended instead, and the
  // window says who cancelled it.
  ASSERT_TRUE(c.Arm(plan, 3 * kS));
  armed = c.word();
  c.OnIterationBoundary(std::nullopt, 4 * kS);
  c.OnIterationBoundary(std::nullopt, 5 * kS);
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_EQ(c.Cancel(armed, 5500 * kMs, "cancelled by uid 1 pid 2 (lumos-ctl)"), Cancelled::kEnded);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_FALSE(gate.enabled());
  WindowSpan span = c.span();
  EXPECT_EQ(span.end_ns, 5500 * kMs);
  EXPECT_EQ(span.iterations, 1u);  // The one that began at 4 s; the one at 5 s is cut.
  EXPECT_EQ(span.missed_target, "cancelled by uid 1 pid 2 (lumos-ctl)");
  EXPECT_EQ(c.Cancel(armed, 6 * kS, "again"), Cancelled::kNothing);  // Closing already.
  c.FinishClose();
  EXPECT_EQ(c.Cancel(armed, 6 * kS, "again"), Cancelled::kNothing);  // Ended: dormant.

  // A word of an earlier window never cancels a later one.
  ASSERT_TRUE(c.Arm(plan, 7 * kS));
  EXPECT_EQ(c.Cancel(armed, 7 * kS, "stale"), Cancelled::kNothing);
  EXPECT_EQ(c.state(), WindowState::kArmed);
  // A window that just started (no whole iteration inside yet).
  c.OnIterationBoundary(std::nullopt, 8 * kS);
  const uint64_t capturing = c.word();
  ASSERT_EQ(WindowController::StateOfWord(capturing), WindowState::kCapturing);
  EXPECT_EQ(c.Cancel(capturing, 9 * kS, "cancelled"), Cancelled::kEnded);
  EXPECT_EQ(c.span().iterations, 0u);
}

// No marker seen, but the kernel stream may give boundaries: the window waits for them (until
// its give-up time) instead of starting a timed window at once, and says why when none came.
TEST(WindowControllerTest, KernelStreamBoundariesAreWaitedForUntilTheGiveUpTime) {
  EnabledFlag gate;
  WindowController c(&gate);
  WindowPlan plan = IterationPlan(2);
  plan.kernel_boundaries = true;
  plan.not_before_ns = 1 * kS;
  plan.give_up_ns = 31 * kS;
  ASSERT_TRUE(c.Arm(plan, 0));
  c.Tick(2 * kS);
  EXPECT_EQ(c.state(), WindowState::kArmed);  // Not a timed window yet.
  c.OnKernelBoundary(3 * kS);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.OnKernelBoundary(4 * kS);
  c.OnKernelBoundary(5 * kS);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().iterations, 2u);
  EXPECT_EQ(c.span().missed_target, "");
  EXPECT_EQ(c.kernel_boundaries(), 3u);
  EXPECT_FALSE(c.marker_seen());
  c.FinishClose();

  WindowController none(&gate);
  ASSERT_TRUE(none.Arm(plan, 0));
  none.Tick(30 * kS);
  EXPECT_EQ(none.state(), WindowState::kArmed);
  none.Tick(31 * kS);
  ASSERT_EQ(none.state(), WindowState::kCapturing);
  EXPECT_EQ(none.span().missed_target,
            "no iteration marker seen and no repeating kernel stream found in 30.0 s; a timed "
            "window of 10.0 s instead");
  // An NVTX marker is the job's own word for an iteration: the agent stops feeding launches.
  EXPECT_FALSE(none.marker_seen());
  none.OnIterationBoundary(7, 32 * kS);
  EXPECT_TRUE(none.marker_seen());
  EXPECT_EQ(none.kernel_boundaries(), 0u);
}

// A job whose NVTX marker shows for the first time while a window counts the kernel stream's
// boundaries: the marker wins at once. Until the writer's next pass stops feeding launches, the
// kernel stream's boundaries still come, and counted beside the markers' they made each
// iteration two (a window of 4 iterations ended after 2).
TEST(WindowControllerTest, KernelBoundariesStopCountingOnceAMarkerIsSeen) {
  EnabledFlag gate;
  WindowController c(&gate);
  WindowPlan plan = IterationPlan(4);
  plan.kernel_boundaries = true;
  plan.give_up_ns = 31 * kS;
  ASSERT_TRUE(c.Arm(plan, 0));
  c.OnKernelBoundary(1 * kS);
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  // From the second iteration on the job marks its iterations; the kernel stream's boundary
  // falls mid-iteration, at another kernel.
  for (int64_t k = 2; k <= 4; ++k) {
    c.OnIterationBoundary(std::nullopt, k * kS);
    c.OnKernelBoundary(k * kS + 500 * kMs);
  }
  EXPECT_EQ(c.state(), WindowState::kCapturing);  // 3 iterations so far.
  c.OnIterationBoundary(std::nullopt, 5 * kS);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().end_ns, 5 * kS);
  EXPECT_EQ(c.span().iterations, 4u);
  EXPECT_EQ(c.kernel_boundaries(), 1u);
}

TEST(WindowControllerTest, ALateRequestSaysSoAndStillStartsAtTheNextBoundary) {
  EnabledFlag gate;
  WindowController c(&gate);
  WindowPlan plan = IterationPlan(1);
  plan.missed_at_arm = "the request reached this process 3.0 s after its target time";
  ASSERT_TRUE(c.Arm(plan, 0));
  c.OnIterationBoundary(std::nullopt, 1 * kMs);
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_EQ(c.span().missed_target, plan.missed_at_arm);
  c.OnIterationBoundary(std::nullopt, 2 * kMs);
  EXPECT_EQ(c.span().missed_target, plan.missed_at_arm);
  EXPECT_EQ(c.span().iterations, 1u);
}

// A job thread preempted between reading the state at its boundary and acting on it (the two
// halves of OnIterationBoundary), while the window it saw armed started, ended and the next one
// was armed, must not start that next window at its old boundary (it used to: the CAS saw
// kArmed again, and window 2 started at 1 s, before it was armed at 4 s). Nor may one that saw
// a window capturing end a later one.
TEST(WindowControllerTest, AStaleBoundaryNeverStartsOrEndsALaterWindow) {
  EnabledFlag gate;
  WindowController c(&gate);
  ASSERT_TRUE(c.Arm(IterationPlan(1), 0));
  const WindowController::Boundary stale_armed = c.NoteBoundary(std::nullopt, 1 * kS);
  c.OnIterationBoundary(std::nullopt, 2 * kS);  // Another thread: window 1 starts ...
  c.OnIterationBoundary(std::nullopt, 3 * kS);  // ... and ends.
  ASSERT_EQ(c.state(), WindowState::kClosing);
  c.FinishClose();
  ASSERT_TRUE(c.Arm(IterationPlan(2), 4 * kS));  // Window 2: the next boundary, any index.
  c.ActOnBoundary(stale_armed);
  EXPECT_EQ(c.state(), WindowState::kArmed);
  EXPECT_FALSE(gate.enabled());
  EXPECT_EQ(c.starts(), 1u);

  c.OnIterationBoundary(std::nullopt, 5 * kS);  // Window 2 starts here.
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  const WindowController::Boundary stale_capturing = c.NoteBoundary(std::nullopt, 6 * kS);
  c.OnIterationBoundary(std::nullopt, 7 * kS);  // Its second iteration ends window 2.
  ASSERT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().iterations, 2u);
  c.FinishClose();
  ASSERT_TRUE(c.Arm(IterationPlan(3), 8 * kS));
  c.OnIterationBoundary(std::nullopt, 9 * kS);  // Window 3 starts.
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  c.ActOnBoundary(stale_capturing);  // Counted before window 3: it does not end it.
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_TRUE(gate.enabled());
  EXPECT_EQ(c.span().start_ns, 9 * kS);
}

// A window the timer started because no boundary matched is the timed window it says it is:
// boundaries do not end it (they used to, after K of them, with an iteration count of 0).
TEST(WindowControllerTest, AWindowTheTimerStartedEndsByTimeOnly) {
  EnabledFlag gate;
  WindowController c(&gate);
  c.OnIterationBoundary(3, 0);
  WindowPlan plan = IterationPlan(2);
  plan.iteration_multiple = 1000;
  plan.give_up_ns = 30 * kS;
  ASSERT_TRUE(c.Arm(plan, 0));
  c.Tick(30 * kS);
  ASSERT_EQ(c.state(), WindowState::kCapturing);
  EXPECT_NE(c.span().missed_target.find("a timed window of 10.0 s instead"), std::string::npos);
  for (uint64_t step = 4; step < 10; ++step) {
    c.OnIterationBoundary(step, 30 * kS + static_cast<int64_t>(step) * kMs);
    EXPECT_EQ(c.state(), WindowState::kCapturing) << step;
  }
  c.Tick(40 * kS - 1);
  EXPECT_EQ(c.state(), WindowState::kCapturing);
  c.Tick(40 * kS);
  EXPECT_EQ(c.state(), WindowState::kClosing);
  EXPECT_EQ(c.span().end_ns, 40 * kS);
}

TEST(WindowControllerTest, AForkChildNeverStartsAWindow) {
  EnabledFlag gate;
  WindowController c(&gate);
  ASSERT_TRUE(c.Arm(IterationPlan(1), 0));
  c.DisableInForkChild();
  c.OnIterationBoundary(std::nullopt, 1 * kS);
  c.Tick(100 * kS);
  EXPECT_EQ(c.state(), WindowState::kDormant);
  EXPECT_FALSE(gate.enabled());
}

// The exit's end while a window is armed, capturing or closing; dormant stays dormant.
TEST(WindowControllerTest, EndForExitInEveryState) {
  EnabledFlag gate;
  WindowController c(&gate);
  EXPECT_FALSE(c.EndForExit(0, "exit"));
  EXPECT_EQ(c.state(), WindowState::kDormant);
  ASSERT_TRUE(c.Arm(IterationPlan(1), 0));
  c.OnIterationBoundary(std::nullopt, 1 * kS);
  c.OnIterationBoundary(std::nullopt, 2 * kS);
  ASSERT_EQ(c.state(), WindowState::kClosing);
  EXPECT_TRUE(c.EndForExit(3 * kS, "exit"));  // Ended already: the writer closes it.
  EXPECT_EQ(c.span().end_ns, 2 * kS);
  EXPECT_EQ(c.span().missed_target, "");
}

TEST(WindowControllerTest, ArmOnlyWhenDormant) {
  EnabledFlag gate;
  WindowController c(&gate);
  ASSERT_TRUE(c.Arm(IterationPlan(1), 0));
  EXPECT_FALSE(c.Arm(IterationPlan(1), 0));
}

TEST(PeriodicScheduleTest, RanksOfAJobAgreeAndJobsSpread) {
  const int64_t period = 600 * kS;
  const int64_t now = 1'764'633'600LL * kS + 123 * kS;
  const int64_t a = NextPeriodicStart(now, period, 0.1, "job-a");
  // Another rank of the same job, a little later (its clock, its start): the same slot.
  EXPECT_EQ(NextPeriodicStart(now + 7 * kS, period, 0.1, "job-a"), a);
  EXPECT_GT(a, now);
  EXPECT_LE(a - now, period + period / 10);
  // Within its slot's jitter range.
  EXPECT_LT(a % period, period / 10);
  std::set<int64_t> starts;
  for (int job = 0; job < 50; ++job) {
    starts.insert(NextPeriodicStart(now, period, 0.1, "job-" + std::to_string(job)));
  }
  EXPECT_GT(starts.size(), 45u);  // Jobs of a fleet do not fire together.
  // No jitter: the slot boundary itself.
  EXPECT_EQ(NextPeriodicStart(now, period, 0.0, "job-a") % period, 0);
  // The next slot after a start is a period later (give or take the jitter).
  const int64_t b = NextPeriodicStart(a, period, 0.1, "job-a");
  EXPECT_GT(b, a);
  EXPECT_LT(b - a, period + period / 10);
}

TEST(IterationMarkerTest, GlobsAndIndices) {
  EXPECT_TRUE(GlobMatch("ProfilerStep*", "ProfilerStep#12"));
  EXPECT_TRUE(GlobMatch("step", "step"));
  EXPECT_FALSE(GlobMatch("step", "steps"));
  EXPECT_TRUE(GlobMatch("*iteration?", "train iteration7"));
  EXPECT_TRUE(GlobMatch("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatch("a*b*c", "axxbyy"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_EQ(TrailingNumber("ProfilerStep#12"), 12u);
  EXPECT_EQ(TrailingNumber("step 7"), 7u);
  EXPECT_EQ(TrailingNumber("step"), std::nullopt);
  EXPECT_EQ(TrailingNumber("n1234567890123456789"), std::nullopt);  // Does not fit.
  IterationMarker marker("ProfilerStep*");
  EXPECT_TRUE(marker.MayMatch("ProfilerStep#1"));
  EXPECT_FALSE(marker.MayMatch("aten::mm"));
  EXPECT_FALSE(marker.MayMatch(nullptr));
  EXPECT_TRUE(marker.MayMatch("Pzz"));  // A candidate only; Matches decides.
  EXPECT_FALSE(marker.Matches("Pzz"));
  IterationMarker any("*step");
  EXPECT_TRUE(any.MayMatch("x"));
  EXPECT_FALSE(IterationMarker().MayMatch("step"));
}

// Wide names (nvtxRangePushW, NVTX_MESSAGE_TYPE_UNICODE): their first character against the
// pattern's first code point, decoded from UTF-8.
TEST(IterationMarkerTest, WideCandidates) {
  IterationMarker marker("ProfilerStep*");
  EXPECT_TRUE(marker.MayMatchWide(L"ProfilerStep#1"));
  EXPECT_TRUE(marker.MayMatchWide(L"Pzz"));
  EXPECT_FALSE(marker.MayMatchWide(L"aten::mm"));
  EXPECT_FALSE(marker.MayMatchWide(L""));
  EXPECT_FALSE(marker.MayMatchWide(nullptr));
  EXPECT_FALSE(IterationMarker().MayMatchWide(L"step"));
  EXPECT_TRUE(IterationMarker("?tep").MayMatchWide(L"x"));
  // A non-ASCII first character: "\u00e9tape*" (2 bytes), "\u6b65*" (3), "\U0001F680*" (4).
  IterationMarker etape("\xc3\xa9tape*");
  EXPECT_TRUE(etape.MayMatchWide(L"\u00e9tape 3"));
  EXPECT_FALSE(etape.MayMatchWide(L"etape 3"));
  EXPECT_FALSE(etape.MayMatchWide(L"\u00c3"));  // The lead byte's value is not the character.
  EXPECT_TRUE(IterationMarker("\xe6\xad\xa5*").MayMatchWide(L"\u6b65 1"));
  EXPECT_TRUE(IterationMarker("\xf0\x9f\x9a\x80*").MayMatchWide(L"\U0001F680"));
  // Not valid UTF-8 there: every wide name is a candidate (Matches decides).
  EXPECT_TRUE(IterationMarker("\xff*").MayMatchWide(L"anything"));
  EXPECT_TRUE(IterationMarker("\xc3(").MayMatchWide(L"anything"));
}

}  // namespace
}  // namespace lumos::agent::control
