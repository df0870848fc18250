// Structure recovery on `synth gpt` jobs (tests/testing/gpt_job.h: a Megatron-style GPT run's
// traces, a test double for a GPU run): layers, hidden, heads, seq, mbs, micro_batches, vocab,
// tp and dp are recovered exactly, with the NVTX ranges and without them (phases and layers
// from the repeating kernel stream).
#include <gtest/gtest.h>

#include <memory>
#include <ostream>
#include <utility>
#include <vector>

#include "modeler/graph/clock_alignment.h"
#include "modeler/structure/job_structure.h"
#include "tests/testing/gpt_job.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::structure {
namespace {

struct Case {
  const char* name;
  bool nvtx;
  const char* settings;
  int64_t layers, hidden, heads, seq, mbs, micro_batches, vocab, tp, dp;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// A synth gpt job written into a temporary directory, loaded, and its structure recovered.
struct Recovered {
  lumos::testing::TempDir dir;
  std::unique_ptr<Job> job;
  ExecutionGraph graph;
  StatusOr<JobStructure> structure = Status::Error("not recovered");
};

std::unique_ptr<Recovered> Recover(const lumos::testing::GptJobOptions& options) {
  auto r = std::make_unique<Recovered>();
  const std::vector<std::string> paths = lumos::testing::WriteGptJob(r->dir.path(), options);
  if (paths.empty()) return nullptr;
  auto job = LoadJob(paths);
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return nullptr;
  r->job = std::make_unique<Job>(std::move(job).value());
  GraphOptions graph_options;
  graph_options.record_sources = true;
  r->graph = BuildGraph(*r->job, AlignClocks(*r->job).rank_offset_ns, graph_options);
  r->structure = RecoverStructure(*r->job, r->graph, {});
  EXPECT_TRUE(r->structure.ok()) << r->structure.status().message();
  return r->structure.ok() ? std::move(r) : nullptr;
}

class GptStructureTest : public ::testing::TestWithParam<Case> {};

TEST_P(GptStructureTest, RecoversTheSetupExactly) {
  const Case& c = GetParam();
  lumos::testing::GptJobOptions options;
  options.nvtx = c.nvtx;
  options.settings = c.settings;
  const auto recovered = Recover(options);
  ASSERT_NE(recovered, nullptr);
  const ExecutionGraph& graph = recovered->graph;
  const StatusOr<JobStructure>& s = recovered->structure;
  const std::pair<const char*, int64_t> expected[] = {
      {"layers", c.layers}, {"hidden", c.hidden}, {"heads", c.heads},
      {"seq", c.seq},       {"mbs", c.mbs},       {"micro_batches", c.micro_batches},
      {"vocab", c.vocab},   {"tp", c.tp},         {"dp", c.dp}};
  for (const auto& [key, value] : expected) {
    const Value& v = *SetupField(s->setup, key);
    EXPECT_EQ(v.value, value) << key << " (" << OriginName(v.origin) << "): " << v.how;
    EXPECT_EQ(v.origin, Origin::kTrace) << key << ": " << v.how;
  }
  EXPECT_EQ(s->nodes.size(), graph.nodes.size());
  const size_t ranks = static_cast<size_t>(c.tp * c.dp);
  ASSERT_EQ(s->ranks.size(), ranks);
  for (const RankStructure& rank : s->ranks) {
    size_t forward = 0, backward = 0;
    for (const Segment& l : rank.layers) {
      forward += l.phase == Phase::kForward;
      backward += l.phase == Phase::kBackward;
    }
    // 2 iterations x micro-batches x layers, forward and backward.
    EXPECT_EQ(forward, static_cast<size_t>(2 * c.micro_batches * c.layers)) << rank.rank;
    EXPECT_EQ(backward, static_cast<size_t>(2 * c.micro_batches * c.layers)) << rank.rank;
    EXPECT_GE(rank.tp_rank, 0);
    EXPECT_GE(rank.dp_rank, 0);
  }
  size_t tensor = 0, data = 0;
  for (const CommGroup& g : s->groups) {
    tensor += g.role == GroupRole::kTensor;
    data += g.role == GroupRole::kData;
  }
  EXPECT_EQ(tensor, static_cast<size_t>(c.dp));
  EXPECT_EQ(data, static_cast<size_t>(c.tp));
  EXPECT_EQ(s->layer_method.rfind(c.nvtx ? "NVTX" : "kernel repetition", 0), 0u) << s->layer_method;
}

INSTANTIATE_TEST_SUITE_P(
    Gpt, GptStructureTest,
    ::testing::Values(Case{"Nvtx", true, "", 2, 512, 8, 512, 2, 2, 8000, 2, 2},
                      Case{"NoNvtx", false, "", 2, 512, 8, 512, 2, 2, 8000, 2, 2},
                      Case{"NvtxFourLayers", true, "layers=4,micro_batches=3", 4, 512, 8, 512, 2, 3,
                           8000, 2, 2},
                      Case{"NoNvtxFourLayers", false, "layers=4,micro_batches=3", 4, 512, 8, 512, 2,
                           3, 8000, 2, 2},
                      // Gradient buckets are launched inside backward layers here: the
                      // data-parallel communicator is still data, not tensor.
                      Case{"NoNvtxSixLayersTp4", false,
                           "layers=6,hidden=2048,heads=16,seq=2048,mbs=1,micro_batches=4,"
                           "vocab=50304,tp=4,dp=2",
                           6, 2048, 16, 2048, 1, 4, 50304, 4, 2}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// A forward-only profile without ranges (Megatron's forward benchmark, inference): only the
// kernel stream says where the layers are, and the all-reduces between a layer's GEMMs then say
// they are tensor-parallel (issue 24 item 4: a real 40-layer TP-8 Megatron trace read as dp=8,
// tp=1 and no layers). Every run is forward: none of them has the backward's twice the GEMMs.
TEST(GptStructureTest, AForwardOnlyProfileWithoutRangesHasLayersAndTensorParallelism) {
  lumos::testing::GptJobOptions options;
  options.nvtx = false;
  options.forward_only = true;
  options.settings = "layers=6,micro_batches=2,tp=4,dp=2";
  const auto recovered = Recover(options);
  ASSERT_NE(recovered, nullptr);
  const StatusOr<JobStructure>& s = recovered->structure;
  EXPECT_NE(s->phase_method.find("all forward"), std::string::npos) << s->phase_method;
  for (const auto& [key, value] : std::vector<std::pair<const char*, int64_t>>{
           {"layers", 6}, {"micro_batches", 2}, {"tp", 4}}) {
    const Value& v = *SetupField(s->setup, key);
    EXPECT_EQ(v.value, value) << key << ": " << v.how;
    EXPECT_EQ(v.origin, Origin::kTrace) << key << ": " << v.how;
  }
  EXPECT_EQ(SetupField(s->setup, "dp")->value, 2);  // world / tp.
  for (const RankStructure& rank : s->ranks) {
    size_t forward = 0, other = 0;
    for (const Segment& l : rank.layers) (l.phase == Phase::kForward ? forward : other) += 1;
    EXPECT_EQ(forward, 2u * 2u * 6u) << rank.rank;  // 2 iterations x 2 micro-batches x 6 layers.
    EXPECT_EQ(other, 0u) << rank.rank;
  }
  size_t tensor = 0, data = 0;
  for (const CommGroup& g : s->groups) {
    tensor += g.role == GroupRole::kTensor;
    data += g.role == GroupRole::kData;
  }
  EXPECT_EQ(tensor, 2u);
  EXPECT_EQ(data, 0u);  // No gradients: the data-parallel communicators carry nothing.
}

}  // namespace
}  // namespace lumos::modeler::structure
