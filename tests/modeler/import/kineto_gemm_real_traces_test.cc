// GEMM shapes of the real PyTorch profiler traces in ../shared/data/traces (recorded with
// record_shapes), imported by the real importer and loaded by the modeler: each kernel's
// RankTrace::GemmOf() against numbers worked out from the JSON itself, independently of this
// code, with a short Python script: for every cudaLaunchKernel / cuLaunchKernel with a
// correlation id, the innermost cpu_op on its tid whose [ts, ts + dur] holds the launch's ts;
// when that op is aten::mm / addmm / bmm (the only GEMM operators that launch in these
// traces) and its "Input Dims" fit, the kernels of that correlation id (but ATen's own
// at::native:: kernels) get its (m, n, k, batch); everything else none.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "modeler/graph/job.h"
#include "modeler/import/kineto_import.h"
#include "modeler/trace/trace_set.h"
#include "tests/modeler/import/import_test_util.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::kineto {
namespace {

using schema::GemmCallEvent;
using Shape = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t>;  // m, n, k, batch.

struct Shapes {
  size_t kernels = 0;
  size_t shaped = 0;
  std::map<std::string, size_t> by_operator;
  std::map<Shape, size_t> by_shape;
  size_t split_k_shaped = 0;  // splitKreduce_kernel: the second kernel of a split-K GEMM.
  size_t native_shaped = 0;   // ATen's own kernels with a shape (none expected).
  size_t not_float32 = 0;     // Shapes whose operands are not both float32 (none here).
  size_t not_matmul = 0;      // Shapes of another api (none: no attention operators here).
  size_t graph_kernels = 0;   // Kernels of a CUDA graph launch (a LAUNCH_GRAPH call's id).
  size_t graph_shaped = 0;
  // The earliest kernel with a shape.
  std::string first_kernel;
  GemmCallEvent first;     // Its names view the Job's pool, gone with the Job: use first_name.
  std::string first_name;  // first.name, copied.
};

Shapes ShapesOf(const RankTrace& rank) {
  Shapes s;
  s.kernels = rank.kernels.size();
  std::set<uint64_t> graph_launches;
  for (const schema::ApiCallEvent& call : rank.api_calls) {
    if (call.kind == schema::ApiKind::kLaunchGraph) graph_launches.insert(call.correlation_id);
  }
  int64_t first_start = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < rank.kernels.size(); ++i) {
    const GemmCallEvent* g = rank.GemmOf(i);
    const std::string_view name = rank.kernels[i].name;
    if (graph_launches.count(rank.kernels[i].correlation_id) != 0) {
      ++s.graph_kernels;
      s.graph_shaped += g != nullptr;
    }
    if (g == nullptr) continue;
    ++s.shaped;
    ++s.by_operator[std::string(g->name)];
    ++s.by_shape[{g->m, g->n, g->k, g->batch_count}];
    s.split_k_shaped += name.find("splitKreduce_kernel") != std::string_view::npos;
    s.native_shaped += name.find("at::native::") != std::string_view::npos;
    s.not_float32 +=
        g->a_type != schema::DataType::kFloat32 || g->b_type != schema::DataType::kFloat32;
    s.not_matmul += g->api != schema::GemmApi::kFrameworkMatmul;
    if (rank.kernels[i].start_ns < first_start) {
      first_start = rank.kernels[i].start_ns;
      s.first_kernel = name;
      s.first = *g;
      s.first_name = std::string(g->name);
    }
  }
  return s;
}

Shapes Import(const std::string& input, const ::lumos::testing::TempDir& dir) {
  EXPECT_TRUE(std::filesystem::exists(input)) << "shared test traces missing: " << input;
  auto imported = ImportKineto({{input}, dir.File("out.pb.zst"), "", 3});
  EXPECT_TRUE(imported.ok()) << imported.status().message();
  auto job = LoadJob({dir.File("out.pb.zst")});
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return {};
  return ShapesOf(job->ranks.at(0));
}

