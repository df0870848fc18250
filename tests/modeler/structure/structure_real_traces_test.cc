// Structure recovery on every shared real trace (../shared/data/traces, imported) and the
// bundled example: the iterations are replay's, every node has its NodeInfo, phases are found
// where the trace has autograd ranges, and DLRM's groups and (absent) layers are as the job is.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/import/kineto_import.h"
#include "modeler/sim/simulator.h"
#include "modeler/structure/job_structure.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/param_names.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::structure {
namespace {

using lumos::testing::TempDir;

std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }
std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

struct Loaded {
  Job job;
  ExecutionGraph graph;
};

std::unique_ptr<Loaded> Load(const std::string& dir) {
  auto paths = ExpandTracePaths({dir});
  EXPECT_TRUE(paths.ok()) << paths.status().message();
  if (!paths.ok()) return nullptr;
  auto job = LoadJob(*paths);
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return nullptr;
  auto out = std::make_unique<Loaded>();
  out->job = std::move(job).value();
  GraphOptions options;
  options.record_sources = true;
  out->graph = BuildGraph(out->job, AlignClocks(out->job).rank_offset_ns, options);
  return out;
}

bool HasAutogradRanges(const RankTrace& rank) {
  for (const schema::HostRangeEvent& h : rank.host_ranges) {
    if (h.name.rfind("autograd::engine::evaluate_function:", 0) == 0) return true;
  }
  return false;
}

// What every job's structure satisfies.
void ExpectSound(const Loaded& l, const JobStructure& s) {
  ASSERT_EQ(s.nodes.size(), l.graph.nodes.size());
  ASSERT_EQ(s.ranks.size(), l.job.ranks.size());
  // The iterations are replay's (same ranges, same order).
  const SimResult sim = Simulate(l.graph, MeasuredScenario(l.graph));
  const auto replayed = AnalyzeIterations(l.job, l.graph, sim, {});
  size_t k = 0;
  for (const RankStructure& rank : s.ranks) {
    for (const Segment& it : rank.iterations) {
      ASSERT_LT(k, replayed.size());
      EXPECT_EQ(replayed[k].rank, rank.rank);
      EXPECT_EQ(replayed[k].measured_start_ns, it.begin_ns);
      EXPECT_EQ(replayed[k].measured_end_ns, it.end_ns);
      ++k;
    }
    // Phases: inside their iteration, not overlapping, with nodes.
    for (size_t i = 0; i < rank.phases.size(); ++i) {
      const Segment& p = rank.phases[i];
      ASSERT_LT(p.iteration, rank.iterations.size());
      EXPECT_GE(p.begin_ns, rank.iterations[p.iteration].begin_ns);
      EXPECT_LE(p.end_ns, rank.iterations[p.iteration].end_ns);
      if (i > 0) {
        EXPECT_GE(p.begin_ns, rank.phases[i - 1].end_ns);
      }
      EXPECT_TRUE(std::is_sorted(p.nodes.begin(), p.nodes.end()));
    }
    if (HasAutogradRanges(l.job.ranks[rank.rank_index])) {
      for (uint32_t it = 0; it < rank.iterations.size(); ++it) {
        bool forward = false, backward = false;
        for (const Segment& p : rank.phases) {
          if (p.iteration != it) continue;
          forward = forward || p.phase == Phase::kForward;
          backward = backward || p.phase == Phase::kBackward;
        }
        EXPECT_TRUE(forward && backward) << "rank " << rank.rank << " iteration " << it;
      }
    }
  }
  EXPECT_EQ(k, replayed.size());
  // NodeInfo: NCCL kernels are communication, API calls other, copies copies.
  for (uint32_t n = 0; n < l.graph.nodes.size(); ++n) {
    const Node& node = l.graph.nodes[n];
    if (node.kind == NodeKind::kApiCall) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kOther);
    } else if (node.kind == NodeKind::kMemcpy) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kMemcpy);
    } else if (node.collective != kNoNode) {
      EXPECT_EQ(s.nodes[n].kernel_class, models::KernelClass::kCommunication);
    }
  }
  for (const CommGroup& g : s.groups) {
    EXPECT_FALSE(g.ranks.empty());
    EXPECT_GE(g.size, g.ranks.size());
    EXPECT_FALSE(g.evidence.empty());
  }
  // The world size where a header says it (the micro-benchmark has no distributedInfo).
  int32_t world = 0;
  for (const RankTrace& r : l.job.ranks) world = std::max(world, r.world_size);
  EXPECT_EQ(s.setup.world.known(), world > 0);
  if (world > 0) {
    EXPECT_EQ(s.setup.world.value, world);
  }
}

class RealTraceStructureTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceStructureTest, IterationsPhasesNodesAndGroups) {
  TempDir dir;
  const std::string input = SharedTraces() + "/" + GetParam();
  auto imported = kineto::ImportKineto({{input}, dir.File("out"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const auto loaded = Load(imported->size() == 1 ? imported->front().output_path : dir.File("out"));
  ASSERT_NE(loaded, nullptr);
  auto s = RecoverStructure(loaded->job, loaded->graph, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ExpectSound(*loaded, *s);
  // None of these jobs is a transformer: no layer is claimed.
  EXPECT_EQ(s->layer_method.rfind("none", 0), 0u) << s->layer_method;
  EXPECT_FALSE(s->setup.hidden.known()) << s->setup.hidden.how;
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceStructureTest,
                         ::testing::ValuesIn(::lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

// The bundled example: DLRM on 8 ranks, one communicator carrying the dense gradients'
// all-reduces after backward and the embeddings' all-to-all.
TEST(ExampleStructureTest, DlrmEightRanks) {
  const auto loaded = Load(Example());
  ASSERT_NE(loaded, nullptr);
  auto s = RecoverStructure(loaded->job, loaded->graph, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ExpectSound(*loaded, *s);
  EXPECT_EQ(s->iteration_method, "ProfilerStep ranges");
  EXPECT_EQ(s->setup.world.value, 8);
  for (const RankStructure& rank : s->ranks) {
    EXPECT_EQ(rank.iterations.size(), 1u);
    EXPECT_TRUE(rank.layers.empty());
  }
  EXPECT_EQ(s->layer_method.rfind("none", 0), 0u) << s->layer_method;
  bool data = false;
  for (const CommGroup& g : s->groups) {
    if (g.role != GroupRole::kData) continue;
    data = true;
    EXPECT_EQ(g.size, 8u);
    EXPECT_NE(g.evidence.find("all-reduce"), std::string::npos) << g.evidence;
    EXPECT_NE(g.evidence.find("all-to-all"), std::string::npos) << g.evidence;
  }
  EXPECT_TRUE(data);
  EXPECT_EQ(s->setup.dp.value, 8);
  for (const RankStructure& rank : s->ranks) EXPECT_EQ(rank.dp_rank, rank.rank);
}

}  // namespace
}  // namespace lumos::modeler::structure

namespace lumos::modeler::structure {
namespace {

// The H200 loop (4 nn.TransformerEncoderLayer, no layer ranges): every forward phase repeats a
// layer's block 4 times; backward repeats its block 3 times, one layer at an end of the run
// a few kernels short of the others (the model's last layer has no residual gradient to add
// yet). That one is found as a near copy, marked partial: 4 layers in every phase.
TEST(RealTraceLayersTest, TheH200LoopsBackwardHasAMirrorOfEveryForwardLayer) {
  auto loaded = Load(SharedTraces() + "/h200-pytorch/est-base.pb.zst");
  ASSERT_NE(loaded, nullptr);
  StructureOptions options;
  options.iteration_pattern = "^step$";
  StatusOr<JobStructure> s = RecoverStructure(loaded->job, loaded->graph, options);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_NE(s->layer_method.find("near copy"), std::string::npos) << s->layer_method;
  std::map<std::pair<uint32_t, Phase>, std::vector<const Segment*>> by_phase;
  for (const Segment& layer : s->ranks[0].layers) {
    by_phase[{layer.iteration, layer.phase}].push_back(&layer);
  }
  size_t backward = 0;
  for (const auto& [key, layers] : by_phase) {
    ASSERT_EQ(layers.size(), 4u) << "iteration " << key.first;
    size_t partial = 0;
    for (size_t i = 0; i < layers.size(); ++i) {
      EXPECT_EQ(layers[i]->layer, i);
      if (!layers[i]->partial) continue;
      ++partial;
      EXPECT_TRUE(i == 0 || i == 3) << "a near copy lies next to the run";
    }
    // Backward alone has one: where the block's repetition starts decides which end.
    EXPECT_EQ(partial, key.second == Phase::kBackward ? 1u : 0u) << "iteration " << key.first;
    backward += key.second == Phase::kBackward ? 1 : 0;
  }
  EXPECT_EQ(backward, 40u);
}

// A real Megatron-LM profile with tensor parallelism 8 and no phase or layer ranges
// (tests/data/megatron-tp8-a100, forward only): the 40 layers found in the kernel stream, the
// all-reduces between each layer's GEMMs read as tensor-parallel (before: dp=8, tp=1, no
// layers), and the model's sizes from the layers' GEMMs.
TEST(RealTraceLayersTest, AMegatronTensorParallelProfileWithoutRanges) {
  TempDir dir;
  std::vector<std::string> inputs;
  inputs.reserve(8);
  for (int rank = 0; rank < 8; ++rank) {
    inputs.push_back(std::string(LUMOS_SOURCE_DIR) +
                     "/tests/data/megatron-tp8-a100/megatron_kineto_" + std::to_string(rank) +
                     ".json.gz");
  }
  auto imported = kineto::ImportKineto({inputs, dir.File("out"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->size(), 8u);
  const auto loaded = Load(dir.File("out"));
  ASSERT_NE(loaded, nullptr);
  auto s = RecoverStructure(loaded->job, loaded->graph, {});
  ASSERT_TRUE(s.ok()) << s.status().message();
  ExpectSound(*loaded, *s);
  const structure::Setup& setup = s->setup;
  EXPECT_EQ(setup.layers.value, 40);
  EXPECT_EQ(setup.tp.value, 8);
  EXPECT_EQ(setup.dp.value, 1);
  EXPECT_EQ(setup.pp.value, 1);
  EXPECT_EQ(setup.hidden.value, 4096);
  EXPECT_EQ(setup.ffn.value, 16384);
  EXPECT_EQ(setup.seq.value, 2048);
  EXPECT_EQ(setup.mbs.value, 4);
  EXPECT_EQ(setup.vocab.value, 51200);
  ASSERT_EQ(s->groups.size(), 1u);
  EXPECT_EQ(s->groups[0].role, GroupRole::kTensor);
  EXPECT_EQ(s->groups[0].size, 8u);
  for (const RankStructure& rank : s->ranks) {
    size_t forward = 0;
    for (const Segment& layer : rank.layers) forward += layer.phase == Phase::kForward ? 1 : 0;
    EXPECT_EQ(forward, 40u) << "rank " << rank.rank;
    EXPECT_EQ(forward, rank.layers.size()) << "a forward-only profile has no backward layers";
  }
}

}  // namespace
}  // namespace lumos::modeler::structure
