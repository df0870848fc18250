// modeler/plan: a model from its sizes, its layouts, the fast path's step time and the
// commands. The cost model is fitted from ../shared/data/costs (NVIDIA's measured GEMM and NCCL
// tables); the MLPerf step times (../shared/docs/estimation-anchors.md) are only scored.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/plan/pass_work.h"
#include "modeler/plan/search.h"
#include "modeler/plan/step_model.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::plan {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

constexpr const char* kGpt3 = "gpt:layers=96,hidden=12288,heads=96,seq=2048,vocab=51200";

ModelSpec Gpt3() {
  StatusOr<ModelSpec> spec = ParseModelSpec(kGpt3);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : ModelSpec{};
}

TEST(ModelSpecTest, SizesAndTheirRules) {
  const ModelSpec gpt3 = Gpt3();
  EXPECT_EQ(gpt3.layers, 96);
  EXPECT_EQ(gpt3.ffn_size(), 4 * 12288);
  EXPECT_EQ(gpt3.head_dim(), 128);
  StatusOr<ModelSpec> llama = ParseModelSpec(
      "llama:layers=32,hidden=4096,heads=32,kv_heads=8,seq=8192,vocab=128256,"
      "ffn=14336");
  ASSERT_TRUE(llama.ok()) << llama.status().message();
  EXPECT_TRUE(llama->gated());
  EXPECT_EQ(llama->kv_heads_count(), 8);
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"gpt:layers=2,hidden=100,heads=3,seq=8,vocab=8", "heads (3) must divide hidden"},
           {"gpt:layers=2,hidden=96,heads=3,seq=8", "vocab= is required"},
           {"bert:layers=2", "unknown family"},
           {"gpt:layers=0,hidden=96,heads=3,seq=8,vocab=8", "layers=0"},
           {"gpt:layers=2,width=96", "unknown key 'width'"},
           {"gpt:layers=2,hidden=96,heads=3,seq=8,vocab=8,dropout=0.1", "dropout=0.1: 0 (none)"},
           {"layers=2", "FAMILY:K=V"}}) {
    StatusOr<ModelSpec> bad = ParseModelSpec(text);
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(says), std::string::npos) << bad.status().message();
  }
}

TEST(LayoutTest, EveryRuleIsNamed) {
  const ModelSpec gpt3 = Gpt3();
  auto check = [&](const std::string& set) {
    Layout l;
    Status s = ApplyLayoutSettings(set, &l);
    if (!s.ok()) return s;
    return CheckLayout(gpt3, l, 8);
  };
  EXPECT_TRUE(check("tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1").ok());
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"tp=5", "tp (5) must divide heads (96)"},
           {"tp=16", "tp (16) must fit in one node (8 GPUs)"},
           {"pp=97", "pp (97) larger than layers (96)"},
           {"pp=5", "pp (5) must divide layers (96)"},
           {"vp=2", "vp (2) needs pp > 1"},
           {"pp=8,vp=5", "vp (5) must divide the layers per stage (12)"},
           {"dp=3,mbs=1,gbs=1000", "dp x mbs (3 x 1) must divide gbs (1000)"},
           {"pp=8,vp=2,dp=1,gbs=12", "micro-batches (12) a multiple of pp (8)"},
           {"sequence_parallel=1", "sequence_parallel needs tp > 1"},
           {"tp=2,tp_overlap=1", "tp_overlap needs sequence_parallel"},
           {"zero=4", "zero must be 0..3"},
           {"grad_sync_bytes=3", "grad_sync_bytes is 2 (bf16) or 4 (fp32)"},
           {"recompute=some", "none, selective or full"},
           {"cp=3", "cp (3) needs seq (2048) a multiple of 2 x cp"},
           {"cp=2,flash_attention=0", "cp needs flash_attention"},
           {"pp=8,ends_in_split=1", "pp (8) must divide layers + 2 (98: ends_in_split)"},
           {"pp=2,vp=5,ends_in_split=1", "vp (5) must divide the layers + 2 per stage (49)"},
           {"pp=2,vp=49,ends_in_split=1", "ends_in_split needs 2 or more layers a virtual stage"},
           {"ends_in_split=2", "ends_in_split is 0 or 1"},
           {"dq=2", "unknown layout key 'dq'"}}) {
    Status s = check(set);
    ASSERT_FALSE(s.ok()) << set;
    EXPECT_NE(s.message().find(says), std::string::npos) << set << ": " << s.message();
  }
}

TEST(LayoutTest, EnumerationKeepsOnlyLayoutsThatCanExist) {
  SearchSpace space;
  space.gpus = 512;
  space.gbs = 2048;
  const std::vector<Layout> layouts = EnumerateLayouts(Gpt3(), space);
  EXPECT_GT(layouts.size(), 100u);
  std::set<int64_t> vps_at_pp8;
  for (const Layout& l : layouts) {
    EXPECT_EQ(l.gpus(), 512) << LayoutText(l);
    EXPECT_TRUE(CheckLayout(Gpt3(), l, 8).ok()) << LayoutText(l);
    if (l.pp == 8) vps_at_pp8.insert(l.vp);
  }
  // Every virtual-stage count that divides the 12 layers of a stage (MLPerf v3.1 ran vp 12).
  EXPECT_EQ(vps_at_pp8, (std::set<int64_t>{1, 2, 3, 4, 6, 12}));
}

// Megatron's account_for_embedding/loss_in_pipeline_split, as its Llama 3.1 405B recipes set:
// 126 layers and the two ends over 8 x 8 virtual stages, 2 each, the first and the last giving
// one to the embedding and the loss; every layer placed once.
TEST(LayoutTest, TheEndsCountAsLayersInTheSplit) {
  StatusOr<ModelSpec> spec = ParseModelSpec(
      "llama:layers=126,hidden=16384,heads=128,kv_heads=8,ffn=53248,seq=8192,vocab=128256");
  ASSERT_TRUE(spec.ok());
  Layout l;
  ASSERT_TRUE(ApplyLayoutSettings("tp=8,pp=8,vp=8,cp=2,dp=8,gbs=512,ends_in_split=1", &l).ok());
  ASSERT_TRUE(CheckLayout(*spec, l, 8).ok()) << CheckLayout(*spec, l, 8).message();
  EXPECT_EQ(l.gpus(), 1024);
  EXPECT_EQ(l.gradient_ranks(), 16);
  int64_t placed = 0;
  for (int64_t v = 0; v < 64; ++v) {
    EXPECT_EQ(VirtualStageLayers(*spec, l, v), v == 0 || v == 63 ? 1 : 2) << v;
    placed += VirtualStageLayers(*spec, l, v);
  }
  EXPECT_EQ(placed, 126);
  EXPECT_EQ(StageLayers(*spec, l, 0), 15);
  EXPECT_EQ(StageLayers(*spec, l, 3), 16);
  EXPECT_EQ(StageLayers(*spec, l, 7), 15);
  l.ends_in_split = false;  // 126 layers do not split over 8 stages on their own.
  EXPECT_NE(CheckLayout(*spec, l, 8).message().find("pp (8) must divide layers (126)"),
            std::string::npos);
  // One stage: every layer, the ends beside them.
  Layout one;
  ASSERT_TRUE(ApplyLayoutSettings("ends_in_split=1", &one).ok());
  EXPECT_EQ(VirtualStageLayers(*spec, one, 0), 126);
  // A search with cp and the split fixed lays out N GPUs as tp x cp x pp x dp.
  SearchSpace space;
  space.gpus = 1024;
  space.gbs = 512;
  ASSERT_TRUE(ApplyFixedSettings("cp=2,ends_in_split=1", &space.fixed).ok());
  const std::vector<Layout> layouts = EnumerateLayouts(*spec, space);
  ASSERT_FALSE(layouts.empty());
  bool found = false;
  for (const Layout& e : layouts) {
    EXPECT_EQ(e.gpus(), 1024) << LayoutText(e);
    EXPECT_EQ(e.cp, 2);
    EXPECT_TRUE(e.ends_in_split);
    found = found || (e.tp == 8 && e.pp == 8 && e.vp == 8);
  }
  EXPECT_TRUE(found);
  // Several degrees tried (search --cp 1,2,4): each lays out the same GPUs.
  space.cp = {1, 2, 4};
  std::set<int64_t> tried;
  for (const Layout& e : EnumerateLayouts(*spec, space)) {
    EXPECT_EQ(e.gpus(), 1024) << LayoutText(e);
    tried.insert(e.cp);
  }
  EXPECT_EQ(tried, (std::set<int64_t>{1, 2, 4}));
}

