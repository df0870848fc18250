// Runs graph_workload under lumos-run on a real GPU and checks the trace exactly: one
// LAUNCH_GRAPH API call per cudaGraphLaunch and one LAUNCH_KERNEL per captured launch; per graph
// launch exactly kGraphKernels kernels joined to it by correlation id, each carrying the graph
// id and one of kGraphKernels distinct graph node ids (each node run once per launch), all on
// one stream; and the workload's NVTX ranges by name and kind. Skipped (GTEST_SKIP) without a
// GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cuda_tests/graph_workload.h"
#include "cuda_tests/workload_run.h"
#include "schema/enums.h"

namespace lumos::cuda_tests {
namespace {

TEST(GraphTest, TraceHasEveryGraphLaunchItsKernelsAndTheNvtxRanges) {
  ::lumos::testing::TempDir dir;
  WorkloadRun run = RunUnderLumos(dir, WORKLOAD_PATH);
  if (run.skipped) GTEST_SKIP() << "no GPU: " << run.result.out;
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ASSERT_NE(run.result.out.find("graph_workload: ok"), std::string::npos) << run.result.out;
  ASSERT_FALSE(run.trace_path.empty());

  std::map<int, int> api_kinds;
  std::set<uint64_t> graph_launches;  // Their correlation ids.
  std::map<uint64_t, int> kernels_per_correlation;
  std::map<uint64_t, int> runs_per_node;  // graph_node_id -> kernels.
  std::set<uint64_t> graph_ids, kernel_streams;
  int kernels = 0, kernels_outside_graphs = 0;
  std::map<std::string, int> nvtx;  // "<kind>:<name>" -> ranges.
  std::vector<std::string> failures;
  ReadTrace(run.trace_path, [&](const modeler::pb::TracePacket& p,
                                const modeler::PacketContext& context) {
    if (p.has_api_call()) {
      ++api_kinds[Int(p.api_call().kind())];
      if (Int(p.api_call().kind()) == Int(schema::ApiKind::kLaunchGraph)) {
        graph_launches.insert(p.api_call().correlation_id());
      }
    }
    if (p.has_kernel()) {
      ++kernels;
      ++kernels_per_correlation[p.kernel().correlation_id()];
      kernel_streams.insert(p.kernel().stream_id());
      if (p.kernel().graph_id() == 0) ++kernels_outside_graphs;
      graph_ids.insert(p.kernel().graph_id());
      ++runs_per_node[p.kernel().graph_node_id()];
    }
    if (p.has_nvtx()) {
      ++nvtx[std::to_string(p.nvtx().kind()) + ":" +
             std::string(context.String(p.nvtx().name_iid()))];
    }
    if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
      failures.push_back(p.loss().detail());
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();

  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kLaunchGraph)], kGraphLaunches);
  EXPECT_EQ(graph_launches.size(), static_cast<size_t>(kGraphLaunches));
  // Captured launches are API calls that run nothing by themselves.
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kLaunchKernel)], kGraphKernels);
  EXPECT_EQ(kernels, kGraphLaunches * kGraphKernels);
  EXPECT_EQ(kernels_outside_graphs, 0);
  EXPECT_EQ(graph_ids.size(), 1u);  // One graph.
  EXPECT_EQ(kernel_streams.size(), 1u);
  // Every kernel is matched to its graph launch, and every launch ran the whole graph.
  for (const auto& [correlation, count] : kernels_per_correlation) {
    EXPECT_TRUE(graph_launches.count(correlation)) << "kernel correlation " << correlation;
  }
  for (uint64_t correlation : graph_launches) {
    EXPECT_EQ(kernels_per_correlation[correlation], kGraphKernels) << "launch " << correlation;
  }
  EXPECT_EQ(runs_per_node.size(), static_cast<size_t>(kGraphKernels));
  for (const auto& [node, count] : runs_per_node) {
    EXPECT_NE(node, 0u);
    EXPECT_EQ(count, kGraphLaunches) << "graph node " << node;
  }

  const std::string push_pop = std::to_string(modeler::pb::NVTX_KIND_PUSH_POP) + ":";
  const std::string start_end = std::to_string(modeler::pb::NVTX_KIND_START_END) + ":";
  const std::string mark = std::to_string(modeler::pb::NVTX_KIND_MARK) + ":";
  EXPECT_EQ(nvtx[push_pop + kLaunchRange], kGraphLaunches);
  EXPECT_EQ(nvtx[push_pop + kCaptureRange], 1);
  EXPECT_EQ(nvtx[start_end + kReplaysRange], 1);
  EXPECT_EQ(nvtx[mark + kDoneMark], 1);
  EXPECT_EQ(nvtx.size(), 4u) << "unexpected NVTX ranges";
}

}  // namespace
}  // namespace lumos::cuda_tests
