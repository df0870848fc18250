// RecoverStructure on hand-built transformer jobs (structure_test_job.h): iterations, phases,
// micro-batches, layers (from ranges and from repetition), groups, coordinates and the model's
// sizes are the ones the job was built with; --base values the trace contradicts are errors.
#include "modeler/structure/job_structure.h"

#include <gtest/gtest.h>

#include "modeler/graph/execution_graph.h"
#include "tests/modeler/structure/structure_test_job.h"

namespace lumos::modeler::structure {
namespace {

using testing::MakeTransformerJob;
using testing::TestJobSpec;

struct Recovered {
  Job job;
  ExecutionGraph graph;
  StatusOr<JobStructure> structure = Status::Error("not run");
};

std::unique_ptr<Recovered> Recover(const TestJobSpec& spec, const StructureOptions& options = {}) {
  auto out = std::make_unique<Recovered>();
  out->job = MakeTransformerJob(spec);
  GraphOptions graph_options;
  graph_options.record_sources = true;
  out->graph = BuildGraph(out->job, std::vector<int64_t>(out->job.ranks.size(), 0), graph_options);
  out->structure = RecoverStructure(out->job, out->graph, options);
  return out;
}

size_t Count(const std::vector<Segment>& segments, Phase phase) {
  size_t n = 0;
  for (const Segment& s : segments) n += s.phase == phase ? 1 : 0;
  return n;
}

void ExpectTrace(const Setup& setup, std::string_view key, int64_t value) {
  const Value& v = *SetupField(setup, key);
  EXPECT_EQ(v.value, value) << key << ": " << v.how;
  EXPECT_EQ(v.origin, Origin::kTrace) << key << ": " << v.how;
}

TEST(JobStructureTest, RecoversPhasesLayersGroupsAndSizesFromRepetition) {
  const auto r = Recover({});
  ASSERT_TRUE(r->structure.ok()) << r->structure.status().message();
  const JobStructure& s = *r->structure;
  EXPECT_EQ(s.iteration_method, "ProfilerStep ranges");
  EXPECT_EQ(s.nodes.size(), r->graph.nodes.size());
  ASSERT_EQ(s.ranks.size(), 2u);
  for (const RankStructure& rank : s.ranks) {
    EXPECT_EQ(rank.iterations.size(), 2u);
    // Per iteration: 2 micro-batches of forward + backward, one optimizer.
    EXPECT_EQ(Count(rank.phases, Phase::kForward), 4u);
    EXPECT_EQ(Count(rank.phases, Phase::kBackward), 4u);
    EXPECT_EQ(Count(rank.phases, Phase::kOptimizer), 2u);
    // 3 layers in each of the 4 forward and 4 backward phases.
    EXPECT_EQ(Count(rank.layers, Phase::kForward), 12u);
    EXPECT_EQ(Count(rank.layers, Phase::kBackward), 12u);
    for (const Segment& l : rank.layers) {
      EXPECT_LT(l.layer, 3u);
      EXPECT_FALSE(l.nodes.empty());
    }
    EXPECT_EQ(rank.tp_rank, static_cast<int32_t>(rank.rank_index));
  }
  EXPECT_EQ(s.layer_method.rfind("kernel repetition", 0), 0u) << s.layer_method;
  // The layer's 9 kernels and their 9 launches are its nodes, marked with its index.
  const Segment& first = s.ranks[0].layers[0];
  EXPECT_EQ(first.nodes.size(), 18u);
  for (uint32_t n : first.nodes) {
    EXPECT_EQ(s.nodes[n].layer, 0u);
    EXPECT_EQ(s.nodes[n].phase, Phase::kForward);
  }
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.groups[0].role, GroupRole::kTensor) << s.groups[0].evidence;
  EXPECT_EQ(s.groups[0].size, 2u);
  ExpectTrace(s.setup, "layers", 3);
  ExpectTrace(s.setup, "hidden", 64);
  ExpectTrace(s.setup, "ffn", 256);
  ExpectTrace(s.setup, "heads", 4);
  ExpectTrace(s.setup, "seq", 16);
  ExpectTrace(s.setup, "mbs", 2);
  ExpectTrace(s.setup, "micro_batches", 2);
  ExpectTrace(s.setup, "vocab", 1000);
  ExpectTrace(s.setup, "tp", 2);
  ExpectTrace(s.setup, "world", 2);
  EXPECT_EQ(s.setup.dp.value, 1);
  EXPECT_EQ(s.setup.dp.origin, Origin::kDerived);
  EXPECT_EQ(s.setup.pp.value, 1);
  // NCCL kernels are communication, the GEMMs GEMMs, the launches "other".
  for (uint32_t n = 0; n < r->graph.nodes.size(); ++n) {
    const Node& node = r->graph.nodes[n];
    if (node.name.find("nccl") != std::string_view::npos) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kCommunication);
    } else if (node.name.find("gemm") != std::string_view::npos) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kGemm) << node.name;
    } else if (!node.gpu()) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kOther);
    }
  }
}