TEST(LayoutTest, TpOverlapIsTriedWhereATensorGroupSplitsTheLayer) {
  SearchSpace space;
  space.gpus = 512;
  space.gbs = 2048;
  const std::vector<Layout> both = EnumerateLayouts(Gpt3(), space);
  space.tp_overlap = false;
  const std::vector<Layout> without = EnumerateLayouts(Gpt3(), space);
  size_t split = 0, overlapped = 0;
  for (const Layout& l : both) {
    split += l.tp > 1 ? 1 : 0;
    overlapped += l.tp_overlap ? 1 : 0;
    if (l.tp_overlap) {
      EXPECT_TRUE(l.tp > 1 && l.sequence_parallel) << LayoutText(l);
    }
  }
  EXPECT_GT(overlapped, 0u);
  EXPECT_EQ(2 * overlapped, split);  // Each layout with tp > 1, once with and once without.
  EXPECT_EQ(without.size(), both.size() - overlapped);
  for (const Layout& l : without) {
    EXPECT_FALSE(l.tp_overlap) << LayoutText(l);
  }
}

// The cost model of the shared measured tables, fitted once, on each GPU and network asked for.
const GptCosts& SharedCosts(const PlanSetup& setup) {
  static auto* const model = [] {
    TempDir dir;
    const auto fit = RunCommand(LumosModelBinary() + " costs fit " + LUMOS_SOURCE_DIR +
                                "/../shared/data/costs -o " + dir.File("costs.json"));
    EXPECT_EQ(fit.exit_code, 0) << fit.err;
    StatusOr<models::CostModel> read = models::ReadCostModel(dir.File("costs.json"));
    EXPECT_TRUE(read.ok()) << read.status().message();
    return new models::CostModel(read.ok() ? std::move(*read) : models::CostModel{});
  }();
  static auto* const by_gpu = new std::map<std::string, std::unique_ptr<GptCosts>>;
  std::unique_ptr<GptCosts>& costs = (*by_gpu)[setup.gpu->name + " " + setup.net.name];
  if (costs == nullptr) {
    StatusOr<std::unique_ptr<GptCosts>> made =
        GptCosts::Make(*setup.gpu, models::SpecTable::Builtin(), *model, &setup.net);
    EXPECT_TRUE(made.ok());
    if (made.ok()) costs = std::move(*made);
  }
  return *costs;
}

// A GPU of the specs on a network of them.
PlanSetup SetupOn(const char* gpu, const char* network) {
  PlanSetup setup;
  setup.gpu = models::SpecTable::Builtin().FindGpu(gpu);
  StatusOr<models::NetworkSpec> net = models::SpecTable::Builtin().ResolveNetwork(network);
  EXPECT_TRUE(net.ok()) << network;
  if (net.ok()) setup.net = *net;
  return setup;
}

PlanSetup H100Fp8() {
  PlanSetup setup = SetupOn("H100-SXM5-80GB", "ib400");
  setup.gemm_dtype = models::DType::kFp8;
  return setup;
}

// Selene's: A100-SXM4-80GB, 200 Gbit/s InfiniBand a GPU (Narayanan et al., SC'21).
PlanSetup A100Ib200() { return SetupOn("A100-SXM4-80GB", "ib200"); }

// The layout `set` gives (ApplyLayoutSettings), over the defaults.
Layout LayoutOf(const std::string& set) {
  Layout l;
  EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
  return l;
}

double StepSeconds(const std::string& set) {
  const Layout l = LayoutOf(set);
  const PlanSetup setup = H100Fp8();
  StatusOr<StepEstimate> e = EstimateStep(Gpt3(), l, SharedCosts(setup), setup);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? e->step_ns / 1e9 : 0;
}

// Dropout: GPT's masks (Megatron's default 0.1) unless dropout=0, as MLPerf's GPT-3 trains;
// Llama never, unless dropout=1. Without them a layer stores and moves less: memory and the
// elementwise traffic both shrink (two 1-byte masks of 34 bytes an element with sequence
// parallelism's accounting).
TEST(ModelSpecTest, DropoutIsTheFamilysUnlessSaid) {
  StatusOr<ModelSpec> without = ParseModelSpec(std::string(kGpt3) + ",dropout=0");
  StatusOr<ModelSpec> llama =
      ParseModelSpec("llama:layers=32,hidden=4096,heads=32,seq=8192,vocab=8");
  StatusOr<ModelSpec> llama_with =
      ParseModelSpec("llama:layers=32,hidden=4096,heads=32,seq=8192,vocab=8,dropout=1");
  ASSERT_TRUE(without.ok() && llama.ok() && llama_with.ok());
  EXPECT_TRUE(Gpt3().has_dropout());
  EXPECT_FALSE(without->has_dropout());
  EXPECT_FALSE(llama->has_dropout());
  EXPECT_TRUE(llama_with->has_dropout());
  const PlanSetup setup = H100Fp8();
  const Layout l = LayoutOf("tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1");
  StatusOr<LayoutWork> masks = LayoutWorkOf(Gpt3(), l, SharedCosts(setup), setup);
  StatusOr<LayoutWork> none = LayoutWorkOf(*without, l, SharedCosts(setup), setup);
  ASSERT_TRUE(masks.ok() && none.ok());
  const double ratio = static_cast<double>(none->memory.stages.front().layer_activation_bytes) /
                       static_cast<double>(masks->memory.stages.front().layer_activation_bytes);
  EXPECT_LT(ratio, 0.97);
  EXPECT_GT(ratio, 0.85);
  EXPECT_LT(none->elementwise_ns, masks->elementwise_ns);
  EXPECT_EQ(none->gemm_ns, masks->gemm_ns);
  EXPECT_EQ(none->attention_ns, masks->attention_ns);  // Flash attention: no dropout of its own.
  // Unfused attention's softmax moves 4 bytes a score forward and 6 backward without dropout,
  // 9 and 11 with its dropout.
  const Layout unfused = LayoutOf("tp=4,pp=8,dp=16,mbs=1,gbs=2048,flash_attention=0");
  StatusOr<LayoutWork> unfused_masks = LayoutWorkOf(Gpt3(), unfused, SharedCosts(setup), setup);
  StatusOr<LayoutWork> unfused_none = LayoutWorkOf(*without, unfused, SharedCosts(setup), setup);
  ASSERT_TRUE(unfused_masks.ok() && unfused_none.ok());
  EXPECT_LT(unfused_none->attention_ns, 0.95 * unfused_masks->attention_ns);
}

