#include "modeler/plan/step_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "modeler/models/collectives/collective_class.h"

namespace lumos::modeler::plan {
namespace {

using schema::CollectiveOp;

struct DataParallelTimes {
  double reduce = 0, gather = 0;  // All the buckets' collectives, one after another.
  double exposed = 0;             // What no pass hides.
};

// Stage s's data-parallel collectives a step, bucket by bucket on one stream as Megatron
// launches them (ChunkGradientBuckets), against the passes that hide them; `forward` and
// `backward` are one micro-batch's passes of the stage (all its chunks). The reduction: chunk
// c's last backward is followed by the backwards of chunks c - 1 .. 0 of the last pp
// micro-batches (the interleaved schedule closes chunk by chunk, vp - 1 first: StageSchedule),
// so its buckets, each ready as the layers it holds are through, start c x pp chunk passes
// before the backward ends; what runs past that end is exposed (chunk 0's last bucket at
// least). The gathers (ZeRO 1-2): from the step's start, in the order the forwards need them;
// chunk c's first forward runs c x pp chunk passes in (the warm-up's forwards), and a layer
// waits for its bucket. Without dp_overlap everything waits.
StatusOr<DataParallelTimes> StageDataParallel(const ModelSpec& spec, const Layout& l,
                                              const LayoutWork& work, const GptCosts& costs,
                                              int64_t s, double forward, double backward) {
  const int64_t ranks = l.gradient_ranks();
  const auto vp = static_cast<double>(l.vp), pp = static_cast<double>(l.pp);
  const double forward_chunk = forward / vp, backward_chunk = backward / vp;
  DataParallelTimes out;
  double reduce_free = -std::numeric_limits<double>::infinity();  // From the backward's end.
  double gather_free = 0, delay = 0;                              // From the step's start.
  for (int64_t c = l.vp - 1; c >= 0; --c) {  // Reductions in the order chunks close.
    const int64_t v = c * l.pp + s;
    const std::vector<GradientBucket> buckets =
        ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, v), v);
    double chunk_parameters = 0;
    for (const GradientBucket& b : buckets) chunk_parameters += b.parameters;
    double through = 0;
    for (const GradientBucket& b : buckets) {
      through += b.parameters;
      LUMOS_ASSIGN_OR_RETURN(
          const double r,
          TimeCollective(
              costs, l.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
              b.parameters * static_cast<double>(l.grad_sync_bytes), ranks, work.dp_nodes));
      const double ready = -static_cast<double>(c) * pp * backward_chunk -
                           backward_chunk * (1 - through / chunk_parameters);
      reduce_free = std::max(reduce_free, ready) + r;
      out.reduce += r;
    }
  }
  for (int64_t c = 0; c < l.vp; ++c) {  // Gathers in the order the forwards need them.
    if (l.zero != 1 && l.zero != 2) break;
    const int64_t v = c * l.pp + s;
    const std::vector<GradientBucket> buckets =
        ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, v), v);
    double chunk_parameters = 0;
    for (const GradientBucket& b : buckets) chunk_parameters += b.parameters;
    double later = chunk_parameters;  // Forward order: the last bucket first.
    for (auto b = buckets.rbegin(); b != buckets.rend(); ++b) {
      later -= b->parameters;  // The parameters of the buckets after this one.
      LUMOS_ASSIGN_OR_RETURN(
          const double g, TimeCollective(costs, CollectiveOp::kAllGather,
                                         b->parameters * l.gather_bytes(), ranks, work.dp_nodes));
      gather_free += g;
      out.gather += g;
      const double needed = static_cast<double>(c) * pp * forward_chunk +
                            forward_chunk * (1 - (later + b->parameters) / chunk_parameters);
      delay = std::max(delay, gather_free - needed);
    }
  }
  out.exposed = l.dp_overlap ? std::max(0.0, reduce_free) + delay : out.reduce + out.gather;
  return out;
}

}  // namespace

const std::vector<std::string>& StepAssumptions() {
  static const auto* const lines = new std::vector<std::string>{
      "fast path: the step added up from the cost models, no graph simulated",
      "ranks of a pipeline stage symmetric: one GPU stands for its stage",
      "elementwise and norm traffic: 2 x the stored activations' bytes a layer (backward x2)",
      "TP collectives not overlapped with GEMMs (tp_overlap=1: the longer of the two)",
      "TP overlap: GEMMs chunked, short of the communication's SMs (MLPerf v3.1's config)",
      "pipeline: 1F1B (interleaved with vp), m + (pp - 1) / vp slots of the slowest stage",
      "DP reduction: a collective a bucket as each chunk's backward closes, the last exposed",
      "ZeRO 1-2: the weights gathered a bucket at a time ahead of the forwards, the first exposed",
      "ZeRO 3: the weights gathered before every forward and backward, hidden behind them",
      "tied embeddings, pp > 1: their gradient all-reduced between the end stages, exposed",
      "Adam: 32 bytes a parameter of the GPU's shard",
      "FP8: GEMM inputs and output gradients cast with transposes; weights once a step",
      "FP8 casts: 4 bytes an element; fp8_current_scaling=1: 6 (an amax pass first)",
      "FP8 current scaling: sequence-parallel amaxes all-reduced over the TP group",
      "FP8 delayed scaling: amaxes all-reduced a chunk's pass over tp x dp x cp (TE, Megatron)",
      "FP8: the LM head in bf16 (Megatron's output layer); fp8_param_gather=1: 1-byte gathers",
      "attention fused (flash), causal, bf16 (flash_attention=0: unfused, pass_work.h)",
      "cp > 1: ring attention, each step the longer of its attention and its transfer",
      "gradient buffer in the reduction's type (grad_sync_bytes)",
      "compute beside communication 18.9 % slower (arXiv:2507.03114; --overlap-slowdown)",
      "fast path: that slowdown charged beside the hidden data-parallel collectives",
  };
  return *lines;
}

