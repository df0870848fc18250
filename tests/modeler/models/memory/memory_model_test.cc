// The memory model against figures worked by hand from the papers' formulas: Korthikanti et al.
// 2022 (Table 2: activations per layer), Narayanan et al. 2021 (§5.1: 12·l·h²·(1 + 13/(12h) +
// (V+s)/(12lh)) parameters), the published parameter counts of Llama 2 7B and 70B, ZeRO's
// sharding, the 1F1B pipeline's micro-batches in flight, and the built-in GPUs' capacities.
#include "modeler/models/memory/memory_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

const GpuSpec& Gpu(const char* name) {
  const GpuSpec* gpu = SpecTable::Builtin().FindGpu(name);
  EXPECT_NE(gpu, nullptr) << name;
  return *gpu;
}

// GPT-3 175B as Korthikanti et al. train it (Table 3: t = 8, p = 16, b = 1, s = 2048).
MemoryConfig Gpt3() {
  MemoryConfig c;
  c.layers = 96;
  c.hidden = 12288;
  c.ffn = 49152;  // 4h.
  c.heads = 96;
  c.seq = 2048;
  c.mbs = 1;
  c.micro_batches = 64;
  c.vocab = 51200;
  c.tp = 8;
  c.pp = 16;
  c.dp = 8;
  return c;
}

// Llama 2 7B (Touvron et al. 2023): gated MLP, no biases, RMSNorm, untied head, rotary.
MemoryConfig Llama7B() {
  MemoryConfig c;
  c.layers = 32;
  c.hidden = 4096;
  c.ffn = 11008;
  c.heads = 32;
  c.seq = 4096;
  c.mbs = 1;
  c.micro_batches = 8;
  c.vocab = 32000;
  c.gated_mlp = true;
  c.biases = false;
  c.tied_embeddings = false;
  c.learned_positions = false;
  return c;
}

MemoryEstimate Estimate(const MemoryConfig& c, const GpuSpec* gpu = nullptr) {
  StatusOr<MemoryEstimate> estimate = EstimateMemory(c, gpu);
  EXPECT_TRUE(estimate.ok()) << estimate.status().message();
  return estimate.ok() ? *estimate : MemoryEstimate{};
}

TEST(MemoryModelTest, Gpt3LayerActivationsAreTheFormulasOfTable2) {
  const double sbh = 2048.0 * 1 * 12288;
  const double as_h = 96.0 * 2048 / 12288;  // 5·a·s/h = 80.
  MemoryConfig c = Gpt3();
  // No recompute, tensor parallel only: sbh·(10 + 24/t + 5as/(ht)) = 23·sbh.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh * (10 + 24.0 / 8 + 5 * as_h / 8));
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 23 * sbh);
  // Sequence parallel: sbh/t·(34 + 5as/h) = 14.25·sbh.
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh / 8 * (34 + 5 * as_h));
  // Selective recompute with SP: 34·sbh/t; without: sbh·(10 + 24/t).
  c.recompute = Recompute::kSelective;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh * 34 / 8);
  c.sequence_parallel = false;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh * (10 + 24.0 / 8));
  // Full recompute: the layer's input, 2·sbh (/t with SP).
  c.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 2 * sbh);
  c.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), 2 * sbh / 8);
  // Without any parallelism (t = 1), Table 2's first row: sbh·(34 + 5as/h).
  c = Gpt3();
  c.tp = 1;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh * (34 + 5 * as_h));
  // Flash attention stores no scores: the selective figure.
  c.tp = 8;
  c.flash_attention = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(c), sbh * (10 + 24.0 / 8));
}

