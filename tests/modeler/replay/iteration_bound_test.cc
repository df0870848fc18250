// What bounds an iteration (IterationBound, the verdict) on hand-built jobs whose walk is worked
// out by hand: the kinds tile the replayed iteration, a rank that waits at a collective for a
// late peer is "straggler rank R" for exactly the time it waited, the late rank itself is
// bound by its own compute, and the critical path segments tile the iteration too.
#include "modeler/replay/iteration_bound.h"

#include <gtest/gtest.h>

#include <string>

#include "modeler/analysis/critical_path.h"
#include "modeler/analysis/iteration_analysis.h"
#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

int64_t KindNs(const IterationBound& b, BoundKind kind) { return b.ns[static_cast<int>(kind)]; }

// Thread 1, stream 7 (µs), as CriticalPathTest.BlockedCopyCallIsCountedOnceThroughTheGpuChain:
//   API  launch1 [0,5)  cudaMemcpyAsync [10,110)  launch2 [112,116)  sync [117,125)
//   GPU  gemm [10,100)  memcpy (to pageable memory) [100,108)  elementwise [118,124)
// Its critical path: host after the sync 2, wake-ups 1 + 2, host gap 2 (host: 7); launch
// latencies 10 + 6, both within the typical 10 (launch: 16); gemm 90, copy 8, elementwise 6
// (compute: 104). 127 in all: compute-bound.
TEST(IterationBoundTest, SingleRankKindsTileTheIteration) {
  const Job job = BlockedCopyJob();
  const Replayed r = Replay(job);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 1u);
  const IterationReport& it = iterations[0];
  EXPECT_EQ(it.bound.total_ns(), 127 * kUs);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kHost), 7 * kUs);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kLaunch), 16 * kUs);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kCompute), 104 * kUs);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kPeers), 0);
  EXPECT_TRUE(it.bound.waited_for.empty());
  // The segments tile [start, end) of the replayed iteration, latest first.
  const std::vector<CriticalSegment> segments = CriticalSegments(r.graph, r.sim, it);
  ASSERT_FALSE(segments.empty());
  int64_t t = it.replayed_end_ns;
  std::vector<std::string> names;
  for (const CriticalSegment& s : segments) {
    const std::string name = CriticalSegmentName(r.graph, s);
    EXPECT_EQ(s.end_ns, t) << name;
    EXPECT_LT(s.begin_ns, s.end_ns) << name;
    names.push_back(name);
    t = s.begin_ns;
  }
  EXPECT_EQ(t, it.replayed_start_ns);
  // The walk of CriticalPathTest.BlockedCopyCallIsCountedOnceThroughTheGpuChain, latest first
  // (two wake-ups: the sync's, then the copy call's after its copy).
  EXPECT_EQ(names,
            (std::vector<std::string>{"host work after the last API call", "sync wake-up",
                                      "kernel elementwise: elementwise_kernel", "launch latency",
                                      "host gap", "sync wake-up", "memcpy/memset: memcpy",
                                      "kernel gemm: gemm_kernel", "launch latency"}));
  const std::vector<RankBound> ranks = SumBoundsPerRank(iterations);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].verdict, "compute");
}

// Two ranks, one all-reduce (µs):
//   rank 0  launch [0,5)                    allreduce [10,110) on 7   sync [6,112)
//   rank 1  launch [0,5)  launch [5,8)      gemm [10,80), allreduce [80,110) on 7   sync [9,112)
// Both iterations end at 115. The transfer is 110 - 80 = 30. Rank 0 walks back: host 3 after
// the sync, wake-up 2, the transfer [80,110) 30, then its own member waited [10,80) for rank
// 1 (peers: 70), then its launch latency [0,10) 10. Rank 1: host 3 + 2, transfer 30 (it was
// last itself), the gemm before it on its stream [10,80) 70, launch latency 10.
TEST(IterationBoundTest, WaitingForALatePeerNamesIt) {
  Job job;
  job.job_id = "late-peer";
  RankBuilder(&job, 0, 2)
      .Communicator(1, 0, 2)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 6, 106, 0, 7)
      .Kernel("ncclDevKernel_AllReduce", 7, 10, 100, 1)
      .Collective(1, 0, 1, 7, 10, 100, 2)
      .Step("ProfilerStep#1", 0, 115);
  RankBuilder(&job, 1, 2)
      .Communicator(1, 1, 2)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "cudaLaunchKernel", 5, 3, 2)
      .Api(ApiKind::kStreamSynchronize, "cudaStreamSynchronize", 9, 103, 0, 7)
      .Kernel("gemm_kernel", 7, 10, 70, 1)
      .Kernel("ncclDevKernel_AllReduce", 7, 80, 30, 2)
      .Collective(1, 0, 2, 7, 80, 30, 2)
      .Step("ProfilerStep#1", 0, 115);
  const Replayed r = Replay(job);
  ASSERT_EQ(r.sim.not_run, 0u);
  const auto iterations = AnalyzeIterations(job, r.graph, r.sim, {});
  ASSERT_EQ(iterations.size(), 2u);
  const IterationBound& b0 = iterations[0].bound;
  EXPECT_EQ(b0.total_ns(), 115 * kUs);
  EXPECT_EQ(KindNs(b0, BoundKind::kHost), 5 * kUs);
  EXPECT_EQ(KindNs(b0, BoundKind::kCommunication), 30 * kUs);
  EXPECT_EQ(KindNs(b0, BoundKind::kPeers), 70 * kUs);
  EXPECT_EQ(KindNs(b0, BoundKind::kLaunch), 10 * kUs);
  ASSERT_EQ(b0.waited_for.size(), 1u);
  EXPECT_EQ(b0.waited_for[0].first, 1);
  EXPECT_EQ(b0.waited_for[0].second, 70 * kUs);
  const IterationBound& b1 = iterations[1].bound;
  EXPECT_EQ(b1.total_ns(), 115 * kUs);
  EXPECT_EQ(KindNs(b1, BoundKind::kCompute), 70 * kUs);
  EXPECT_EQ(KindNs(b1, BoundKind::kCommunication), 30 * kUs);
  EXPECT_EQ(KindNs(b1, BoundKind::kPeers), 0);
  const std::vector<RankBound> ranks = SumBoundsPerRank(iterations);
  ASSERT_EQ(ranks.size(), 2u);
  EXPECT_EQ(ranks[0].verdict, "straggler rank 1");
  EXPECT_EQ(ranks[0].straggler, 1);
  EXPECT_EQ(ranks[1].verdict, "compute");
  // The critical path itself still crosses to rank 1 (it is the job's path).
  int64_t gemm_on_path = 0;
  for (const CriticalItem& c : iterations[0].critical_by_class) {
    if (c.what == "kernel gemm") gemm_on_path = c.ns;
  }
  EXPECT_EQ(gemm_on_path, 70 * kUs);
}

