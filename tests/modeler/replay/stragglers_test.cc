// Stragglers (modeler/replay/stragglers.h) on hand-built jobs whose answers are worked out by
// hand below (a rank always last by a little, one outlier collective, a send/recv pair, ties),
// on `synth gpt` jobs with and without a slow rank, the binomial tail and Wilson bound against
// closed forms, and `lumos-model replay --json` on the bundled 8-rank trace.
#include "modeler/replay/stragglers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/replay/replay_cli.h"
#include "modeler/replay/replay_report.h"
#include "modeler/synth/gpt_synth.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/job_builder.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::testing {
namespace {

using lumos::testing::TempDir;
using schema::ApiKind;
using schema::CollectiveOp;

constexpr uint64_t kComm = 5;

const RankStraggling& RankOf(const StragglerSide& side, int32_t rank) {
  for (const RankStraggling& r : side.ranks) {
    if (r.rank == rank) return r;
  }
  ADD_FAILURE() << "no rank " << rank;
  return side.ranks.front();
}

const OpSkew* Op(const StragglerSide& side, std::string_view op) {
  for (const OpSkew& o : side.by_op) {
    if (op == o.op) return &o;
  }
  return nullptr;
}

// Four ranks, ten all-reduces on one communicator (µs). All-reduce i is launched at
// t = 100 i + 10 and its members arrive (GPU op start) at t + 10 + delay[rank]: rank 0 +0,
// rank 1 +1, rank 3 +2, rank 2 +7; all end at t + 60. With `outlier`, rank 0 arrives at
// all-reduce 9 5000 µs late (at 5920; it ends at 5970). Steps: [0, 500) and [500, 6000).
Job FourRankJob(bool outlier) {
  Job job;
  job.job_id = "stragglers";
  const int64_t delay[] = {0, 1, 7, 2};
  for (int32_t rank = 0; rank < 4; ++rank) {
    RankBuilder b(&job, rank, 4);
    b.Communicator(kComm, rank, 4).Step("ProfilerStep#1", 0, 500).Step("ProfilerStep#2", 500, 5500);
    for (uint64_t i = 0; i < 10; ++i) {
      const int64_t t = 100 * static_cast<int64_t>(i) + 10;
      int64_t arrival = t + 10 + delay[rank];
      int64_t end = t + 60;
      if (outlier && i == 9) {
        end = 5970;
        if (rank == 0) arrival = 5920;
      }
      b.Api(ApiKind::kLaunchKernel, "ncclAllReduce", t, 2, i + 1)
          .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, arrival, end - arrival, i + 1)
          .Collective(kComm, i, i + 1, 7, arrival, end - arrival, 4);
    }
  }
  return job;
}

Stragglers Analyze(const Job& job, const Replayed& r) {
  return AnalyzeStragglers(r.graph, r.sim, AnalyzeIterations(job, r.graph, r.sim, {}));
}

