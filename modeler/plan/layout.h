// Design: how a model is laid out on GPUs (issue 25): tensor (tp), pipeline (pp, with vp
// virtual stages per GPU for the interleaved schedule), data parallel (dp) degrees, the
// micro-batch size and the global batch, sequence parallelism, activation recomputation and the
// ZeRO stage (1 = Megatron's distributed optimizer). Ranks are ordered tp fastest, then dp,
// then pp (Megatron-LM's default), so a tensor group sits in one node and pipeline neighbours
// are tp x dp ranks apart.
// CheckLayout names the first rule a layout breaks (the command exits 2 on it):
//   tp divides heads (and kv_heads, ffn), tp <= GPUs per node (its collectives stay on NVLink);
//   pp <= layers and divides them; vp > 1 needs pp > 1, vp dividing layers / pp and the
//   micro-batches a multiple of pp (Megatron's interleaved schedule);
//   gbs a multiple of dp x mbs; sequence parallelism needs tp > 1; zero in 0..3.
// Threading: plain values and pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/models/memory/memory_model.h"
#include "modeler/plan/model_spec.h"

namespace lumos::modeler::plan {

struct Layout {
  int64_t tp = 1, pp = 1, dp = 1, vp = 1;
  // Context parallelism (Megatron-core, Transformer Engine's ring attention): each micro-batch's
  // sequence split over cp GPUs (two chunks each, balanced for the causal mask), the keys and
  // values passed round the ring while attention runs; the gradients reduced over dp x cp.
  int64_t cp = 1;
  int64_t mbs = 1;
  int64_t gbs = 0;  // Sequences per step, all replicas; 0: dp x mbs (one micro-batch).
  bool sequence_parallel = false;
  models::Recompute recompute = models::Recompute::kNone;
  int zero = 0;
  // Tensor-parallel collectives overlapped with the layer's GEMMs (Transformer Engine's
  // userbuffers, NeMo's ub_tp_comm_overlap): the layer waits for the longer of the two.
  bool tp_overlap = false;
  int64_t grad_sync_bytes = 4;  // Bytes a gradient element is reduced in (2: bf16, 4: fp32).
  // Gradients reduced while the backward still runs (Megatron-core's overlap_grad_reduce, PyTorch
  // DDP's buckets) and ZeRO 1-2's weights gathered behind the next forward; 0: both after the
  // backward and the optimizer, exposed (Megatron-LM before its 2023 DDP).
  bool dp_overlap = true;
  // Pipeline sends overlapped with the next pass (Megatron-LM's overlap_p2p_comm, its training
  // default since 2023, and MLPerf's; interleaved schedules only): a pass's send and the next
  // pass's receive are waited for before the next pass of the same direction. 0, and always
  // with vp 1: every exchange blocks the compute stream (batch_isend_irecv, then a device
  // synchronize). pipeline_graph.h.
  bool p2p_overlap = true;
  // Fused (flash) attention; 0: Megatron-LM's attention before FlashAttention (2022): two
  // batched GEMMs with the scores written, a fused scale-mask-softmax and dropout over them.
  bool flash_attention = true;
  // The embedding and the loss each count as a layer when the layers are split over the
  // pipeline (Megatron's account_for_embedding_in_pipeline_split and
  // account_for_loss_in_pipeline_split, as its Llama 3.1 405B recipes set): (layers + 2) / (pp
  // vp) a virtual stage, the first and the last one layer fewer (VirtualStageLayers).
  bool ends_in_split = false;
  // FP8 with current (per-tensor, "tensorwise") scaling, as Megatron-Bridge's FP8-CS recipes
  // train: each tensor's amax is taken in a pass of its own before it is cast (6 bytes an
  // element where delayed scaling's cast moves 4), and a sequence-parallel input's amax is
  // all-reduced over the TP group. 0: delayed scaling (the amax of earlier steps; MLPerf's).
  // Only with --dtype fp8.
  bool fp8_current_scaling = false;
  // The weights all-gathered in FP8 (Megatron's fp8_param_gather, MLPerf's FP8_PARAMS): ZeRO's
  // gathers move 1 byte a parameter, not 2. Only with --dtype fp8.
  bool fp8_param_gather = false;
  // Delayed scaling's amaxes all-reduced over the tensor-parallel (and context-parallel) group
  // alone (Megatron's tp_only_amax_red), not over all the stage's tp x dp x cp ranks (its
  // default, and Transformer Engine's reduce_amax). Only with --dtype fp8.
  bool tp_only_amax_reduction = false;
  // Without sequence parallelism, each of a stage's tp ranks sends 1/tp of the activation to the
  // next stage and the receivers all-gather it over NVLink (Megatron-LM's
  // scatter_gather_tensors_in_pipeline, Narayanan et al. SC'21 §4.1, its default then; with
  // sequence parallelism the activation is split already). 0: each rank sends all of it.
  bool p2p_scatter_gather = false;

