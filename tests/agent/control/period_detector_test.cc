// The kernel-stream period detector (agent/control/period_detector.h) on synthetic streams:
// a clean loop, warm-up kernels, a loop whose iteration repeats layers inside, noise kernels,
// a period that changes, streams without a period. Each id stands for a launched function.
#include "agent/control/period_detector.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "agent/control/kernel_boundaries.h"
#include "agent/control/window_controller.h"

namespace lumos::agent::control {
namespace {

// The launch indices where Feed() reported a boundary.
std::vector<uint64_t> Boundaries(PeriodDetector* detector, const std::vector<uint64_t>& ids) {
  std::vector<uint64_t> at;
  for (uint64_t id : ids) {
    const uint64_t index = detector->launches();
    if (detector->Feed(id)) at.push_back(index);
  }
  return at;
}

// `count` iterations of `iteration`.
std::vector<uint64_t> Repeat(const std::vector<uint64_t>& iteration, int count) {
  std::vector<uint64_t> ids;
  for (int i = 0; i < count; ++i) ids.insert(ids.end(), iteration.begin(), iteration.end());
  return ids;
}

std::vector<uint64_t> Distinct(uint64_t first, size_t n) {
  std::vector<uint64_t> ids;
  for (size_t i = 0; i < n; ++i) ids.push_back(first + i * 0x40);  // Like aligned functions.
  return ids;
}

// A transformer-like step: embedding, `layers` identical layers forward, the loss, the layers
// backward, the optimizer.
std::vector<uint64_t> TransformerStep(int layers) {
  std::vector<uint64_t> step = {0x1000};  // Embedding.
  const std::vector<uint64_t> forward = Distinct(0x2000, 6), backward = Distinct(0x3000, 9);
  for (int l = 0; l < layers; ++l) step.insert(step.end(), forward.begin(), forward.end());
  step.push_back(0x4000);  // Loss.
  for (int l = 0; l < layers; ++l) step.insert(step.end(), backward.begin(), backward.end());
  step.push_back(0x5000);                                          // Embedding backward.
  for (int chunk = 0; chunk < 3; ++chunk) step.push_back(0x6000);  // Optimizer chunks.
  return step;
}

TEST(PeriodDetectorTest, ACleanLoopHasABoundaryAtEveryRepetitionFromTheThird) {
  PeriodDetector detector;
  const std::vector<uint64_t> step = Distinct(0x7000, 20);
  const std::vector<uint64_t> at = Boundaries(&detector, Repeat(step, 10));
  EXPECT_EQ(detector.period(), 20u);
  // The first two copies make the lock; then the start of every copy.
  std::vector<uint64_t> expected;
  for (uint64_t k = 2; k < 10; ++k) expected.push_back(k * 20);
  EXPECT_EQ(at, expected);
  EXPECT_EQ(detector.boundaries(), 8u);
  EXPECT_EQ(detector.boundaries_in_lock(), 8u);
}

TEST(PeriodDetectorTest, WarmUpKernelsBeforeTheLoopAreNotPartOfIt) {
  PeriodDetector detector;
  std::vector<uint64_t> ids = Distinct(0x100000, 37);  // Warm-up: compiled once, launched once.
  ids.push_back(0x7000);                               // ... one of the loop's kernels among them.
  const std::vector<uint64_t> step = Distinct(0x7000, 25);
  const std::vector<uint64_t> loop = Repeat(step, 8);
  ids.insert(ids.end(), loop.begin(), loop.end());
  const std::vector<uint64_t> at = Boundaries(&detector, ids);
  EXPECT_EQ(detector.period(), 25u);
  ASSERT_EQ(at.size(), 6u);
  for (size_t k = 0; k < at.size(); ++k) {
    EXPECT_EQ(ids[at[k]], 0x7000u) << k;  // The loop's first kernel: the repetition began there.
    if (k > 0) {
      EXPECT_EQ(at[k] - at[k - 1], 25u);
    }
  }
}

// Identical layers repeat inside the step: the step's period wins once it has repeated, and
// from then on every boundary is a step apart, at the same kernel.
TEST(PeriodDetectorTest, LayersInsideAStepDoNotHideTheStep) {
  PeriodDetector detector;
  const std::vector<uint64_t> step = TransformerStep(12);
  const size_t p = step.size();
  const std::vector<uint64_t> ids = Repeat(step, 12);
  const std::vector<uint64_t> at = Boundaries(&detector, ids);
  EXPECT_EQ(detector.period(), p);
  std::vector<uint64_t> late;  // From the third step on.
  for (uint64_t index : at) {
    if (index >= 3 * p) late.push_back(index);
  }
  ASSERT_EQ(late.size(), 9u);
  for (size_t k = 1; k < late.size(); ++k) EXPECT_EQ(late[k] - late[k - 1], p);
  for (uint64_t index : late) EXPECT_EQ(ids[index], ids[late[0]]);
  // In its third step on the lock never left the step's period.
  EXPECT_GE(detector.boundaries_in_lock(), 9u);
}

// A kernel launched once now and then (or a launch lost): the boundaries go on, a step apart
// (one step longer by the noise), and the lock stays the step's.
TEST(PeriodDetectorTest, NoiseKernelsDoNotLoseTheLoop) {
  PeriodDetector detector;
  const std::vector<uint64_t> step = Distinct(0x7000, 30);
  std::vector<uint64_t> ids;
  for (int k = 0; k < 40; ++k) {
    ids.insert(ids.end(), step.begin(), step.end());
    if (k % 7 == 3) ids.push_back(0x900000 + k);  // An extra, once-only launch.
    if (k % 11 == 5) ids.erase(ids.end() - 10);   // A launch not seen.
  }
  const std::vector<uint64_t> at = Boundaries(&detector, ids);
  EXPECT_EQ(detector.period(), 30u);
  ASSERT_GE(at.size(), 30u);
  for (size_t k = 1; k < at.size(); ++k) {
    const uint64_t gap = at[k] - at[k - 1];
    EXPECT_GE(gap, 29u) << k;
    EXPECT_LE(gap, 31u) << k;
  }
}

TEST(PeriodDetectorTest, APeriodThatChangesIsFollowed) {
  PeriodDetector detector;
  const std::vector<uint64_t> first = Repeat(Distinct(0x7000, 40), 10);
  const std::vector<uint64_t> second = Repeat(Distinct(0x8000, 24), 20);  // Evaluation, say.
  std::vector<uint64_t> ids = first;
  ids.insert(ids.end(), second.begin(), second.end());
  const std::vector<uint64_t> at = Boundaries(&detector, ids);
  EXPECT_EQ(detector.period(), 24u);
  // The old lock's boundaries stop once it is stale (kStaleFactor of its periods without its
  // pattern); the new period takes the lock after kSwitchPeriods of its own, and its
  // boundaries are a period apart from then on.
  const uint64_t stale = first.size() + PeriodDetector::kStaleFactor * 40 + 1;
  std::vector<uint64_t> after;
  for (uint64_t index : at) {
    if (index >= stale) after.push_back(index);
  }
  ASSERT_GE(after.size(), 14u);
  EXPECT_LE(after[0], first.size() + (2 + PeriodDetector::kSwitchPeriods) * 24);
  for (size_t k = 1; k < after.size(); ++k) EXPECT_EQ(after[k] - after[k - 1], 24u);
  for (uint64_t index : after) EXPECT_EQ(ids[index], ids[after[0]]);
}

TEST(PeriodDetectorTest, StreamsWithoutAPeriodGiveNoBoundaries) {
  PeriodDetector detector;
  std::vector<uint64_t> ids;
  uint64_t state = 12345;
  for (int i = 0; i < 20000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    ids.push_back(0x7000 + ((state >> 33) % 12) * 0x40);  // 12 kernels, in no order.
  }
  EXPECT_TRUE(Boundaries(&detector, ids).empty());
  EXPECT_EQ(detector.period(), 0u);
  // The same kernel over and over for fewer than kMinRun launches is not a loop either.
  PeriodDetector repeats;
  EXPECT_TRUE(Boundaries(&repeats, std::vector<uint64_t>(PeriodDetector::kMinRun, 0x7000)).empty());
}

TEST(PeriodDetectorTest, APeriodLongerThanTheMaximumIsNotFound) {
  PeriodDetector detector(64);
  EXPECT_EQ(detector.max_period(), 64u);
  EXPECT_TRUE(Boundaries(&detector, Repeat(Distinct(0x7000, 65), 5)).empty());
  EXPECT_EQ(detector.period(), 0u);
  // Reset forgets it all; the same detector finds a loop within its limit.
  detector.Reset();
  EXPECT_EQ(detector.launches(), 0u);
  EXPECT_EQ(Boundaries(&detector, Repeat(Distinct(0x9000, 64), 4)).size(), 2u);
  EXPECT_EQ(detector.period(), 64u);
}

// Between windows the detector is not fed (CUPTI's callbacks are off): the launches of the next
// armed window do not follow the last ones fed. No boundary may fall mid-iteration then: every
// one the next window sees is at the kernel the earlier window's were (a window started or
// ended at another kernel would hold a partial iteration).
TEST(KernelBoundariesTest, AWindowArmedAgainAfterAGapSeesBoundariesOnlyAtTheSameKernel) {
  EnabledFlag gate;
  WindowController windows(&gate);
  KernelBoundaries kernel(&windows);
  const std::vector<uint64_t> step = Distinct(0x7000, 20);
  uint64_t position = 0;  // Every launch of the job, fed or not: the boundaries' times.
  std::vector<uint64_t> at;
  auto run = [&](size_t launches, bool fed) {
    for (size_t n = 0; n < launches; ++n, ++position) {
      if (!fed) continue;
      const uint64_t before = windows.boundaries();
      kernel.OnLaunch(step[position % step.size()], static_cast<int64_t>(position));
      if (windows.boundaries() != before) {
        at.push_back(static_cast<uint64_t>(windows.last_boundary_ns()));
      }
    }
  };
  WindowPlan plan;
  plan.iterations = 2;
  plan.duration_ns = INT64_MAX / 2;
  plan.give_up_ns = INT64_MAX;
  plan.kernel_boundaries = true;
  ASSERT_TRUE(windows.Arm(plan, 0));
  kernel.SetWanted(true);
  run(6 * step.size(), true);
  ASSERT_EQ(windows.state(), WindowState::kClosing);
  windows.FinishClose();
  kernel.SetWanted(false);
  for (uint64_t index : at) EXPECT_EQ(step[index % step.size()], step[0]) << index;
  at.clear();
  run(step.size() * 50 + 7, false);  // Dormant: 50 steps and 7 launches nobody saw.
  ASSERT_TRUE(windows.Arm(plan, 0));
  kernel.SetWanted(true);
  run(10 * step.size(), true);
  EXPECT_EQ(windows.state(), WindowState::kClosing);
  EXPECT_EQ(windows.span().iterations, 2u);
  ASSERT_FALSE(at.empty());
  for (uint64_t index : at) EXPECT_EQ(step[index % step.size()], step[0]) << index;
}

}  // namespace
}  // namespace lumos::agent::control