// Rank 2 is last in every all-reduce, 5 µs after the next (rank 3). Each all-reduce: skew 7,
// waited for rank 2 = (7-0) + (7-1) + (7-2) = 18 µs; 5 per step: 90 µs per iteration.
// Rank 2: n = 10, k = 10, expected 10/4 = 2.5; p = 0.25^10 = 9.537e-7, times 4 ranks =
// 3.815e-6; Wilson lower bound of 10/10 = (1 + 0.19208 - 0.19208) / 1.38416 = 0.72246.
TEST(StragglersTest, RankLastByALittleEveryTimeIsTheStraggler) {
  const Job job = FourRankJob(false);
  const Replayed r = Replay(job);
  ASSERT_EQ(r.sim.not_run, 0u);
  const Stragglers s = Analyze(job, r);
  for (const StragglerSide* side : {&s.measured, &s.replayed}) {
    SCOPED_TRACE(side == &s.measured ? "measured" : "replayed");
    EXPECT_EQ(side->straggler, 2);
    EXPECT_EQ(side->confident_ranks, 1u);
    ASSERT_EQ(side->by_op.size(), 2u);  // AllReduce, all.
    const OpSkew* all = Op(*side, "all");
    ASSERT_NE(all, nullptr);
    EXPECT_EQ(all->count, 10u);
    EXPECT_EQ(all->tied, 0u);
    EXPECT_EQ(all->p50_ns, 7 * kUs);
    EXPECT_EQ(all->max_ns, 7 * kUs);
    EXPECT_EQ(all->waited_ns, 180 * kUs);
    EXPECT_EQ(Op(*side, "AllReduce")->count, 10u);
    const RankStraggling& two = RankOf(*side, 2);
    EXPECT_EQ(two.groups, 10u);
    EXPECT_EQ(two.last, 10u);
    EXPECT_DOUBLE_EQ(two.expected_last, 2.5);
    EXPECT_NEAR(two.p_value, 4 * std::pow(0.25, 10), 1e-9);
    EXPECT_NEAR(two.wilson_low, 0.72246, 1e-4);
    EXPECT_EQ(two.waited_for_ns, 180 * kUs);
    EXPECT_EQ(two.waited_per_iteration_ns, (std::vector<int64_t>{90 * kUs, 90 * kUs}));
    EXPECT_DOUBLE_EQ(two.mean_per_iteration_ns, 90.0 * kUs);
    EXPECT_EQ(two.median_per_iteration_ns, 90 * kUs);
    EXPECT_EQ(two.iterations_most_waited, 2u);
    EXPECT_EQ(side->iterations, 2u);
    const RankStraggling& zero = RankOf(*side, 0);
    EXPECT_EQ(zero.last, 0u);
    EXPECT_EQ(zero.groups, 10u);
    EXPECT_DOUBLE_EQ(zero.p_value, 1.0);
    EXPECT_EQ(zero.waited_for_ns, 0);
    EXPECT_EQ(side->ranks[side->order.front()].rank, 2);
    ASSERT_FALSE(side->top.empty());
    EXPECT_EQ(side->top.front().skew_ns, 7 * kUs);
    EXPECT_EQ(side->top.front().group, 0u);  // Equal skews: in group order.
  }
}

// Rank 0 arrives 5000 µs late at all-reduce 9 (at 5920; the others at 920, 921, 922, 927):
// it is last there, waited for (5000-1) + (5000-2) + (5000-7) = 14990 µs, far more than rank
// 2's 9 x 18 = 162 µs. Yet rank 0 is last in 1 of 10 (expected 2.5; p = 1 - 0.75^10 = 0.944,
// times 4: capped at 1) and rank 2 in 9 of 10: p = (10 x 0.25^9 x 0.75 + 0.25^10) x 4 =
// 1.1826e-4, Wilson lower bound of 9/10 = 0.59584 > 0.25. Rank 2 stays the straggler.
// Iteration 2 (the second step): rank 0's 14990 µs beats rank 2's 4 x 18 = 72: each rank is
// the most waited-for in one iteration.
TEST(StragglersTest, OneHugeDelayDoesNotMakeAStraggler) {
  const Job job = FourRankJob(true);
  const Replayed r = Replay(job);
  ASSERT_EQ(r.sim.not_run, 0u);
  const Stragglers s = Analyze(job, r);
  for (const StragglerSide* side : {&s.measured, &s.replayed}) {
    SCOPED_TRACE(side == &s.measured ? "measured" : "replayed");
    EXPECT_EQ(side->straggler, 2);
    const RankStraggling& zero = RankOf(*side, 0);
    EXPECT_EQ(zero.last, 1u);
    EXPECT_EQ(zero.waited_for_ns, 14990 * kUs);
    EXPECT_DOUBLE_EQ(zero.p_value, 1.0);
    EXPECT_EQ(zero.waited_per_iteration_ns, (std::vector<int64_t>{0, 14990 * kUs}));
    EXPECT_EQ(zero.iterations_most_waited, 1u);
    const RankStraggling& two = RankOf(*side, 2);
    EXPECT_EQ(two.last, 9u);
    EXPECT_EQ(two.waited_for_ns, 162 * kUs);
    EXPECT_NEAR(two.p_value, 4 * (10 * std::pow(0.25, 9) * 0.75 + std::pow(0.25, 10)), 1e-9);
    EXPECT_NEAR(two.wilson_low, 0.59584, 1e-4);
    EXPECT_EQ(two.median_per_iteration_ns, 72 * kUs);  // {90, 72}: the lower middle.
    EXPECT_EQ(two.iterations_most_waited, 1u);
    EXPECT_EQ(side->top.front().skew_ns, 4999 * kUs);  // 5920 - 921 (rank 1 came first).
    EXPECT_EQ(side->top.front().last_rank, 0);
  }
}