// A rewritten graph (estimate) whose iteration's last API call never ran in its simulation:
// the replayed window falls back to the measured one and nothing of it is known, so the
// critical path and the bound say "not attributed" / unexplained for all of it, not 127 µs
// of "host work after the last API call" (a host-bound verdict from an end at INT64_MIN).
TEST(IterationBoundTest, ALastCallThatNeverRanIsNotHostWork) {
  const Job job = BlockedCopyJob();
  const Replayed r = Replay(job);
  SimResult sim = r.sim;
  const uint32_t sync = NodeNamed(r.graph, 0, "cudaStreamSynchronize");
  sim.start_ns[sync] = sim.end_ns[sync] = SimResult::kNotRun;
  const auto iterations = AnalyzeRewritten(job, r.graph, r.sim, r.graph, sim, {},
                                           [](uint32_t node, bool) { return node; });
  ASSERT_EQ(iterations.size(), 1u);
  const IterationReport& it = iterations[0];
  EXPECT_EQ(it.bound.total_ns(), 127 * kUs);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kHost), 0);
  EXPECT_EQ(KindNs(it.bound, BoundKind::kUnexplained), 127 * kUs);
  ASSERT_EQ(it.critical_by_class.size(), 1u);
  EXPECT_EQ(it.critical_by_class[0].what, "not attributed");
  EXPECT_EQ(SumBoundsPerRank(iterations)[0].verdict, "a dependency the trace does not show");
}

RankBound Bound(int32_t rank, int64_t compute, int64_t peers,
                std::vector<std::pair<int32_t, int64_t>> waited_for) {
  RankBound r;
  r.rank = rank;
  r.bound.ns[static_cast<int>(BoundKind::kCompute)] = compute;
  r.bound.ns[static_cast<int>(BoundKind::kPeers)] = peers;
  r.bound.waited_for = std::move(waited_for);
  return r;
}

// Waits spread over several peers, each under kStragglerShare and none half of them: no
// single straggler is named even though "peers" is the largest kind.
TEST(IterationBoundTest, WaitsSpreadOverPeersNameNoSingleRank) {
  std::vector<RankBound> ranks = {
      Bound(0, 50, 60, {{1, 10}, {2, 10}, {3, 10}, {4, 10}, {5, 10}, {6, 10}})};
  DecideVerdicts(&ranks);
  EXPECT_EQ(ranks[0].kind, BoundKind::kPeers);
  EXPECT_EQ(ranks[0].straggler, -1);
  EXPECT_EQ(ranks[0].verdict, "peers (no single rank)");
}

// A rank that waits for one peer 20 % of its time is a straggler verdict even though compute
// is its largest kind; one that waits 5 % is not.
TEST(IterationBoundTest, AWaitOverTheShareNamesTheStragglerBeforeTheLargestKind) {
  std::vector<RankBound> ranks = {Bound(0, 80, 20, {{1, 20}}), Bound(1, 95, 5, {{0, 5}})};
  DecideVerdicts(&ranks);
  EXPECT_EQ(ranks[0].kind, BoundKind::kCompute);
  EXPECT_EQ(ranks[0].verdict, "straggler rank 1");
  EXPECT_EQ(ranks[1].verdict, "compute");
}

// 0 waits for 2, which waits for 3 (its tensor-parallel partner), which waits for nobody: the
// root is 3. A cycle (4 <-> 5) stops at the first rank seen twice.
TEST(IterationBoundTest, TheStragglerIsFollowedToItsRoot) {
  std::vector<RankBound> ranks = {Bound(0, 70, 30, {{2, 30}}), Bound(2, 80, 20, {{3, 20}}),
                                  Bound(3, 100, 0, {}), Bound(4, 70, 30, {{5, 30}}),
                                  Bound(5, 70, 30, {{4, 30}})};
  DecideVerdicts(&ranks);
  EXPECT_EQ(ranks[0].verdict, "straggler rank 3 (through rank 2)");
  EXPECT_EQ(ranks[0].waited_for, 2);
  EXPECT_EQ(ranks[0].straggler, 3);
  EXPECT_EQ(ranks[1].verdict, "straggler rank 3");
  EXPECT_EQ(ranks[2].verdict, "compute");
  EXPECT_EQ(ranks[3].verdict, "straggler rank 5");
  EXPECT_EQ(ranks[4].verdict, "straggler rank 4");
}

}  // namespace
}  // namespace lumos::modeler::testing
