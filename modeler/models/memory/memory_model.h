// Design: GPU memory per rank of a GPT-style transformer trained the Megatron-LM way (tensor,
// pipeline, context and data parallelism, mixed precision, Adam, ZeRO / distributed optimizer,
// activation recomputation), against the GPU's HBM capacity. Pure arithmetic of the
// configuration: no trace is read. Every term is in bytes; `assumptions` says in words what
// the figures assumed, one line each, for a report to print.
//
// Parameters per layer (h hidden, f ffn, d = h/heads, k = kv_heads·d; Narayanan et al. 2021,
// "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM", §5.1:
// 12h² + 13h per layer for f = 4h):
//   attention  QKV h·(h + 2k) + bias (h + 2k), projection h² + bias h
//   MLP        fc1 h·f (2·h·f gated: gate and up) + bias f (2f), fc2 f·h + bias h
//   norms      2 per layer, weight h + bias h (no biases: RMSNorm, weight only)
// Tensor parallelism (t = tp) splits the QKV and fc1 weights and biases by columns and the
// projection and fc2 weights by rows; row-parallel biases and norms are replicated. The word
// embedding (vocab padded to a multiple of vocab_multiple·t, Megatron's
// --make-vocab-size-divisible-by) is split by vocabulary over t; learned position embeddings
// (s·h) are replicated. Stage 0 holds the embedding, the last stage the final norm and the LM
// head (its own copy of the word embedding when pp > 1 even if tied, as Megatron keeps one).
//
// Bytes per parameter: weights param_bytes (2, bf16), gradients grad_bytes (4: Megatron's fp32
// main grads; 2 for bf16), optimizer optimizer_bytes (12: Adam's fp32 master weights, momentum
// and variance). ZeRO stage 1 (Megatron's distributed optimizer) shards the optimizer states
// over the dp·cp ranks holding copies of the same parameters, stage 2 also the gradients,
// stage 3 also the weights (Rajbhandari et al. 2020, "ZeRO", §5): 2 + 4 + 12/D for stage 1,
// Megatron's "6 + 12/d" (docs, "Distributed Optimizer").
//
// Activations per layer per micro-batch, 16-bit, with dropout masks (Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", §4, Table 2):
//   tensor parallel, no SP:      s·b·h·(10 + 24/t + 5·a·s/(h·t))
//   tensor + sequence parallel:  s·b·h/t·(34 + 5·a·s/h)
//   selective recompute:         s·b·h·(10 + 24/t)        with SP: s·b·h·34/t
//   full recompute:              2·s·b·h (the layer's input) with SP: 2·s·b·h/t
// computed from its parts (§4.1) so that f ≠ 4h, GQA and a gated MLP change what they change:
// replicated without SP 10·s·b·h (2 norm inputs 4, QKV input 2, fc1 input 2, two dropout masks
// 2); split over t: Q 2sbh, K and V 2sbk each, the projection input 2sbh, the MLP 4·s·b·f (GeLU
// input and fc2 input; gated 6·s·b·f: fc1's two halves and fc2's input); attention scores
// 5·a·s²·b (softmax output 2, dropout mask 1, dropout output 2), none with flash attention or
// selective recompute. With f = 4h, k = h, not gated these are exactly the paper's 10 + 24/t +
// 5as/(ht). Without dropout (Llama; PyTorch's dropout at p = 0 returns its input) no masks: 8
// replicated, scores 2·a·s²·b. FP8 (Transformer Engine's Linear saves its input quantized, or
// its transpose, when the weight gradient runs in FP8): the QKV and fc1 inputs 1·s·b·h each,
// fc2's 1·s·b·f, and the projection's FP8 input 1·s·b·h beside attention's bf16 output.
// Context parallelism divides s by cp (each rank's queries; the score term is a·(s/cp)·s).
// Full recompute also holds, while a layer's backward runs, that one layer's
// activations (recompute_working_bytes).
// Pipeline (1F1B, Narayanan et al. 2021 §2.2; Korthikanti §4.2.3): stage i holds the
// activations of min(pp - i, micro_batches) micro-batches of its layers: stage 0 the most,
// min(pp, micro_batches). Interleaved (vp > 1 chunks of layers / vp layers a stage, Megatron-LM's
// schedules.py): stage i runs (pp - i - 1)·2 + (vp - 1)·pp warm-up forwards of chunks and one
// more before its first backward, so it holds min(that + 1, micro_batches·vp) chunks at its
// peak; for stage 0 pp·vp + pp - 1 chunks, Korthikanti §4.2.3's pp·(1 + (pp - 1)/(pp·vp))
// micro-batches of its layers, the factor Megatron's theoretical_memory_usage.py applies. Each
// held chunk counts its own layers: with ends_in_split the model's first and last chunks hold
// one layer fewer, and stage 0 holds many copies of its first chunk, the last stage one of its
// last. vp > 1 needs pp > 1.
// Embedding and output (Korthikanti §4.3): the embedding's dropout mask s·b·h (/t with SP; none
// without dropout) per micro-batch whose first chunk is in flight on stage 0 (the forwards run
// in groups of pp micro-batches, chunk by chunk); on the last stage, for one micro-batch, the final
// norm's and the LM head's inputs 4·s·b·h (/t with SP) and the fp32 logits 4·s·b·V/t for the loss.
// Not counted: CUDA context, NCCL and cuBLAS workspaces, allocator fragmentation, temporary
// buffers (said in `assumptions`). Experts (MoE, ep) are not modelled: a dense model.
// Threading: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace lumos::modeler::models {

