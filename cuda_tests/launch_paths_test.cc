// Runs launch_paths_workload under lumos-run on a real GPU and checks that every launch path of
// launch_paths_workload.h is recorded under its own API name, from the host thread that called
// it, and matched to exactly one kernel (and every kernel to exactly one launch); and that the
// stream work around the launches arrived: the event recorded with flags and the wait joined by
// cuda_event_sync_id, the blocking memset joined to its call, the host function, the driver's
// context synchronize. Skipped (GTEST_SKIP) when the workload finds no GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cuda_tests/launch_paths_workload.h"
#include "cuda_tests/workload_run.h"
#include "schema/enums.h"

namespace lumos::cuda_tests {
namespace {

TEST(LaunchPathsTest, EveryLaunchPathIsRecordedAndMatchedToItsKernel) {
  ::lumos::testing::TempDir dir;
  WorkloadRun run = RunUnderLumos(dir, WORKLOAD_PATH);
  if (run.skipped) GTEST_SKIP() << "no GPU: " << run.result.out;
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ASSERT_NE(run.result.out.find("launch_paths_workload: ok"), std::string::npos) << run.result.out;
  ASSERT_FALSE(run.trace_path.empty());

  std::map<std::string, int> launches_by_name, calls_by_name;
  std::map<int, int> api_kinds;
  std::map<uint64_t, int> api_kind_of;
  std::multiset<uint64_t> launch_correlations, kernel_correlations;
  std::set<uint32_t> launch_threads;
  std::vector<uint64_t> memset_correlations;
  std::set<uint64_t> recorded_sync_ids;
  std::vector<uint64_t> waited_sync_ids;
  std::vector<std::string> failures;
  ReadTrace(run.trace_path, [&](const modeler::pb::TracePacket& p,
                                const modeler::PacketContext& context) {
    if (p.has_api_call()) {
      const int kind = Int(p.api_call().kind());
      const std::string name(context.String(p.api_call().name_iid()));
      ++api_kinds[kind];
      ++calls_by_name[name];
      api_kind_of[p.api_call().correlation_id()] = kind;
      if (kind == Int(schema::ApiKind::kLaunchKernel)) {
        ++launches_by_name[name];
        launch_correlations.insert(p.api_call().correlation_id());
        launch_threads.insert(p.api_call().thread_id());
      }
    }
    if (p.has_kernel()) kernel_correlations.insert(p.kernel().correlation_id());
    if (p.has_memset()) memset_correlations.push_back(p.memset().correlation_id());
    if (p.has_cuda_event()) recorded_sync_ids.insert(p.cuda_event().cuda_event_sync_id());
    if (p.has_sync() && Int(p.sync().sync_type()) == Int(schema::SyncType::kStreamWaitEvent)) {
      waited_sync_ids.push_back(p.sync().cuda_event_sync_id());
    }
    if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
      failures.push_back(p.loss().detail());
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();

  for (const LaunchPath& path : kLaunchPaths) {
    EXPECT_EQ(launches_by_name[path.api_name], path.launches) << path.api_name;
  }
  EXPECT_EQ(launch_correlations.size(), static_cast<size_t>(kLaunches));
  EXPECT_EQ(launch_correlations, kernel_correlations);
  for (uint64_t correlation : launch_correlations) {
    EXPECT_EQ(launch_correlations.count(correlation), 1u) << "launch " << correlation;
  }
  EXPECT_EQ(launch_threads.size(), static_cast<size_t>(kLaunchThreads));

  EXPECT_EQ(calls_by_name["cudaEventRecordWithFlags"], 1);
  ASSERT_EQ(waited_sync_ids.size(), 1u);
  EXPECT_NE(waited_sync_ids[0], 0u);
  EXPECT_TRUE(recorded_sync_ids.count(waited_sync_ids[0]));
  ASSERT_EQ(memset_correlations.size(), 1u);
  EXPECT_EQ(api_kind_of[memset_correlations[0]], Int(schema::ApiKind::kMemset));
  EXPECT_EQ(calls_by_name["cudaLaunchHostFunc"], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kDeviceSynchronize)], 1);
  EXPECT_EQ(calls_by_name["cuCtxSynchronize"] + calls_by_name["cuCtxSynchronize_v2"], 1);
}

}  // namespace
}  // namespace lumos::cuda_tests