// The outlier alone: the last rank rotates (all-reduce i: rank i % 4 arrives 3 µs after the
// other three, who arrive together), and rank 0 is 5000 µs late at all-reduce 9. Rank 0 is last at
// i = 0, 4, 8 and 9: 4 of 10, expected 2.5, p = P(X >= 4 | 10, 0.25) x 4 = 0.2241 x 4 = 0.896: no
// confident straggler, though rank 0 has by far the largest waited-for sum.
TEST(StragglersTest, NoStragglerWhenTheLastRankRotates) {
  Job job;
  job.job_id = "rotating";
  for (int32_t rank = 0; rank < 4; ++rank) {
    RankBuilder b(&job, rank, 4);
    b.Communicator(kComm, rank, 4).Step("ProfilerStep#1", 0, 6000);
    for (uint64_t i = 0; i < 10; ++i) {
      const int64_t t = 100 * static_cast<int64_t>(i) + 10;
      int64_t arrival = t + 10 + (static_cast<uint64_t>(rank) == i % 4 ? 3 : 0);
      int64_t end = t + 60;
      if (i == 9) {
        end = 5970;
        if (rank == 0) arrival = 5920;
      }
      b.Api(ApiKind::kLaunchKernel, "ncclAllReduce", t, 2, i + 1)
          .Kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, arrival, end - arrival, i + 1)
          .Collective(kComm, i, i + 1, 7, arrival, end - arrival, 4);
    }
  }
  const Replayed r = Replay(job);
  const Stragglers s = Analyze(job, r);
  EXPECT_EQ(s.measured.straggler, -1);
  const RankStraggling& zero = RankOf(s.measured, 0);
  EXPECT_EQ(zero.last, 4u);
  EXPECT_EQ(zero.groups, 10u);
  const double tail = 1 - std::pow(0.75, 10) - 10 * 0.25 * std::pow(0.75, 9) -
                      45 * 0.0625 * std::pow(0.75, 8) - 120 * 0.015625 * std::pow(0.75, 7);
  EXPECT_NEAR(zero.p_value, 4 * tail, 1e-9);
  EXPECT_EQ(s.measured.ranks[s.measured.order.front()].rank, 0);
}