StatusOr<StepEstimate> EstimateStep(const ModelSpec& spec, const Layout& l, const GptCosts& costs,
                                    const PlanSetup& setup) {
  LUMOS_RETURN_IF_ERROR(CheckLayout(spec, l, setup.gpus_per_node));
  StepEstimate out;
  out.layout = l;
  LUMOS_ASSIGN_OR_RETURN(LayoutWork work, LayoutWorkOf(spec, l, costs, setup));
  out.memory = work.memory;
  const models::MemoryEstimate& mem = work.memory;

  // Stages: their layers (StageLayers: even, or with ends_in_split one fewer on the first and
  // the last), the embedding on the first, the LM head and loss on the last; the slowest counts.
  // A middle stage stands for them all (stage 1; with ends_in_split it may be the slowest).
  double per_stage = 0;
  const auto chunks = static_cast<double>(l.vp);  // Each with its amax all-reduces.
  for (const int64_t s : {int64_t{0}, std::min<int64_t>(1, l.pp - 1), l.pp - 1}) {
    const auto layers = static_cast<double>(StageLayers(spec, l, s));
    double forward = work.layer_forward.ns() * layers + work.chunk_forward.ns() * chunks;
    double backward = work.layer_backward.ns() * layers + work.chunk_backward.ns() * chunks;
    if (s == 0) {
      forward += work.first_forward.ns();
      backward += work.first_backward.ns();
    }
    if (s == l.pp - 1) {
      forward += work.last_forward.ns();
      backward += work.last_backward.ns();
    }
    if (forward + backward >= out.forward_ns + out.backward_ns) {
      out.forward_ns = forward;
      out.backward_ns = backward;
      per_stage = layers;
    }
  }
  out.gemm_ns = work.gemm_ns * per_stage;
  out.attention_ns = work.attention_ns * per_stage;
  out.elementwise_ns = work.elementwise_ns * per_stage;
  out.tp_comm_ns = work.tp_comm_ns * per_stage;

  // A send forward and one backward per micro-batch and virtual stage.
  const double p2p = work.p2p_ns * 2.0 * static_cast<double>(l.vp);
  out.p2p_ns = p2p;
  // The stage with the most parameters (the embedding's or the head's).
  int64_t parameters = 0;
  for (const models::StageMemory& s : mem.stages) parameters = std::max(parameters, s.parameters);
  const int64_t nodes = work.dp_nodes;
  // ZeRO 3: the stage's weights gathered before each micro-batch's forward and again before its
  // backward, each hidden behind the pass it feeds as far as it can be.
  // The compute beside what hides runs slower (PlanSetup::overlap_slowdown).
  const double stretch = setup.overlap_slowdown / (1 + setup.overlap_slowdown);
  double zero3 = 0, zero3_overlap = 0;
  const int64_t ranks = l.gradient_ranks();  // dp x cp: the same weights' copies.
  if (l.zero == 3 && ranks > 1) {
    LUMOS_ASSIGN_OR_RETURN(
        double gather,
        TimeCollective(costs, CollectiveOp::kAllGather,
                       static_cast<double>(parameters) * l.gather_bytes(), ranks, nodes));
    zero3 = std::max(0.0, gather - out.forward_ns) + std::max(0.0, gather - out.backward_ns);
    zero3_overlap =
        (std::min(gather, out.forward_ns) + std::min(gather, out.backward_ns)) * stretch;
  }
  const double slot = out.forward_ns + out.backward_ns + p2p + zero3 + zero3_overlap;
  const double m = static_cast<double>(l.micro_batches());
  const double bubble_slots = static_cast<double>(l.pp - 1) / static_cast<double>(l.vp);
  out.pipeline_ns = (m + bubble_slots) * slot;
  out.bubble_ns = bubble_slots * slot;

  if (ranks > 1) {
    for (const int64_t s : {int64_t{0}, std::min<int64_t>(1, l.pp - 1), l.pp - 1}) {
      LUMOS_ASSIGN_OR_RETURN(
          const DataParallelTimes t,
          StageDataParallel(spec, l, work, costs, s, out.forward_ns, out.backward_ns));
      if (t.reduce + t.gather < out.dp_comm_ns) continue;
      out.dp_comm_ns = t.reduce + t.gather;
      out.dp_exposed_ns = t.exposed;
    }
  }
  const double shard =
      static_cast<double>(parameters) / (l.zero >= 1 ? static_cast<double>(ranks) : 1.0);
  LUMOS_ASSIGN_OR_RETURN(
      out.optimizer_ns,
      TimeOptimizer(costs, shard, static_cast<double>(parameters), work.fp8_cast_bytes));
  // Compute beside the hidden part runs slower: a kernel overlapped for o takes o s / (1 + s)
  // longer (entirely overlapped, (1 + s) x its time). ZeRO 3's part is in the slots already.
  const double dp_overlap_cost = (out.dp_comm_ns - out.dp_exposed_ns) * stretch;
  out.overlap_cost_ns = dp_overlap_cost + (m + bubble_slots) * zero3_overlap;
  out.host_ns = setup.host_step_ns;
  out.embedding_grad_ns = work.embedding_grad_ns;
  out.step_ns = out.pipeline_ns + out.dp_exposed_ns + dp_overlap_cost + out.embedding_grad_ns +
                out.optimizer_ns + out.host_ns;
  const double step_tokens = static_cast<double>(l.global_batch()) * static_cast<double>(spec.seq);
  out.tokens_per_s_per_gpu = step_tokens / (out.step_ns / 1e9) / static_cast<double>(l.gpus());
  return out;
}

}  // namespace lumos::modeler::plan