TEST(MemoryModelTest, Gpt3ParametersAreMegatronsCount) {
  const MemoryEstimate estimate = Estimate(Gpt3());
  const int64_t l = 96, h = 12288, v = 51200, s = 2048;
  // Narayanan et al. 2021 §5.1: 12lh² + 13lh + (V + s)h, plus the final LayerNorm's 2h.
  EXPECT_EQ(estimate.model_parameters, 12 * l * h * h + 13 * l * h + (v + s) * h + 2 * h);
  EXPECT_EQ(estimate.padded_vocab, 51200);  // Already a multiple of 128·8.
  ASSERT_EQ(estimate.stages.size(), 2u);
  // Stage 0 of 16: 6 layers, each on one of 8 tensor-parallel ranks: the split weights and
  // column-parallel biases over 8 (12h² + 7h), the row-parallel biases (2h) and the two
  // LayerNorms (4h) whole; the word embedding over 8, the position embedding whole.
  const int64_t layer = (12 * h * h + 7 * h) / 8 + 6 * h;
  const StageMemory& first = estimate.stages[0];
  EXPECT_EQ(first.stage, 0);
  EXPECT_EQ(first.layers, 6);
  EXPECT_EQ(first.parameters, 6 * layer + v * h / 8 + s * h);
  // The last stage: its 6 layers, the final LayerNorm and its copy of the tied embedding.
  const StageMemory& last = estimate.stages[1];
  EXPECT_EQ(last.stage, 15);
  EXPECT_EQ(last.parameters, 6 * layer + 2 * h + v * h / 8);
  // 18 bytes per parameter without ZeRO: 2 bf16 weights, 4 fp32 gradients, 12 Adam.
  EXPECT_EQ(first.parameter_bytes, 2 * first.parameters);
  EXPECT_EQ(first.gradient_bytes, 4 * first.parameters);
  EXPECT_EQ(first.optimizer_bytes, 12 * first.parameters);
}

TEST(MemoryModelTest, Gpt3FirstStageHoldsPipelineDepthMicroBatches) {
  MemoryConfig c = Gpt3();
  c.sequence_parallel = true;
  c.recompute = Recompute::kSelective;
  const double sbh = 2048.0 * 12288;
  const MemoryEstimate estimate = Estimate(c);
  const StageMemory& first = estimate.stages[0];
  EXPECT_EQ(first.micro_batches_in_flight, 16);  // min(pp = 16, micro_batches = 64).
  EXPECT_EQ(first.layer_activation_bytes, static_cast<int64_t>(34 * sbh / 8));
  EXPECT_EQ(first.activation_bytes, static_cast<int64_t>(6 * 16 * 34 * sbh / 8));
  // Korthikanti §4.2.3: with p micro-batches in flight of L/p layers each, the first stage holds
  // the activations of L layers whatever p is: 34·sbh·L/t.
  EXPECT_EQ(first.activation_bytes, static_cast<int64_t>(96 * 34 * sbh / 8));
  // The embedding's dropout mask, sbh/t per micro-batch in flight (Korthikanti §4.3).
  EXPECT_EQ(first.embedding_activation_bytes, static_cast<int64_t>(16 * sbh / 8));
  EXPECT_EQ(first.output_activation_bytes, 0);
  // The last stage: one micro-batch; 4sbh/t·(1 + V/h) for the output layer and the fp32 logits.
  const StageMemory& last = estimate.stages[1];
  EXPECT_EQ(last.micro_batches_in_flight, 1);
  EXPECT_EQ(last.activation_bytes, static_cast<int64_t>(6 * 34 * sbh / 8));
  EXPECT_EQ(last.output_activation_bytes,
            static_cast<int64_t>(4 * sbh / 8 + 4 * 2048.0 * 51200 / 8));
  EXPECT_EQ(estimate.largest, 0u);
  EXPECT_EQ(estimate.total_bytes(), first.parameter_bytes + first.gradient_bytes +
                                        first.optimizer_bytes + first.activation_bytes +
                                        first.embedding_activation_bytes);
  // Fewer micro-batches than stages: all of them in flight.
  c.micro_batches = 4;
  EXPECT_EQ(Estimate(c).stages[0].micro_batches_in_flight, 4);
  EXPECT_EQ(Estimate(c).stages[0].activation_bytes, static_cast<int64_t>(6 * 4 * 34 * sbh / 8));
}