  // Bytes a weight moves in ZeRO's all-gathers.
  double gather_bytes() const { return fp8_param_gather ? 1.0 : 2.0; }

  // Field by field (the search's shortlist keys its simulations by layout).
  auto operator<=>(const Layout&) const = default;

  int64_t gpus() const { return tp * cp * pp * dp; }
  // The ranks holding copies of the same weights: their gradients are reduced together and
  // ZeRO shards over them.
  int64_t gradient_ranks() const { return dp * cp; }
  int64_t global_batch() const { return gbs > 0 ? gbs : dp * mbs; }
  int64_t micro_batches() const { return global_batch() / (dp * mbs); }
};

// The transformer layers of virtual stage v (0..pp vp - 1; CheckLayout: they split evenly).
int64_t VirtualStageLayers(const ModelSpec& spec, const Layout& layout, int64_t v);
// Those of pipeline stage s (all its virtual stages).
int64_t StageLayers(const ModelSpec& spec, const Layout& layout, int64_t s);

// "tp=4,pp=8,dp=16,vp=2,mbs=1,gbs=2048,sequence_parallel=1,recompute=full,zero=1,
// tp_overlap=1,dp_overlap=0,p2p_overlap=0,grad_sync_bytes=2,cp=2,ends_in_split=1,
// p2p_scatter_gather=1", applied
// over `layout` (later keys win).
Status ApplyLayoutSettings(std::string_view text, Layout* layout);

// The first rule the layout breaks, as one line; ok when it can exist.
Status CheckLayout(const ModelSpec& spec, const Layout& layout, int64_t gpus_per_node);

// "tp=4 pp=8 dp=16 mbs=1 gbs=2048 sp recompute=none zero=1" (vp when > 1).
std::string LayoutText(const Layout& layout);

struct SearchSpace {
  int64_t gpus = 0;
  int64_t gbs = 0;  // Sequences per step; 0: one micro-batch per replica (dp x mbs).
  int64_t gpus_per_node = 8;
  std::vector<int64_t> mbs = {1, 2, 4, 8};
  // Virtual stages to try; empty: every count Megatron's interleaved schedule accepts (each
  // divisor of layers / pp, so GPT-3's 12 layers a stage try 1, 2, 3, 4, 6 and 12).
  std::vector<int64_t> vp;
  // Context-parallel degrees to try; empty: fixed.cp alone.
  std::vector<int64_t> cp;
  bool recompute = true;   // Try selective and full recomputation too.
  bool zero = true;        // Try ZeRO 1 (Megatron's distributed optimizer), 2 and 3 too.
  bool tp_overlap = true;  // Where tp > 1, try Transformer Engine's TP overlap too.
  // The settings no search enumerates (grad_sync_bytes, dp_overlap, p2p_overlap,
  // flash_attention, cp, ends_in_split), taken from here for every layout (`search --set`).
  Layout fixed;
};

// `search --set`'s keys: what the search does not enumerate; any other key is an error naming
// it (the search tries every value of tp, pp, dp, vp, mbs, recompute, zero and TP overlap; dp
// is what the GPUs leave: N / (tp cp pp)).
Status ApplyFixedSettings(std::string_view text, Layout* layout);

// Every layout of `space.gpus` GPUs that CheckLayout accepts, with sequence parallelism
// whenever tp > 1 (it only saves memory and turns each all-reduce into a reduce-scatter and
// an all-gather of the same traffic), each such layout with and without TP overlap (which
// needs sequence parallelism; it is not free: it costs the GEMMs, pass_work.h).
std::vector<Layout> EnumerateLayouts(const ModelSpec& spec, const SearchSpace& space);

// Why EnumerateLayouts finds none for `space` (call it when it does): the rule the plainest
// candidate breaks (tp 1, pp 1, the first cp and mbs asked for, every GPU data-parallel), named
// with that layout; or that no cp asked for divides the GPUs.
Status WhyNoLayout(const ModelSpec& spec, const SearchSpace& space);

}  // namespace lumos::modeler::plan