// MLPerf Training v3.1, GPT-3 175B on H100 (NVIDIA's eos results; layout from the round's
// published configuration: TP4 PP8, 12 virtual stages, TP overlap, bf16 gradient reduction):
// 512 GPUs at GBS 2048 took 11.07 s a step, 4,096 at GBS 2048 1.629 s (6.80x on 8x the GPUs).
// scripts/validate-plan-mlperf.sh scores every anchor; here the pair's contrast (within 10 %)
// and each within the issue's worst bound, 20 % (today: -9.2 % and -15.3 %: here the shared
// tables alone, attention and the elementwise kernels at their rooflines, faster than the
// script's fit).
TEST(StepModelTest, MlperfGpt3OnH100TheContrastAndTheBound) {
  const std::string common =
      ",tp=4,pp=8,vp=12,mbs=1,gbs=2048,sequence_parallel=1,zero=1,"
      "tp_overlap=1,grad_sync_bytes=2";
  const double small = StepSeconds("dp=16" + common);
  const double large = StepSeconds("dp=128" + common);
  ASSERT_GT(large, 0);
  std::printf("512 GPUs %.3f s (published 11.07), 4096 GPUs %.3f s (1.629), ratio %.2f (6.80)\n",
              small, large, small / large);
  EXPECT_NEAR(small / large, 11.07 / 1.629, 0.10 * 11.07 / 1.629);
  EXPECT_NEAR(small, 11.07, 0.20 * 11.07);
  EXPECT_NEAR(large, 1.629, 0.20 * 1.629);
}

// Megatron-Bridge's published DGX-H100 throughput for Llama 3 70B (NeMo 25.11,
// docs/performance-summary.md; recipe settings in scripts/validate-plan-bridge.sh's header):
// 64 GPUs, tp 4, pp 8, vp 5, GBS 128, FP8, 1602 tokens/s/GPU, so 10.227 s a step. Another model
// (GQA, SwiGLU, a 128k vocabulary, seq 8192) and another stack than MLPerf's GPT-3: both paths
// within the issue's worst bound, 20 % (the script's fit with the H200 attention and current
// scaling: -2.7 % simulated, +0.7 % fast; here the tables alone, attention from the roofline,
// delayed scaling: -11.7 % and -8.3 %).
TEST(StepModelTest, MegatronBridgeLlama3On64H100) {
  StatusOr<ModelSpec> spec = ParseModelSpec(
      "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=8192,vocab=128256");
  ASSERT_TRUE(spec.ok());
  Layout l;
  ASSERT_TRUE(ApplyLayoutSettings("tp=4,pp=8,vp=5,dp=2,mbs=1,gbs=128,sequence_parallel=1,zero=1,"
                                  "tp_overlap=1,grad_sync_bytes=2",
                                  &l)
                  .ok());
  const PlanSetup setup = H100Fp8();
  StatusOr<StepEstimate> fast = EstimateStep(*spec, l, SharedCosts(setup), setup);
  StatusOr<SimulatedStep> slow = SimulateStep(*spec, l, SharedCosts(setup), setup);
  ASSERT_TRUE(fast.ok() && slow.ok());
  const double published = 128.0 * 8192 / (1602.0 * 64);
  std::printf("Llama 3 70B on 64 H100s: fast %.3f s, simulated %.3f s (published %.3f s)\n",
              fast->step_ns / 1e9, slow->step_ns / 1e9, published);
  EXPECT_NEAR(fast->step_ns / 1e9, published, 0.20 * published);
  EXPECT_NEAR(slow->step_ns / 1e9, published, 0.20 * published);
  EXPECT_TRUE(fast->memory.fits);
}

// Narayanan et al., SC'21, Table 1 (scripts/validate-plan-megatron.sh scores all ten rows): the
// 145.6B model (96 heads, hidden 12288, 80 layers) on 1,536 A100s, tp 8, pp 8, batch 2304, at
// 148 TFLOP/s a GPU: 24.82 s a step by the paper's FLOP count. With that code's settings (full
// recomputation, gradients all-reduced after the backward in 16 bits, attention unfused) the
// fast path is within 15 % (today -12.9 %); the same layout with today's flash attention and
// overlapped reduction is faster still.
TEST(StepModelTest, MegatronSc21OnA100) {
  const PlanSetup setup = A100Ib200();
  ASSERT_NE(setup.gpu, nullptr);
  StatusOr<ModelSpec> spec =
      ParseModelSpec("gpt:layers=80,hidden=12288,heads=96,seq=2048,vocab=51200");
  ASSERT_TRUE(spec.ok());
  auto step = [&](const std::string& set) {
    StatusOr<StepEstimate> e = EstimateStep(*spec, LayoutOf(set), SharedCosts(setup), setup);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? e->step_ns / 1e9 : 0;
  };
  const std::string layout = "tp=8,pp=8,vp=2,dp=24,mbs=1,gbs=2304,recompute=full";
  const double then = step(layout + ",dp_overlap=0,grad_sync_bytes=2,flash_attention=0");
  std::printf("145.6B on 1536 A100s: %.3f s (published 24.817 s)\n", then);
  EXPECT_NEAR(then, 24.817, 0.15 * 24.817);
  EXPECT_LT(step(layout + ",dp_overlap=0,grad_sync_bytes=2"), then);
  EXPECT_LT(step(layout + ",grad_sync_bytes=2,flash_attention=0"), then);
}