// A what-if changes the replayed side only. Four ranks, ten all-reduces (µs): at t = 100 i each
// rank launches a GEMM (runs [t+1, t+11); on rank 2 it is "gemm_rank2", [t+1, t+18)) and then
// the all-reduce, which starts when the GEMM ends (stream order): rank 2 arrives 7 µs after the
// others every time, the measured straggler. With --scale kernel:gemm_rank2=0.5882 its GEMM
// takes 9.999 µs, so every member arrives at t+11 (rank 2 1 ns earlier): all tied, no last rank,
// no straggler replayed.
TEST(StragglersTest, WhatIfChangesTheReplayedSideOnly) {
  Job job;
  job.job_id = "whatif";
  for (int32_t rank = 0; rank < 4; ++rank) {
    RankBuilder b(&job, rank, 4);
    b.Communicator(kComm, rank, 4);
    const int64_t gemm = rank == 2 ? 17 : 10;
    for (uint64_t i = 0; i < 10; ++i) {
      const int64_t t = 100 * static_cast<int64_t>(i);
      b.Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", t, 1, 2 * i + 1)
          .Api(ApiKind::kLaunchKernel, "ncclAllReduce", t + 1, 1, 2 * i + 2)
          .Kernel(rank == 2 ? "gemm_rank2" : "gemm", 7, t + 1, gemm, 2 * i + 1)
          .Kernel("ncclDevKernel_AllReduce", 7, t + 1 + gemm, 60 - gemm, 2 * i + 2)
          .Collective(kComm, i, 2 * i + 2, 7, t + 1 + gemm, 60 - gemm, 4);
    }
  }
  const Replayed base = Replay(job);
  const Stragglers b = Analyze(job, base);
  EXPECT_EQ(b.measured.straggler, 2);
  EXPECT_EQ(b.replayed.straggler, 2);
  const Replayed faster = Replay(job, {"kernel:gemm_rank2=0.5882"});
  ASSERT_EQ(faster.sim.not_run, 0u);
  const Stragglers f = Analyze(job, faster);
  EXPECT_EQ(f.measured.straggler, 2);
  EXPECT_EQ(RankOf(f.measured, 2).last, 10u);
  EXPECT_EQ(f.replayed.straggler, -1);
  const OpSkew* all = Op(f.replayed, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->count, 10u);
  EXPECT_EQ(all->tied, 10u);
  EXPECT_LE(all->max_ns, 1);
  EXPECT_EQ(RankOf(f.replayed, 2).last, 0u);
}

// A send from rank 0 (starts at 10 µs) and its receive on rank 1 (starts at 25 µs), both
// ending at 60: one group of 2, skew 15 µs, rank 1 last, waited for 15 µs. Expected 1/2 each;
// one group proves nothing: p(rank 1) = 0.5 x 2 = 1.
TEST(StragglersTest, SendRecvPairIsOneGroup) {
  Job job;
  job.job_id = "p2p";
  const int64_t start[] = {10, 25};
  for (int32_t rank = 0; rank < 2; ++rank) {
    RankBuilder(&job, rank, 2)
        .Communicator(kComm, rank, 2)
        .Api(ApiKind::kLaunchKernel, rank == 0 ? "ncclSend" : "ncclRecv", 0, 2, 1)
        .Kernel("ncclDevKernel_SendRecv", 7, start[rank], 60 - start[rank], 1)
        .Collective(kComm, 0, 1, 7, start[rank], 60 - start[rank], 2)
        .Op(rank == 0 ? CollectiveOp::kSend : CollectiveOp::kRecv, 1 - rank);
  }
  const Replayed r = Replay(job);
  const std::vector<GroupSkew> skews = GroupSkews(r.graph, &r.sim, 1000);
  ASSERT_EQ(skews.size(), 1u);
  EXPECT_EQ(skews[0].members, 2u);
  EXPECT_EQ(skews[0].skew_ns, 15 * kUs);
  EXPECT_EQ(skews[0].last_rank, 1);
  EXPECT_EQ(skews[0].waited_ns, 15 * kUs);
  const Stragglers s = Analyze(job, r);
  const OpSkew* all = Op(s.measured, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->count, 1u);
  // A send and its receive read "Send/Recv", whichever record came first.
  EXPECT_NE(Op(s.measured, "Send/Recv"), nullptr);
  EXPECT_EQ(Op(s.measured, "Send"), nullptr);
  EXPECT_EQ(RankOf(s.measured, 1).last, 1u);
  EXPECT_DOUBLE_EQ(RankOf(s.measured, 1).expected_last, 0.5);
  EXPECT_DOUBLE_EQ(RankOf(s.measured, 1).p_value, 1.0);
  EXPECT_EQ(s.measured.straggler, -1);
}

