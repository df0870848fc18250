// A loaded rank knows the GEMM problem of each kernel (RankTrace::GemmOf, modeler/graph/job.h):
// from a trace file as the agent writes it (a cuBLAS call around its launches on one thread),
// through the real writer and reader; old traces load as before (no GEMM calls: no shapes).
#include <gtest/gtest.h>

#include <string>

#include "modeler/graph/job.h"
#include "modeler/trace/gemm_orientation.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::TempDir;

// A split-K GEMM (two launches inside one cublasGemmEx on thread 7), a cuBLASLt matmul, an
// elementwise kernel launched outside both, and a kernel of a CUDA graph launched inside the
// second call's span (graph kernels get no shape).
std::string WriteGemmTrace(const TempDir& dir) {
  const std::string path = dir.File("gemm.pb.zst");
  auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(), {});
  EXPECT_TRUE(writer.ok());
  auto launch = [&](int64_t start, uint64_t correlation, schema::ApiKind kind) {
    schema::ApiCallEvent a;
    a.start_ns = start;
    a.duration_ns = 100;
    a.thread_id = 7;
    a.correlation_id = correlation;
    a.kind = kind;
    a.name = kind == schema::ApiKind::kLaunchGraph ? "cudaGraphLaunch" : "cuLaunchKernelEx";
    (*writer)->Add(a);
  };
  auto kernel = [&](int64_t start, uint64_t correlation, std::string_view name, uint64_t graph) {
    schema::KernelEvent k;
    k.start_ns = start;
    k.duration_ns = 1000;
    k.correlation_id = correlation;
    k.stream_id = 7;
    k.name = name;
    k.graph_id = graph;
    (*writer)->Add(k);
  };
  schema::GemmCallEvent gemm_ex{.start_ns = 1'000,
                                .duration_ns = 2'000,
                                .thread_id = 7,
                                .api = schema::GemmApi::kCublasGemmEx,
                                .m = 8192,
                                .n = 128,
                                .k = 65536,
                                .batch_count = 1,
                                .a_type = schema::DataType::kBfloat16};
  (*writer)->Add(gemm_ex);
  launch(1'200, 1, schema::ApiKind::kLaunchKernel);
  launch(1'600, 2, schema::ApiKind::kLaunchKernel);
  kernel(5'000, 1, "sm90_gemm_splitk", 0);
  kernel(6'000, 2, "splitKreduce_kernel", 0);
  launch(3'500, 3, schema::ApiKind::kLaunchKernel);
  kernel(7'000, 3, "elementwise_kernel", 0);
  schema::GemmCallEvent lt{.start_ns = 4'000,
                           .duration_ns = 1'000,
                           .thread_id = 7,
                           .api = schema::GemmApi::kCublasltMatmul,
                           .m = 64,
                           .n = 64,
                           .k = 64,
                           .batch_count = 8};
  (*writer)->Add(lt);
  launch(4'100, 4, schema::ApiKind::kLaunchKernel);
  kernel(8'000, 4, "nvjet_tst", 0);
  launch(4'500, 5, schema::ApiKind::kLaunchGraph);
  kernel(9'000, 5, "graph_gemm", 99);
  EXPECT_TRUE((*writer)->Close(10'000).ok());
  return path;
}

TEST(JobGemmTest, EveryKernelKnowsTheGemmThatLaunchedIt) {
  TempDir dir;
  auto job = LoadJob({WriteGemmTrace(dir)});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const RankTrace& rank = job->ranks.at(0);
  ASSERT_EQ(rank.kernels.size(), 5u);
  ASSERT_EQ(rank.gemm_calls.size(), 2u);
  ASSERT_EQ(rank.kernel_gemm.size(), rank.kernels.size());
  for (size_t i = 0; i < rank.kernels.size(); ++i) {
    const schema::KernelEvent& k = rank.kernels[i];
    const schema::GemmCallEvent* gemm = rank.GemmOf(i);
    SCOPED_TRACE(std::string(k.name));
    if (k.name == "sm90_gemm_splitk" || k.name == "splitKreduce_kernel") {
      ASSERT_NE(gemm, nullptr);
      // Loaded row-major (modeler/trace/gemm_orientation.h): cuBLAS's m and n, A and B swap.
      EXPECT_EQ(gemm->m, 128u);
      EXPECT_EQ(gemm->n, 8192u);
      EXPECT_EQ(gemm->k, 65536u);
      EXPECT_EQ(gemm->b_type, schema::DataType::kBfloat16);
    } else if (k.name == "nvjet_tst") {
      ASSERT_NE(gemm, nullptr);
      EXPECT_EQ(gemm->api, schema::GemmApi::kCublasltMatmul);
      EXPECT_EQ(gemm->batch_count, 8u);
    } else {
      EXPECT_EQ(gemm, nullptr);  // Launched outside a GEMM call, or replayed by a graph.
    }
  }
  EXPECT_EQ(rank.GemmOf(rank.kernels.size()), nullptr);  // Out of range: none.
}

TEST(JobGemmTest, StreamingReleasesTheShapesWithTheKernels) {
  TempDir dir;
  const std::string path = WriteGemmTrace(dir);
  size_t shaped = 0;
  LoadOptions options;
  options.keep_events = false;
  options.on_rank = [&](const RankTrace& rank, uint32_t) {
    for (size_t i = 0; i < rank.kernels.size(); ++i) shaped += rank.GemmOf(i) != nullptr ? 1 : 0;
  };
  auto job = LoadJob({path}, options);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(shaped, 3u);  // Seen in on_rank, before the kernels went.
  EXPECT_TRUE(job->ranks.at(0).gemm_calls.empty());
  EXPECT_TRUE(job->ranks.at(0).kernel_gemm.empty());
}

TEST(JobGemmTest, TracesWithoutGemmCallsHaveNoShapes) {
  TempDir dir;
  const std::string path = dir.File("old.pb.zst");
  ::lumos::testing::WriteSampleTrace(path, 50);
  auto job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const RankTrace& rank = job->ranks.at(0);
  ASSERT_EQ(rank.kernels.size(), 50u);
  for (size_t i = 0; i < rank.kernels.size(); ++i) EXPECT_EQ(rank.GemmOf(i), nullptr);
  // The schema 2.1 golden file (written before GEMM calls existed) loads the same way.
  auto golden =
      LoadJob({std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v2.1/every_packet_kind.pb.zst"});
  ASSERT_TRUE(golden.ok()) << golden.status().message();
  EXPECT_TRUE(golden->ranks.at(0).gemm_calls.empty());
  EXPECT_EQ(golden->ranks.at(0).GemmOf(0), nullptr);
  // The 2.2 one has the GEMM call around its kernel's launch.
  auto v22 =
      LoadJob({std::string(LUMOS_SOURCE_DIR) + "/tests/data/schema_v2.2/every_packet_kind.pb.zst"});
  ASSERT_TRUE(v22.ok()) << v22.status().message();
  ASSERT_NE(v22->ranks.at(0).GemmOf(0), nullptr);
  EXPECT_EQ(v22->ranks.at(0).GemmOf(0)->n, 4096u);  // The file's cuBLAS m, loaded row-major.
}

// est-base: 4 layers of hidden 1024 (ffn 4096), mbs 4 x seq 1024 = 4096 tokens. Its QKV
// projections (x of 4096 x 1024 times the 3072 x 1024 in_proj weight, transposed) were recorded
// by cuBLAS as column-major m 3072, n 4096; loaded, every one has its tokens in m.
TEST(GemmOrientationTest, TheRealLoopsQkvProjectionsLoadWithTheirTokensInM) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch/est-base.pb.zst";
  StatusOr<Job> job = LoadJob({path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 1u);
  size_t qkv = 0, column_major = 0;
  for (const schema::GemmCallEvent& call : job->ranks[0].gemm_calls) {
    column_major += IsColumnMajorGemmApi(call.api) ? 1 : 0;
    if (call.k != 1024 || (call.m != 3072 && call.n != 3072)) continue;
    ++qkv;
    EXPECT_EQ(call.m, 4096u);
    EXPECT_EQ(call.n, 3072u);
  }
  EXPECT_EQ(column_major, job->ranks[0].gemm_calls.size());
  EXPECT_EQ(qkv, 40u * 4u);  // 40 steps, 4 layers.
}

}  // namespace
}  // namespace lumos::modeler