// Gradient buckets as Megatron-core sizes them, max(40M, 1M x dp) parameters
// (distributed_data_parallel.py), closed at a layer's end: a layer of 25M parameters (hidden
// 2048 at tp 2) makes buckets of two layers at dp 16 and of six at dp 128; the embedding, last
// in backward order, opens a bucket of its own once the one before it is full (as Megatron's
// closes a bucket on the parameter that fills it).
TEST(StepModelTest, GradientBucketsGrowWithTheDataParallelGroup) {
  const PlanSetup setup = H100Fp8();
  StatusOr<ModelSpec> spec =
      ParseModelSpec("gpt:layers=16,hidden=2048,heads=16,seq=2048,vocab=512");
  ASSERT_TRUE(spec.ok());
  auto buckets = [&](const std::string& set) {
    const Layout l = LayoutOf(set);
    StatusOr<LayoutWork> w = LayoutWorkOf(*spec, l, SharedCosts(setup), setup);
    EXPECT_TRUE(w.ok());
    return w.ok() ? ChunkGradientBuckets(*w, l, VirtualStageLayers(*spec, l, 0), 0)
                  : std::vector<GradientBucket>{};
  };
  EXPECT_EQ(GradientBucketParameters(LayoutOf("tp=2,dp=16")), 40'000'000);
  EXPECT_EQ(GradientBucketParameters(LayoutOf("tp=2,dp=128")), 128'000'000);
  const std::vector<GradientBucket> two = buckets("tp=2,dp=16");
  ASSERT_EQ(two.size(), 9u);
  EXPECT_EQ(two.front().items, (std::vector<int64_t>{15, 14}));
  EXPECT_EQ(two[7].items, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(two.back().items, (std::vector<int64_t>{-2}));
  const std::vector<GradientBucket> six = buckets("tp=2,dp=128");
  ASSERT_EQ(six.size(), 3u);
  EXPECT_EQ(six.front().items.size(), 6u);
  EXPECT_EQ(six.back().items, (std::vector<int64_t>{3, 2, 1, 0, -2}));
}

// The network a setup names carries every collective that leaves a node, not only the pipeline's
// sends: the gradients' all-reduce of a data-parallel group with one GPU a node is bound by that
// GPU's NIC, so on 200 Gbit/s InfiniBand it takes about twice as long as on 400 (both paths
// used the default network's collectives before, whatever --net said).
TEST(StepModelTest, TheNetworkAskedForCarriesTheDataParallelCollectives) {
  const PlanSetup ib200 = A100Ib200();
  const PlanSetup ib400 = SetupOn("A100-SXM4-80GB", "ib400");
  ASSERT_NE(ib200.gpu, nullptr);
  StatusOr<ModelSpec> spec =
      ParseModelSpec("gpt:layers=60,hidden=10240,heads=80,seq=2048,vocab=51200");
  ASSERT_TRUE(spec.ok());
  Layout l;
  ASSERT_TRUE(
      ApplyLayoutSettings("tp=8,pp=4,dp=32,mbs=1,gbs=1792,recompute=full,dp_overlap=0", &l).ok());
  StatusOr<StepEstimate> slower = EstimateStep(*spec, l, SharedCosts(ib200), ib200);
  StatusOr<StepEstimate> faster = EstimateStep(*spec, l, SharedCosts(ib400), ib400);
  ASSERT_TRUE(slower.ok() && faster.ok());
  EXPECT_NEAR(slower->dp_comm_ns / faster->dp_comm_ns, 2.0, 0.3);
  StatusOr<SimulatedStep> simulated_slower = SimulateStep(*spec, l, SharedCosts(ib200), ib200);
  StatusOr<SimulatedStep> simulated_faster = SimulateStep(*spec, l, SharedCosts(ib400), ib400);
  ASSERT_TRUE(simulated_slower.ok() && simulated_faster.ok());
  EXPECT_NEAR(simulated_slower->dp_comm_ns / simulated_faster->dp_comm_ns, 2.0, 0.3);
}

// SC'21's scatter-gather (Megatron-LM's scatter_gather_tensors_in_pipeline): without sequence
// parallelism each tp rank sends 1/tp of the activation across the nodes and the receivers
// all-gather it over NVLink, far less than the whole activation over one GPU's NIC; with
// sequence parallelism the activation is split already, and the key changes nothing.
TEST(StepModelTest, ScatterGatherSendsATpShareAcrossAndGathersOverNvlink) {
  const PlanSetup setup = A100Ib200();
  StatusOr<ModelSpec> spec =
      ParseModelSpec("gpt:layers=60,hidden=10240,heads=80,seq=2048,vocab=51200");
  ASSERT_TRUE(spec.ok());
  auto p2p = [&](const std::string& set) {
    StatusOr<LayoutWork> w = LayoutWorkOf(*spec, LayoutOf(set), SharedCosts(setup), setup);
    EXPECT_TRUE(w.ok()) << set;
    return w.ok() ? w->p2p_ns : 0.0;
  };
  const std::string layout = "tp=8,pp=4,dp=32,mbs=1,gbs=1792";
  const double whole = p2p(layout);
  const double scattered = p2p(layout + ",p2p_scatter_gather=1");
  EXPECT_GT(scattered, 0);
  EXPECT_LT(scattered, 0.4 * whole);
  EXPECT_GT(scattered, whole / 8);  // The share across, and the gather on top.
  EXPECT_EQ(p2p(layout + ",sequence_parallel=1,p2p_scatter_gather=1"),
            p2p(layout + ",sequence_parallel=1"));
  EXPECT_NE(LayoutText(LayoutOf(layout + ",p2p_scatter_gather=1")).find("p2p-scatter-gather"),
            std::string::npos);
}

// Unfused attention: the scores, their softmax and its dropout mask are moved by the attention's
// own softmax kernels (TimeUnfusedAttention), so the layer's other elementwise traffic is the
// same as with flash attention; they were counted twice before (docs/validation.md, "A real
// Megatron-LM forward").
TEST(StepModelTest, UnfusedAttentionsScoresAreCostedOnce) {
  const PlanSetup setup = A100Ib200();
  ASSERT_NE(setup.gpu, nullptr);
  StatusOr<ModelSpec> spec =
      ParseModelSpec("gpt:layers=40,hidden=4096,heads=64,seq=2048,vocab=51200,ffn=16384");
  ASSERT_TRUE(spec.ok());
  auto work = [&](const std::string& set) {
    Layout l;
    EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
    StatusOr<LayoutWork> w = LayoutWorkOf(*spec, l, SharedCosts(setup), setup);
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() ? *w : LayoutWork{};
  };
  const std::string layout = "tp=8,pp=1,dp=1,mbs=4,gbs=4";
  const LayoutWork fused = work(layout), unfused = work(layout + ",flash_attention=0");
  EXPECT_GT(fused.elementwise_ns, 0);
  EXPECT_EQ(unfused.elementwise_ns, fused.elementwise_ns);
  EXPECT_GT(unfused.attention_ns, fused.attention_ns);
  // The scores are still what unfused attention stores: memory differs.
  EXPECT_GT(unfused.memory.total_bytes(), fused.memory.total_bytes());
}

// A layer's elementwise traffic runs at what a real Megatron-LM layer's kernels measure when the
// cost model has them (data/costs/kernels_a100_megatron.csv: the norms at about half the HBM
// roofline, the fused elementwise kernels and FP8 casts nearer it), carried to the H100 from the
// A100, and at the roofline when it has none: slower with them, by less than the norms' factor.
TEST(StepModelTest, TheLayersElementwiseTrafficRunsAtTheMeasuredKernelsEfficiency) {
  TempDir dir;
  const auto fit = RunCommand(LumosModelBinary() + " costs fit " + LUMOS_SOURCE_DIR +
                              "/../shared/data/costs " + LUMOS_SOURCE_DIR +
                              "/data/costs/kernels_a100_megatron.csv -o " + dir.File("costs.json"));
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  StatusOr<models::CostModel> model = models::ReadCostModel(dir.File("costs.json"));
  ASSERT_TRUE(model.ok()) << model.status().message();
  const PlanSetup setup = H100Fp8();
  StatusOr<std::unique_ptr<GptCosts>> measured =
      GptCosts::Make(*setup.gpu, models::SpecTable::Builtin(), *model, &setup.net);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  Layout l;
  ASSERT_TRUE(
      ApplyLayoutSettings("tp=4,pp=8,vp=12,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1", &l)
          .ok());
  StatusOr<LayoutWork> roofline = LayoutWorkOf(Gpt3(), l, SharedCosts(setup), setup);
  StatusOr<LayoutWork> kernels = LayoutWorkOf(Gpt3(), l, **measured, setup);
  ASSERT_TRUE(roofline.ok() && kernels.ok());
  EXPECT_GT(kernels->elementwise_ns, 1.05 * roofline->elementwise_ns);
  EXPECT_LT(kernels->elementwise_ns, 2.1 * roofline->elementwise_ns);
  EXPECT_EQ(kernels->gemm_ns, roofline->gemm_ns);  // The GEMM tables are the same.
}

// TP overlap (Transformer Engine's userbuffers, configured as MLPerf v3.1's GPT-3 was, see
// pass_work.cc) hides the TP collectives but costs the GEMMs: chunked, and short of the SMs
// the communication kernels hold. A layer's GEMMs take longer than without it, by less than a
// quarter; its collectives are the same, and a pass carries only what its GEMMs do not hide.
TEST(StepModelTest, TpOverlapCostsTheGemmsWhatItsMethodsTake) {
  const std::string base = "tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1";
  Layout plain, overlapped;
  ASSERT_TRUE(ApplyLayoutSettings(base, &plain).ok());
  ASSERT_TRUE(ApplyLayoutSettings(base + ",tp_overlap=1", &overlapped).ok());
  const PlanSetup setup = H100Fp8();
  StatusOr<LayoutWork> a = LayoutWorkOf(Gpt3(), plain, SharedCosts(setup), setup);
  StatusOr<LayoutWork> b = LayoutWorkOf(Gpt3(), overlapped, SharedCosts(setup), setup);
  ASSERT_TRUE(a.ok() && b.ok());
  std::printf("a layer's GEMMs: %.0f ns, with TP overlap %.0f ns (x%.3f); TP collectives %.0f ns\n",
              a->gemm_ns, b->gemm_ns, b->gemm_ns / a->gemm_ns, a->tp_comm_ns);
  EXPECT_GT(b->gemm_ns, a->gemm_ns);
  EXPECT_LT(b->gemm_ns, 1.25 * a->gemm_ns);
  EXPECT_EQ(b->tp_comm_ns, a->tp_comm_ns);
  size_t tp_ops = 0;
  for (const PlanOp& op : b->layer_forward.ops) {
    if (op.cls == OpClass::kTensorParallel) {
      ++tp_ops;
      EXPECT_STREQ(op.name, "tp_exposed");
    }
  }
  EXPECT_EQ(tp_ops, 1u);
}

// What each knob does, whatever the costs: interleaving shrinks the bubble, more micro-batches
// take longer in all, TP overlap never slows a step.
// Context parallelism splits each micro-batch's sequence over cp GPUs (Llama 3 70B at seq 8192,
// where Megatron-Bridge's recipes use it): a GPU's GEMMs and its share of attention about halve
// with cp 2 (the ring's transfers hide behind the attention steps), its activations halve, and
// its gradients are reduced over dp x cp ranks, as dp alone would with twice the replicas.
TEST(StepModelTest, ContextParallelismSplitsTheSequence) {
  const PlanSetup setup = H100Fp8();
  StatusOr<ModelSpec> llama = ParseModelSpec(
      "llama:layers=80,hidden=8192,heads=64,kv_heads=8,ffn=28672,seq=8192,vocab=128256");
  ASSERT_TRUE(llama.ok());
  auto work_of = [&](const std::string& set) {
    Layout l;
    EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
    StatusOr<LayoutWork> w = LayoutWorkOf(*llama, l, SharedCosts(setup), setup);
    EXPECT_TRUE(w.ok()) << set;
    return w.ok() ? *w : LayoutWork{};
  };
  auto fast = [&](const std::string& set) {
    Layout l;
    EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
    StatusOr<StepEstimate> e = EstimateStep(*llama, l, SharedCosts(setup), setup);
    EXPECT_TRUE(e.ok()) << set << ": " << e.status().message();
    return e.ok() ? *e : StepEstimate{};
  };
  const std::string base = "tp=4,pp=8,mbs=1,gbs=512,sequence_parallel=1,zero=1";
  const LayoutWork one = work_of(base + ",dp=16");
  const LayoutWork two = work_of(base + ",dp=16,cp=2");
  std::printf("cp 2 against 1: GEMMs x%.3f, attention x%.3f, activations x%.3f\n",
              two.gemm_ns / one.gemm_ns, two.attention_ns / one.attention_ns,
              static_cast<double>(two.memory.stages.front().layer_activation_bytes) /
                  static_cast<double>(one.memory.stages.front().layer_activation_bytes));
  EXPECT_GT(two.gemm_ns, 0.45 * one.gemm_ns);
  EXPECT_LT(two.gemm_ns, 0.65 * one.gemm_ns);
  EXPECT_GT(two.attention_ns, 0.4 * one.attention_ns);  // Its share, and the ring's steps.
  EXPECT_LT(two.attention_ns, 0.8 * one.attention_ns);
  EXPECT_NEAR(static_cast<double>(two.memory.stages.front().layer_activation_bytes),
              0.5 * static_cast<double>(one.memory.stages.front().layer_activation_bytes),
              0.01 * static_cast<double>(one.memory.stages.front().layer_activation_bytes));
  const StepEstimate split = fast(base + ",dp=16,cp=2");
  const StepEstimate replicas = fast(base + ",dp=32");
  EXPECT_EQ(split.layout.gpus(), replicas.layout.gpus());
  EXPECT_NEAR(split.dp_comm_ns, replicas.dp_comm_ns, 1e-6 * replicas.dp_comm_ns);
  EXPECT_GT(split.dp_comm_ns, 0);
}

TEST(StepModelTest, KnobsMoveTheStepTheWayTheyShould) {
  const std::string base = "tp=4,pp=8,dp=16,mbs=1,sequence_parallel=1,zero=1";
  EXPECT_LT(StepSeconds(base + ",gbs=2048,vp=4"), StepSeconds(base + ",gbs=2048"));
  EXPECT_LT(StepSeconds(base + ",gbs=1024"), StepSeconds(base + ",gbs=2048"));
  EXPECT_LE(StepSeconds(base + ",gbs=2048,tp_overlap=1"), StepSeconds(base + ",gbs=2048"));
  EXPECT_GT(StepSeconds(base + ",gbs=2048,recompute=full"), StepSeconds(base + ",gbs=2048"));
  // ZeRO 3 gathers the weights for every pass: never faster than ZeRO 1, and smaller.
  const std::string small = "tp=8,pp=1,dp=64,mbs=1,gbs=512,sequence_parallel=1";
  EXPECT_GE(StepSeconds(small + ",zero=3"), StepSeconds(small + ",zero=1"));
  const PlanSetup setup = H100Fp8();
  Layout one, three;
  ASSERT_TRUE(ApplyLayoutSettings(small + ",zero=1", &one).ok());
  ASSERT_TRUE(ApplyLayoutSettings(small + ",zero=3", &three).ok());
  StatusOr<StepEstimate> a = EstimateStep(Gpt3(), one, SharedCosts(setup), setup);
  StatusOr<StepEstimate> b = EstimateStep(Gpt3(), three, SharedCosts(setup), setup);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->memory.total_bytes(), a->memory.total_bytes());
  // Weights gathered in FP8: ZeRO 1's all-gather moves half the bytes; the reduction is as it was.
  Layout bf16_gather, fp8_gather;
  ASSERT_TRUE(ApplyLayoutSettings(small + ",zero=1", &bf16_gather).ok());
  ASSERT_TRUE(ApplyLayoutSettings(small + ",zero=1,fp8_param_gather=1", &fp8_gather).ok());
  StatusOr<StepEstimate> c = EstimateStep(Gpt3(), bf16_gather, SharedCosts(setup), setup);
  StatusOr<StepEstimate> d = EstimateStep(Gpt3(), fp8_gather, SharedCosts(setup), setup);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_LT(d->dp_comm_ns, c->dp_comm_ns);
  EXPECT_GT(d->dp_comm_ns, 0.5 * c->dp_comm_ns);
  EXPECT_NE(LayoutText(fp8_gather).find("fp8-param-gather"), std::string::npos);
}