// Three ranks (µs). All-reduce 0: ranks arrive at 20, 30, 31: ranks 1 and 2 are 1 µs apart,
// a tie (at most tie_ns): no last rank, nobody charged, not counted for anyone; skew 11.
// All-reduce 1: 120, 128, 130: rank 2 is last by 2 µs; waited (130-120) + (130-128) = 12.
TEST(StragglersTest, ArrivalsWithinTheTieMarginHaveNoLastRank) {
  Job job;
  job.job_id = "ties";
  const int64_t first[] = {20, 30, 31}, second[] = {120, 128, 130};
  for (int32_t rank = 0; rank < 3; ++rank) {
    RankBuilder(&job, rank, 3)
        .Communicator(kComm, rank, 3)
        .Api(ApiKind::kLaunchKernel, "ncclAllReduce", 0, 2, 1)
        .Api(ApiKind::kLaunchKernel, "ncclAllReduce", 100, 2, 2)
        .Kernel("ncclDevKernel_AllReduce", 7, first[rank], 60 - first[rank], 1)
        .Collective(kComm, 0, 1, 7, first[rank], 60 - first[rank], 3)
        .Kernel("ncclDevKernel_AllReduce", 7, second[rank], 160 - second[rank], 2)
        .Collective(kComm, 1, 2, 7, second[rank], 160 - second[rank], 3);
  }
  const Replayed r = Replay(job);
  const std::vector<GroupSkew> skews = GroupSkews(r.graph, &r.sim, 1000);
  ASSERT_EQ(skews.size(), 2u);
  EXPECT_EQ(skews[0].skew_ns, 11 * kUs);
  EXPECT_EQ(skews[0].last_rank, -1);
  EXPECT_EQ(skews[0].waited_ns, 0);
  EXPECT_EQ(skews[1].skew_ns, 10 * kUs);
  EXPECT_EQ(skews[1].last_rank, 2);
  EXPECT_EQ(skews[1].waited_ns, 12 * kUs);
  const Stragglers s = Analyze(job, r);
  const OpSkew* all = Op(s.measured, "all");
  EXPECT_EQ(all->count, 2u);
  EXPECT_EQ(all->tied, 1u);
  EXPECT_EQ(all->p50_ns, 10 * kUs);  // {10, 11}: the ceil(0.5 x 2) = 1st.
  EXPECT_EQ(all->p90_ns, 11 * kUs);
  EXPECT_EQ(all->waited_ns, 12 * kUs);
  for (int32_t rank = 0; rank < 3; ++rank) EXPECT_EQ(RankOf(s.measured, rank).groups, 1u);
  EXPECT_EQ(RankOf(s.measured, 2).last, 1u);
  EXPECT_NEAR(RankOf(s.measured, 2).expected_last, 1.0 / 3, 1e-12);
}

TEST(StragglersTest, BinomialTailAndWilsonBoundMatchClosedForms) {
  EXPECT_DOUBLE_EQ(LogBinomialTail(10, 0, 0.3), 0.0);
  EXPECT_NEAR(std::exp(LogBinomialTail(10, 10, 0.25)), std::pow(0.25, 10), 1e-18);
  EXPECT_NEAR(std::exp(LogBinomialTail(10, 1, 0.25)), 1 - std::pow(0.75, 10), 1e-12);
  EXPECT_NEAR(std::exp(LogBinomialTail(4, 2, 0.5)), 11.0 / 16, 1e-12);
  // Far in the tail, no underflow: P(X >= 1000 | 1000, 0.5) = 2^-1000.
  EXPECT_NEAR(LogBinomialTail(1000, 1000, 0.5), -1000 * std::log(2.0), 1e-6);
  EXPECT_EQ(WilsonLower(0, 0), 0.0);
  EXPECT_NEAR(WilsonLower(10, 10), 0.72246, 1e-4);
  EXPECT_NEAR(WilsonLower(100, 50), 0.40383, 1e-4);
}