struct GpuSpec;

enum class Recompute : uint8_t { kNone, kSelective, kFull };
const char* RecomputeName(Recompute recompute);  // "none", "selective", "full".

struct MemoryConfig {
  // Model.
  int64_t layers = 0;             // Transformer layers, whole model.
  int64_t hidden = 0;             // h.
  int64_t ffn = 0;                // f, the MLP's inner width.
  int64_t heads = 0;              // a.
  int64_t kv_heads = 0;           // Key/value heads (GQA); 0: heads.
  int64_t seq = 0;                // s, tokens per sample.
  int64_t mbs = 0;                // b, samples per micro-batch.
  int64_t micro_batches = 1;      // Per iteration per data-parallel rank.
  int64_t vocab = 0;              // V, before padding.
  bool gated_mlp = false;         // SwiGLU-style MLP (Llama): fc1 is 2·f wide.
  bool biases = true;             // Linear biases and LayerNorm biases (false: Llama, RMSNorm).
  bool tied_embeddings = true;    // The LM head shares the word embedding.
  bool learned_positions = true;  // GPT's s·h position embedding (false: rotary).
  bool flash_attention = false;   // Attention scores never stored (as selective recompute).
  bool dropout = true;            // Dropout masks stored (GPT's; Llama trains without dropout).
  // Transformer Engine's FP8 training: each GEMM saves its input for the weight gradient as FP8
  // (1 byte an element), the projection's beside the bf16 attention output attention keeps.
  bool fp8_gemm_inputs = false;
  int64_t vocab_multiple = 128;  // Megatron's --make-vocab-size-divisible-by (times tp).
  // Parallelism.
  int64_t dp = 1, tp = 1, pp = 1, cp = 1;
  // Virtual stages (model chunks) per pipeline stage: Megatron's interleaved schedule when > 1,
  // which holds more activations than 1F1B (see EstimateMemory).
  int64_t vp = 1;
  bool sequence_parallel = false;
  // The embedding and the loss each count as a layer in the pipeline split (Megatron's
  // account_for_*_in_pipeline_split): (layers + 2) / pp a stage, the first and last one fewer.
  bool ends_in_split = false;
  // Training.
  int zero_stage = 0;  // 0..3.
  Recompute recompute = Recompute::kNone;
  int64_t param_bytes = 2;
  int64_t grad_bytes = 4;
  int64_t optimizer_bytes = 12;
};

struct StageMemory {
  int64_t stage = 0;       // Pipeline stage index.
  int64_t layers = 0;      // Its transformer layers.
  int64_t parameters = 0;  // Held by one GPU of the stage (its tensor-parallel shard).
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t layer_activation_bytes = 0;   // One layer, one micro-batch, as stored (recompute mode).
  int64_t micro_batches_in_flight = 0;  // Whose activations it holds at its peak (any chunk).
  // Its model chunks (layers / vp each) whose activations are held at its peak; with vp = 1 one
  // per micro-batch in flight.
  int64_t chunks_in_flight = 0;
  int64_t activation_bytes = 0;            // The held chunks' layers × layer_activation_bytes.
  int64_t recompute_working_bytes = 0;     // Full recompute: one layer's activations, recomputed.
  int64_t embedding_activation_bytes = 0;  // Stage 0: the embedding's dropout masks.
  int64_t output_activation_bytes = 0;     // Last stage: final norm, LM head input, fp32 logits.
  int64_t total_bytes = 0;                 // The sum of the byte terms above.
};

struct MemoryEstimate {
  int64_t model_parameters = 0;  // The whole model (tp = 1, vocab unpadded, a tied head once).
  int64_t padded_vocab = 0;
  // Stage 0 and the last stage (one entry when pp == 1), and with ends_in_split and pp > 2 stage
  // 1 between them (a middle stage holds a layer more); front() and back() are the end stages.
  std::vector<StageMemory> stages;
  size_t largest = 0;                     // Index into stages of the one needing the most memory.
  std::optional<int64_t> capacity_bytes;  // The GPU's HBM (spec hbm_gb); none: unknown.
  bool fits = true;                       // total <= capacity (true when capacity is unknown).
  int64_t shortfall_bytes = 0;            // total - capacity when it does not fit, else 0.
  std::vector<std::string> assumptions;   // One line each.

  const StageMemory& Largest() const { return stages[largest]; }
  int64_t total_bytes() const { return Largest().total_bytes; }
};

// Errors (one line naming the value): a size or degree <= 0, zero_stage outside 0..3, byte
// counts < 0, a total beyond int64. `gpu` may be null (capacity unknown).
StatusOr<MemoryEstimate> EstimateMemory(const MemoryConfig& config, const GpuSpec* gpu);

// One layer's stored activations for one micro-batch on one GPU, in bytes (before rounding), as
// EstimateMemory counts them (the formula above).
double LayerActivationBytes(const MemoryConfig& config);

}  // namespace lumos::modeler::models