// Megatron-LM's interleaved schedule (schedules.py): stage i runs (pp - i - 1)·2 + (vp - 1)·pp
// warm-up forwards of chunks, then one more before its first backward.
TEST(MemoryModelTest, TheInterleavedScheduleHoldsKorthikantisFactorMoreOnTheFirstStage) {
  MemoryConfig c = Gpt3();  // pp 16, 64 micro-batches, 6 layers a stage.
  c.sequence_parallel = true;
  c.recompute = Recompute::kSelective;
  const double layer = 34 * 2048.0 * 12288 / 8;
  const MemoryEstimate one = Estimate(c);
  EXPECT_EQ(one.stages[0].chunks_in_flight, 16);  // vp 1: a chunk is a micro-batch.
  c.vp = 3;                                       // Chunks of 2 layers.
  const MemoryEstimate three = Estimate(c);
  const StageMemory& first = three.stages[0];
  // 15·2 + 2·16 + 1 = 63 = pp·vp + pp - 1 chunks: Korthikanti §4.2.3's 1 + (pp - 1)/(pp·vp) =
  // 63/48 times what 1F1B holds.
  EXPECT_EQ(first.chunks_in_flight, 63);
  EXPECT_EQ(first.activation_bytes, static_cast<int64_t>(63 * 2 * layer));
  EXPECT_DOUBLE_EQ(static_cast<double>(first.chunks_in_flight) / (16 * 3), 1 + 15.0 / 48);
  // The forwards run chunk by chunk over groups of pp micro-batches: all 16 micro-batches' three
  // chunks, then the first chunk of 15 more; 31 micro-batches' embedding output held.
  EXPECT_EQ(first.micro_batches_in_flight, 31);
  EXPECT_EQ(first.embedding_activation_bytes, static_cast<int64_t>(31 * 2048.0 * 12288 / 8));
  // The last stage: (vp - 1)·pp + 1 = 33 chunks, against 1F1B's one micro-batch.
  EXPECT_EQ(three.stages.back().chunks_in_flight, 33);
  EXPECT_GT(three.total_bytes(), one.total_bytes());
  // With as many micro-batches as stages every forward runs before the first backward.
  c.micro_batches = 16;
  EXPECT_EQ(Estimate(c).stages[0].chunks_in_flight, 48);
  EXPECT_THAT(Estimate(c).assumptions, Contains(HasSubstr("interleaved (vp=3)")));
  // Virtual stages split pipeline stages: without a pipeline there are none to interleave.
  c.pp = 1;
  StatusOr<MemoryEstimate> alone = EstimateMemory(c, nullptr);
  ASSERT_FALSE(alone.ok());
  EXPECT_THAT(alone.status().message(), HasSubstr("vp=3 needs pp > 1"));
}

// With the embedding and the loss in the split, the model's first and last chunks hold a layer
// fewer; stage 0 holds many copies of its first chunk, the last stage one of its last. 30
// layers + 2 over 8 x 2 chunks of 2; 16 micro-batches (Megatron's schedule, counted by hand).
TEST(MemoryModelTest, TheShortEndChunksCountTheirOwnLayers) {
  MemoryConfig c = Llama7B();
  c.layers = 30;
  c.pp = 8;
  c.vp = 2;
  c.micro_batches = 16;
  c.ends_in_split = true;
  const MemoryEstimate e = Estimate(c);
  ASSERT_EQ(e.stages.size(), 3u);  // Stage 0, stage 1 (a middle one), stage 7.
  const double layer = static_cast<double>(e.stages[0].layer_activation_bytes);
  // Stage 0: 7·2 + 8 + 1 = 23 chunks, 15 of them its one-layer chunk 0: 23·2 - 15 = 31 layers.
  EXPECT_EQ(e.stages[0].chunks_in_flight, 23);
  EXPECT_NEAR(static_cast<double>(e.stages[0].activation_bytes), 31 * layer, 1.0);
  // Stage 1: 21 chunks of 2 layers.
  EXPECT_NEAR(static_cast<double>(e.stages[1].activation_bytes), 42 * layer, 1.0);
  // Stage 7: 8 + 1 = 9 chunks, one of them its one-layer last chunk: 17 layers.
  EXPECT_EQ(e.stages[2].chunks_in_flight, 9);
  EXPECT_NEAR(static_cast<double>(e.stages[2].activation_bytes), 17 * layer, 1.0);
}