// FP8 with current scaling (Megatron-Bridge's FP8-CS) reads each tensor once more for its amax
// before the cast: the casts move 6 bytes an element where delayed scaling's move 4, and the
// all-gathered tensors' amaxes are all-reduced over TP. bf16 GEMMs cast nothing either way.
TEST(StepModelTest, Fp8CurrentScalingPaysAnAmaxPassBeforeEveryCast) {
  const PlanSetup setup = H100Fp8();
  const std::string base = "tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1";
  Layout delayed, current;
  ASSERT_TRUE(ApplyLayoutSettings(base, &delayed).ok());
  ASSERT_TRUE(ApplyLayoutSettings(base + ",fp8_current_scaling=1", &current).ok());
  EXPECT_EQ(LayoutText(current).find("fp8-current-scaling") != std::string::npos, true);
  StatusOr<LayoutWork> a = LayoutWorkOf(Gpt3(), delayed, SharedCosts(setup), setup);
  StatusOr<LayoutWork> b = LayoutWorkOf(Gpt3(), current, SharedCosts(setup), setup);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->fp8_cast_bytes, 4);
  EXPECT_EQ(b->fp8_cast_bytes, 6);
  auto cast = [](const PassWork& pass) {
    double ns = 0;
    for (const PlanOp& op : pass.ops)
      ns += std::string_view(op.name).starts_with("fp8_cast") ? op.ns : 0;
    return ns;
  };
  // More than the 1.5x of the bytes alone: the amax all-reduces come on top.
  EXPECT_GT(cast(b->layer_forward), 1.5 * cast(a->layer_forward) * 0.999);
  EXPECT_GT(cast(b->layer_backward), 1.5 * cast(a->layer_backward) * 0.999);
  EXPECT_GT(b->elementwise_ns, a->elementwise_ns);
  EXPECT_EQ(b->gemm_ns, a->gemm_ns);
  // Without sequence parallelism nothing is all-gathered, so no amax is all-reduced: the same
  // casts, two all-reduces fewer a pass.
  Layout unsplit;
  ASSERT_TRUE(
      ApplyLayoutSettings("tp=4,pp=8,dp=16,mbs=1,gbs=2048,zero=1,fp8_current_scaling=1", &unsplit)
          .ok());
  StatusOr<LayoutWork> u = LayoutWorkOf(Gpt3(), unsplit, SharedCosts(setup), setup);
  ASSERT_TRUE(u.ok());
  EXPECT_GT(cast(b->layer_forward), cast(u->layer_forward));
  EXPECT_GT(cast(b->layer_backward), cast(u->layer_backward));
  EXPECT_NEAR(cast(b->layer_forward) - cast(u->layer_forward),
              cast(b->layer_backward) - cast(u->layer_backward), 1.0);
  EXPECT_GT(StepSeconds(base + ",fp8_current_scaling=1"), StepSeconds(base));
  PlanSetup bf16 = setup;
  bf16.gemm_dtype = models::DType::kBf16;
  StatusOr<LayoutWork> c = LayoutWorkOf(Gpt3(), current, SharedCosts(setup), bf16);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->fp8_cast_bytes, 0);
  EXPECT_EQ(cast(c->layer_forward), 0);
}