// A GPU-bound `synth gpt` job (hidden 2048, seq 2048: the GEMMs, not the host, decide when
// each rank reaches its all-reduces), tp 2 x dp 2, 4 iterations. The small job of
// kSmallGptSettings is host-bound: each rank's host time is a random walk that nothing resets
// (its host never waits for the GPU), so whichever rank's walk falls behind stays last for
// many iterations (which rank depends on the seed), a persistent lag this analysis rightly
// reports; so it is no job "without a straggler".
Job LoadGpt(const std::string& dir, int64_t slow_rank, double factor) {
  GptConfig config;
  EXPECT_TRUE(ApplyGptSettings("layers=2,hidden=2048,heads=16,seq=2048,mbs=2,micro_batches=2,"
                               "vocab=8000,tp=2,dp=2,iterations=4",
                               &config)
                  .ok());
  config.slow_rank = slow_rank;
  config.slow_rank_factor = factor;
  auto written = SynthesizeGpt(config, models::SpecTable::Builtin(), {}, dir);
  EXPECT_TRUE(written.ok()) << written.status().message();
  auto paths = ExpandTracePaths({dir});
  EXPECT_TRUE(paths.ok());
  auto job = LoadJob(*paths);
  EXPECT_TRUE(job.ok()) << job.status().message();
  return std::move(job).value();
}

Stragglers AnalyzeAligned(const Job& job) {
  const ExecutionGraph graph = BuildGraph(job, AlignClocks(job).rank_offset_ns);
  const SimResult sim = Simulate(graph, MeasuredScenario(graph));
  EXPECT_EQ(sim.not_run, 0u);
  return AnalyzeStragglers(graph, sim, AnalyzeIterations(job, graph, sim, {}));
}

// Rank 1's kernels 5% slower: rank 1 is last in every group it takes part in (80), measured
// and replayed, p = 0.5^80 x 4 = 3.3e-24; without it, no rank is a confident straggler (the
// most often last, rank 3, is last in 44 of 68, p 0.04 after Bonferroni).
TEST(StragglersTest, SynthGptSlowRankIsFoundAndNoneWithout) {
  TempDir dir;
  const Job slow = LoadGpt(dir.File("slow"), 1, 1.05);
  const Stragglers s = AnalyzeAligned(slow);
  for (const StragglerSide* side : {&s.measured, &s.replayed}) {
    SCOPED_TRACE(side == &s.measured ? "measured" : "replayed");
    EXPECT_EQ(side->straggler, 1);
    const RankStraggling& one = RankOf(*side, 1);
    EXPECT_LT(one.p_value, 1e-20) << one.last << " of " << one.groups;
    EXPECT_EQ(one.last, one.groups);
    EXPECT_EQ(one.iterations_most_waited, 4u);
  }
  const Job even = LoadGpt(dir.File("even"), -1, 1.0);
  const Stragglers e = AnalyzeAligned(even);
  EXPECT_EQ(e.measured.straggler, -1)
      << "rank " << e.measured.ranks[e.measured.order.front()].rank << " p "
      << e.measured.ranks[e.measured.order.front()].p_value;
  EXPECT_EQ(e.replayed.straggler, -1);
}

struct CliRun {
  int code = 0;
  std::string out, err;
};

CliRun RunReplay(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  CliRun run;
  run.code = RunReplayCommand(args, out, err);
  run.out = ReadAll(out);
  run.err = ReadAll(err);
  std::fclose(out);
  std::fclose(err);
  return run;
}

// The bundled 8-rank DLRM trace (all-reduces and send/recv): the JSON has the stragglers
// object with both sides, and the text its section.
TEST(StragglersTest, ReplayCliReportsStragglers) {
  const std::string example = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
  const CliRun json = RunReplay({example, "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  for (const char* field :
       {"\"stragglers\":{\"tie_ns\":1000", "\"measured\":{\"straggler\":", "\"replayed\":{",
        "\"by_op\":", "\"skew_p90_ns\":", "\"top_groups\":", "\"last_rank\":", "\"ranks\":",
        "\"waited_for_ns\":", "\"log10_p_value\":", "\"wilson_low\":",
        "\"waited_per_iteration_ns\":", "\"iterations_most_waited\":", "\"op\":\"AllReduce\""}) {
    EXPECT_NE(json.out.find(field), std::string::npos) << field;
  }
  const CliRun text = RunReplay({example});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("\nstragglers (arrival"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("most often last (top 5 of 8 ranks"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace lumos::modeler::testing
