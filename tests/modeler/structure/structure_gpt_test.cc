// Structure recovery on `synth gpt` jobs (tests/testing/gpt_job.h: a Megatron-style GPT run's
// traces, a test double for a GPU run): layers, hidden, heads, seq, mbs, micro_batches, vocab,
// tp and dp are recovered exactly, with the NVTX ranges and without them (phases and layers
// from the repeating kernel stream).
#include <gtest/gtest.h>

#include <ostream>

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

class GptStructureTest : public ::testing::TestWithParam<Case> {};

TEST_P(GptStructureTest, RecoversTheSetupExactly) {
  const Case& c = GetParam();
  lumos::testing::TempDir dir;
  lumos::testing::GptJobOptions options;
  options.nvtx = c.nvtx;
  options.settings = c.settings;
  const std::vector<std::string> paths = lumos::testing::WriteGptJob(dir.path(), options);
  ASSERT_FALSE(paths.empty());
  auto job = LoadJob(paths);
  ASSERT_TRUE(job.ok()) << job.status().message();
  GraphOptions graph_options;
  graph_options.record_sources = true;
  const ExecutionGraph graph = BuildGraph(*job, AlignClocks(*job).rank_offset_ns, graph_options);
  auto s = RecoverStructure(*job, graph, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
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

}  // namespace
}  // namespace lumos::modeler::structure
