// Runs two_streams_workload under lumos-run on a real GPU and checks the trace with the modeler's
// reader: the expected kernels, copies, memset, CUDA event record and stream wait arrived, each
// kernel has its launching API call (correlation id), and every STREAM_WAIT_EVENT sync joins a
// CUDA event record by cuda_event_sync_id. Skipped (GTEST_SKIP) when the workload finds no GPU.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "cuda_tests/two_streams_workload.h"
#include "modeler/trace/trace_reader.h"
#include "schema/enums.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::cuda_tests {
namespace {

struct Seen {
  int kernels = 0, memcpys = 0, memsets = 0, event_records = 0, stream_waits = 0;
  std::set<uint64_t> kernel_correlations, launch_correlations, event_sync_ids;
  std::vector<uint64_t> wait_sync_ids;
  std::map<int, int> api_kinds;
  std::vector<std::string> failures;
};

template <typename E>
int Int(E value) {
  return static_cast<int>(value);
}

TEST(TwoStreamsTest, TraceHasTheWorkloadsEventsAndEdges) {
  ::lumos::testing::TempDir dir;
  auto run = ::lumos::testing::RunCommand(std::string(LUMOS_RUN_PATH) + " -o " + dir.path() +
                                          " -- " WORKLOAD_PATH);
  if (run.exit_code == kSkipExitCode) GTEST_SKIP() << "no GPU: " << run.out;
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ASSERT_NE(run.out.find("two_streams_workload: ok"), std::string::npos) << run.out;
  auto reader = modeler::TraceReader::Open(dir.path() + "/" + [&] {
    auto ls = ::lumos::testing::RunCommand("ls " + dir.path());
    return ls.out.substr(0, ls.out.find('\n'));
  }());
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  Seen seen;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& p, const modeler::PacketContext&) {
        if (p.has_kernel()) {
          ++seen.kernels;
          seen.kernel_correlations.insert(p.kernel().correlation_id());
        }
        if (p.has_memcpy()) ++seen.memcpys;
        if (p.has_memset()) ++seen.memsets;
        if (p.has_cuda_event()) {
          ++seen.event_records;
          seen.event_sync_ids.insert(p.cuda_event().cuda_event_sync_id());
        }
        if (p.has_sync() && Int(p.sync().sync_type()) == Int(schema::SyncType::kStreamWaitEvent)) {
          ++seen.stream_waits;
          seen.wait_sync_ids.push_back(p.sync().cuda_event_sync_id());
        }
        if (p.has_api_call()) {
          ++seen.api_kinds[Int(p.api_call().kind())];
          if (Int(p.api_call().kind()) == Int(schema::ApiKind::kLaunchKernel)) {
            seen.launch_correlations.insert(p.api_call().correlation_id());
          }
        }
        if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
          seen.failures.push_back(p.loss().detail());
        }
        return Status::Ok();
      },
      &result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(seen.failures.empty()) << seen.failures.front();
  EXPECT_EQ(seen.kernels, kKernels);
  EXPECT_EQ(seen.memcpys, kMemcpys);
  EXPECT_EQ(seen.memsets, kMemsets);
  EXPECT_EQ(seen.event_records, kEventRecords);
  EXPECT_EQ(seen.stream_waits, kStreamWaits);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kLaunchKernel)], kKernels);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kEventRecord)], kEventRecords);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kStreamWaitEvent)], kStreamWaits);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kMemcpy)], 1);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kMemcpyAsync)], 1);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kStreamSynchronize)], 1);
  EXPECT_EQ(seen.api_kinds[Int(schema::ApiKind::kEventSynchronize)], 1);
  EXPECT_GE(seen.api_kinds[Int(schema::ApiKind::kDeviceSynchronize)], 1);
  for (uint64_t correlation : seen.kernel_correlations) {
    EXPECT_TRUE(seen.launch_correlations.count(correlation)) << "kernel " << correlation;
  }
  for (uint64_t sync_id : seen.wait_sync_ids) {
    EXPECT_NE(sync_id, 0u);
    EXPECT_TRUE(seen.event_sync_ids.count(sync_id)) << "stream wait " << sync_id;
  }
}

}  // namespace
}  // namespace lumos::cuda_tests