// Llama trains without dropout; Transformer Engine's FP8 Linear saves its input as FP8.
TEST(MemoryModelTest, NoDropoutStoresNoMasksAndFp8HalvesTheSavedGemmInputs) {
  MemoryConfig c = Llama7B();
  c.flash_attention = true;
  const double s = 4096, h = 4096, f = 11008;
  EXPECT_EQ(Estimate(c).Largest().layer_activation_bytes,
            static_cast<int64_t>(s * (18 * h + 6 * f)));
  c.dropout = false;  // The two residual masks gone: 16sbh + 6sbf.
  EXPECT_EQ(Estimate(c).Largest().layer_activation_bytes,
            static_cast<int64_t>(s * (16 * h + 6 * f)));
  EXPECT_EQ(Estimate(c).Largest().embedding_activation_bytes, 0);
  // FP8: the QKV and fc1 inputs 1 byte each (-2sbh), fc2's input 1 byte (-sbf), the projection's
  // FP8 copy beside attention's bf16 output (+sbh).
  c.fp8_gemm_inputs = true;
  EXPECT_EQ(Estimate(c).Largest().layer_activation_bytes,
            static_cast<int64_t>(s * (15 * h + 5 * f)));
  // Unfused attention without dropout keeps only the softmax output: 2·a·s²·b.
  MemoryConfig g = Gpt3();
  g.tp = 1;
  const double with_masks = LayerActivationBytes(g);
  g.dropout = false;
  const double sbh = 2048.0 * 12288;
  EXPECT_DOUBLE_EQ(with_masks - LayerActivationBytes(g), 2 * sbh + 3 * 96.0 * 2048 * 2048);
}

// MLPerf Training v5.1, Llama 3.1 405B on 512 H200s (Nebius, mlcommons/training_results_v5.1 @
// 441d65f4, nebius_h200_n64): tp 4, pp 8, cp 2, vp 8, mbs 1, 144 micro-batches a replica, the
// embedding and the loss in the split, vocab 32000, FP8, no recomputation, distributed
// optimizer over dp 8 x cp 2. Its log prints rank 0's parameters, 12,086,378,496, and its peak
// allocation, max_memory_usage 109.067 GiB (1,024 GPUs, dp 16: 104.846).
TEST(MemoryModelTest, Llama405BStageZeroIsTheLoggedCountAndNearTheLoggedPeaks) {
  MemoryConfig c = Llama7B();
  c.layers = 126;
  c.hidden = 16384;
  c.ffn = 53248;
  c.heads = 128;
  c.kv_heads = 8;
  c.seq = 8192;
  c.vocab = 32000;
  c.micro_batches = 144;
  c.tp = 4;
  c.pp = 8;
  c.vp = 8;
  c.cp = 2;
  c.dp = 8;
  c.ends_in_split = true;
  c.sequence_parallel = true;
  c.flash_attention = true;
  c.dropout = false;
  c.fp8_gemm_inputs = true;
  c.zero_stage = 1;
  c.grad_bytes = 2;  // Gradients reduced in bf16 (grad_reduce_in_fp32 false).
  const StageMemory first = Estimate(c).stages[0];
  EXPECT_EQ(first.parameters, 12086378496);
  EXPECT_EQ(first.layers, 15);
  EXPECT_EQ(first.chunks_in_flight, 71);
  const double gib = 1024.0 * 1024 * 1024;
  EXPECT_NEAR(static_cast<double>(first.total_bytes) / gib, 109.067, 0.03 * 109.067);
  c.dp = 16;
  const StageMemory wider = Estimate(c).stages[0];
  EXPECT_NEAR(static_cast<double>(wider.total_bytes) / gib, 104.846, 0.03 * 104.846);
  // The logs' difference is the optimizer's 12 bytes a parameter over 16 against 32 ranks.
  EXPECT_NEAR(static_cast<double>(first.total_bytes - wider.total_bytes) / gib, 109.067 - 104.846,
              0.001);
  // MLPerf v5.0, the same model on 512 and 8,192 H100s (NVIDIA's eos-dfw n64 and n1024,
  // training_results_v5.0 @ 0fdc28f0): tp 8, dp 4 and 64, 288 and 24 micro-batches a replica;
  // rank 0's max_memory_usage 58.817 and 50.901 GiB.
  c.tp = 8;
  c.dp = 4;
  c.micro_batches = 288;
  EXPECT_NEAR(static_cast<double>(Estimate(c).stages[0].total_bytes) / gib, 58.817, 0.03 * 58.817);
  c.dp = 64;
  c.micro_batches = 24;
  EXPECT_NEAR(static_cast<double>(Estimate(c).stages[0].total_bytes) / gib, 50.901, 0.03 * 50.901);
}

