// Iterations as users time them (modeler/analysis/iteration_ranges.h): from a range's start to
// the next one's, the last to the end of its work, the warm-up left out by the stated rule or
// as --iterations chooses; on hand-built jobs worked out by hand and on the real H200 loop of
// ../shared/data/traces/h200-pytorch (whose step times the loop measured itself, steps.csv).
#include "modeler/analysis/iteration_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "modeler/analysis/analysis_options.h"
#include "modeler/graph/clock_alignment.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler {
namespace {

using schema::ApiKind;
using testing::kUs;
using testing::RankBuilder;
using testing::Replay;

AnalysisOptions StepRanges() {
  AnalysisOptions options;
  EXPECT_TRUE(SetIterationPattern("^step$", &options).ok());
  return options;
}

// A loop as PyTorch's runs it: the `step` range closes once the host has launched the step; a
// synchronize after it waits for the GPU; the next step starts after a little Python.
//   step [0,20)   launch [5,10) -> kernel [10,90)   sync [25,92)
//   step [100,120) launch [105,110) -> kernel [110,170)   sync [125,172)
Job SyncAfterStepJob() {
  Job job;
  RankBuilder(&job, 0, 1)
      .Step("step", 0, 20)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 5, 5, 1, 7)
      .Kernel("gemm", 7, 10, 80, 1)
      .Api(ApiKind::kDeviceSynchronize, "cudaDeviceSynchronize", 25, 67, 2)
      .Step("step", 100, 20)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 105, 5, 3, 7)
      .Kernel("gemm", 7, 110, 60, 3)
      .Api(ApiKind::kDeviceSynchronize, "cudaDeviceSynchronize", 125, 47, 4);
  return job;
}

TEST(IterationRangesTest, AnIterationRunsFromItsRangeToTheNextOneAndTheLastToItsWork) {
  const Job job = SyncAfterStepJob();
  const testing::Replayed r = Replay(job);
  const RankIterations found = FindIterations(job, r.graph, 0, StepRanges());
  ASSERT_EQ(found.ranges.size(), 2u);
  EXPECT_EQ(found.source, IterationSource::kRanges);
  EXPECT_EQ(found.ranges[0].start_ns, 0);
  EXPECT_EQ(found.ranges[0].end_ns, 100 * kUs);  // The next step's start, not the range's 20.
  EXPECT_EQ(found.ranges[1].start_ns, 100 * kUs);
  // Its kernel ends at 170; the synchronize that waited for it returns at 172.
  EXPECT_EQ(found.ranges[1].end_ns, 172 * kUs);
}

TEST(IterationRangesTest, ANestedRangeKeepsTheEndOfTheOneAroundIt) {
  Job job;
  RankBuilder(&job, 0, 1)
      .Step("step", 0, 50)
      .Step("step", 10, 20)  // Matches too, inside the first: the first keeps its end.
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 12, 3, 1, 7)
      .Kernel("gemm", 7, 15, 5, 1);
  const testing::Replayed r = Replay(job);
  const RankIterations found = FindIterations(job, r.graph, 0, StepRanges());
  ASSERT_EQ(found.ranges.size(), 2u);
  EXPECT_EQ(found.ranges[0].end_ns, 50 * kUs);
}

TEST(IterationRangesTest, WarmupIsTheLeadingIterationsLongerThanOneAndAHalfMedians) {
  EXPECT_EQ(LeadingWarmup({}), 0u);
  EXPECT_EQ(LeadingWarmup({500}), 0u);
  EXPECT_EQ(LeadingWarmup({500, 15, 15, 16, 15}), 1u);
  EXPECT_EQ(LeadingWarmup({500, 40, 15, 16, 15, 15}), 2u);
  EXPECT_EQ(LeadingWarmup({15, 500, 15, 15}), 0u);  // Only leading ones.
  EXPECT_EQ(LeadingWarmup({22, 15, 15, 15}), 0u);   // 1.47 x the median: steady enough.
  EXPECT_EQ(LeadingWarmup({23, 15, 15, 15}), 1u);   // 1.53 x.
  EXPECT_EQ(LeadingWarmup({90, 80, 70, 10, 10, 10, 10}), 3u);
}

// Two ranks, ProfilerStep#N ranges: rank 0's first iteration is long, rank 1's first two.
Job WarmupJob() {
  Job job;
  for (int32_t rank : {0, 1}) {
    RankBuilder b(&job, rank, 2);
    const std::vector<int64_t> lengths = rank == 0 ? std::vector<int64_t>{400, 20, 20, 20, 20, 20}
                                                   : std::vector<int64_t>{400, 60, 20, 20, 20, 20};
    int64_t start = 0;
    uint64_t correlation = 1;
    for (size_t k = 0; k < lengths.size(); ++k) {
      b.Step("ProfilerStep#" + std::to_string(k), start, lengths[k]);
      b.Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", start + 1, 2, correlation, 7);
      b.Kernel("gemm", 7, start + 3, lengths[k] - 5, correlation);
      ++correlation;
      start += lengths[k];
    }
  }
  return job;
}

