// Design: the work one GPU of a layout does (issue 25), as ordered ops with their modelled
// durations, so the fast path (step_model.h) adds them up and the slow path (pipeline_graph.h)
// lays the same ops out as a graph and simulates it: the two differ only in how the schedule,
// the bubble and the overlaps are found, never in what an op costs.
// Per layer and micro-batch (one GPU of a stage, ranks symmetric within it):
//   forward  QKV GEMM (T, (h + 2 kv d)/tp, h), fused causal attention, output projection
//            (T, h, h/tp), its TP collective, the attention block's elementwise share, fc1
//            (T, f/tp, x2 gated, h), fc2 (T, h, f/tp), its TP collective, the MLP block's
//            elementwise share; elementwise and norms move 2 x the stored activations' bytes
//            (models/memory), split evenly between the two blocks;
//   backward the reverse, each GEMM its input and weight gradient, attention backward, the
//            TP collectives again, the elementwise traffic x2; recomputation first (full: the
//            forward again; selective: the attention forward);
//   attention  fused (flash) from the kernel model; with flash_attention=0 as Megatron-LM did
//            before FlashAttention: two batched GEMMs and a softmax (and with dropout, its
//            dropout) over the stored s x s scores (pass_work.cc, TimeUnfusedAttention);
//   FP8      with FP8 GEMMs each GEMM's input cast with its transpose before the forward, its
//            output gradient before the backward (2 bytes read, 2 written an element; one op a
//            pass, one kernel a GEMM); with delayed scaling, at the end of each model chunk's
//            forward and of its backward the amaxes its casts recorded are all-reduced (MAX)
//            over the stage's tp x dp x cp ranks on the compute stream: Transformer Engine
//            reduces them as the fp8_autocast around Megatron's TransformerBlock exits, and
//            once a backward of that region (tp_only_amax_red=1: over tp x cp only);
//   TP       an all-reduce of T x h x 2 bytes after each block, or with sequence parallelism
//            an all-gather before it and a reduce-scatter after it; with tp_overlap the pass
//            waits only for what the GEMMs do not hide (one op, the longer of the two).
// Context parallelism (cp > 1): a GPU's share of a micro-batch is s / cp tokens (every GEMM,
//   collective and send sized by it); attention is Transformer Engine's ring (its own block
//   causal, then cp - 1 steps against the other GPUs' keys and values, each the longer of its
//   attention and its block's transfer, NVLink while tp x cp fits a node);
// The first stage adds the embedding to both passes; the last the LM head GEMM (T, V/tp, h),
// its two backward GEMMs and the loss (4 passes over the fp32 logits, half in each pass).
// Threading: pure functions over a const GptCosts.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "modeler/models/memory/memory_model.h"
#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/synth/gpt_costs.h"

