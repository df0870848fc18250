#include "modeler/plan/step_model.h"

#include <algorithm>
#include <cmath>

#include "modeler/models/collectives/collective_class.h"

namespace lumos::modeler::plan {
namespace {

using models::DType;
using schema::CollectiveOp;

struct Gemm3 {
  int64_t m, n, k;
};

// Forward, input-gradient and weight-gradient times of a row-major GEMM (m = tokens).
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

StatusOr<double> TimeCollective(const GptCosts& costs, CollectiveOp op, double bytes, int64_t ranks,
                                int64_t nodes) {
  if (ranks <= 1 || bytes <= 0) return 0.0;
  LUMOS_ASSIGN_OR_RETURN(GptCosts::Collective c,
                         costs.Run(op, static_cast<uint64_t>(bytes), schema::DataType::kBfloat16,
                                   static_cast<uint32_t>(ranks), static_cast<uint32_t>(nodes)));
  return static_cast<double>(c.transfer_ns);
}

// Stage times per micro-batch (one GPU of the stage).
struct StageTimes {
  double forward = 0, backward = 0;
  double gemm = 0, attention = 0, elementwise = 0, tp_comm = 0;
};

}  // namespace

const std::vector<std::string>& StepAssumptions() {
  static const auto* const lines = new std::vector<std::string>{
      "fast path: the step added up from the cost models, no graph simulated",
      "ranks of a pipeline stage symmetric: one GPU stands for its stage",
      "elementwise and norm traffic: 2 x the stored activations' bytes a layer (backward x2)",
      "TP collectives not overlapped with GEMMs (tp_overlap=1: the longer of the two)",
      "TP overlap: the GEMMs' slowdown from sharing the SMs not counted",
      "pipeline: 1F1B (interleaved with vp), m + (pp - 1) / vp slots of the slowest stage",
      "DP gradient reduction hidden behind the last micro-batch's backward",
      "ZeRO 1-2: the weights' all-gather hidden behind the first micro-batch's forward",
      "ZeRO 3: the weights gathered before every forward and backward, hidden behind them",
      "Adam: 32 bytes a parameter of the GPU's shard",
      "attention fused (flash), causal, bf16",
  };
  return *lines;
}

StatusOr<StepEstimate> EstimateStep(const ModelSpec& spec, const Layout& l, const GptCosts& costs,
                                    const PlanSetup& setup) {
  LUMOS_RETURN_IF_ERROR(CheckLayout(spec, l, setup.gpus_per_node));
  StepEstimate out;
  out.layout = l;
  const int64_t t = l.tp;
  const int64_t tokens = l.mbs * spec.seq;
  const int64_t h = spec.hidden;
  const int64_t f = spec.ffn_size();
  const int64_t kv = spec.kv_heads_count() * spec.head_dim();
  const DType dtype = setup.gemm_dtype;

  // One layer's work.
  StageTimes layer;
  double gemm_forward = 0, gemm_backward = 0;
  const Gemm3 gemms[] = {{tokens, (h + 2 * kv) / t, h},
                         {tokens, h, h / t},
                         {tokens, f * (spec.gated() ? 2 : 1) / t, h},
                         {tokens, h, f / t}};
  for (const Gemm3& g : gemms) {
    LUMOS_ASSIGN_OR_RETURN(GemmTimes gt, TimeGemm(costs, g, dtype));
    layer.forward += gt.forward;
    layer.backward += gt.backward;
    layer.gemm += gt.forward + gt.backward;
    gemm_forward += gt.forward;
    gemm_backward += gt.backward;
  }
  models::AttentionShape a;
  a.batch = l.mbs;
  a.heads = spec.heads / t;
  a.kv_heads = spec.kv_heads_count() / t;
  a.seq_q = spec.seq;
  a.head_dim = spec.head_dim();
  a.causal = true;
  LUMOS_ASSIGN_OR_RETURN(int64_t attention_forward, costs.Attention(a));
  a.backward = true;
  LUMOS_ASSIGN_OR_RETURN(int64_t attention_backward, costs.Attention(a));
  layer.forward += static_cast<double>(attention_forward);
  layer.backward += static_cast<double>(attention_backward);
  layer.attention = static_cast<double>(attention_forward + attention_backward);

  models::MemoryConfig memory = MemoryConfigOf(spec);
  memory.tp = t;
  memory.pp = l.pp;
  memory.dp = l.dp;
  memory.mbs = l.mbs;
  memory.micro_batches = l.micro_batches();
  memory.sequence_parallel = l.sequence_parallel;
  memory.zero_stage = l.zero;
  memory.recompute = l.recompute;
  models::MemoryConfig stored = memory;
  stored.recompute = models::Recompute::kNone;
  const double activation_bytes = models::LayerActivationBytes(stored);
  LUMOS_ASSIGN_OR_RETURN(models::MemoryEstimate mem, models::EstimateMemory(memory, setup.gpu));
  out.memory = mem;
  LUMOS_ASSIGN_OR_RETURN(int64_t elementwise,
                         costs.Kernel("elementwise_kernel", 2 * activation_bytes, 0, DType::kBf16));
  layer.forward += static_cast<double>(elementwise);
  layer.backward += 2.0 * static_cast<double>(elementwise);
  layer.elementwise = 3.0 * static_cast<double>(elementwise);

  const double activation = static_cast<double>(tokens) * static_cast<double>(h) * 2;
  double tp_forward = 0;
  if (t > 1) {
    if (l.sequence_parallel) {
      LUMOS_ASSIGN_OR_RETURN(double gather,
                             TimeCollective(costs, CollectiveOp::kAllGather, activation, t, 1));
      LUMOS_ASSIGN_OR_RETURN(double scatter,
                             TimeCollective(costs, CollectiveOp::kReduceScatter, activation, t, 1));
      tp_forward = 2 * (gather + scatter);
    } else {
      LUMOS_ASSIGN_OR_RETURN(double reduce,
                             TimeCollective(costs, CollectiveOp::kAllReduce, activation, t, 1));
      tp_forward = 2 * reduce;
    }
  }
  layer.tp_comm = 2 * tp_forward;
  if (l.tp_overlap) {
    // Hidden behind the layer's GEMMs, each pass waiting for the longer of the two.
    layer.forward += std::max(0.0, tp_forward - gemm_forward);
    layer.backward += std::max(0.0, tp_forward - gemm_backward);
  } else {
    layer.forward += tp_forward;
    layer.backward += tp_forward;
  }
  // Recomputation runs (part of) the forward again inside the backward.
  if (l.recompute == models::Recompute::kFull) {
    layer.backward += layer.forward;
  } else if (l.recompute == models::Recompute::kSelective) {
    layer.backward += static_cast<double>(attention_forward);
  }

  // Stages: the layers, the embedding on the first, the LM head and loss on the last.
  const int64_t layers_per_stage = spec.layers / l.pp;  // CheckLayout: pp divides layers.
  const double per_stage = static_cast<double>(layers_per_stage);
  StageTimes body;
  body.forward = layer.forward * per_stage;
  body.backward = layer.backward * per_stage;
  // The vocabulary as the memory model pads it (Megatron's multiple of 128 x tp), split over tp.
  const int64_t vocab_per_gpu = mem.padded_vocab / t;
  LUMOS_ASSIGN_OR_RETURN(GemmTimes head, TimeGemm(costs, {tokens, vocab_per_gpu, h}, dtype));
  const double logits = static_cast<double>(tokens) * static_cast<double>(vocab_per_gpu) * 4;
  LUMOS_ASSIGN_OR_RETURN(int64_t loss, costs.Kernel("softmax_kernel", 4 * logits, 0, DType::kBf16));
  LUMOS_ASSIGN_OR_RETURN(int64_t embedding,
                         costs.Kernel("embedding_kernel", 3 * activation, 0, DType::kBf16));
  double first_forward = body.forward + static_cast<double>(embedding);
  double first_backward = body.backward + static_cast<double>(embedding);
  double last_forward = body.forward + head.forward + static_cast<double>(loss) / 2;
  double last_backward = body.backward + head.backward + static_cast<double>(loss) / 2;
  if (l.pp == 1) {
    first_forward = last_forward = first_forward + head.forward + static_cast<double>(loss) / 2;
    first_backward = last_backward = first_backward + head.backward + static_cast<double>(loss) / 2;
  }
  const bool last_slower = last_forward + last_backward >= first_forward + first_backward;
  out.backward_ns = last_slower ? last_backward : first_backward;
  out.forward_ns = last_slower ? last_forward : first_forward;
  out.gemm_ns = layer.gemm * per_stage;
  out.attention_ns = layer.attention * per_stage;
  out.elementwise_ns = layer.elementwise * per_stage;
  out.tp_comm_ns = layer.tp_comm * per_stage;

  // Pipeline neighbours are tp x dp ranks apart: on another node once that spans a node.
  double p2p = 0;
  if (l.pp > 1) {
    const double bytes = activation / (l.sequence_parallel ? static_cast<double>(t) : 1.0);
    const bool across = t * l.dp >= setup.gpus_per_node;
    const double bandwidth =
        across ? setup.net.bytes_per_s : setup.gpu->nvlink_bytes_per_s.value_or(0) / 2;
    const double latency = across ? static_cast<double>(setup.net.latency_ns) : 2000.0;
    if (bandwidth > 0) p2p = latency + bytes / bandwidth * 1e9;
    // A send forward and one backward per micro-batch and virtual stage.
    p2p *= 2.0 * static_cast<double>(l.vp);
  }
  out.p2p_ns = p2p;
  // The stage with the most parameters (the embedding's or the head's).
  int64_t parameters = 0;
  for (const models::StageMemory& s : mem.stages) parameters = std::max(parameters, s.parameters);
  // A data-parallel group: ranks tp apart, across nodes once tp x dp spans more than one.
  const int64_t nodes =
      std::max<int64_t>(1, std::min<int64_t>(l.dp, (t * l.dp) / setup.gpus_per_node));
  // ZeRO 3: the stage's weights gathered before each micro-batch's forward and again before its
  // backward, each hidden behind the pass it feeds as far as it can be.
  double zero3 = 0;
  if (l.zero == 3 && l.dp > 1) {
    LUMOS_ASSIGN_OR_RETURN(double gather,
                           TimeCollective(costs, CollectiveOp::kAllGather,
                                          static_cast<double>(parameters) * 2, l.dp, nodes));
    zero3 = std::max(0.0, gather - out.forward_ns) + std::max(0.0, gather - out.backward_ns);
  }
  const double slot = out.forward_ns + out.backward_ns + p2p + zero3;
  const double m = static_cast<double>(l.micro_batches());
  const double bubble_slots = static_cast<double>(l.pp - 1) / static_cast<double>(l.vp);
  out.pipeline_ns = (m + bubble_slots) * slot;
  out.bubble_ns = bubble_slots * slot;

  if (l.dp > 1) {
    const double grads = static_cast<double>(parameters * l.grad_sync_bytes);
    double reduce = 0, gather = 0;
    if (l.zero >= 1) {
      LUMOS_ASSIGN_OR_RETURN(
          reduce, TimeCollective(costs, CollectiveOp::kReduceScatter, grads, l.dp, nodes));
    }
    if (l.zero == 1 || l.zero == 2) {  // The updated shards gathered once a step.
      LUMOS_ASSIGN_OR_RETURN(gather,
                             TimeCollective(costs, CollectiveOp::kAllGather,
                                            static_cast<double>(parameters) * 2, l.dp, nodes));
    }
    if (l.zero == 0) {
      LUMOS_ASSIGN_OR_RETURN(reduce,
                             TimeCollective(costs, CollectiveOp::kAllReduce, grads, l.dp, nodes));
    }
    out.dp_comm_ns = reduce + gather;
    out.dp_exposed_ns = std::max(0.0, reduce - out.backward_ns / static_cast<double>(l.vp)) +
                        std::max(0.0, gather - out.forward_ns / static_cast<double>(l.vp));
  }
  const double shard =
      static_cast<double>(parameters) / (l.zero >= 1 ? static_cast<double>(l.dp) : 1.0);
  LUMOS_ASSIGN_OR_RETURN(int64_t adam,
                         costs.Kernel("multi_tensor_apply_kernel", 32 * shard, 0, DType::kFp32));
  out.optimizer_ns = static_cast<double>(adam);
  out.step_ns = out.pipeline_ns + out.dp_exposed_ns + out.optimizer_ns;
  const double step_tokens = static_cast<double>(l.global_batch()) * static_cast<double>(spec.seq);
  out.tokens_per_s_per_gpu = step_tokens / (out.step_ns / 1e9) / static_cast<double>(l.gpus());
  return out;
}

}  // namespace lumos::modeler::plan
