// The target of a sync the trace does not give (imported traces without cuda_sync records: a
// cudaStreamSynchronize naming no stream, a cudaEventSynchronize whose record is unknown),
// worked out by hand: the stream whose last op ended last at or before the call returned,
// never one that ended after it; none, and the call replays as a plain call.
#include <gtest/gtest.h>

#include "tests/testing/job_builder.h"

namespace lumos::modeler::testing {
namespace {

using schema::ApiKind;

// Thread 1, no stream handles (as Kineto's runtime events) (µs):
//   API  launch_gemm [0,5)  launch_copy [20,25)  sync [40,85)  launch_next [90,95)
//   GPU  stream 7: gemm [10,500)   stream 8: copy [30,80)   stream 7: next [500,510)
// The sync returned at 85, so it cannot have waited for the gemm (ends 500): it waited for
// the copy on stream 8 and woke 5 µs after it ended.
Job HiddenStreamSyncJob(ApiKind sync_kind = ApiKind::kStreamSynchronize) {
  Job job;
  job.job_id = "hidden-stream-sync";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch_gemm", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "launch_copy", 20, 5, 2)
      .Api(sync_kind, "sync", 40, 45, 0)
      .Api(ApiKind::kLaunchKernel, "launch_next", 90, 5, 3)
      .Kernel("gemm", 7, 10, 490, 1)
      .Kernel("copy", 8, 30, 50, 2)
      .Kernel("next", 7, 500, 10, 3);
  return job;
}

TEST(SyncTargetTest, InferredStreamSyncWaitsForAStreamThatEndedBeforeItReturned) {
  const Job job = HiddenStreamSyncJob();
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  const SyncSpec& sync = r.graph.syncs[0];
  EXPECT_TRUE(sync.inferred);
  EXPECT_EQ(r.graph.stats.inferred_syncs, 1u);
  ASSERT_EQ(sync.target, SyncSpec::Target::kStream);
  EXPECT_EQ(r.graph.processors[sync.stream_processor].id, 8u);
  EXPECT_EQ(sync.wake_ns, 5 * kUs);
  EXPECT_EQ(r.graph.stats.negative_slack_edges, 0u);
  const uint32_t node = NodeNamed(r.graph, 0, "sync");
  EXPECT_EQ(r.sim.end_ns[node], 85 * kUs);
  // The copy twice as long: the sync waits for it (its end at 130, + 5 µs).
  const Replayed slower_copy = Replay(job, {"kernel:^copy$=2"});
  EXPECT_EQ(slower_copy.sim.end_ns[NodeNamed(slower_copy.graph, 0, "sync")], 135 * kUs);
  // The gemm twice as long: not the sync's business.
  const Replayed slower_gemm = Replay(job, {"kernel:^gemm$=2"});
  EXPECT_EQ(slower_gemm.sim.end_ns[NodeNamed(slower_gemm.graph, 0, "sync")], 85 * kUs);
}

TEST(SyncTargetTest, InferredEventSyncFollowsTheSameRule) {
  const Job job = HiddenStreamSyncJob(ApiKind::kEventSynchronize);
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  EXPECT_TRUE(r.graph.syncs[0].inferred);
  ASSERT_EQ(r.graph.syncs[0].target, SyncSpec::Target::kStream);
  EXPECT_EQ(r.graph.processors[r.graph.syncs[0].stream_processor].id, 8u);
  EXPECT_EQ(r.graph.syncs[0].wake_ns, 5 * kUs);
  EXPECT_EQ(r.graph.stats.negative_slack_edges, 0u);
}

TEST(SyncTargetTest, OfTheStreamsThatEndedInTimeTheLastToEndIsTheTarget) {
  // A third stream whose op ended at 60, before the copy (80): the copy is still the target.
  Job job;
  job.job_id = "three-streams";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kLaunchKernel, "launch_gemm", 0, 5, 1)
      .Api(ApiKind::kLaunchKernel, "launch_copy", 20, 5, 2)
      .Api(ApiKind::kLaunchKernel, "launch_early", 26, 4, 4)
      .Api(ApiKind::kStreamSynchronize, "sync", 40, 45, 0)
      .Kernel("gemm", 7, 10, 490, 1)
      .Kernel("copy", 8, 30, 50, 2)
      .Kernel("early", 9, 31, 29, 4);
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  ASSERT_EQ(r.graph.syncs[0].target, SyncSpec::Target::kStream);
  EXPECT_EQ(r.graph.processors[r.graph.syncs[0].stream_processor].id, 8u);
  EXPECT_EQ(r.graph.syncs[0].wake_ns, 5 * kUs);
}

TEST(SyncTargetTest, ATargetWithinClockNoiseOfTheReturnIsKept) {
  Job job = HiddenStreamSyncJob();
  // The copy reads 1 µs after the return (timestamps rounded to whole µs): still the target,
  // its negative wake-up counted as clock skew.
  job.ranks[0].kernels[1].duration_ns = 56 * kUs;
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  ASSERT_EQ(r.graph.syncs[0].target, SyncSpec::Target::kStream);
  EXPECT_EQ(r.graph.processors[r.graph.syncs[0].stream_processor].id, 8u);
  EXPECT_EQ(r.graph.syncs[0].wake_ns, -1 * kUs);
  EXPECT_EQ(r.graph.stats.negative_slack_edges, 1u);
  EXPECT_EQ(r.graph.stats.max_negative_slack_ns, 1 * kUs);
}

TEST(SyncTargetTest, NoStreamEndedInTimeLeavesAPlainCall) {
  Job job = HiddenStreamSyncJob();
  job.ranks[0].kernels[1].duration_ns = 300 * kUs;  // The copy now ends at 330, after 85 too.
  const Replayed r = Replay(job);
  EXPECT_EQ(r.graph.syncs.size(), 0u);
  EXPECT_EQ(r.graph.stats.inferred_syncs, 0u);
  EXPECT_EQ(r.graph.stats.untargeted_syncs, 1u);
  EXPECT_EQ(r.graph.stats.negative_slack_edges, 0u);
  // Its measured 45 µs, whatever the GPU does.
  const Replayed slower = Replay(job, {"kernel:.=2"});
  const uint32_t node = NodeNamed(slower.graph, 0, "sync");
  EXPECT_EQ(slower.sim.end_ns[node] - slower.sim.start_ns[node], 45 * kUs);
  ExecutionGraph graph = r.graph;
  EXPECT_EQ(Validate(&graph), 1u);
  ASSERT_FALSE(graph.diagnostics.empty());
  EXPECT_NE(graph.diagnostics.back().what.find("1 sync"), std::string::npos)
      << graph.diagnostics.back().what;
}

TEST(SyncTargetTest, SyncBeforeAnyGpuWorkWaitsForNothing) {
  Job job;
  job.job_id = "early-sync";
  RankBuilder(&job, 0, 1)
      .Api(ApiKind::kEventSynchronize, "sync", 0, 3, 0)
      .Api(ApiKind::kLaunchKernel, "launch_gemm", 10, 5, 1)
      .Kernel("gemm", 7, 20, 100, 1);
  const Replayed r = Replay(job);
  EXPECT_EQ(r.graph.syncs.size(), 0u);
  EXPECT_EQ(r.graph.stats.untargeted_syncs, 0u);  // Nothing contradicts the trace.
  ExecutionGraph graph = r.graph;
  EXPECT_EQ(Validate(&graph), 0u);
  const uint32_t node = NodeNamed(r.graph, 0, "sync");
  EXPECT_EQ(r.sim.end_ns[node], 3 * kUs);
}

// A sync whose stream the trace names keeps it, even when another stream ended later.
TEST(SyncTargetTest, RecordedStreamIsNotSecondGuessed) {
  Job job = HiddenStreamSyncJob();
  job.ranks[0].api_calls[2].stream_id = 7;  // It names the gemm's stream.
  const Replayed r = Replay(job);
  ASSERT_EQ(r.graph.syncs.size(), 1u);
  EXPECT_FALSE(r.graph.syncs[0].inferred);
  EXPECT_EQ(r.graph.processors[r.graph.syncs[0].stream_processor].id, 7u);
  EXPECT_EQ(r.graph.syncs[0].wake_ns, -415 * kUs);  // The measurement contradicts it: skew.
}

}  // namespace
}  // namespace lumos::modeler::testing