namespace lumos::modeler::plan {

// Compute slowed by communication running beside it on the same GPU (the two share the SMs,
// HBM and L2): the mean slowdown of a kernel while overlapped, 18.9 %, measured over GPT and
// Llama training steps on A100, H100, MI250 and MI210 ("Characterizing Compute-Communication
// Overlap in GPU-Accelerated Distributed Deep Learning: Performance and Power Implications",
// arXiv:2507.03114, 2025; its worst case 40 %). A named assumption from others' measurements,
// not fitted here; NVIDIA/nccl#1428 shows an A100 GEMM 1.18 -> 2.08 ms beside an all-gather.
inline constexpr double kOverlapComputeSlowdown = 0.189;

// Host time a training step spends with its GPUs idle, which no GPU work hides: the framework's
// step outside any CUDA graph (the distributed optimizer's per-tensor launches, the gradient
// norm's synchronisation, the callbacks). Calibrated, not derived: the median residual of the
// calibration rows, MLPerf Training v5.1 Llama 3.1 8B on B200 of one submitter (University of
// Florida: 8-256 GPUs, NeMo with a full-iteration CUDA graph; the B200's measured GEMM tables,
// data/costs), with this term at 0 (scripts/calibrate-host-step.sh); scored on the other
// submitters, GPUs and models (docs/validation.md, "Host time a step").
inline constexpr double kHostStepNs = 14.1e6;

struct PlanSetup {
  const models::GpuSpec* gpu = nullptr;
  models::NetworkSpec net;
  models::DType gemm_dtype = models::DType::kBf16;
  int64_t gpus_per_node = 8;
  // A kernel entirely beside communication takes (1 + this) x its time; 0: overlap is free.
  double overlap_slowdown = kOverlapComputeSlowdown;
  // Added once a step, after everything (kHostStepNs: what `estimate --model` and `search`
  // default to). 0 here: a traced job's re-partitioning keeps the trace's own host time.
  double host_step_ns = 0;
};

enum class OpClass : uint8_t { kGemm, kAttention, kElementwise, kTensorParallel };

struct PlanOp {
  const char* name = "";  // A static string: graph nodes view it.
  double ns = 0;
  OpClass cls = OpClass::kGemm;
};

struct PassWork {
  std::vector<PlanOp> ops;
  double ns() const;
};

struct LayoutWork {
  PassWork layer_forward, layer_backward;  // One layer, one micro-batch.
  PassWork first_forward, first_backward;  // The first stage's extra work (embedding).
  PassWork last_forward, last_backward;    // The last stage's (LM head, loss).
  // Once a virtual stage's pass (one model chunk, one micro-batch), after its layers: FP8
  // delayed scaling's amax all-reduce (LayoutWorkOf); empty otherwise.
  PassWork chunk_forward, chunk_backward;
  // One layer's totals per micro-batch, forward and backward together, before overlap.
  double gemm_ns = 0, attention_ns = 0, elementwise_ns = 0, tp_comm_ns = 0;
  double p2p_ns = 0;                 // One micro-batch's activation to the next stage.
  int64_t layer_parameters = 0;      // One layer's weights on one GPU (its TP shard).
  int64_t embedding_parameters = 0;  // The word embedding's shard (first stage; the last again).
  int64_t dp_nodes = 1;              // Nodes a data-parallel group spans.
  // Tied embeddings (gpt) with pp > 1: the word embedding's gradient all-reduced between the
  // first and the last stage (the LM head's copy) after the data-parallel reduction, before
  // the optimizer; 0 otherwise (LayoutWorkOf).
  double embedding_grad_ns = 0;
  models::DType gemm_dtype = models::DType::kBf16;
  // Bytes an FP8 cast moves an element (with its transpose): 4 (delayed scaling), 6 (current
  // scaling's amax pass first); 0 without FP8 GEMMs.
  double fp8_cast_bytes = 0;
  models::MemoryEstimate memory;
};

StatusOr<LayoutWork> LayoutWorkOf(const ModelSpec& spec, const Layout& layout,
                                  const GptCosts& costs, const PlanSetup& setup);

// The modelled time of `op` of `bytes` per rank over `ranks` ranks on `nodes` nodes (0 when
// there is nobody to talk to).
StatusOr<double> TimeCollective(const GptCosts& costs, schema::CollectiveOp op, double bytes,
                                int64_t ranks, int64_t nodes);

// Megatron-LM's gradient bucket, in parameters: max(40M, 1M x dp x cp) (its training loop and
// distributed_data_parallel.py since April 2024: larger data-parallel groups get larger
// buckets, so that each collective stays bandwidth-bound). Buckets close at a layer's end here,
// where Megatron closes them at a parameter's, so a layer larger than a bucket is one bucket.
// Every chunk of every stage is bucketed here; Megatron-LM's training loop buckets only the
// first chunk of pipeline rank 0 (the others' reductions are off the critical path, one
// bucket each), NeMo 1's apex optimizer (MLPerf's GPT-3) every chunk at 100 MiB of gradients.
int64_t GradientBucketParameters(const Layout& layout);

// One gradient bucket of a virtual stage: its parameters and its items in backward order (the
// LM head -1, layers from the last, the word embedding -2).
struct GradientBucket {
  double parameters = 0;
  std::vector<int64_t> items;
};

// Virtual stage v's gradient buckets (of `chunk_layers` layers) in backward order: the head on
// the last virtual stage (when there are several), its layers from the last, the embedding on
// virtual stage 0. Both paths reduce them one collective each (the fast path adds them up, the
// slow path launches each as its last backward ends).
std::vector<GradientBucket> ChunkGradientBuckets(const LayoutWork& work, const Layout& layout,
                                                 int64_t chunk_layers, int64_t v);

// The Adam step over the GPU's `shard` of parameters (32 bytes each: fp32 weight, gradient,
// two moments); with FP8 GEMMs (`fp8_cast_bytes` > 0, LayoutWork's) the stage's updated weights
// cast to FP8 with their transposes once a step (Transformer Engine keeps them across
// micro-batches).
StatusOr<double> TimeOptimizer(const GptCosts& costs, double shard, double stage_parameters,
                               double fp8_cast_bytes);

}  // namespace lumos::modeler::plan
