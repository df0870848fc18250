#include "modeler/plan/step_model.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "modeler/models/collectives/collective_class.h"

namespace lumos::modeler::plan {
namespace {

using schema::CollectiveOp;

struct DataParallelTimes {
  double reduce_ns = 0, gather_ns = 0;  // All the buckets' collectives, one after another.
  double exposed_ns = 0;                // What no pass hides.
};

// An item's pass on its GPU (ChunkGradientBuckets' items: -1 the LM head and loss, -2 the
// embedding, else a layer).
double ItemNs(const LayoutWork& work, int64_t item, bool backward) {
  if (item == -1) return backward ? work.last_backward.ns() : work.last_forward.ns();
  if (item == -2) return backward ? work.first_backward.ns() : work.first_forward.ns();
  return backward ? work.layer_backward.ns() : work.layer_forward.ns();
}

// Stage s's data-parallel collectives a step, bucket by bucket on one stream as the slow path
// launches them (ChunkGradientBuckets), against the passes that hide them; `forward_ns` and
// `backward_ns` are one micro-batch's passes of the stage (all its chunks), whose average a
// chunk stands for the other chunks' passes. The reduction: chunk c's last backward is
// followed by the backwards of chunks c - 1 .. 0 of the last pp micro-batches (the interleaved
// schedule closes chunk by chunk, vp - 1 first: StageSchedule), c x pp chunk passes before the
// backward ends; within its own last backward each bucket is ready once its items' backward ops
// are through (the head's first, the embedding's last); what runs past the backward's end is
// exposed (chunk 0's last bucket at least). The gathers (ZeRO 1-2): from the step's start, in
// the order the forwards need them; chunk c's first forward runs c x pp chunk passes in (the
// warm-up's forwards), and a layer's forward waits for its bucket (the embedding and the head
// do not, as in the slow path). Without dp_overlap everything waits. Not modelled: with vp > 1
// and p2p_overlap=0 the slow path's device synchronize after each exchange also waits for the
// reductions launched so far, which keeps them from hiding behind later chunks.
StatusOr<DataParallelTimes> StageDataParallel(const ModelSpec& spec, const Layout& l,
                                              const LayoutWork& work, const GptCosts& costs,
                                              int64_t s, double forward_ns, double backward_ns) {
  const int64_t ranks = l.gradient_ranks();
  const auto vp = static_cast<double>(l.vp), pp = static_cast<double>(l.pp);
  const double forward_chunk_ns = forward_ns / vp, backward_chunk_ns = backward_ns / vp;
  DataParallelTimes out;
  // The data-parallel stream free again, from the backward's end (reductions) and from the
  // step's start (gathers); how late the gathers make the forwards.
  double reduce_free_ns = -std::numeric_limits<double>::infinity();
  double gather_free_ns = 0, delay_ns = 0;
  for (int64_t c = l.vp - 1; c >= 0; --c) {  // Reductions in the order chunks close.
    const int64_t v = c * l.pp + s;
    const std::vector<GradientBucket> buckets =
        ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, v), v);
    double pass_ns = work.chunk_backward.ns();  // The chunk's own last backward.
    for (const GradientBucket& b : buckets) {
      for (const int64_t item : b.items) pass_ns += ItemNs(work, item, true);
    }
    const double pass_start_ns = -static_cast<double>(c) * pp * backward_chunk_ns - pass_ns;
    double through_ns = 0;
    for (const GradientBucket& b : buckets) {
      for (const int64_t item : b.items) through_ns += ItemNs(work, item, true);
      LUMOS_ASSIGN_OR_RETURN(
          const double r,
          TimeCollective(
              costs, l.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
              b.parameters * static_cast<double>(l.grad_sync_bytes), ranks, work.dp_nodes));
      reduce_free_ns = std::max(reduce_free_ns, pass_start_ns + through_ns) + r;
      out.reduce_ns += r;
    }
  }
  for (int64_t c = 0; c < l.vp; ++c) {  // Gathers in the order the forwards need them.
    if (l.zero != 1 && l.zero != 2) break;
    const int64_t v = c * l.pp + s;
    const std::vector<GradientBucket> buckets =
        ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, v), v);
    double before_ns = 0;  // The chunk's forward before the bucket's first item.
    for (auto b = buckets.rbegin(); b != buckets.rend(); ++b) {  // Forward order.
      LUMOS_ASSIGN_OR_RETURN(
          const double g, TimeCollective(costs, CollectiveOp::kAllGather,
                                         b->parameters * l.gather_bytes(), ranks, work.dp_nodes));
      gather_free_ns += g;
      out.gather_ns += g;
      bool waited = false;  // The first layer this bucket feeds waits for it.
      for (auto item = b->items.rbegin(); item != b->items.rend(); ++item) {
        if (*item >= 0 && !waited) {
          const double needed_ns = static_cast<double>(c) * pp * forward_chunk_ns + before_ns;
          delay_ns = std::max(delay_ns, gather_free_ns - needed_ns);
          waited = true;
        }
        before_ns += ItemNs(work, *item, false);
      }
    }
  }
  out.exposed_ns =
      l.dp_overlap ? std::max(0.0, reduce_free_ns) + delay_ns : out.reduce_ns + out.gather_ns;
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
    // The stage whose collectives add the most to the step: what they expose, and the compute
    // they slow beside the rest (PlanSetup::overlap_slowdown).
    double most_ns = -1;
    const int64_t stages[] = {0, std::min<int64_t>(1, l.pp - 1), l.pp - 1};  // Non-decreasing.
    for (size_t i = 0; i < std::size(stages); ++i) {
      const int64_t s = stages[i];
      if (i > 0 && s == stages[i - 1]) continue;  // pp 1 or 2: a stage already walked.
      LUMOS_ASSIGN_OR_RETURN(
          const DataParallelTimes t,
          StageDataParallel(spec, l, work, costs, s, out.forward_ns, out.backward_ns));
      const double comm_ns = t.reduce_ns + t.gather_ns;
      const double adds_ns = t.exposed_ns + (comm_ns - t.exposed_ns) * stretch;
      if (adds_ns <= most_ns) continue;
      most_ns = adds_ns;
      out.dp_comm_ns = comm_ns;
      out.dp_exposed_ns = t.exposed_ns;
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
