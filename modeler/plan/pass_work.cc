#include "modeler/plan/pass_work.h"

#include <algorithm>

#include "modeler/models/collectives/collective_class.h"

namespace lumos::modeler::plan {
namespace {

using models::DType;
using schema::CollectiveOp;

struct Gemm3 {
  int64_t m, n, k;
};

// Forward, and input plus weight gradient, times of a row-major GEMM (m = tokens).
struct GemmTimes {
  double forward = 0, backward = 0;
};

StatusOr<GemmTimes> TimeGemm(const GptCosts& costs, const Gemm3& g, DType dtype) {
  GemmTimes t;
  LUMOS_ASSIGN_OR_RETURN(int64_t f, costs.Gemm(g.m, g.n, g.k, dtype));
  LUMOS_ASSIGN_OR_RETURN(int64_t dx, costs.Gemm(g.m, g.k, g.n, dtype));
  LUMOS_ASSIGN_OR_RETURN(int64_t dw, costs.Gemm(g.k, g.n, g.m, dtype));
  t.forward = static_cast<double>(f);
  t.backward = static_cast<double>(dx + dw);
  return t;
}

// What Transformer Engine's userbuffer overlap of the TP collectives (tp_overlap=1) costs the
// GEMMs, from what each of its methods does, as the MLPerf v3.1 GPT-3 submission configured them
// (mlcommons/training_results_v3.1 @ d06288b2, NVIDIA/benchmarks/gpt3/implementations/pytorch/
// conf/tp_overlap/h100tp4pp8mbs1.yaml: an input, read, not fitted; the step times it is scored
// on are not used):
// - ring_exchange, the all-gathers (qkv and fc1 forward, projection and fc2 input gradients): the
//   GEMM runs as tp chunks of m/tp rows while the next chunk moves on the copy engines; fc2's
//   input gradient aggregates two chunks a GEMM;
// - pipeline, the reduce-scatters after the projection and fc2 forward: 4 chunks of m/4 rows, on
//   the SMs the communication kernel leaves (it takes 24 and 4);
// - bulk, qkv's and fc1's backward (the input's all-gather for the weight gradient, the input
//   gradient's reduce-scatter): a communication kernel on 2 to 8 SMs beside a GEMM that keeps
//   them all, costed as that many SMs fewer for the whole GEMM.
struct TpOverlapConfig {
  int pipeline_projection_sms = 24, pipeline_fc2_sms = 4, pipeline_splits = 4;
  int bulk_qkv_dgrad_sms = 4, bulk_qkv_wgrad_sms = 8, bulk_fc1_dgrad_sms = 2,
      bulk_fc1_wgrad_sms = 4;
  int fc2_dgrad_aggregate = 2;
};

// Time of `g` run as `chunks` GEMMs of m / chunks rows, on `sms - busy` of the GPU's SMs.
StatusOr<double> ChunkedGemm(const GptCosts& costs, const Gemm3& g, int64_t chunks, int sms,
                             int busy, DType dtype) {
  chunks = std::clamp<int64_t>(chunks, 1, g.m);
  LUMOS_ASSIGN_OR_RETURN(int64_t one, costs.Gemm(g.m / chunks, g.n, g.k, dtype));
  const double slower = sms > busy && busy > 0 ? static_cast<double>(sms) / (sms - busy) : 1.0;
  return static_cast<double>(one) * static_cast<double>(chunks) * slower;
}

struct BlockGemmTimes {
  GemmTimes qkv, projection, fc1, fc2;
};

StatusOr<BlockGemmTimes> TimeOverlappedGemms(const GptCosts& costs, const Gemm3& qkv,
                                             const Gemm3& projection, const Gemm3& fc1,
                                             const Gemm3& fc2, int64_t tp, int sms, DType dtype) {
  const TpOverlapConfig c;
  auto input_gradient = [](const Gemm3& g) { return Gemm3{g.m, g.k, g.n}; };
  auto weight_gradient = [](const Gemm3& g) { return Gemm3{g.k, g.n, g.m}; };
  BlockGemmTimes t;
  LUMOS_ASSIGN_OR_RETURN(t.qkv.forward, ChunkedGemm(costs, qkv, tp, sms, 0, dtype));
  LUMOS_ASSIGN_OR_RETURN(
      double qkv_dx, ChunkedGemm(costs, input_gradient(qkv), 1, sms, c.bulk_qkv_dgrad_sms, dtype));
  LUMOS_ASSIGN_OR_RETURN(
      double qkv_dw, ChunkedGemm(costs, weight_gradient(qkv), 1, sms, c.bulk_qkv_wgrad_sms, dtype));
  t.qkv.backward = qkv_dx + qkv_dw;
  LUMOS_ASSIGN_OR_RETURN(t.projection.forward, ChunkedGemm(costs, projection, c.pipeline_splits,
                                                           sms, c.pipeline_projection_sms, dtype));
  LUMOS_ASSIGN_OR_RETURN(double projection_dx,
                         ChunkedGemm(costs, input_gradient(projection), tp, sms, 0, dtype));
  LUMOS_ASSIGN_OR_RETURN(double projection_dw,
                         ChunkedGemm(costs, weight_gradient(projection), 1, sms, 0, dtype));
  t.projection.backward = projection_dx + projection_dw;
  LUMOS_ASSIGN_OR_RETURN(t.fc1.forward, ChunkedGemm(costs, fc1, tp, sms, 0, dtype));
  LUMOS_ASSIGN_OR_RETURN(
      double fc1_dx, ChunkedGemm(costs, input_gradient(fc1), 1, sms, c.bulk_fc1_dgrad_sms, dtype));
  LUMOS_ASSIGN_OR_RETURN(
      double fc1_dw, ChunkedGemm(costs, weight_gradient(fc1), 1, sms, c.bulk_fc1_wgrad_sms, dtype));
  t.fc1.backward = fc1_dx + fc1_dw;
  LUMOS_ASSIGN_OR_RETURN(
      t.fc2.forward, ChunkedGemm(costs, fc2, c.pipeline_splits, sms, c.pipeline_fc2_sms, dtype));
  LUMOS_ASSIGN_OR_RETURN(
      double fc2_dx, ChunkedGemm(costs, input_gradient(fc2),
                                 std::max<int64_t>(1, tp / c.fc2_dgrad_aggregate), sms, 0, dtype));
  LUMOS_ASSIGN_OR_RETURN(double fc2_dw, ChunkedGemm(costs, weight_gradient(fc2), 1, sms, 0, dtype));
  t.fc2.backward = fc2_dx + fc2_dw;
  return t;
}

// One block's tensor-parallel collectives (before and after it) for one pass.
struct BlockCollectives {
  PlanOp before, after;  // ns 0: none.
};

// Attention as Megatron-LM computed it before FlashAttention: per head the scores Q K^T
// (s x s x d) and the context A V (s x d x s) as batched GEMMs (costed as one GEMM of the same
// FLOPs and output: m = batch x heads x s), the whole s x s score matrix in 16 bits, masked
// but not skipped; a fused scale-mask-softmax (read and write) and, with dropout, dropout
// (read, write, a byte of mask) over it: 9 bytes an element forward, 11 backward (the dropout's
// and the softmax's gradients); without, 4 and 6; backward each GEMM's two gradients.
StatusOr<GemmTimes> TimeUnfusedAttention(const GptCosts& costs, const models::AttentionShape& a,
                                         bool dropout) {
  const int64_t rows = a.batch * a.heads * a.seq_q;
  const double scores =
      static_cast<double>(a.batch * a.heads) * static_cast<double>(a.seq_q * a.seq_q);
  LUMOS_ASSIGN_OR_RETURN(GemmTimes qk, TimeGemm(costs, {rows, a.seq_q, a.head_dim}, DType::kBf16));
  LUMOS_ASSIGN_OR_RETURN(GemmTimes av, TimeGemm(costs, {rows, a.head_dim, a.seq_q}, DType::kBf16));
  LUMOS_ASSIGN_OR_RETURN(
      int64_t forward, costs.Kernel("softmax_kernel", (dropout ? 9 : 4) * scores, 0, DType::kBf16));
  LUMOS_ASSIGN_OR_RETURN(
      int64_t backward,
      costs.Kernel("softmax_kernel", (dropout ? 11 : 6) * scores, 0, DType::kBf16));
  GemmTimes t;
  t.forward = qk.forward + av.forward + static_cast<double>(forward);
  t.backward = qk.backward + av.backward + static_cast<double>(backward);
  return t;
}

// Context parallelism as Transformer Engine's ring attention runs it (cp_comm_type p2p): each of
// the cp GPUs holds two chunks of s / (2 cp) tokens (one from each end, so the causal mask
// leaves each the same work) and takes cp steps: its own queries against its own keys (causal),
// then against each other GPU's keys and values as they come round the ring (half of each
// block under the mask: s / cp queries against s / (2 cp) keys). While a step computes, the next
// block is sent on: forward the keys and values, backward those and their gradients (twice the
// bytes). A step waits for the longer of its compute and its transfer; the first needs none.
struct CpAttention {
  double forward = 0, backward = 0;
};

StatusOr<CpAttention> TimeRingAttention(const GptCosts& costs, const models::AttentionShape& whole,
                                        const Layout& l, const PlanSetup& setup) {
  const int64_t local = whole.seq_q / l.cp;
  models::AttentionShape own = whole;
  own.seq_q = own.seq_kv = local;
  models::AttentionShape other = whole;
  other.seq_q = local;
  other.seq_kv = local / 2;
  other.causal = false;
  // A block of keys and values: 2 x batch x s / cp x kv heads of this GPU x head size, 16 bits.
  const double block = 4.0 * static_cast<double>(whole.batch) * static_cast<double>(local) *
                       static_cast<double>(whole.kv_heads > 0 ? whole.kv_heads : whole.heads) *
                       static_cast<double>(whole.head_dim);
  // Ring neighbours are tp ranks apart: NVLink while tp x cp stays in a node.
  const bool across = l.tp * l.cp > setup.gpus_per_node;
  const double bandwidth =
      across ? setup.net.bytes_per_s : setup.gpu->nvlink_bytes_per_s.value_or(0) / 2;
  const double latency = across ? static_cast<double>(setup.net.latency_ns) : 2000.0;
  const double send = bandwidth > 0 ? latency + block / bandwidth * 1e9 : 0;
  CpAttention out;
  for (const bool backward : {false, true}) {
    own.backward = other.backward = backward;
    LUMOS_ASSIGN_OR_RETURN(int64_t first, costs.Attention(own));
    LUMOS_ASSIGN_OR_RETURN(int64_t step, costs.Attention(other));
    const double transfer = backward ? 2 * send : send;
    const double ns = static_cast<double>(first) +
                      static_cast<double>(l.cp - 1) * std::max(static_cast<double>(step), transfer);
    (backward ? out.backward : out.forward) = ns;
  }
  return out;
}

}  // namespace

double PassWork::ns() const {
  double sum = 0;
  for (const PlanOp& op : ops) sum += op.ns;
  return sum;
}

StatusOr<double> TimeCollective(const GptCosts& costs, CollectiveOp op, double bytes, int64_t ranks,
                                int64_t nodes) {
  if (ranks <= 1 || bytes <= 0) return 0.0;
  LUMOS_ASSIGN_OR_RETURN(GptCosts::Collective c,
                         costs.Run(op, static_cast<uint64_t>(bytes), schema::DataType::kBfloat16,
                                   static_cast<uint32_t>(ranks), static_cast<uint32_t>(nodes)));
  return static_cast<double>(c.transfer_ns);
}

int64_t GradientBucketParameters(const Layout& layout) {
  return std::max<int64_t>(40'000'000, 1'000'000 * layout.gradient_ranks());
}

std::vector<GradientBucket> ChunkGradientBuckets(const LayoutWork& work, const Layout& layout,
                                                 int64_t chunk_layers, int64_t v) {
  const int64_t virtual_stages = layout.pp * layout.vp;
  std::vector<int64_t> items;
  if (v == virtual_stages - 1 && virtual_stages > 1) items.push_back(-1);
  for (int64_t i = chunk_layers - 1; i >= 0; --i) items.push_back(i);
  if (v == 0) items.push_back(-2);
  const auto size = static_cast<double>(GradientBucketParameters(layout));
  std::vector<GradientBucket> buckets(1);
  for (const int64_t item : items) {
    if (buckets.back().parameters >= size) buckets.emplace_back();
    buckets.back().parameters += item < 0 ? static_cast<double>(work.embedding_parameters)
                                          : static_cast<double>(work.layer_parameters);
    buckets.back().items.push_back(item);
  }
  return buckets;
}

StatusOr<double> TimeOptimizer(const GptCosts& costs, double shard, double stage_parameters,
                               double fp8_cast_bytes) {
  LUMOS_ASSIGN_OR_RETURN(int64_t adam,
                         costs.Kernel("multi_tensor_apply_kernel", 32 * shard, 0, DType::kFp32));
  double cast = 0;
  if (fp8_cast_bytes > 0) {  // The updated weights cast to FP8 with their transposes.
    LUMOS_ASSIGN_OR_RETURN(
        int64_t ns,
        costs.Kernel("cast_transpose_kernel", fp8_cast_bytes * stage_parameters, 0, DType::kBf16));
    cast = static_cast<double>(ns);
  }
  return static_cast<double>(adam) + cast;
}

StatusOr<LayoutWork> LayoutWorkOf(const ModelSpec& spec, const Layout& l, const GptCosts& costs,
                                  const PlanSetup& setup) {
  LayoutWork out;
  const int64_t t = l.tp;
  const int64_t tokens = l.mbs * spec.seq / l.cp;  // A GPU's share of a micro-batch.
  const int64_t h = spec.hidden;
  const int64_t f = spec.ffn_size();
  const int64_t kv = spec.kv_heads_count() * spec.head_dim();
  const DType dtype = setup.gemm_dtype;
  out.gemm_dtype = dtype;

  const Gemm3 qkv{tokens, (h + 2 * kv) / t, h}, projection{tokens, h, h / t},
      fc1{tokens, f * (spec.gated() ? 2 : 1) / t, h}, fc2{tokens, h, f / t};
  LUMOS_ASSIGN_OR_RETURN(GemmTimes qkv_t, TimeGemm(costs, qkv, dtype));
  LUMOS_ASSIGN_OR_RETURN(GemmTimes projection_t, TimeGemm(costs, projection, dtype));
  LUMOS_ASSIGN_OR_RETURN(GemmTimes fc1_t, TimeGemm(costs, fc1, dtype));
  LUMOS_ASSIGN_OR_RETURN(GemmTimes fc2_t, TimeGemm(costs, fc2, dtype));
  if (l.tp_overlap && t > 1) {
    LUMOS_ASSIGN_OR_RETURN(
        BlockGemmTimes overlapped,
        TimeOverlappedGemms(costs, qkv, projection, fc1, fc2, t, setup.gpu->sms, dtype));
    qkv_t = overlapped.qkv;
    projection_t = overlapped.projection;
    fc1_t = overlapped.fc1;
    fc2_t = overlapped.fc2;
  }
  const double gemm_forward = qkv_t.forward + projection_t.forward + fc1_t.forward + fc2_t.forward;
  const double gemm_backward =
      qkv_t.backward + projection_t.backward + fc1_t.backward + fc2_t.backward;
  // FP8 training (Transformer Engine): every GEMM's input cast to FP8 with its transpose (for
  // the weight gradient) before the forward, its output gradient likewise before the backward:
  // 2 bytes read and 2 written an element, one kernel each. Current scaling first reads the
  // tensor once more for its amax (TE's compute_amax, then the cast), and the amax of what is
  // all-gathered (the QKV and fc1 inputs, the projection's and fc2's output gradients, with
  // sequence parallelism) is all-reduced over the TP group so that every rank casts alike.
  double cast_forward = 0, cast_backward = 0;
  out.fp8_cast_bytes = dtype != DType::kFp8 ? 0 : l.fp8_current_scaling ? 6 : 4;
  if (dtype == DType::kFp8) {
    for (const Gemm3& g : {qkv, projection, fc1, fc2}) {
      LUMOS_ASSIGN_OR_RETURN(
          int64_t in,
          costs.Kernel("cast_transpose_kernel", out.fp8_cast_bytes * static_cast<double>(g.m * g.k),
                       0, DType::kBf16));
      LUMOS_ASSIGN_OR_RETURN(
          int64_t grad,
          costs.Kernel("cast_transpose_kernel", out.fp8_cast_bytes * static_cast<double>(g.m * g.n),
                       0, DType::kBf16));
      cast_forward += static_cast<double>(in);
      cast_backward += static_cast<double>(grad);
    }
    if (l.fp8_current_scaling && l.sequence_parallel && t > 1) {
      LUMOS_ASSIGN_OR_RETURN(double amax, TimeCollective(costs, CollectiveOp::kAllReduce, 4, t, 1));
      cast_forward += 2 * amax;
      cast_backward += 2 * amax;
    }
  }
  out.layer_parameters = 4 * h;  // The two norms' weights and biases (replicated).
  for (const Gemm3& g : {qkv, projection, fc1, fc2}) out.layer_parameters += g.n * g.k;

  models::AttentionShape a;
  a.batch = l.mbs;
  a.heads = spec.heads / t;
  a.kv_heads = spec.kv_heads_count() / t;
  a.seq_q = spec.seq;
  a.head_dim = spec.head_dim();
  a.causal = true;
  double attention_forward = 0, attention_backward = 0;
  if (l.cp > 1) {  // CheckLayout: fused.
    LUMOS_ASSIGN_OR_RETURN(CpAttention ring, TimeRingAttention(costs, a, l, setup));
    attention_forward = ring.forward;
    attention_backward = ring.backward;
  } else if (l.flash_attention) {
    LUMOS_ASSIGN_OR_RETURN(int64_t forward_ns, costs.Attention(a));
    a.backward = true;
    LUMOS_ASSIGN_OR_RETURN(int64_t backward_ns, costs.Attention(a));
    attention_forward = static_cast<double>(forward_ns);
    attention_backward = static_cast<double>(backward_ns);
  } else {
    LUMOS_ASSIGN_OR_RETURN(GemmTimes unfused, TimeUnfusedAttention(costs, a, spec.has_dropout()));
    attention_forward = unfused.forward;
    attention_backward = unfused.backward;
  }

  models::MemoryConfig memory = MemoryConfigOf(spec);
  memory.flash_attention = l.flash_attention;
  memory.tp = t;
  memory.pp = l.pp;
  memory.vp = l.vp;
  memory.dp = l.dp;
  memory.cp = l.cp;
  memory.ends_in_split = l.ends_in_split;
  // Megatron's gradient buffer is kept in the type it is reduced in (grad_reduce_in_fp32: fp32,
  // else the weights' bf16), the gradients accumulated into it over the micro-batches.
  memory.grad_bytes = l.grad_sync_bytes;
  memory.mbs = l.mbs;
  memory.micro_batches = l.micro_batches();
  memory.sequence_parallel = l.sequence_parallel;
  memory.zero_stage = l.zero;
  memory.recompute = l.recompute;
  memory.fp8_gemm_inputs = dtype == DType::kFp8;
  // The elementwise traffic below is 2 x the bf16 activations stored (the FP8 copies the GEMMs
  // keep are the casts' output, costed with the casts), less unfused attention's scores, their
  // softmax and its dropout mask: TimeUnfusedAttention's softmax kernels move those.
  models::MemoryConfig stored = memory;
  stored.recompute = models::Recompute::kNone;
  stored.fp8_gemm_inputs = false;
  stored.flash_attention = true;
  const double activation_bytes = models::LayerActivationBytes(stored);
  LUMOS_ASSIGN_OR_RETURN(out.memory, models::EstimateMemory(memory, setup.gpu));
  // Of that traffic, the two norms' (a LayerNorm or RMSNorm reads and writes its input, 2 bytes
  // an element, forward; reads it and the gradient and writes the input's gradient, backward)
  // runs as norm kernels, the rest as elementwise ones: each at its class's efficiency
  // (measured on a real Megatron-LM layer: data/costs/kernels_a100_megatron.csv).
  const double norm_elements = static_cast<double>(tokens) * static_cast<double>(h) /
                               (l.sequence_parallel ? static_cast<double>(t) : 1.0);
  auto traffic = [&](double total, double norm_bytes) -> StatusOr<double> {
    LUMOS_ASSIGN_OR_RETURN(int64_t norms,
                           costs.Kernel("layer_norm_kernel", norm_bytes, 0, DType::kBf16));
    LUMOS_ASSIGN_OR_RETURN(
        int64_t rest,
        costs.Kernel("elementwise_kernel", std::max(0.0, total - norm_bytes), 0, DType::kBf16));
    return static_cast<double>(norms + rest);
  };
  LUMOS_ASSIGN_OR_RETURN(const double forward_traffic,
                         traffic(2 * activation_bytes, 2 * 4 * norm_elements));
  LUMOS_ASSIGN_OR_RETURN(const double backward_traffic,
                         traffic(4 * activation_bytes, 2 * 6 * norm_elements));

  // Tensor parallel: per block and pass an all-reduce, or an all-gather and a reduce-scatter.
  const double activation = static_cast<double>(tokens) * static_cast<double>(h) * 2;
  BlockCollectives block;
  if (t > 1) {
    if (l.sequence_parallel) {
      LUMOS_ASSIGN_OR_RETURN(double gather,
                             TimeCollective(costs, CollectiveOp::kAllGather, activation, t, 1));
      LUMOS_ASSIGN_OR_RETURN(double scatter,
                             TimeCollective(costs, CollectiveOp::kReduceScatter, activation, t, 1));
      block.before = {"tp_all_gather", gather, OpClass::kTensorParallel};
      block.after = {"tp_reduce_scatter", scatter, OpClass::kTensorParallel};
    } else {
      LUMOS_ASSIGN_OR_RETURN(double reduce,
                             TimeCollective(costs, CollectiveOp::kAllReduce, activation, t, 1));
      block.after = {"tp_all_reduce", reduce, OpClass::kTensorParallel};
    }
  }
  const double tp_pass = 2 * (block.before.ns + block.after.ns);
  out.gemm_ns = gemm_forward + gemm_backward;
  out.attention_ns = attention_forward + attention_backward;
  out.elementwise_ns = forward_traffic + backward_traffic + cast_forward + cast_backward;
  out.tp_comm_ns = 2 * tp_pass;

  // The passes in order; `collective` adds a TP op unless the GEMMs hide them (tp_overlap), in
  // which case one op at the pass's end carries what they do not hide.
  auto build = [&](bool backward) {
    std::vector<PlanOp> ops;
    auto collective = [&](const PlanOp& op) {
      if (op.ns > 0 && !l.tp_overlap) ops.push_back(op);
    };
    const double ew = (backward ? backward_traffic : forward_traffic) / 2;  // Two blocks.
    if (!backward) {
      collective(block.before);
      ops.push_back({"qkv_gemm", qkv_t.forward, OpClass::kGemm});
      ops.push_back({"attention", attention_forward, OpClass::kAttention});
      ops.push_back({"projection_gemm", projection_t.forward, OpClass::kGemm});
      collective(block.after);
      ops.push_back({"elementwise", ew, OpClass::kElementwise});
      collective(block.before);
      ops.push_back({"fc1_gemm", fc1_t.forward, OpClass::kGemm});
      ops.push_back({"fc2_gemm", fc2_t.forward, OpClass::kGemm});
      collective(block.after);
      ops.push_back({"elementwise", ew, OpClass::kElementwise});
    } else {
      ops.push_back({"elementwise_backward", ew, OpClass::kElementwise});
      collective(block.before);
      ops.push_back({"fc2_gemm_backward", fc2_t.backward, OpClass::kGemm});
      ops.push_back({"fc1_gemm_backward", fc1_t.backward, OpClass::kGemm});
      collective(block.after);
      ops.push_back({"elementwise_backward", ew, OpClass::kElementwise});
      collective(block.before);
      ops.push_back({"projection_gemm_backward", projection_t.backward, OpClass::kGemm});
      ops.push_back({"attention_backward", attention_backward, OpClass::kAttention});
      ops.push_back({"qkv_gemm_backward", qkv_t.backward, OpClass::kGemm});
      collective(block.after);
    }
    if (backward ? cast_backward > 0 : cast_forward > 0) {
      ops.push_back({backward ? "fp8_cast_backward" : "fp8_cast",
                     backward ? cast_backward : cast_forward, OpClass::kElementwise});
    }
    if (l.tp_overlap && tp_pass > 0) {
      const double hidden_by = backward ? gemm_backward : gemm_forward;
      ops.push_back({"tp_exposed", std::max(0.0, tp_pass - hidden_by), OpClass::kTensorParallel});
    }
    return ops;
  };
  out.layer_forward.ops = build(false);
  std::vector<PlanOp> backward;
  if (l.recompute == models::Recompute::kFull) {
    backward = out.layer_forward.ops;
  } else if (l.recompute == models::Recompute::kSelective) {
    backward.push_back({"attention_recompute", attention_forward, OpClass::kAttention});
  }
  for (const PlanOp& op : build(true)) backward.push_back(op);
  out.layer_backward.ops = std::move(backward);

  // The vocabulary as the memory model pads it (Megatron's multiple of 128 x tp), split over tp.
  const int64_t vocab_per_gpu = out.memory.padded_vocab / t;
  // The LM head runs in bf16 even in FP8 training: Megatron-LM's output layer is a plain
  // ColumnParallelLinear outside Transformer Engine's FP8 context (gpt_model.py; only an MXFP8
  // output projection, Blackwell's, takes TE's).
  LUMOS_ASSIGN_OR_RETURN(GemmTimes head, TimeGemm(costs, {tokens, vocab_per_gpu, h}, DType::kBf16));
  const double logits = static_cast<double>(tokens) * static_cast<double>(vocab_per_gpu) * 4;
  LUMOS_ASSIGN_OR_RETURN(int64_t loss, costs.Kernel("softmax_kernel", 4 * logits, 0, DType::kBf16));
  LUMOS_ASSIGN_OR_RETURN(int64_t embedding,
                         costs.Kernel("embedding_kernel", 3 * activation, 0, DType::kBf16));
  out.first_forward.ops = {{"embedding", static_cast<double>(embedding), OpClass::kElementwise}};
  out.first_backward.ops = {
      {"embedding_backward", static_cast<double>(embedding), OpClass::kElementwise}};
  out.last_forward.ops = {{"lm_head_gemm", head.forward, OpClass::kGemm},
                          {"loss", static_cast<double>(loss) / 2, OpClass::kElementwise}};
  out.last_backward.ops = {{"loss_backward", static_cast<double>(loss) / 2, OpClass::kElementwise},
                           {"lm_head_gemm_backward", head.backward, OpClass::kGemm}};
  out.embedding_parameters = vocab_per_gpu * h;

  // Pipeline neighbours are tp x cp x dp ranks apart: on another node once that spans a node.
  // With sequence parallelism a rank's activation is 1/tp of it; without, Megatron-LM's
  // scatter-gather (p2p_scatter_gather) sends 1/tp too and the receivers all-gather it.
  // A send is the collective model's send/recv between two ranks, as every other collective
  // here is the model's: across nodes at the rate its one-node all-to-all fit carries to the NIC
  // (H100 on NDR InfiniBand: 39.7 GB/s; never faster than NCCL's reach of the line rate), which
  // two H100 nodes measure for one GPU's transfer of 16-32 MiB (nccl-tests#232: 40-41 GB/s). The
  // line rate alone had made MLPerf GPT-3's 12.6 MB send 255 us; the model gives 364 us, that
  // measurement about 325 us.
  if (l.pp > 1) {
    const bool scatter = l.p2p_scatter_gather && !l.sequence_parallel && t > 1;
    const double bytes =
        activation / (l.sequence_parallel || scatter ? static_cast<double>(t) : 1.0);
    const bool across = t * l.cp * l.dp >= setup.gpus_per_node;
    LUMOS_ASSIGN_OR_RETURN(
        out.p2p_ns, TimeCollective(costs, CollectiveOp::kSendRecv, bytes, 2, across ? 2 : 1));
    if (scatter) {
      LUMOS_ASSIGN_OR_RETURN(const double gather,
                             TimeCollective(costs, CollectiveOp::kAllGather, activation, t, 1));
      out.p2p_ns += gather;
    }
  }
  // Tied embeddings: Megatron's finalize_model_grads all-reduces the word embedding's gradient
  // buffer (the whole shard, in the reduction's type) over the embedding group, the first and
  // the last stage, once the data-parallel reduction is through
  // (_allreduce_word_embedding_grads: blocking, before the optimizer). The two stages are
  // (pp - 1) x tp x cp x dp ranks apart: on two nodes unless the job fits on one.
  if (l.pp > 1 && memory.tied_embeddings) {
    const bool across = l.pp * t * l.cp * l.dp > setup.gpus_per_node;
    LUMOS_ASSIGN_OR_RETURN(
        out.embedding_grad_ns,
        TimeCollective(costs, CollectiveOp::kAllReduce,
                       static_cast<double>(out.embedding_parameters * l.grad_sync_bytes), 2,
                       across ? 2 : 1));
  }
  // The gradients' group (dp x cp ranks, tp apart): across nodes once it spans more than one.
  const int64_t ranks = l.gradient_ranks();
  out.dp_nodes = std::max<int64_t>(1, std::min<int64_t>(ranks, (t * ranks) / setup.gpus_per_node));

  // Delayed scaling: the amaxes a chunk's casts recorded, all-reduced as its fp8_autocast
  // exits (forward) and once its backward is through (Transformer Engine's
  // reduce_and_update_fp8_tensors, a blocking all-reduce on the compute stream), over
  // Megatron's amax group: the stage's tp x cp x dp ranks, or tp x cp with tp_only_amax_red.
  // Per layer TE keeps 3 forward amaxes a GEMM (input, weight, output) and 2 backward ones
  // (output gradient, input gradient): a few hundred bytes, so the latency is what costs.
  if (dtype == DType::kFp8 && !l.fp8_current_scaling) {
    const int64_t group = t * l.cp * (l.tp_only_amax_reduction ? 1 : l.dp);
    const int64_t group_nodes =
        std::max<int64_t>(1, (group + setup.gpus_per_node - 1) / setup.gpus_per_node);
    const int64_t chunks = l.pp * l.vp;
    const int64_t most_layers = (spec.layers + chunks - 1) / chunks;  // A chunk's, at most.
    const auto chunk_layers = static_cast<double>(most_layers);
    LUMOS_ASSIGN_OR_RETURN(
        double forward,
        TimeCollective(costs, CollectiveOp::kAllReduce, 12 * 4 * chunk_layers, group, group_nodes));
    LUMOS_ASSIGN_OR_RETURN(
        double backward,
        TimeCollective(costs, CollectiveOp::kAllReduce, 8 * 4 * chunk_layers, group, group_nodes));
    if (forward > 0) {  // 0: a group of one, nobody to reduce with.
      out.chunk_forward.ops = {{"fp8_amax_all_reduce", forward, OpClass::kTensorParallel}};
      out.chunk_backward.ops = {
          {"fp8_amax_all_reduce_backward", backward, OpClass::kTensorParallel}};
    }
  }
  return out;
}

}  // namespace lumos::modeler::plan