TEST(JobStructureTest, LayersFromRangesMatchRepetition) {
  TestJobSpec spec;
  spec.layer_ranges = true;
  spec.layers = 4;
  const auto r = Recover(spec);
  ASSERT_TRUE(r->structure.ok()) << r->structure.status().message();
  const JobStructure& s = *r->structure;
  EXPECT_EQ(s.layer_method.rfind("NVTX/host ranges", 0), 0u) << s.layer_method;
  EXPECT_EQ(Count(s.ranks[0].layers, Phase::kForward), 16u);
  EXPECT_EQ(Count(s.ranks[0].layers, Phase::kBackward), 16u);
  ExpectTrace(s.setup, "layers", 4);
  ExpectTrace(s.setup, "hidden", 64);
  ExpectTrace(s.setup, "heads", 4);
}

TEST(JobStructureTest, OneRankWithoutCommunicatorIsTpOneDerived) {
  TestJobSpec spec;
  spec.ranks = 1;
  spec.micro_batches = 1;
  const auto r = Recover(spec);
  ASSERT_TRUE(r->structure.ok()) << r->structure.status().message();
  const JobStructure& s = *r->structure;
  ExpectTrace(s.setup, "micro_batches", 1);
  // The shapes say tp = 1 (hidden / k of the attention output GEMM); the one-rank
  // communicator carries all-reduces inside layers: tensor, of size 1.
  EXPECT_EQ(s.setup.tp.value, 1);
  ExpectTrace(s.setup, "ffn", 256);
  EXPECT_EQ(s.setup.dp.value, 1);
}

TEST(JobStructureTest, GivenValueTheTraceContradictsIsAnErrorNamingBoth) {
  StructureOptions options;
  options.base.hidden = {128, Origin::kGiven, "--base"};
  const auto r = Recover({}, options);
  ASSERT_FALSE(r->structure.ok());
  EXPECT_EQ(r->structure.status().message(),
            "--base hidden=128 contradicts the trace: hidden=64 (k of the layers' first GEMM "
            "(QKV))");
}

TEST(JobStructureTest, PhasesAndLayersFromRepetitionWithoutRanges) {
  // No NVTX at all: the runs of repeating layers alternate forward, backward; the boundary is
  // the host gap between them; the optimizer starts at its first kernel.
  TestJobSpec spec;
  spec.phase_ranges = false;
  StructureOptions options;
  options.base.layers = {3, Origin::kGiven, "--base"};
  options.base.ep = {1, Origin::kGiven, "--base"};
  const auto r = Recover(spec, options);
  ASSERT_TRUE(r->structure.ok()) << r->structure.status().message();
  const JobStructure& s = *r->structure;
  EXPECT_NE(s.phase_method.find("kernel repetition"), std::string::npos) << s.phase_method;
  for (const RankStructure& rank : s.ranks) {
    EXPECT_EQ(Count(rank.phases, Phase::kForward), 4u);
    EXPECT_EQ(Count(rank.phases, Phase::kBackward), 4u);
    EXPECT_EQ(Count(rank.phases, Phase::kOptimizer), 2u);
    EXPECT_EQ(Count(rank.layers, Phase::kForward), 12u);
    EXPECT_EQ(Count(rank.layers, Phase::kBackward), 12u);
  }
  // The given layers agree with the trace's; ep only given.
  ExpectTrace(s.setup, "layers", 3);
  EXPECT_NE(s.setup.layers.how.find("agrees with --base"), std::string::npos);
  EXPECT_EQ(s.setup.ep.origin, Origin::kGiven);
  ExpectTrace(s.setup, "micro_batches", 2);
  ExpectTrace(s.setup, "hidden", 64);
  ExpectTrace(s.setup, "vocab", 1000);
  // The forward phase holds the output layer: it ends at the gap before the backward.
  const RankStructure& rank = s.ranks[0];
  bool output_in_forward = false;
  for (uint32_t n : rank.phases[0].nodes) {
    output_in_forward = output_in_forward || r->graph.nodes[n].name == "sm90_xmma_gemm_bf16_output";
  }
  EXPECT_TRUE(output_in_forward);
  EXPECT_TRUE(s.unknowns.empty()) << s.unknowns.front();
}

TEST(JobStructureTest, ContradictingParallelDegreesAreAnError) {
  StructureOptions options;
  options.base.dp = {4, Origin::kGiven, "--base"};
  const auto r = Recover({}, options);
  ASSERT_FALSE(r->structure.ok());
  EXPECT_EQ(r->structure.status().message(), "--base: dp x tp x pp x cp = 8 but world = 2");
}

TEST(JobStructureTest, DetectedIterationsWithoutSteps) {
  TestJobSpec spec;
  spec.steps = false;
  spec.iterations = 4;
  const auto r = Recover(spec);
  ASSERT_TRUE(r->structure.ok()) << r->structure.status().message();
  EXPECT_EQ(r->structure->iteration_method, "kernel repetition");
  EXPECT_GE(r->structure->ranks[0].iterations.size(), 2u);
}

TEST(JobStructureTest, GraphWithoutSourcesIsRefused) {
  const Job job = MakeTransformerJob({});
  const ExecutionGraph graph = BuildGraph(job, std::vector<int64_t>(job.ranks.size(), 0));
  const auto s = RecoverStructure(job, graph, {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("record_sources"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler::structure
