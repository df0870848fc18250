// `synth gpt` end to end in process: the generated job loads, its graph is complete and valid,
// the replay reproduces every rank's iterations, kernels classify as their names say, every
// GEMM and attention kernel has its problem, and the same seed gives the same bytes.
#include "modeler/synth/gpt_synth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <tuple>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/sim/simulator.h"
#include "modeler/synth/gpt_program.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/gpt_job.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using lumos::testing::TempDir;
using models::ClassifyKernel;
using models::KernelClass;

Job Generate(const GptConfig& config, const std::string& dir) {
  auto result = SynthesizeGpt(config, models::SpecTable::Builtin(), {}, dir);
  EXPECT_TRUE(result.ok()) << result.status().message();
  auto paths = ExpandTracePaths({dir});
  EXPECT_TRUE(paths.ok());
  auto job = LoadJob(*paths);
  EXPECT_TRUE(job.ok()) << job.status().message();
  return std::move(job).value();
}

size_t CountKernels(const Job& job, KernelClass kind) {
  size_t n = 0;
  for (const RankTrace& r : job.ranks) {
    for (const auto& k : r.kernels) n += ClassifyKernel(k.name) == kind;
  }
  return n;
}

TEST(GptSynthTest, GraphIsCompleteAndReplaysAsMeasured) {
  TempDir dir;
  GptConfig config;  // tp 2, dp 2: TP and DP all-reduces.
  Job job = Generate(config, dir.path());
  ASSERT_EQ(job.ranks.size(), 4u);
  EXPECT_EQ(job.job_id, kGptJobId);
  EXPECT_TRUE(job.input_problems.empty());
  for (const RankTrace& r : job.ranks) {
    EXPECT_FALSE(r.cut_short);
    EXPECT_EQ(r.trailer_rank, r.rank);
    EXPECT_EQ(r.trailer_world_size, 4);
    EXPECT_EQ(r.communicators.size(), 3u);  // World, TP, DP.
  }
  const ClockAlignment alignment = AlignClocks(job);
  ExecutionGraph graph = BuildGraph(job, alignment.rank_offset_ns);
  EXPECT_EQ(Validate(&graph), 0u);
  for (const GraphDiagnostic& d : graph.diagnostics) ADD_FAILURE() << d.what;
  const GraphStats& s = graph.stats;
  EXPECT_EQ(s.unlaunched_gpu_ops, 0u);
  EXPECT_EQ(s.unmatched_waits, 0u);
  EXPECT_EQ(s.inferred_event_waits, 0u);
  EXPECT_EQ(s.inferred_syncs, 0u);
  EXPECT_EQ(s.untargeted_syncs, 0u);
  EXPECT_EQ(s.negative_slack_edges, 0u);
  EXPECT_EQ(s.unexplained_gpu_waits, 0u);
  EXPECT_EQ(s.collectives_incomplete, 0u);
  EXPECT_EQ(s.collectives_inconsistent, 0u);
  EXPECT_GT(s.edges_by_kind[static_cast<int>(EdgeKind::kEventWait)], 0u);
  // Every collective group has all its members: TP groups 2 ranks, DP groups 2 ranks.
  ASSERT_FALSE(graph.collectives.empty());
  for (const CollectiveGroup& g : graph.collectives) {
    EXPECT_TRUE(g.complete);
    EXPECT_EQ(g.nodes.size(), 2u);
    EXPECT_GT(g.transfer_ns, 0);
  }

  const SimResult sim = Simulate(graph, MeasuredScenario(graph));
  EXPECT_EQ(sim.not_run, 0u);
  const auto iterations = AnalyzeIterations(job, graph, sim, {});
  ASSERT_EQ(iterations.size(), 4u * 3u);  // Ranks x ProfilerStep ranges.
  for (const IterationReport& it : iterations) {
    EXPECT_LT(std::fabs(it.error_percent()), 1.0) << "rank " << it.rank << " " << it.name;
    EXPECT_GT(it.measured.overlapped_ns + it.measured.exposed_comm_ns, 0);
  }
  // Every wait is recorded: the dependencies alone explain the timeline too.
  const SimResult explained = Simulate(graph, DependenciesOnlyScenario(graph));
  for (const IterationReport& it : AnalyzeIterations(job, graph, explained, {})) {
    EXPECT_LT(std::fabs(it.error_percent()), 1.0) << "rank " << it.rank << " " << it.name;
  }
}

