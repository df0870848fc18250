// A loaded rank holds one record per API call (modeler/trace/nested_calls.h): on the shared
// two_streams trace of an H200, whose agent recorded each runtime call and the driver call it
// made, every kernel has exactly one launching call, and the graph one launch edge per kernel.
#include <gtest/gtest.h>

#include <string>

#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/trace/trace_summary.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

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

// An agent trace's header is written before the job's first CUDA context and names no device;
// the trailer does (schema 2.4), every device the process could see. The loaded rank (estimate,
// costs, replay) takes the one its kernels ran on; inspect shows them all.
TEST(JobCallsTest, TheDeviceComesFromTheTrailerWhenTheHeaderHasNone) {
  ::lumos::testing::TempDir dir;
  const std::string path = dir.File("rank0.pb.zst");
  schema::HeaderInfo header = ::lumos::testing::SampleHeader(0, 1);
  header.devices.clear();
  header.cuda_driver_version = 0;
  {
    auto writer = schema::TraceFileWriter::Create(path, header, schema::WriterOptions());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    // Two visible devices; the rank's kernels ran on the second.
    schema::KernelEvent kernel;
    kernel.start_ns = 100;
    kernel.duration_ns = 10;
    kernel.device_id = 1;
    kernel.name = "gemm";
    (*writer)->Add(kernel);
    schema::TrailerInfo trailer;
    trailer.devices.push_back({.device_id = 0, .name = "NVIDIA H100 80GB HBM3"});
    trailer.devices.push_back({.device_id = 1, .name = "NVIDIA H200", .sm_count = 132});
    trailer.cuda_driver_version = 13000;
    ASSERT_TRUE((*writer)->Close(1000, trailer).ok());
  }
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  EXPECT_EQ(job->ranks[0].device, "NVIDIA H200");
  StatusOr<TraceSummary> summary = SummarizeTrace(path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(summary->header.devices_size(), 2);
  EXPECT_EQ(summary->header.devices(1).name(), "NVIDIA H200");
  EXPECT_TRUE(summary->devices_from_trailer);
  EXPECT_EQ(summary->header.cuda_driver_version(), 13000u);
}

}  // namespace
}  // namespace lumos::modeler