TEST(MemoryModelTest, Llama2ParameterCountsAreThePublishedOnes) {
  // Llama 2 7B: 6,738,415,616 parameters (the released checkpoint's count).
  EXPECT_EQ(Estimate(Llama7B()).model_parameters, 6738415616);
  // Llama 2 70B: grouped-query attention (8 kv heads), 68,976,648,192 parameters.
  MemoryConfig c = Llama7B();
  c.layers = 80;
  c.hidden = 8192;
  c.ffn = 28672;
  c.heads = 64;
  c.kv_heads = 8;
  EXPECT_EQ(Estimate(c).model_parameters, 68976648192);
}

TEST(MemoryModelTest, Llama7BDoesNotFitOn80GBWithoutZeroAndFitsWithTheDistributedOptimizer) {
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  MemoryConfig c = Llama7B();
  c.flash_attention = true;
  const int64_t p = 6738415616;  // One stage, tp = 1: the whole model, vocab 32000 unpadded.
  const MemoryEstimate alone = Estimate(c, &h100);
  ASSERT_EQ(alone.stages.size(), 1u);
  EXPECT_EQ(alone.Largest().parameters, p);
  EXPECT_EQ(alone.capacity_bytes, 80000000000);
  // s·b·(18h + 6f) per layer: 10sbh replicated, Q K V and the projection input 8sbh, the gated
  // MLP 6sbf; no scores (flash attention).
  const double s = 4096, h = 4096, f = 11008, v = 32000;
  const double layer = s * (18 * h + 6 * f);
  EXPECT_EQ(alone.Largest().layer_activation_bytes, static_cast<int64_t>(layer));
  const int64_t total = 18 * p + static_cast<int64_t>(32 * layer + s * h + 4 * s * h + 4 * s * v);
  EXPECT_EQ(alone.total_bytes(), total);
  EXPECT_FALSE(alone.fits);
  EXPECT_EQ(alone.shortfall_bytes, total - 80000000000);
  // ZeRO stage 1 over 8 data-parallel ranks: 2 + 4 + 12/8 bytes per parameter.
  c.dp = 8;
  c.zero_stage = 1;
  const MemoryEstimate sharded = Estimate(c, &h100);
  EXPECT_EQ(sharded.Largest().optimizer_bytes, 12 * p / 8);
  EXPECT_TRUE(sharded.fits) << sharded.total_bytes();
  EXPECT_EQ(sharded.shortfall_bytes, 0);
}