TEST(GptSynthTest, KernelsClassifyAsTheirNamesSay) {
  namespace k = gpt_kernels;
  EXPECT_EQ(ClassifyKernel(k::kGemmForward), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(k::kGemmDgrad), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(k::kGemmWgrad), KernelClass::kGemm);
  EXPECT_EQ(ClassifyKernel(k::kFlashForward), KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernel(k::kFlashBackward), KernelClass::kAttention);
  EXPECT_EQ(ClassifyKernel(k::kLayerNorm), KernelClass::kNorm);
  EXPECT_EQ(ClassifyKernel(k::kLayerNormGradInput), KernelClass::kNorm);
  EXPECT_EQ(ClassifyKernel(k::kLayerNormGradWeight), KernelClass::kNorm);
  EXPECT_EQ(ClassifyKernel(k::kEmbedding), KernelClass::kEmbedding);
  EXPECT_EQ(ClassifyKernel(k::kEmbeddingBackward), KernelClass::kEmbedding);
  EXPECT_EQ(ClassifyKernel(k::kDropout), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(k::kDropoutBackward), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(k::kAdd), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(k::kGelu), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(k::kGeluBackward), KernelClass::kElementwise);
  EXPECT_EQ(ClassifyKernel(k::kSoftmax), KernelClass::kSoftmax);
  EXPECT_EQ(ClassifyKernel(k::kSoftmaxBackward), KernelClass::kSoftmax);
  EXPECT_EQ(ClassifyKernel(k::kNllLoss), KernelClass::kReduction);
  EXPECT_EQ(ClassifyKernel(k::kAdam), KernelClass::kOptimizer);

  TempDir dir;
  Job job = Generate(GptConfig(), dir.path());
  for (const RankTrace& r : job.ranks) {
    for (const auto& kernel : r.kernels) {
      EXPECT_NE(ClassifyKernel(kernel.name), KernelClass::kOther) << kernel.name;
    }
  }
  // Per rank, iteration and micro-batch: 4 layers x (4 forward + 8 backward GEMMs) + the LM
  // head's 3; 2 attention kernels a layer; the TP all-reduces of 4 layers x 4 + the embedding's.
  const size_t steps = 4 * 3 * 2;  // Ranks x iterations x micro-batches.
  EXPECT_EQ(CountKernels(job, KernelClass::kGemm), steps * (4 * 12 + 3));
  EXPECT_EQ(CountKernels(job, KernelClass::kAttention), steps * 4 * 2);
  EXPECT_EQ(CountKernels(job, KernelClass::kOptimizer), 4u * 3u * 5u);
  EXPECT_GT(CountKernels(job, KernelClass::kCommunication), steps * 17);
}

TEST(GptSynthTest, EveryGemmAndAttentionKernelHasItsProblem) {
  TempDir dir;
  GptConfig config;
  Job job = Generate(config, dir.path());
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, int> shapes;
  for (const RankTrace& r : job.ranks) {
    for (size_t i = 0; i < r.kernels.size(); ++i) {
      const KernelClass kind = ClassifyKernel(r.kernels[i].name);
      const schema::GemmCallEvent* gemm = r.GemmOf(i);
      if (kind == KernelClass::kGemm) {
        ASSERT_NE(gemm, nullptr) << r.kernels[i].name;
        EXPECT_EQ(gemm->api, schema::GemmApi::kCublasltMatmul);
        EXPECT_EQ(gemm->a_type, schema::DataType::kBfloat16);
        ++shapes[{gemm->m, gemm->n, gemm->k}];
      } else if (kind == KernelClass::kAttention) {
        ASSERT_NE(gemm, nullptr) << r.kernels[i].name;
        EXPECT_EQ(gemm->m, 1024u);
        EXPECT_EQ(gemm->k, 64u);
        EXPECT_EQ(gemm->heads, 8u);
        EXPECT_EQ(gemm->batch_count, 16u);
        EXPECT_EQ(gemm->mask, schema::AttentionMask::kCausal);
      } else {
        EXPECT_EQ(gemm, nullptr) << r.kernels[i].name;
      }
    }
  }
  auto count = [&](uint64_t m, uint64_t n, uint64_t k) { return shapes[{m, n, k}]; };
  // The forward shapes: QKV (tokens, 3 hidden / tp, hidden), fc1, fc2, output
  // projection, LM head.
  EXPECT_GT(count(2048, 1536, 1024), 0);
  EXPECT_GT(count(2048, 1024, 512), 0);
  EXPECT_GT(count(2048, 2048, 1024), 0);
  EXPECT_GT(count(2048, 1024, 2048), 0);
  EXPECT_GT(count(2048, 16000, 1024), 0);
  EXPECT_GT(count(16000, 1024, 2048), 0);  // The LM head's wgrad.
}