// Delayed scaling (MLPerf's FP8): Transformer Engine all-reduces the amaxes a chunk recorded
// as its fp8_autocast exits and once its backward is through, over Megatron's amax group (the
// stage's tp x dp x cp ranks): one blocking collective a chunk's pass, dearer the more nodes the
// group spans; tp_only_amax_red keeps it in the node; current scaling and bf16 have none.
TEST(StepModelTest, DelayedScalingReducesTheAmaxesOnceAChunksPass) {
  const PlanSetup setup = H100Fp8();
  auto work = [&](const std::string& set, const PlanSetup& s) {
    Layout l;
    EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
    StatusOr<LayoutWork> w = LayoutWorkOf(Gpt3(), l, SharedCosts(s), s);
    EXPECT_TRUE(w.ok()) << w.status().message();
    return w.ok() ? *w : LayoutWork{};
  };
  const std::string small = "tp=4,pp=8,vp=12,dp=16,mbs=1,gbs=2048,sequence_parallel=1,zero=1";
  const std::string large = "tp=4,pp=8,vp=12,dp=336,mbs=1,gbs=2688,sequence_parallel=1,zero=1";
  const LayoutWork a = work(small, setup), b = work(large, setup);
  ASSERT_EQ(a.chunk_forward.ops.size(), 1u);
  ASSERT_EQ(a.chunk_backward.ops.size(), 1u);
  EXPECT_STREQ(a.chunk_forward.ops[0].name, "fp8_amax_all_reduce");
  // A latency: microseconds, more over 168 nodes than over 8.
  EXPECT_GT(a.chunk_forward.ops[0].ns, 5e3);
  EXPECT_LT(a.chunk_forward.ops[0].ns, 1e6);
  EXPECT_GT(b.chunk_forward.ops[0].ns, a.chunk_forward.ops[0].ns);
  EXPECT_GT(b.chunk_backward.ops[0].ns, a.chunk_backward.ops[0].ns);
  // Within the node (tp x cp = 4 ranks): cheaper than over the stage's 1,344.
  const LayoutWork tp_only = work(large + ",tp_only_amax_red=1", setup);
  ASSERT_EQ(tp_only.chunk_forward.ops.size(), 1u);
  EXPECT_LT(tp_only.chunk_forward.ops[0].ns, b.chunk_forward.ops[0].ns);
  EXPECT_TRUE(work(large + ",fp8_current_scaling=1", setup).chunk_forward.ops.empty());
  PlanSetup bf16 = setup;
  bf16.gemm_dtype = models::DType::kBf16;
  EXPECT_TRUE(work(large, bf16).chunk_backward.ops.empty());
  // The fast path pays it vp times a micro-batch on every stage: 2 x 12 x 8 a step here.
  const double with = StepSeconds(large), without = StepSeconds(large + ",tp_only_amax_red=1");
  const double per_step = 12.0 * 8.0 *
                          (b.chunk_forward.ops[0].ns + b.chunk_backward.ops[0].ns -
                           tp_only.chunk_forward.ops[0].ns - tp_only.chunk_backward.ops[0].ns) /
                          1e9;
  // (8 micro-batches and the bubble's 7/12 slots; the exposed reduction, which the longer
  // backward hides a little more of, moves it by less than 5 %.)
  const double expected = per_step * (8 + 7.0 / 12) / 8;
  EXPECT_NEAR(with - without, expected, 0.05 * expected);
}