TEST(MemoryModelTest, ZeroStagesShardOptimizerThenGradientsThenWeightsOverDpTimesCp) {
  MemoryConfig c = Llama7B();
  c.dp = 4;
  c.cp = 2;  // Context-parallel ranks hold the same parameters: shards over 8.
  const int64_t p = 6738415616;
  for (int stage = 0; stage <= 3; ++stage) {
    c.zero_stage = stage;
    const StageMemory memory = Estimate(c).Largest();
    EXPECT_EQ(memory.parameters, p);
    EXPECT_EQ(memory.optimizer_bytes, stage >= 1 ? 12 * p / 8 : 12 * p) << stage;
    EXPECT_EQ(memory.gradient_bytes, stage >= 2 ? 4 * p / 8 : 4 * p) << stage;
    EXPECT_EQ(memory.parameter_bytes, stage >= 3 ? 2 * p / 8 : 2 * p) << stage;
  }
  // bf16 gradients: 2 bytes.
  c.zero_stage = 0;
  c.grad_bytes = 2;
  EXPECT_EQ(Estimate(c).Largest().gradient_bytes, 2 * p);
}

TEST(MemoryModelTest, RecomputeModesOrderTheActivations) {
  MemoryConfig c = Gpt3();
  c.sequence_parallel = true;
  const StageMemory none = Estimate(c).stages[0];
  c.recompute = Recompute::kSelective;
  const StageMemory selective = Estimate(c).stages[0];
  c.recompute = Recompute::kFull;
  const StageMemory full = Estimate(c).stages[0];
  EXPECT_GT(none.activation_bytes, selective.activation_bytes);
  EXPECT_GT(selective.activation_bytes, full.activation_bytes);
  // Full recompute stores each layer's input and, during a layer's backward, that layer whole.
  const double sbh = 2048.0 * 12288;
  EXPECT_EQ(full.activation_bytes, static_cast<int64_t>(6 * 16 * 2 * sbh / 8));
  EXPECT_EQ(full.recompute_working_bytes, none.layer_activation_bytes);
  EXPECT_EQ(none.recompute_working_bytes, 0);
  EXPECT_EQ(selective.recompute_working_bytes, 0);
}

TEST(MemoryModelTest, Gpt3OnOneNodeDoesNotFitAndSaysByHowMuch) {
  MemoryConfig c = Gpt3();
  c.pp = 1;
  c.dp = 1;
  c.micro_batches = 1;
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  const MemoryEstimate estimate = Estimate(c, &a100);
  ASSERT_EQ(estimate.stages.size(), 1u);
  EXPECT_FALSE(estimate.fits);
  // About 21.8 billion parameters per GPU at 18 bytes: 393 GB of 80.
  EXPECT_GT(estimate.Largest().parameters, 21800000000);
  EXPECT_EQ(estimate.shortfall_bytes, estimate.total_bytes() - 80000000000);
  EXPECT_GT(estimate.shortfall_bytes, 300000000000);
  // One stage holds both ends: embedding and the output layer.
  EXPECT_GT(estimate.Largest().embedding_activation_bytes, 0);
  EXPECT_GT(estimate.Largest().output_activation_bytes, 0);
  // The tied head is counted once on a single stage.
  const int64_t h = 12288, v = 51200, s = 2048;
  const int64_t layer = (12 * h * h + 7 * h) / 8 + 6 * h;
  EXPECT_EQ(estimate.Largest().parameters, 96 * layer + v * h / 8 + s * h + 2 * h);
  // The same on a GPU with more memory still does not fit, by less.
  const MemoryEstimate b200 = Estimate(c, &Gpu("B200"));
  EXPECT_LT(b200.shortfall_bytes, estimate.shortfall_bytes);
}

