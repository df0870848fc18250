// modeler/plan's fast path (step_model.h) and the layer work both paths share (pass_work.h):
// what each setting costs, against published step times where one is named. The cost model is
// fitted from ../shared/data/costs (NVIDIA's measured GEMM and NCCL tables); the step times
// (../shared/docs/estimation-anchors.md, the papers named) are only scored.
#include "modeler/plan/step_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/plan/pass_work.h"
#include "modeler/plan/pipeline_graph.h"
#include "tests/modeler/plan/plan_support.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::plan {
namespace {

using ::lumos::schema::CollectiveOp;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using plan_testing::A100Ib200;
using plan_testing::Gpt3;
using plan_testing::H100Fp8;
using plan_testing::kGpt3;
using plan_testing::LayoutOf;
using plan_testing::SetupOn;
using plan_testing::SharedCosts;

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
// and each within the worst bound, 20 % (today: -9.2 % and -15.3 %: here the shared
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
// within the worst bound, 20 % (the script's fit with the H200 attention and current
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
// 148 TFLOP/s a GPU: 24.82 s a step by the paper's FLOP count. With the authors' settings
// (run_table_1.sh: micro-batches of 2, two virtual stages; full recomputation) and that code's
// (gradients all-reduced after the backward in 16 bits, attention unfused, blocking
// scatter/gather sends) the fast path is within 15 % (today -13 % on the shared tables alone;
// -8.4 % with the validation's fit, which adds the measured A100 kernels); the same layout with
// today's flash attention and overlapped reduction is faster still.
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
  const std::string layout =
      "tp=8,pp=8,vp=2,dp=24,mbs=2,gbs=2304,recompute=full,p2p_overlap=0,p2p_scatter_gather=1";
  const double then = step(layout + ",dp_overlap=0,grad_sync_bytes=2,flash_attention=0");
  std::printf("145.6B on 1536 A100s: %.3f s (published 24.817 s)\n", then);
  EXPECT_NEAR(then, 24.817, 0.15 * 24.817);
  EXPECT_LT(step(layout + ",dp_overlap=0,grad_sync_bytes=2"), then);
  EXPECT_LT(step(layout + ",grad_sync_bytes=2,flash_attention=0"), then);
}

// Gradient buckets as Megatron-LM sizes them, max(40M, 1M x dp x cp) parameters (its
// training loop, distributed_data_parallel.py), closed at a layer's end: a layer of 25M parameters
// (hidden 2048 at tp 2) makes buckets of two layers at dp 16 and of six at dp 128; the embedding,
// last in backward order, opens a bucket of its own once the one before it is full (as Megatron's
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
  EXPECT_EQ(GradientBucketParameters(LayoutOf("tp=2,dp=64,cp=2")), 128'000'000);
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

// A pipeline send is the collective model's send/recv, like every other collective across
// nodes; it was the line rate itself. Across NDR InfiniBand the model's rate (its one-node
// all-to-all fit carried to the NIC) is what two H100 nodes measure for one GPU's transfer of
// that size: NVIDIA/nccl-tests#232, a 2-rank all-reduce (each rank's buffer crosses once),
// 231 us for 8 MiB and 420 us for 16 MiB, so about 325 us for MLPerf GPT-3's 12.6 MB send. The
// line rate made it 255 us.
TEST(StepModelTest, PipelineSendsAreTheCollectiveModelsSendRecv) {
  const PlanSetup setup = H100Fp8();
  const GptCosts& costs = SharedCosts(setup);
  const ModelSpec spec = Gpt3();
  // tp 4 with sequence parallelism: 2048 x 12288 x 2 bytes / 4 a send.
  const double bytes = 2048.0 * 12288 * 2 / 4;
  auto p2p = [&](const std::string& set) {
    StatusOr<LayoutWork> w = LayoutWorkOf(spec, LayoutOf(set), costs, setup);
    EXPECT_TRUE(w.ok()) << set;
    return w.ok() ? w->p2p_ns : 0.0;
  };
  const double across = p2p("tp=4,pp=8,dp=16,mbs=1,gbs=2048,sequence_parallel=1");
  StatusOr<double> send_recv = TimeCollective(costs, CollectiveOp::kSendRecv, bytes, 2, 2);
  ASSERT_TRUE(send_recv.ok());
  EXPECT_DOUBLE_EQ(across, *send_recv);
  const double measured = 231e3 + (bytes - 8 * 1048576.0) / (8 * 1048576.0) * (420e3 - 231e3);
  EXPECT_NEAR(across, measured, 0.15 * measured);
  // Within a node (tp 2, pp 4: all four stages on one node's NVLink) much faster than across.
  const double within = p2p("tp=2,pp=4,dp=1,mbs=1,gbs=8,sequence_parallel=1");
  StatusOr<double> nvlink = TimeCollective(costs, CollectiveOp::kSendRecv, 2 * bytes, 2, 1);
  ASSERT_TRUE(nvlink.ok());
  EXPECT_DOUBLE_EQ(within, *nvlink);
  EXPECT_LT(within, across);
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

}  // namespace
}  // namespace lumos::modeler::plan