TEST(IterationRangesTest, TheJobLeavesOutTheMostWarmupAnyRankShowsOnEveryRank) {
  const Job job = WarmupJob();
  const testing::Replayed r = Replay(job);
  const JobIterations its = FindJobIterations(job, r.graph, AnalysisOptions());
  ASSERT_EQ(its.ranks.size(), 2u);
  EXPECT_EQ(its.found, 6u);
  EXPECT_EQ(its.first, 2u);
  EXPECT_EQ(its.kept, 4u);
  for (const RankIterations& rank : its.ranks) {
    ASSERT_EQ(rank.ranges.size(), 4u);
    EXPECT_EQ(rank.ranges[0].name, "ProfilerStep#2");
  }
  EXPECT_EQ(its.choice,
            "iterations 3-6 of 6: iterations 1-2 left out as warm-up (400 µs, ..., longer than "
            "1.5 x the median 20 µs on rank 1; --iterations all keeps them)");
}

TEST(IterationRangesTest, IterationsChoosesByOrdinal) {
  const Job job = WarmupJob();
  const testing::Replayed r = Replay(job);
  AnalysisOptions options;
  ASSERT_TRUE(SetIterationChoice("all", &options).ok());
  JobIterations its = FindJobIterations(job, r.graph, options);
  EXPECT_EQ(its.kept, 6u);
  EXPECT_EQ(its.choice, "all 6 (--iterations all)");
  ASSERT_TRUE(SetIterationChoice("2-3", &options).ok());
  its = FindJobIterations(job, r.graph, options);
  ASSERT_EQ(its.ranks[0].ranges.size(), 2u);
  EXPECT_EQ(its.ranks[0].ranges[0].name, "ProfilerStep#1");
  EXPECT_EQ(its.choice, "iterations 2-3 of 6 (--iterations 2-3)");
  ASSERT_TRUE(SetIterationChoice("5-", &options).ok());
  its = FindJobIterations(job, r.graph, options);
  EXPECT_EQ(its.kept, 2u);
  EXPECT_EQ(its.choice, "iterations 5-6 of 6 (--iterations 5-)");
  ASSERT_TRUE(SetIterationChoice("4", &options).ok());
  its = FindJobIterations(job, r.graph, options);
  EXPECT_EQ(its.choice, "iteration 4 of 6 (--iterations 4)");
  ASSERT_TRUE(SetIterationChoice("9-", &options).ok());
  its = FindJobIterations(job, r.graph, options);
  EXPECT_EQ(its.kept, 0u);
  EXPECT_EQ(its.choice, "none of 6 (--iterations 9-)");
}

TEST(IterationRangesTest, ABadIterationsChoiceIsOneErrorNamingIt) {
  AnalysisOptions options;
  for (const char* bad :
       {"", "0", "0-3", "5-2", "-3", "a", "1-b", "1--", " 1", "1,2", "99999999999999999999"}) {
    const Status status = SetIterationChoice(bad, &options);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_NE(status.message().find(std::string("--iterations '") + bad + "'"), std::string::npos)
        << status.message();
  }
}

// The real loop (est-base: 10 warm-up steps, then 30 measured; the first includes CUDA and
// cuBLAS start-up). Iterations from one `step` range to the next are the loop's own step times:
// its median, which the loop measured with perf_counter around step + synchronize, is 15.321 ms
// (steps.csv, run est-base); the ranges alone last about 12 ms.
TEST(IterationRangesTest, TheRealH200LoopsIterationsAreItsMeasuredSteps) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-base.pb.zst";
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
  const JobIterations its = FindJobIterations(*job, graph, StepRanges());
  ASSERT_EQ(its.ranks.size(), 1u);
  EXPECT_EQ(its.found, 40u);
  EXPECT_GE(its.first, 1u);
  EXPECT_LE(its.first, 3u);
  std::vector<int64_t> lengths;
  for (const IterationRange& range : its.ranks[0].ranges) {
    lengths.push_back(range.end_ns - range.start_ns);
  }
  std::sort(lengths.begin(), lengths.end());
  const double median_ms = static_cast<double>(lengths[lengths.size() / 2]) / 1e6;
  EXPECT_NEAR(median_ms, 15.321, 15.321 * 0.03);
  // The start-up step is gone: the longest kept is within 1.5 medians.
  EXPECT_LE(static_cast<double>(lengths.back()) / 1e6, 1.5 * median_ms);
}

// est-layers lost 18,316 events to full rings (the agent before issue 23): two LossRecords,
// from 6.29 s and 6.61 s into the trace on the autograd and the main thread. Iterations from
// the first one they overlap on replay without those events, so the default choice stops
// before it and says so.
TEST(IterationRangesTest, IterationsInWhichTheTraceLostEventsAreLeftOut) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-layers.pb.zst";
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks[0].losses.size(), 2u);
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
  const JobIterations its = FindJobIterations(*job, graph, StepRanges());
  EXPECT_EQ(its.found, 32u);
  EXPECT_EQ(its.first, 1u);
  EXPECT_EQ(its.kept, 20u);
  EXPECT_EQ(its.choice,
            "iterations 2-21 of 32: iteration 1 left out as warm-up (433.506 ms, longer than 1.5 "
            "x the median 26.762 ms; --iterations all keeps them); iterations 22-32 left out: the "
            "trace lost 18316 events in them (--iterations all keeps them)");
  // Every kept iteration ends before the first loss begins.
  const int64_t first_loss =
      std::min(job->ranks[0].losses[0].start_ns, job->ranks[0].losses[1].start_ns) +
      graph.rank_offset_ns[0];
  EXPECT_LE(its.ranks[0].ranges.back().end_ns, first_loss);
  // Asked for, they are kept.
  AnalysisOptions all = StepRanges();
  ASSERT_TRUE(SetIterationChoice("all", &all).ok());
  EXPECT_EQ(FindJobIterations(*job, graph, all).kept, 32u);
}

}  // namespace
}  // namespace lumos::modeler