TEST(MemoryModelTest, VocabIsPaddedToAMultipleOf128TimesTp) {
  MemoryConfig c = Llama7B();
  c.tp = 8;
  const MemoryEstimate estimate = Estimate(c);
  EXPECT_EQ(estimate.padded_vocab, 32768);
  EXPECT_EQ(estimate.model_parameters, 6738415616);  // The model's own count is unpadded.
  const StageMemory& stage = estimate.Largest();
  // Layer per rank: q, k, v, o 4h²/8; gated MLP 3hf/8; two RMSNorm weights 2h.
  const int64_t h = 4096, f = 11008;
  EXPECT_EQ(stage.parameters, 32 * (4 * h * h / 8 + 3 * h * f / 8 + 2 * h) + 2 * h * 32768 / 8 + h);
}

TEST(MemoryModelTest, AssumptionsAreSaidOneLineEach) {
  MemoryConfig c = Gpt3();
  c.zero_stage = 1;
  c.recompute = Recompute::kFull;
  const MemoryEstimate estimate = Estimate(c, &Gpu("H100-SXM5-80GB"));
  std::string all;
  for (const std::string& line : estimate.assumptions) {
    EXPECT_EQ(line.find('\n'), std::string::npos);
    all += line + "\n";
  }
  EXPECT_THAT(all, HasSubstr("Korthikanti et al. 2022"));
  EXPECT_THAT(all, HasSubstr("ZeRO stage 1 shards the optimizer states"));
  EXPECT_THAT(all, HasSubstr("over dp*cp = 8 ranks"));
  EXPECT_THAT(all, HasSubstr("min(pp - i, micro_batches)"));
  EXPECT_THAT(all, HasSubstr("full recompute: the layer being recomputed"));
  EXPECT_THAT(all, HasSubstr("its own copy of the tied embedding"));
  EXPECT_THAT(all, HasSubstr("capacity: H100-SXM5-80GB's HBM"));
  EXPECT_THAT(all, HasSubstr("not counted:"));
  // No GPU: capacity unknown, never "does not fit".
  const MemoryEstimate unknown = Estimate(c);
  EXPECT_FALSE(unknown.capacity_bytes.has_value());
  EXPECT_TRUE(unknown.fits);
  EXPECT_EQ(unknown.assumptions.back(), "capacity: no GPU given");
}

TEST(MemoryModelTest, BadConfigurationsAreOneErrorNamingTheValue) {
  auto error = [](auto change) {
    MemoryConfig c = Gpt3();
    change(&c);
    StatusOr<MemoryEstimate> estimate = EstimateMemory(c, nullptr);
    EXPECT_FALSE(estimate.ok());
    return estimate.ok() ? std::string() : estimate.status().message();
  };
  EXPECT_EQ(error([](MemoryConfig* c) { c->hidden = 0; }), "memory model: hidden=0 must be > 0");
  EXPECT_EQ(error([](MemoryConfig* c) { c->tp = -2; }), "memory model: tp=-2 must be > 0");
  EXPECT_EQ(error([](MemoryConfig* c) { c->zero_stage = 4; }), "memory model: zero=4 must be 0..3");
  EXPECT_EQ(error([](MemoryConfig* c) { c->kv_heads = 97; }),
            "memory model: kv_heads=97 must be from 0 (= heads) to heads=96");
  EXPECT_EQ(error([](MemoryConfig* c) { c->seq = 3000000000; }),
            "memory model: seq=3000000000 is beyond 2147483647");
  EXPECT_EQ(error([](MemoryConfig* c) {
              c->hidden = 2000000000;
              c->heads = 1;
            }),
            "memory model: more than 10^15 parameters (hidden=2000000000, ffn=49152, "
            "layers=96, vocab=51200)");
  EXPECT_THAT(error([](MemoryConfig* c) {
                c->seq = 2000000000;
                c->mbs = 2000000000;
                c->tp = 1;
              }),
              HasSubstr("beyond what is countable"));
}

}  // namespace
}  // namespace lumos::modeler::models
