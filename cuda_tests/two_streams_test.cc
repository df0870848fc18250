// Runs two_streams_workload under lumos-run on a real GPU and checks the trace exactly: the
// kernels, kKernelsPerStream on each of two streams; the copies, the memset, the CUDA event
// record and the stream wait, each joined to its API call by correlation id; every kernel
// matched to exactly one launch call and every launch to exactly one kernel; the event recorded
// on one kernel stream and waited for on the other, joined by cuda_event_sync_id; and one CUPTI
// synchronisation record per sync call. Skipped (GTEST_SKIP) when the workload finds no GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "cuda_tests/two_streams_workload.h"
#include "cuda_tests/workload_run.h"
#include "schema/enums.h"

namespace lumos::cuda_tests {
namespace {

TEST(TwoStreamsTest, TraceHasTheWorkloadsEventsAndEdges) {
  ::lumos::testing::TempDir dir;
  WorkloadRun run = RunUnderLumos(dir, WORKLOAD_PATH);
  if (run.skipped) GTEST_SKIP() << "no GPU: " << run.result.out;
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ASSERT_NE(run.result.out.find("two_streams_workload: ok"), std::string::npos) << run.result.out;
  ASSERT_FALSE(run.trace_path.empty());

  std::map<int, int> api_kinds, sync_types;
  std::map<uint64_t, int> api_kind_of;  // correlation id -> ApiKind.
  std::multiset<uint64_t> launch_correlations, kernel_correlations;
  std::map<uint64_t, int> kernels_per_stream;
  std::vector<uint64_t> memcpy_correlations, memset_correlations;
  std::map<uint64_t, uint64_t> record_stream_by_sync_id;
  struct Wait {
    uint64_t sync_id, stream, correlation;
  };
  std::vector<Wait> waits;
  std::vector<std::string> failures;
  ReadTrace(run.trace_path, [&](const modeler::pb::TracePacket& p, const modeler::PacketContext&) {
    if (p.has_api_call()) {
      const int kind = Int(p.api_call().kind());
      ++api_kinds[kind];
      api_kind_of[p.api_call().correlation_id()] = kind;
      if (kind == Int(schema::ApiKind::kLaunchKernel)) {
        launch_correlations.insert(p.api_call().correlation_id());
      }
    }
    if (p.has_kernel()) {
      kernel_correlations.insert(p.kernel().correlation_id());
      ++kernels_per_stream[p.kernel().stream_id()];
    }
    if (p.has_memcpy()) memcpy_correlations.push_back(p.memcpy().correlation_id());
    if (p.has_memset()) memset_correlations.push_back(p.memset().correlation_id());
    if (p.has_cuda_event()) {
      record_stream_by_sync_id[p.cuda_event().cuda_event_sync_id()] = p.cuda_event().stream_id();
    }
    if (p.has_sync()) {
      ++sync_types[Int(p.sync().sync_type())];
      if (Int(p.sync().sync_type()) == Int(schema::SyncType::kStreamWaitEvent)) {
        waits.push_back(
            {p.sync().cuda_event_sync_id(), p.sync().stream_id(), p.sync().correlation_id()});
      }
    }
    if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
      failures.push_back(p.loss().detail());
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();

  // Kernels: two streams, kKernelsPerStream each; launches and kernels one to one.
  ASSERT_EQ(kernels_per_stream.size(), 2u);
  for (const auto& [stream, kernels] : kernels_per_stream) {
    EXPECT_EQ(kernels, kKernelsPerStream) << "stream " << stream;
  }
  EXPECT_EQ(kernel_correlations.size(), static_cast<size_t>(kKernels));
  EXPECT_EQ(launch_correlations, kernel_correlations);
  for (uint64_t correlation : kernel_correlations) {
    EXPECT_EQ(kernel_correlations.count(correlation), 1u) << "kernel " << correlation;
  }

  // Copies and the memset, each joined to its call.
  ASSERT_EQ(memcpy_correlations.size(), static_cast<size_t>(kMemcpys));
  ASSERT_EQ(memset_correlations.size(), static_cast<size_t>(kMemsets));
  std::multiset<int> copy_kinds;
  for (uint64_t correlation : memcpy_correlations) copy_kinds.insert(api_kind_of[correlation]);
  EXPECT_EQ(copy_kinds, (std::multiset<int>{Int(schema::ApiKind::kMemcpy),
                                            Int(schema::ApiKind::kMemcpyAsync)}));
  EXPECT_EQ(api_kind_of[memset_correlations[0]], Int(schema::ApiKind::kMemsetAsync));

  // The event: recorded on one kernel stream, waited for on the other, joined by sync id.
  ASSERT_EQ(record_stream_by_sync_id.size(), static_cast<size_t>(kEventRecords));
  ASSERT_EQ(waits.size(), static_cast<size_t>(kStreamWaits));
  const Wait& wait = waits[0];
  ASSERT_NE(wait.sync_id, 0u);
  ASSERT_TRUE(record_stream_by_sync_id.count(wait.sync_id)) << "stream wait " << wait.sync_id;
  const uint64_t record_stream = record_stream_by_sync_id[wait.sync_id];
  EXPECT_TRUE(kernels_per_stream.count(record_stream)) << "record stream " << record_stream;
  EXPECT_TRUE(kernels_per_stream.count(wait.stream)) << "waiting stream " << wait.stream;
  EXPECT_NE(record_stream, wait.stream);
  EXPECT_EQ(api_kind_of[wait.correlation], Int(schema::ApiKind::kStreamWaitEvent));

  // API calls by kind, and one synchronisation record per sync call.
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kLaunchKernel)], kKernels);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kEventRecord)], kEventRecords);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kStreamWaitEvent)], kStreamWaits);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kMemcpy)], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kMemcpyAsync)], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kMemsetAsync)], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kStreamSynchronize)], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kEventSynchronize)], 1);
  EXPECT_EQ(api_kinds[Int(schema::ApiKind::kDeviceSynchronize)], 1);
  EXPECT_EQ(sync_types[Int(schema::SyncType::kStreamWaitEvent)], kStreamWaits);
  EXPECT_EQ(sync_types[Int(schema::SyncType::kStreamSynchronize)], 1);
  EXPECT_EQ(sync_types[Int(schema::SyncType::kEventSynchronize)], 1);
  EXPECT_EQ(sync_types[Int(schema::SyncType::kContextSynchronize)], 1);
}

}  // namespace
}  // namespace lumos::cuda_tests