TEST(GptSynthTest, SameSeedSameBytesOtherSeedOtherBytes) {
  TempDir a, b, c;
  GptConfig config;
  config.iterations = 1;
  Generate(config, a.path());
  Generate(config, b.path());
  config.seed = 2;
  Generate(config, c.path());
  for (int r = 0; r < 4; ++r) {
    const std::string name = "/gpt.rank" + std::to_string(r) + ".pb.zst";
    const std::string bytes = lumos::testing::ReadFileBytes(a.path() + name);
    EXPECT_FALSE(bytes.empty());
    EXPECT_EQ(bytes, lumos::testing::ReadFileBytes(b.path() + name)) << name;
    EXPECT_NE(bytes, lumos::testing::ReadFileBytes(c.path() + name)) << name;
  }
}

TEST(GptSynthTest, OneRankPerDataParallelReplicaAndDoubleTheLayers) {
  TempDir four, eight;
  GptConfig config;
  config.tp = 1;
  config.dp = 4;
  config.iterations = 1;
  Job job4 = Generate(config, four.path());
  config.layers = 8;
  Job job8 = Generate(config, eight.path());
  ASSERT_EQ(job8.ranks.size(), 4u);
  // Attention kernels are per layer only: exactly twice; all layer kernels about twice.
  EXPECT_EQ(CountKernels(job8, KernelClass::kAttention),
            2 * CountKernels(job4, KernelClass::kAttention));
  const double ratio = static_cast<double>(job8.ranks[0].kernels.size()) /
                       static_cast<double>(job4.ranks[0].kernels.size());
  EXPECT_GT(ratio, 1.8);
  EXPECT_LT(ratio, 2.0);
  ExecutionGraph graph = BuildGraph(job8, AlignClocks(job8).rank_offset_ns);
  EXPECT_EQ(Validate(&graph), 0u);
  for (const CollectiveGroup& g : graph.collectives) {
    EXPECT_TRUE(g.complete);
    EXPECT_EQ(g.nodes.size(), 4u);  // Only DP all-reduces: tp = 1.
  }
}

TEST(GptSynthTest, NoNvtxLeavesOnlyTheSteps) {
  TempDir with, without;
  GptConfig config;
  config.iterations = 2;
  Job nvtx = Generate(config, with.path());
  config.nvtx = false;
  Job plain = Generate(config, without.path());
  std::map<std::string, int> names;
  for (const auto& e : nvtx.ranks[0].nvtx) ++names[std::string(e.name)];
  EXPECT_EQ(names["forward"], 4);  // Iterations x micro-batches.
  EXPECT_EQ(names["backward"], 4);
  EXPECT_EQ(names["optimizer"], 2);
  EXPECT_EQ(names["layers.0"], 8);  // Forward and backward.
  EXPECT_EQ(names["layers.3"], 8);
  for (const RankTrace& r : plain.ranks) {
    EXPECT_TRUE(r.nvtx.empty());
    ASSERT_EQ(r.host_ranges.size(), 2u);
    EXPECT_EQ(r.host_ranges[0].name, "ProfilerStep#1");
  }
}

TEST(GptSynthTest, TheSmallTestJobReplaysWithAndWithoutNvtx) {
  for (bool nvtx : {true, false}) {
    TempDir dir;
    lumos::testing::GptJobOptions options;
    options.nvtx = nvtx;
    const std::vector<std::string> paths = lumos::testing::WriteGptJob(dir.path(), options);
    ASSERT_EQ(paths.size(), 4u);
    auto job = LoadJob(paths);
    ASSERT_TRUE(job.ok()) << job.status().message();
    EXPECT_EQ(job->ranks[0].nvtx.empty(), !nvtx);
    ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns);
    EXPECT_EQ(Validate(&graph), 0u);
    const SimResult sim = Simulate(graph, MeasuredScenario(graph));
    const auto iterations = AnalyzeIterations(*job, graph, sim, {});
    ASSERT_EQ(iterations.size(), 4u * 2u);
    for (const IterationReport& it : iterations) EXPECT_LT(std::fabs(it.error_percent()), 1.0);
  }
}

}  // namespace
}  // namespace lumos::modeler