// A TorchRec-style recommender on an A100 (6 steps): 8568 kernels, 2388 of them GEMMs'.
TEST(KinetoGemmRealTracesTest, RecommenderTrainingOnA100) {
  ::lumos::testing::TempDir dir;
  Shapes s = Import(testing::SharedTraceDir() + "/hta-single-rank/control.json.gz", dir);
  EXPECT_EQ(s.kernels, 8568u);
  EXPECT_EQ(s.shaped, 2388u);
  EXPECT_EQ(s.by_operator, (std::map<std::string, size_t>{
                               {"aten::addmm", 744}, {"aten::bmm", 90}, {"aten::mm", 1554}}));
  EXPECT_EQ(s.by_shape.size(), 133u);  // Distinct problems.
  EXPECT_EQ(s.by_shape[Shape(1024, 96, 512, 1)], 156u);
  EXPECT_EQ(s.by_shape[Shape(100, 256, 1024, 1)], 156u);
  EXPECT_EQ(s.by_shape[Shape(96, 512, 1024, 1)], 156u);
  EXPECT_EQ(s.by_shape[Shape(96, 30, 647, 1024)], 12u);  // A bmm of 1024 batches.
  EXPECT_EQ(s.by_shape[Shape(32, 32, 1, 1024)], 6u);
  EXPECT_EQ(s.split_k_shaped, 606u);
  EXPECT_EQ(s.native_shaped, 0u);  // The 6 bias copies inside aten::addmm stay unshaped.
  EXPECT_EQ(s.not_float32, 0u);
  EXPECT_EQ(s.not_matmul, 0u);
  const std::string first =
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align1>";
  EXPECT_EQ(s.first_kernel.substr(0, first.size()), first);
  EXPECT_EQ(s.first_name, "aten::addmm");
  EXPECT_EQ(Shape(s.first.m, s.first.n, s.first.k, s.first.batch_count), Shape(1024, 512, 1705, 1));
}

// CUDA graphs (TorchRec on an A100-80GB): the 30 GEMM kernels launched one by one get their
// shape; the 135 kernels its 70 graph launches replay carry the graph launch's correlation id
// and get none.
TEST(KinetoGemmRealTracesTest, TrainingWithCudaGraphs) {
  ::lumos::testing::TempDir dir;
  Shapes s = Import(testing::SharedTraceDir() + "/hta-single-rank/rank0.json.gz", dir);
  EXPECT_EQ(s.kernels, 6080u);
  EXPECT_EQ(s.shaped, 30u);
  EXPECT_EQ(s.by_operator, (std::map<std::string, size_t>{{"aten::addmm", 10}, {"aten::mm", 20}}));
  EXPECT_EQ(s.by_shape, (std::map<Shape, size_t>{{Shape(64, 100, 4096, 1), 10},
                                                 {Shape(4096, 64, 100, 1), 5},
                                                 {Shape(4096, 64, 2798, 1), 5},
                                                 {Shape(4096, 2798, 64, 1), 5},
                                                 {Shape(64, 2798, 4096, 1), 5}}));
  EXPECT_EQ(s.split_k_shaped, 5u);
  EXPECT_EQ(s.graph_kernels, 135u);
  EXPECT_EQ(s.graph_shaped, 0u);
  EXPECT_EQ(s.first_name, "aten::addmm");
  EXPECT_EQ(Shape(s.first.m, s.first.n, s.first.k, s.first.batch_count), Shape(4096, 64, 100, 1));
}

// DLRM on 8 V100s: every rank has the same 28 GEMM kernels (15 of aten::mm, 10 of addmm, the
// three bmm of the feature interaction), also the two ranks with 64 extra kernels.
TEST(KinetoGemmRealTracesTest, DlrmEveryRank) {
  ::lumos::testing::TempDir dir;
  const std::string archive = testing::SharedTraceDir() + "/dlrm-8rank-v100/dlrm_kineto.tar.gz";
  ASSERT_TRUE(std::filesystem::exists(archive)) << "shared test traces missing: " << archive;
  auto imported = ImportKineto({{archive}, dir.File("dlrm"), "", 3});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  auto paths = ExpandTracePaths({dir.File("dlrm")});
  ASSERT_TRUE(paths.ok()) << paths.status().message();
  auto job = LoadJob(*paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  ASSERT_EQ(job->ranks.size(), 8u);
  for (const RankTrace& rank : job->ranks) {
    Shapes s = ShapesOf(rank);
    SCOPED_TRACE("rank " + std::to_string(rank.rank));
    EXPECT_EQ(s.shaped, 28u);
    EXPECT_EQ(s.by_operator, (std::map<std::string, size_t>{
                                 {"aten::addmm", 10}, {"aten::bmm", 3}, {"aten::mm", 15}}));
    EXPECT_EQ(s.by_shape[Shape(16, 27, 27, 16)], 1u);
    EXPECT_EQ(s.by_shape[Shape(27, 16, 27, 16)], 1u);
    EXPECT_EQ(s.by_shape[Shape(27, 27, 16, 16)], 1u);
    EXPECT_EQ(s.by_shape[Shape(16, 512, 512, 1)], 4u);
    EXPECT_EQ(s.by_shape.size(), 21u);
    EXPECT_EQ(s.split_k_shaped, 4u);
    EXPECT_EQ(s.native_shaped, 0u);
    EXPECT_EQ(s.first_name, "aten::addmm");
    EXPECT_EQ(Shape(s.first.m, s.first.n, s.first.k, s.first.batch_count), Shape(16, 256, 13, 1));
  }
}

}  // namespace
}  // namespace lumos::modeler::kineto
