// Runs cublas_gemm_workload under lumos-run on a real GPU and checks the trace end to end: one
// GemmCall per cuBLAS / cuBLASLt call the workload made (cublas_gemm_workload.h), in order,
// with its entry point's api, m, n, k, batch count, transposes, operand types, compute type and
// status, all on the calling thread and the workload's stream; each call's kernels (one or
// more: cuBLAS may split K) get its shape through RankTrace::GemmOf, and the workload's own
// Fill kernels none. Once with libcublas in the global scope, once loaded RTLD_LOCAL as
// PyTorch loads it. Skipped (GTEST_SKIP) without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_tests/cublas_gemm_workload.h"
#include "cuda_tests/workload_run.h"
#include "modeler/graph/job.h"
#include "schema/enums.h"

namespace lumos::cuda_tests {
namespace {

using schema::DataType;
using schema::GemmApi;
using schema::GemmComputeType;
using schema::GemmTranspose;

struct Expected {
  GemmApi api;
  GemmTranspose transa, transb;
  DataType a_type, c_type;
  GemmComputeType compute_type;
  bool handle_math_mode;  // cuBLAS calls record the handle's (default) math mode.
};

Expected Make(GemmApi api, GemmTranspose transa, GemmTranspose transb, DataType a_type,
              DataType c_type, bool handle_math_mode) {
  return Expected{api, transa, transb, a_type, c_type, GemmComputeType::kFloat32, handle_math_mode};
}

Expected ExpectedOf(GemmEntry entry) {
  using T = GemmTranspose;
  switch (entry) {
    case GemmEntry::kSgemm:
      return Make(GemmApi::kCublasGemm, T::kN, T::kN, DataType::kFloat32, DataType::kFloat32, true);
    case GemmEntry::kGemmEx:
      return Make(GemmApi::kCublasGemmEx, T::kT, T::kN, DataType::kBfloat16, DataType::kBfloat16,
                  true);
    case GemmEntry::kGemmStridedBatchedEx:
      return Make(GemmApi::kCublasGemmStridedBatchedEx, T::kN, T::kN, DataType::kFloat16,
                  DataType::kFloat16, true);
    case GemmEntry::kSgemmStridedBatched:
      return Make(GemmApi::kCublasGemmStridedBatched, T::kN, T::kT, DataType::kFloat32,
                  DataType::kFloat32, true);
    case GemmEntry::kLtMatmul:
      return Make(GemmApi::kCublasltMatmul, T::kT, T::kN, DataType::kFloat16, DataType::kFloat16,
                  false);
  }
  return {};
}

void CheckGemmTrace(const std::string& mode) {
  ::lumos::testing::TempDir dir;
  WorkloadRun run = RunUnderLumos(dir, std::string(WORKLOAD_PATH) + " " + mode);
  if (run.skipped) GTEST_SKIP() << "no GPU: " << run.result.out;
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out << run.result.err;
  ASSERT_NE(run.result.out.find("ok (" + std::to_string(kGemmCallCount) + " GEMM calls)"),
            std::string::npos)
      << run.result.out;
  ASSERT_FALSE(run.trace_path.empty());

  std::vector<std::string> failures;
  ReadTrace(run.trace_path, [&](const modeler::pb::TracePacket& p, const modeler::PacketContext&) {
    if (p.has_loss() && Int(p.loss().source()) == Int(schema::LossSource::kChannelFailed)) {
      failures.push_back(p.loss().detail());
    }
  });
  EXPECT_TRUE(failures.empty()) << failures.front();

  auto job = modeler::LoadJob({run.trace_path});
  ASSERT_TRUE(job.ok()) << job.status().message();
  const modeler::RankTrace& rank = job->ranks.at(0);
  ASSERT_EQ(rank.gemm_calls.size(), static_cast<size_t>(kGemmCallCount));
  std::vector<int> kernels_of(kGemmCallCount, 0);
  int fills = 0;
  for (size_t i = 0; i < rank.kernels.size(); ++i) {
    const schema::GemmCallEvent* g = rank.GemmOf(i);
    if (rank.kernels[i].name.find("Fill") != std::string_view::npos) {
      ++fills;
      EXPECT_EQ(g, nullptr) << "the workload's own kernel got a GEMM shape";
      continue;
    }
    if (g != nullptr) ++kernels_of[static_cast<size_t>(g - rank.gemm_calls.data())];
  }
  EXPECT_EQ(fills, 2 * kGemmCallCount);
  for (int i = 0; i < kGemmCallCount; ++i) {
    const GemmCallSpec& spec = kGemmCalls[i];
    const schema::GemmCallEvent& g = rank.gemm_calls[static_cast<size_t>(i)];
    const Expected e = ExpectedOf(spec.entry);
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(Int(g.api), Int(e.api));
    EXPECT_EQ(g.m, static_cast<uint64_t>(spec.m));
    EXPECT_EQ(g.n, static_cast<uint64_t>(spec.n));
    EXPECT_EQ(g.k, static_cast<uint64_t>(spec.k));
    EXPECT_EQ(g.batch_count, static_cast<uint64_t>(spec.batch));
    EXPECT_EQ(Int(g.transa), Int(e.transa));
    EXPECT_EQ(Int(g.transb), Int(e.transb));
    EXPECT_EQ(Int(g.a_type), Int(e.a_type));
    EXPECT_EQ(Int(g.b_type), Int(e.a_type));
    EXPECT_EQ(Int(g.c_type), Int(e.c_type));
    EXPECT_EQ(Int(g.d_type), Int(e.c_type));
    EXPECT_EQ(Int(g.compute_type), Int(e.compute_type));
    EXPECT_EQ(Int(g.math_mode), Int(e.handle_math_mode ? schema::GemmMathMode::kDefault
                                                       : schema::GemmMathMode::kUnspecified));
    EXPECT_EQ(g.return_code, 0);
    EXPECT_GT(g.duration_ns, 0u);
    EXPECT_EQ(g.thread_id, rank.gemm_calls[0].thread_id);  // One thread made every call.
    EXPECT_NE(g.stream_id, 0u);
    EXPECT_EQ(g.stream_id, rank.gemm_calls[0].stream_id);  // cublasSetStream's, and Lt's.
    if (i > 0) {
      EXPECT_GE(g.start_ns, rank.gemm_calls[static_cast<size_t>(i) - 1].start_ns);
    }
    EXPECT_GE(kernels_of[static_cast<size_t>(i)], 1) << "no kernel linked to the call";
  }
}

TEST(CublasGemmTest, EachCallIsOneGemmCallLinkedToItsKernels) { CheckGemmTrace("global"); }

TEST(CublasGemmTest, CublasInALocalScopeAsPyTorchLoadsIt) { CheckGemmTrace("local"); }

}  // namespace
}  // namespace lumos::cuda_tests
