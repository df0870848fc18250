#include "agent/core/fast_clock.h"

#include <time.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace lumos::agent {
namespace {

// A synthetic clock: `ns_per_tick` as an exact fraction, so pairs carry no noise.
ClockPair SyntheticPair(uint64_t tsc, uint64_t tsc0, int64_t mono0, int64_t ns_num,
                        int64_t ns_den) {
  return ClockPair{tsc, mono0 + static_cast<int64_t>((tsc - tsc0) * ns_num / ns_den), 20};
}

TEST(FastClockTest, TscToNsMapsBothSidesOfTheAnchor) {
  const uint64_t half_ns_per_tick = uint64_t{1} << (kTscShift - 1);
  EXPECT_EQ(TscToNs(1000, 5000, half_ns_per_tick, 1000), 5000);
  EXPECT_EQ(TscToNs(1000, 5000, half_ns_per_tick, 3000), 6000);
  EXPECT_EQ(TscToNs(1000, 5000, half_ns_per_tick, 800), 4900);  // Read before the anchor.
  // Far from the anchor (an hour at 3 GHz) the 128-bit product does not overflow.
  const uint64_t hour_ticks = uint64_t{3'000'000'000} * 3600;
  const uint64_t third_ns_per_tick = (uint64_t{1} << kTscShift) / 3;
  const int64_t hour_ns = TscToNs(0, 0, third_ns_per_tick, hour_ticks);
  EXPECT_NEAR(static_cast<double>(hour_ns), 3600e9, 3600e9 * 1e-9);
}

TEST(FastClockTest, CalibratesTheRateFromSyntheticTicks) {
  // 2.5 GHz: 0.4 ns per tick.
  const uint64_t tsc0 = 123'456'789;
  const int64_t mono0 = 1'000'000'000;
  TscCalibrator calibrator;
  calibrator.Begin(SyntheticPair(tsc0, tsc0, mono0, 2, 5));
  TscCalibrator::Result first =
      calibrator.Refine(SyntheticPair(tsc0 + 25'000'000, tsc0, mono0, 2, 5), 20'000'000);
  ASSERT_TRUE(first.ok) << first.why;
  ASSERT_TRUE(first.publish);
  EXPECT_EQ(first.error_ns, 0);
  // Ten seconds later the mapping is still exact to the rounding.
  const uint64_t later = tsc0 + 25'000'000'000;
  const TscCalibrator::Params& p = first.params;
  EXPECT_NEAR(static_cast<double>(TscToNs(p.anchor_tsc, p.anchor_ns, p.mult, later)),
              static_cast<double>(mono0 + 10'000'000'000), 2.0);
  TscCalibrator::Result second = calibrator.Refine(SyntheticPair(later, tsc0, mono0, 2, 5), 1e9);
  ASSERT_TRUE(second.ok) << second.why;
  EXPECT_LE(std::abs(second.error_ns), 2);
  EXPECT_LE(calibrator.max_abs_error_ns(), 2);
}

TEST(FastClockTest, RefinementIsContinuousAndSlewsTheErrorAway) {
  // The first estimate is 50 ppm fast (a noisy first pair); later pairs are exact.
  const uint64_t tsc0 = 0;
  TscCalibrator calibrator;
  calibrator.Begin(ClockPair{tsc0, 0, 20});
  TscCalibrator::Result first = calibrator.Refine(ClockPair{10'000'000, 10'000'500, 20}, 1e7);
  ASSERT_TRUE(first.ok);
  const TscCalibrator::Params before = first.params;
  // 1 tick = 1 ns in truth; at 20 ms the first mapping reads 500 + 50 ppm of 10 ms late.
  const uint64_t tsc = 20'000'000;
  TscCalibrator::Result second = calibrator.Refine(ClockPair{tsc, 20'000'000, 20}, 20'000'000);
  ASSERT_TRUE(second.ok) << second.why;
  EXPECT_GT(second.error_ns, 900);
  // No jump: the new mapping starts where the old one is.
  EXPECT_EQ(second.params.anchor_ns,
            TscToNs(before.anchor_tsc, before.anchor_ns, before.mult, tsc));
  // And it runs slower than the true rate, so the error shrinks by the next refinement.
  const TscCalibrator::Params& p = second.params;
  const int64_t at_next = TscToNs(p.anchor_tsc, p.anchor_ns, p.mult, tsc + 20'000'000);
  EXPECT_LT(std::abs(at_next - 40'000'000), second.error_ns / 4);
  EXPECT_GT(at_next, p.anchor_ns);  // Still moving forward.
}

TEST(FastClockTest, RejectsTimeGoingBackwards) {
  TscCalibrator calibrator;
  calibrator.Begin(ClockPair{1000, 1000, 20});
  ASSERT_TRUE(calibrator.Refine(ClockPair{11'000, 11'000, 20}, 10'000).ok);
  TscCalibrator::Result tsc_back = calibrator.Refine(ClockPair{10'000, 21'000, 20}, 10'000);
  EXPECT_FALSE(tsc_back.ok);
  EXPECT_FALSE(tsc_back.publish);
  EXPECT_NE(tsc_back.why.find("backwards"), std::string::npos);

  TscCalibrator other;
  other.Begin(ClockPair{1000, 1000, 20});
  ASSERT_TRUE(other.Refine(ClockPair{11'000, 11'000, 20}, 10'000).ok);
  EXPECT_FALSE(other.Refine(ClockPair{21'000, 10'000, 20}, 10'000).ok);
}

TEST(FastClockTest, RejectsARateThatMovesMoreThanOnePercent) {
  TscCalibrator calibrator;
  calibrator.Begin(ClockPair{0, 0, 20});
  ASSERT_TRUE(calibrator.Refine(ClockPair{10'000'000, 10'000'000, 20}, 1e7).ok);
  // The TSC slows to half: over the long baseline the rate is 1.5 ns per tick.
  TscCalibrator::Result result = calibrator.Refine(ClockPair{15'000'000, 20'000'000, 20}, 1e7);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.why.find("1%"), std::string::npos);
}

TEST(FastClockTest, RejectsAnErrorAboveOneMillisecond) {
  TscCalibrator calibrator;
  calibrator.Begin(ClockPair{0, 0, 20});
  ASSERT_TRUE(calibrator.Refine(ClockPair{1'000'000'000, 1'000'000'000, 20}, 1e9).ok);
  // 0.3% off over ten seconds: within the rate bound, 27 ms from the mapping.
  TscCalibrator::Result result =
      calibrator.Refine(ClockPair{10'000'000'000, 10'030'000'000, 20}, 1e9);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.why.find("1 ms"), std::string::npos);
}

// On this machine: started and refined as the writer does, the fast clock stays within a
// generous bound of clock_gettime, measured against a bracket (a preempted read widens the
// bracket rather than the error). Correctness bound only; no timing is asserted.
TEST(FastClockTest, AgreesWithClockGettimeOnThisMachine) {
  if (!TscUsable()) GTEST_SKIP() << "no invariant TSC here";
  FastClock clock;
  ASSERT_TRUE(clock.Start(/*steady_refine_ns=*/50'000'000));
  int64_t max_error_ns = 0;
  int64_t previous = 0;
  for (int round = 0; round < 30; ++round) {
    const timespec pause{0, 10'000'000};
    nanosleep(&pause, nullptr);
    clock.RefineIfDue();
    for (int i = 0; i < 1000; ++i) {
      const int64_t before = ReadMonotonicNs();
      const int64_t fast = FastMonotonicNs();
      const int64_t after = ReadMonotonicNs();
      if (fast < before) max_error_ns = std::max(max_error_ns, before - fast);
      if (fast > after) max_error_ns = std::max(max_error_ns, fast - after);
      EXPECT_GE(fast, previous);  // Monotonic on one thread, across refinements too.
      previous = fast;
    }
  }
  // This test's clock is a local FastClock; the global mapping it publishes is what
  // FastMonotonicNs reads, so leave the process on clock_gettime for the other tests.
  EXPECT_TRUE(clock.running());
  clock.Disable("test over");
  EXPECT_FALSE(clock.running());
  EXPECT_EQ(g_tsc_mapping.load(), nullptr);
  // Noise here is tens of ns; 100 us leaves room for a noisy VM and still catches a wrong rate.
  EXPECT_LT(max_error_ns, 100'000) << "max |fast - clock_gettime| " << max_error_ns << " ns";
  RecordProperty("max_error_ns", std::to_string(max_error_ns));
}

TEST(FastClockTest, DisabledClockFallsBackToClockGettime) {
  FastClock clock;
  clock.Disable("because a test says so");
  EXPECT_FALSE(clock.Start(1'000'000'000));  // Off for the rest of the run.
  EXPECT_FALSE(clock.running());
  EXPECT_EQ(clock.NsUntilRefine(), -1);
  const int64_t before = ReadMonotonicNs();
  const int64_t now = FastMonotonicNs();
  EXPECT_GE(now, before);
  EXPECT_LE(now, ReadMonotonicNs());
}

}  // namespace
}  // namespace lumos::agent
