// A loaded rank holds one record per API call (modeler/trace/nested_calls.h): on the shared
// two_streams trace of an H200, whose agent recorded each runtime call and the driver call it
// made, every kernel has exactly one launching call, and the graph one launch edge per kernel.
#include <gtest/gtest.h>

#include <string>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"

namespace lumos::modeler {
namespace {

TEST(JobCallsTest, EveryKernelOfTheSharedTwoStreamsTraceHasOneLaunchingCall) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/two-streams.pb.zst";
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  const RankTrace& rank = job->ranks[0];
  EXPECT_EQ(rank.nested_driver_calls, 27u);
  EXPECT_EQ(rank.api_calls.size(), 27u);
  size_t launches = 0;
  for (const schema::ApiCallEvent& call : rank.api_calls) {
    launches += call.kind == schema::ApiKind::kLaunchKernel ? 1 : 0;
    EXPECT_EQ(call.domain, schema::ApiDomain::kRuntime) << call.name;
  }
  EXPECT_EQ(launches, rank.kernels.size());
  EXPECT_EQ(launches, 16u);
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
  size_t launch_edges = 0;
  for (const Edge& e : graph.edges) launch_edges += e.kind == EdgeKind::kLaunch ? 1 : 0;
  EXPECT_EQ(launch_edges, 16u + 2u + 1u);  // Kernels, copies, the memset.
}

}  // namespace
}  // namespace lumos::modeler