TEST(SearchTest, RanksTheFittingAndListsTheRestWithTheirShortfall) {
  SearchSpace space;
  space.gpus = 64;
  space.gbs = 512;
  const PlanSetup setup = H100Fp8();
  const SearchResult r = Search(Gpt3(), space, SharedCosts(setup), setup);
  ASSERT_GT(r.ranked.size(), 0u);
  EXPECT_EQ(r.failed, 0u) << r.first_failure.message();
  ASSERT_GT(r.fitting, 0u);
  ASSERT_LT(r.fitting, r.ranked.size());  // 175B on 64 GPUs: many layouts do not fit.
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    EXPECT_EQ(r.ranked[i].memory.fits, i < r.fitting);
    if (i > 0 && i < r.fitting) {
      EXPECT_LE(r.ranked[i - 1].step_ns, r.ranked[i].step_ns);
    }
    if (i >= r.fitting) {
      EXPECT_GT(r.ranked[i].memory.shortfall_bytes, 0);
    }
  }
}

TEST(SearchCommandTest, AnswersAndRefusesAsTheContractSays) {
  const std::string lm = LumosModelBinary();
  const auto ok = RunCommand(lm + " search --model " + kGpt3 +
                             " --gpus 512,1024 --gpu H100-SXM5-80GB --gbs 2048 --top 3 --json "
                             "--check 0");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(ok.out).get(doc), simdjson::SUCCESS) << ok.out;
  EXPECT_EQ(simdjson::dom::array(doc["searches"]).size(), 2u);
  for (simdjson::dom::element search : simdjson::dom::array(doc["searches"])) {
    for (simdjson::dom::element e : simdjson::dom::array(search["ranked"])) {
      EXPECT_TRUE(e["tp_overlap"].is_bool());
    }
  }
  // --no-tp-overlap: the tp_overlap column is 0 in every row.
  const auto plain = RunCommand(lm + " search --model " + kGpt3 +
                                " --gpus 512 --gpu H100-SXM5-80GB --gbs 2048 --top 1000 --csv "
                                "--simulate 0 --no-tp-overlap");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(plain.out.find("gpus,rank,tp,pp,vp,dp,mbs,gbs,sequence_parallel,recompute,zero,"
                           "tp_overlap,"),
            0u)
      << plain.out;
  size_t plain_rows = 0;
  std::istringstream lines(plain.out);
  std::string row;
  std::getline(lines, row);  // The header.
  while (std::getline(lines, row)) {
    std::vector<std::string> cells;
    std::istringstream fields(row);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), 11u) << row;
    EXPECT_EQ(cells[11], "0") << row;
    ++plain_rows;
  }
  EXPECT_GT(plain_rows, 10u);
  const auto text =
      RunCommand(lm + " search --model " + kGpt3 +
                 " --gpus 512,1024 --gpu H100-SXM5-80GB --gbs 2048 --top 2 --check 0");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("fastest layout per GPU count"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no cost model: rooflines"), std::string::npos);
  // The rest checked against the fastest simulated step (the default): settled, or said not to be.
  const auto checked = RunCommand(lm + " search --model " + kGpt3 +
                                  " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 1");
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_NE(checked.out.find("the first is the slow path's fastest of all"), std::string::npos)
      << checked.out;
  // Context parallelism tried where asked: its degrees in the JSON, each layout on the same GPUs.
  const auto cps = RunCommand(lm + " search --model " + kGpt3 +
                              " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 100000 --json "
                              "--simulate 0 --cp 1,2");
  ASSERT_EQ(cps.exit_code, 0) << cps.err;
  EXPECT_NE(cps.out.find("\"cp\": 2,"), std::string::npos);
  EXPECT_NE(cps.out.find("\"cp\": 1,"), std::string::npos);
  const auto unsettled = RunCommand(lm + " search --model " + kGpt3 +
                                    " --gpus 64 --gpu H100-SXM5-80GB --gbs 16 --top 1 --check 1");
  ASSERT_EQ(unsettled.exit_code, 0) << unsettled.err;
  EXPECT_NE(unsettled.out.find("might still beat the first"), std::string::npos) << unsettled.out;
  // Nothing fits: every layout listed with its shortfall, none dropped.
  const auto none = RunCommand(lm + " search --model " + kGpt3 +
                               " --gpus 8 --gpu H100-SXM5-80GB --gbs 8 --csv --top 1000");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  size_t rows = 0, fitting = 0;
  std::istringstream csv(none.out);
  std::vector<std::string> header;
  std::string line;
  std::getline(csv, line);
  std::istringstream names(line);
  for (std::string name; std::getline(names, name, ',');) header.push_back(name);
  const auto fits_column =
      static_cast<size_t>(std::find(header.begin(), header.end(), "fits") - header.begin());
  ASSERT_LT(fits_column, header.size()) << line;
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    ASSERT_GT(cells.size(), fits_column) << line;
    ++rows;
    fitting += cells[fits_column] == "1" ? 1 : 0;
  }
  EXPECT_GT(rows, 0u);
  EXPECT_EQ(fitting, 0u);
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {" search --model gpt:layers=2 --gpus 8 --gpu H100-SXM5-80GB", "hidden= is required"},
           {" search --model " + std::string(kGpt3) + " --gpus 0 --gpu H100-SXM5-80GB",
            "--gpus: '0'"},
           {" search --model " + std::string(kGpt3) + " --gpus 8 --gpu Z80", "'Z80': not in"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 16 --gpu H100-SXM5-80GB --gpus-per-node 16",
            "more than H100-SXM5-80GB's NVLink domain holds (8)"},
           {" estimate --model " + std::string(kGpt3) + " --set tp=5 --gpu H100-SXM5-80GB",
            "tp (5) must divide heads (96)"},
           {" estimate --model " + std::string(kGpt3) + " --set pp=200 --gpu H100-SXM5-80GB",
            "pp (200) larger than layers (96)"},
           {" search --model " + std::string(kGpt3) + " --gpus 64 --gpu H100-SXM5-80GB --set tp=2",
            "--set: tp is not fixed in a search"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --cp 2 --set cp=2",
            "cp in --cp or in --set, not both"},
           {" search --model " + std::string(kGpt3) + " --gpus 64 --gpu H100-SXM5-80GB --cp 0",
            "--cp: '0' must be a whole number"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --set grad_sync_bytes=3",
            "grad_sync_bytes is 2 (bf16) or 4 (fp32)"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8 --gpu H100-SXM5-80GB --overlap-slowdown -1",
            "--overlap-slowdown"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8 --gpu H100-SXM5-80GB --host-step-ms -5",
            "--host-step-ms"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,fp8_current_scaling=1 --gpu H100-SXM5-80GB",
            "fp8_param_gather=1 and tp_only_amax_red=1 need --dtype fp8"},
           {" search --model " + std::string(kGpt3) +
                " --gpus 64 --gpu H100-SXM5-80GB --set fp8_current_scaling=1",
            "tp_only_amax_red=1 need --dtype fp8"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,tp_only_amax_red=1 --gpu H100-SXM5-80GB",
            "tp_only_amax_red=1 need --dtype fp8"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,tp_only_amax_red=1,fp8_current_scaling=1 --gpu H100-SXM5-80GB"
                " --dtype fp8",
            "tp_only_amax_red=1 is for delayed scaling"},
           {" estimate --model " + std::string(kGpt3) +
                " --set tp=8,fp8_current_scaling=2 --gpu H100-SXM5-80GB --dtype fp8",
            "fp8_current_scaling is 0 or 1"},
           // No layout of the GPUs asked for can exist: the rule the plainest one breaks.
           {" search --model " + std::string(kGpt3) +
                " --gpus 1024 --gpu H100-SXM5-80GB --gbs 1537",
            "no layout of 1024 GPUs can exist: layout: dp x mbs (1024 x 1) must divide gbs (1537)"},
           {" search --model " + std::string(kGpt3) + " --gpus 6 --gpu H100-SXM5-80GB --set cp=4",
            "no layout of 6 GPUs can exist: cp 4 does not divide them"}}) {
    const auto r = RunCommand(lm + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // Of several GPU counts, one with no layout says why in its place; the others answer.
  const auto mixed = RunCommand(lm + " search --model " + kGpt3 +
                                " --gpus 1024,1537 --gpu H100-SXM5-80GB --gbs 1537 --top 1 --json "
                                "--simulate 0");
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  ASSERT_EQ(parser.parse(mixed.out).get(doc), simdjson::SUCCESS) << mixed.out;
  simdjson::dom::array searches = doc["searches"];
  ASSERT_EQ(searches.size(), 2u);
  EXPECT_NE(std::string(std::string_view(searches.at(0)["no_layout"])).find("must divide gbs"),
            std::string::npos);
  EXPECT_TRUE(searches.at(1)["no_layout"].is_null());
  EXPECT_GT(int64_t(searches.at(1)["layouts"]), 0);
  // A fixed setting reaches every layout: bf16 gradients, a cheaper reduction.
  auto first_step = [&](const std::string& extra) {
    const auto r = RunCommand(lm + " search --model " + kGpt3 +
                              " --gpus 1024 --gpu H100-SXM5-80GB --gbs 1024 --simulate 0 --top 1 "
                              "--json" +
                              extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const size_t at = r.out.find("\"step_s\": ");
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + 10));
  };
  const double fp32 = first_step(""), bf16 = first_step(" --set grad_sync_bytes=2");
  EXPECT_GT(bf16, 0);
  EXPECT_LT(bf16, fp32);
  const auto one =
      RunCommand(lm + " estimate --model " + kGpt3 +
                 " --set tp=8,pp=8,dp=8,mbs=1,gbs=512,sequence_parallel=1 --gpu H100-SXM5-80GB");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("memory per GPU"), std::string::npos) << one.out;
  // 96 layers on 8 stages, 64 micro-batches: 1F1B's stage 0 holds 8, the last stage 1.
  EXPECT_NE(one.out.find("by stage: stage 0 "), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("(12 layers, activations of 8 micro-batches), stage 7 "),
            std::string::npos)
      << one.out;
  EXPECT_NE(one.out.find("assumptions:"), std::string::npos);
  // Interleaved: stage 0 holds pp·vp + pp - 1 = 23 chunks, in the JSON beside its bytes.
  const auto interleaved = RunCommand(
      lm + " estimate --model " + kGpt3 +
      " --set tp=8,pp=8,vp=2,dp=8,mbs=1,gbs=512,sequence_parallel=1 --gpu H100-SXM5-80GB --fast "
      "--json");
  ASSERT_EQ(interleaved.exit_code, 0) << interleaved.err;
  EXPECT_TRUE(std::regex_search(
      interleaved.out,
      std::regex(R"("memory_stages": \[\{"stage": 0, "gb": [0-9.]+, "layers": 12, )"
                 R"("chunks_in_flight": 23, "activation_gb": [0-9.]+\}, \{"stage": 7)")))
      << interleaved.out;
  // What the simulation overlapped, said beside the step it gave.
  EXPECT_NE(one.out.find("of them beside compute; sends"), std::string::npos) << one.out;
  // The host time a step: the calibrated default, said; --host-step-ms moves both paths by it.
  char host_said[48];
  std::snprintf(host_said, sizeof(host_said), "host %.3f s (--host-step-ms)", kHostStepNs / 1e9);
  EXPECT_NE(one.out.find(host_said), std::string::npos) << one.out;
  auto steps = [&](const std::string& extra) {
    const auto r = RunCommand(lm + " estimate --model " + kGpt3 +
                              " --set tp=8,pp=8,dp=8,mbs=1,gbs=64,sequence_parallel=1 --gpu "
                              "H100-SXM5-80GB --json" +
                              extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.out, m,
                                  std::regex(R"("step_s": ([0-9.]+).*"host_step_s": ([0-9.]+).*)"
                                             R"("simulated_step_s": ([0-9.]+))")))
        << r.out;
    return m.size() == 4 ? std::array<double, 3>{std::stod(m[1]), std::stod(m[2]), std::stod(m[3])}
                         : std::array<double, 3>{};
  };
  const std::array<double, 3> calibrated = steps(""), no_host = steps(" --host-step-ms 0");
  EXPECT_NEAR(calibrated[1], kHostStepNs / 1e9, 1e-6);
  EXPECT_EQ(no_host[1], 0);
  EXPECT_NEAR(calibrated[0] - no_host[0], kHostStepNs / 1e9, 2e-6);
  EXPECT_NEAR(calibrated[2] - no_host[2], kHostStepNs / 1e9, 2e-6);
  const auto too_big = RunCommand(lm + " estimate --model " + kGpt3 +
                                  " --set tp=1,pp=1,dp=8,mbs=1,gbs=8 --gpu H100-SXM5-80GB --fast");
  ASSERT_EQ(too_big.exit_code, 0) << too_big.err;
  EXPECT_TRUE(
      std::regex_search(too_big.out, std::regex(R"(: does not fit, short [0-9]+\.[0-9] GB\n)")))
      << too_big.out;
}

}  // namespace
}  // namespace lumos::modeler::plan
