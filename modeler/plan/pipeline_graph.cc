#include "modeler/plan/pipeline_graph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "modeler/sim/simulator.h"

namespace lumos::modeler::plan {
namespace {

using schema::CollectiveOp;

int64_t Ns(double ns) { return std::llround(std::max(0.0, ns)); }

WorkClass WorkOf(OpClass cls) {
  return cls == OpClass::kTensorParallel ? WorkClass::kCommunication : WorkClass::kCompute;
}

// Nodes on processors, stream-order edges as they are added, other edges by Wait.
class GraphMaker {
 public:
  uint32_t Processor(uint32_t rank, uint64_t id) {
    g_.processors.push_back({rank, true, id, {}});
    return static_cast<uint32_t>(g_.processors.size() - 1);
  }
  uint32_t Add(uint32_t processor, const char* name, double ns, WorkClass work) {
    const auto node = static_cast<uint32_t>(g_.nodes.size());
    Node n;
    n.duration_ns = Ns(ns);
    n.name = name;
    n.processor = processor;
    n.rank_index = g_.processors[processor].rank_index;
    n.kind = NodeKind::kKernel;
    n.work = work;
    g_.nodes.push_back(n);
    std::vector<uint32_t>& order = g_.processors[processor].nodes;
    if (!order.empty()) edges_.push_back({order.back(), node, 0, EdgeKind::kStreamOrder});
    order.push_back(node);
    return node;
  }
  void Wait(uint32_t from, uint32_t to) {
    if (from != kNoNode) edges_.push_back({from, to, 0, EdgeKind::kEventWait});
  }
  ExecutionGraph Finish(uint32_t ranks) {
    std::stable_sort(edges_.begin(), edges_.end(),
                     [](const Edge& a, const Edge& b) { return a.from < b.from; });
    g_.edges = std::move(edges_);
    g_.out_begin.assign(g_.nodes.size() + 1, 0);
    for (const Edge& e : g_.edges) ++g_.out_begin[e.from + 1];
    for (size_t i = 1; i < g_.out_begin.size(); ++i) g_.out_begin[i] += g_.out_begin[i - 1];
    g_.rank_offset_ns.assign(ranks, 0);
    g_.typical_launch_ns.assign(ranks, 0);
    return std::move(g_);
  }
  ExecutionGraph& graph() { return g_; }

 private:
  ExecutionGraph g_;
  std::vector<Edge> edges_;
};

// What a pass hands to the next virtual stage, and where the receiver starts.
using PassKey = std::tuple<bool, int64_t, int64_t>;  // backward, virtual stage, micro-batch.

// Megatron-LM's warm-up forwards on stage s before its first backward.
int64_t WarmupPasses(int64_t pp, int64_t vp, int64_t m, int64_t s) {
  const int64_t total = m * vp;
  int64_t warm = vp == 1 ? pp - s - 1 : (pp - s - 1) * 2 + (vp - 1) * pp;
  if (vp > 1 && m == pp) warm = total;  // Megatron: all forwards first.
  return std::min(warm, total);
}

}  // namespace

std::vector<PipelinePass> StageSchedule(int64_t pp, int64_t vp, int64_t m, int64_t s) {
  std::vector<PipelinePass> out;
  const int64_t total = m * vp;
  out.reserve(static_cast<size_t>(2 * total));
  auto pass = [&](int64_t k, bool backward) {
    const int64_t group = k / (pp * vp), in = k % (pp * vp);
    const int64_t chunk = backward ? vp - 1 - in / pp : in / pp;
    return PipelinePass{backward, chunk, vp == 1 ? k : group * pp + in % pp};
  };
  const int64_t warm = WarmupPasses(pp, vp, m, s);
  for (int64_t k = 0; k < warm; ++k) out.push_back(pass(k, false));
  for (int64_t k = 0; k < total - warm; ++k) {
    out.push_back(pass(warm + k, false));
    out.push_back(pass(k, true));
  }
  for (int64_t k = total - warm; k < total; ++k) out.push_back(pass(k, true));
  return out;
}

const std::vector<std::string>& SimulationAssumptions() {
  static const auto* const lines = new std::vector<std::string>{
      "slow path: one GPU a pipeline stage simulated as a graph, Megatron-LM's schedules",
      "slow path: a send starts once its pass ended and its receiver posted (NCCL's rendezvous)",
      "slow path: interleaved with p2p_overlap, a pass waits for the last exchange its way",
      "slow path: other exchanges block; batched ones synchronize (Megatron's batch_p2p_sync)",
      "slow path: gradient buckets reduced as each chunk's last backward ends",
      "slow path: ZeRO 1-2 weights gathered bucket by bucket at the step's start",
      "slow path: tied embeddings' gradient all-reduced by the end stages once both are ready",
      "slow path: kernels beside communication stretched by their share of the slowdown",
      "slow path: the stretched schedule simulated again until the step settles",
      "slow path: launches never late (no host time inside the step)",
  };
  return *lines;
}

int64_t PipelineNodeCount(const ModelSpec& spec, const Layout& l, const LayoutWork& work) {
  const int64_t m = l.micro_batches();
  const auto ops = static_cast<int64_t>(work.layer_forward.ops.size() +
                                        work.layer_backward.ops.size() + (l.zero == 3 ? 2 : 0));
  const auto ends =
      static_cast<int64_t>(work.first_forward.ops.size() + work.first_backward.ops.size() +
                           work.last_forward.ops.size() + work.last_backward.ops.size());
  const auto chunk_ops =
      static_cast<int64_t>(work.chunk_forward.ops.size() + work.chunk_backward.ops.size());
  // Layers, the stage ends, at most seven exchange nodes a pass (a send, two receives' post and
  // end, two waits), buckets and optimizers (one a layer at most), a wait and an end a stage,
  // the end stages' embedding gradient (two each).
  return m * (spec.layers * ops + ends + (14 + chunk_ops) * l.vp * l.pp) + spec.layers + 4 * l.pp +
         4;
}

StatusOr<double> SimulatedStepLowerBound(const ModelSpec& spec, const Layout& l,
                                         const LayoutWork& work, const GptCosts& costs) {
  const int64_t pp = l.pp, vp = l.vp, m = l.micro_batches();
  const int64_t virtual_stages = pp * vp;
  // A pass of chunk c on stage s, as BuildPipelineGraph lays its ops out (before any stretch),
  // each op rounded to a nanosecond as its node is: whole nanoseconds added up, as the
  // simulation adds them, so the bound never passes the step by a rounding.
  auto rounded = [](const PassWork& pass) {
    int64_t ns = 0;
    for (const PlanOp& op : pass.ops) ns += Ns(op.ns);
    return ns;
  };
  const int64_t layer_forward = rounded(work.layer_forward),
                first_forward = rounded(work.first_forward),
                last_forward = rounded(work.last_forward),
                chunk_forward = rounded(work.chunk_forward);
  const int64_t layer_backward = rounded(work.layer_backward),
                first_backward = rounded(work.first_backward),
                last_backward = rounded(work.last_backward),
                chunk_backward = rounded(work.chunk_backward);
  auto pass_ns = [&](int64_t s, int64_t c, bool backward) {
    const int64_t v = c * pp + s;
    int64_t ns = VirtualStageLayers(spec, l, v) * (backward ? layer_backward : layer_forward) +
                 (backward ? chunk_backward : chunk_forward);
    if (v == 0) ns += backward ? first_backward : first_forward;
    if (v == virtual_stages - 1) ns += backward ? last_backward : last_forward;
    return static_cast<double>(ns);
  };
  // Stage s starts with chunk 0's forward of the first micro-batch, which every stage before it
  // ran first; it ends with chunk 0's backward of the last, which every stage before it runs
  // after it (StageSchedule; its test checks both ends). In between, its stream runs all of
  // its passes one after the other.
  double pipeline = 0, ramp_in = 0, ramp_out = 0;
  for (int64_t s = 0; s < pp; ++s) {
    double busy = 0;
    for (int64_t c = 0; c < vp; ++c) busy += pass_ns(s, c, false) + pass_ns(s, c, true);
    pipeline = std::max(pipeline, ramp_in + static_cast<double>(m) * busy + ramp_out);
    ramp_in += pass_ns(s, 0, false);
    ramp_out += pass_ns(s, 0, true);
  }
  // Then stage 0's last gradient bucket (the embedding's: it waits for the whole pass) reduced,
  // and its optimizer.
  double tail = 0;
  const int64_t ranks = l.gradient_ranks();
  if (ranks > 1) {
    const double bucket =
        ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, 0), 0).back().parameters;
    LUMOS_ASSIGN_OR_RETURN(
        tail,
        TimeCollective(costs, l.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce,
                       bucket * static_cast<double>(l.grad_sync_bytes), ranks, work.dp_nodes));
  }
  const auto parameters = static_cast<double>(work.memory.stages.front().parameters);
  const double shard = parameters / (l.zero >= 1 ? static_cast<double>(ranks) : 1.0);
  LUMOS_ASSIGN_OR_RETURN(double adam, TimeOptimizer(costs, shard, parameters, work.fp8_cast_bytes));
  // Stage 0 holds the word embedding: with tied embeddings its gradient's all-reduce with the
  // last stage comes between the two.
  return pipeline + static_cast<double>(Ns(tail) + Ns(work.embedding_grad_ns) + Ns(adam));
}

StatusOr<PipelineGraph> BuildPipelineGraph(const ModelSpec& spec, const Layout& l,
                                           const LayoutWork& work, const GptCosts& costs) {
  const int64_t pp = l.pp, vp = l.vp, m = l.micro_batches();
  const int64_t virtual_stages = pp * vp;
  const int64_t count = PipelineNodeCount(spec, l, work);
  if (count > kMaxPipelineNodes) {
    return ErrorStatus(
        "the step's graph would hold %lld nodes (%lld micro-batches x %lld layers), more than "
        "the slow path simulates (%lld): fewer micro-batches, or the fast path alone",
        static_cast<long long>(count), static_cast<long long>(m),
        static_cast<long long>(spec.layers), static_cast<long long>(kMaxPipelineNodes));
  }
  const int64_t ranks = l.gradient_ranks();  // dp x cp: the same weights' copies.
  const bool dp = ranks > 1;
  const CollectiveOp reduce_op =
      l.zero >= 1 ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
  auto collective = [&](CollectiveOp op, double bytes) {
    return TimeCollective(costs, op, bytes, ranks, work.dp_nodes);
  };
  const auto layer_parameters = static_cast<double>(work.layer_parameters);

  GraphMaker maker;
  maker.graph().nodes.reserve(static_cast<size_t>(count));
  PipelineGraph out;
  // Exchange streams a direction: NCCL matches a peer's sends and receives in order.
  std::vector<uint32_t> send_next(pp), send_prev(pp), recv_prev(pp), recv_next(pp);
  std::vector<uint32_t> dp_stream(pp), gather(pp);
  for (int64_t s = 0; s < pp; ++s) {
    const auto rank = static_cast<uint32_t>(s);
    maker.graph().ranks.push_back(static_cast<int32_t>(s * l.tp * l.cp * l.dp));
    out.compute_stream.push_back(maker.Processor(rank, 1));
    send_next[s] = maker.Processor(rank, 2);
    dp_stream[s] = maker.Processor(rank, 3);
    gather[s] = maker.Processor(rank, 4);
    send_prev[s] = maker.Processor(rank, 5);
    recv_prev[s] = maker.Processor(rank, 6);
    recv_next[s] = maker.Processor(rank, 7);
  }

  auto buckets_of = [&](int64_t v) {
    return ChunkGradientBuckets(work, l, VirtualStageLayers(spec, l, v), v);
  };

  // Keyed by the receiving pass: the sender's transfer, and the receiver's post and end.
  std::map<PassKey, uint32_t> transfers;
  std::map<PassKey, std::pair<uint32_t, uint32_t>> receives;
  // The end stages' embedding gradient all-reduce: each side's readiness and its all-reduce.
  std::vector<std::pair<uint32_t, uint32_t>> embedding_grad;
  // Megatron-LM's exchanges: overlapped (interleaved, overlap_p2p_comm) or blocking, batched
  // with a device synchronize after each (batch_p2p_comm, batch_p2p_sync: its 1F1B, and
  // interleaved without the overlap).
  const bool overlapped = vp > 1 && l.p2p_overlap;
  for (int64_t s = 0; s < pp; ++s) {
    const uint32_t compute = out.compute_stream[s];
    const std::vector<PipelinePass> schedule = StageSchedule(pp, vp, m, s);
    const auto passes = static_cast<int64_t>(schedule.size());
    const int64_t warm = WarmupPasses(pp, vp, m, s);
    int64_t first_backward = passes, last_forward = -1;
    for (int64_t i = 0; i < passes; ++i) {
      if (schedule[i].backward) first_backward = std::min(first_backward, i);
      if (!schedule[i].backward) last_forward = i;
    }
    auto virtual_stage = [&](const PipelinePass& p) { return p.chunk * pp + s; };
    auto needs_input = [&](const PipelinePass& p) {
      return p.backward ? virtual_stage(p) + 1 < virtual_stages : virtual_stage(p) > 0;
    };
    auto has_output = [&](const PipelinePass& p) {
      return p.backward ? virtual_stage(p) > 0 : virtual_stage(p) + 1 < virtual_stages;
    };
    auto next_same = [&](int64_t i) {
      for (int64_t j = i + 1; j < passes; ++j) {
        if (schedule[j].backward == schedule[i].backward) return j;
      }
      return passes;
    };
    std::vector<char> posted(schedule.size(), 0);
    auto compute_last = [&] {
      const std::vector<uint32_t>& nodes = maker.graph().processors[compute].nodes;
      return nodes.empty() ? kNoNode : nodes.back();
    };
    // A receive posted where the compute stream stands (PyTorch makes NCCL's stream wait for
    // it); the transfer ends it. Returns its end.
    auto post_recv = [&](int64_t j) {
      const PipelinePass& q = schedule[j];
      posted[j] = 1;
      const uint32_t stream = q.backward ? recv_next[s] : recv_prev[s];
      const uint32_t at = compute_last();
      const uint32_t post = maker.Add(stream, "recv_posted", 0, WorkClass::kCommunication);
      maker.Wait(at, post);
      const uint32_t done = maker.Add(stream, q.backward ? "recv_backward" : "recv_forward", 0,
                                      WorkClass::kCommunication);
      receives[{q.backward, virtual_stage(q), q.micro}] = {post, done};
      return done;
    };
    auto post_send = [&](const PipelinePass& p) {
      const uint32_t at = compute_last();
      const uint32_t node = maker.Add(p.backward ? send_prev[s] : send_next[s],
                                      p.backward ? "send_backward" : "send_forward", work.p2p_ns,
                                      WorkClass::kCommunication);
      maker.Wait(at, node);
      const int64_t v = virtual_stage(p);
      transfers[{p.backward, p.backward ? v - 1 : v + 1, p.micro}] = node;
      return node;
    };
    std::vector<uint32_t> blocking;         // Waited for before the next pass.
    std::vector<uint32_t> by_direction[2];  // Overlapped: before the next pass that way.
    auto wait_for = [&](std::vector<uint32_t>* ops) {
      if (ops->empty()) return;
      const uint32_t w = maker.Add(compute, "p2p_wait", 0, WorkClass::kCommunication);
      for (uint32_t op : *ops) maker.Wait(op, w);
      ops->clear();
    };
    uint32_t last_reduce = kNoNode;  // The last gradient bucket launched so far.
    int64_t held_forward = -1;       // Interleaved, blocking: a steady forward's exchange waits for
                                     // the backward after it (one four-way exchange).
    // ZeRO 1-2: the updated weights gathered at the step's start, bucket by bucket in the
    // order the forwards need them; a layer's first forward waits for its bucket.
    std::map<std::pair<int64_t, int64_t>, uint32_t> weights_ready;  // (chunk, item) -> gather.
    const bool gathers = dp && (l.zero == 1 || l.zero == 2);
    if (gathers && l.dp_overlap) {
      for (int64_t c = 0; c < vp; ++c) {
        std::vector<GradientBucket> buckets = buckets_of(c * pp + s);
        for (auto b = buckets.rbegin(); b != buckets.rend(); ++b) {
          LUMOS_ASSIGN_OR_RETURN(
              double ns, collective(CollectiveOp::kAllGather, l.gather_bytes() * b->parameters));
          const uint32_t node =
              maker.Add(dp_stream[s], "dp_weight_all_gather", ns, WorkClass::kCommunication);
          for (int64_t item : b->items) weights_ready[{c, item}] = node;
        }
      }
    }
    std::vector<uint32_t> recent_layers;  // ZeRO 3: the last node of each layer pass so far.
    double stage_parameters = 0;
    std::vector<double> deferred;  // Without dp_overlap: buckets reduced after the backward.
    for (int64_t i = 0; i < passes; ++i) {
      const PipelinePass& p = schedule[i];
      const int64_t v = p.chunk * pp + s;
      const bool first_stage = v == 0, last_stage = v == virtual_stages - 1;
      wait_for(&blocking);
      if (overlapped) wait_for(&by_direction[p.backward ? 1 : 0]);
      if (needs_input(p) && !posted[i]) {
        blocking.push_back(post_recv(i));
        wait_for(&blocking);
      }
      uint32_t first = kNoNode, last = kNoNode;
      std::map<int64_t, uint32_t> item_end;  // Gradients ready (last micro-batch's backward).
      auto add_ops = [&](const PassWork& pass, int64_t item) {
        for (const PlanOp& op : pass.ops) {
          last = maker.Add(compute, op.name, op.ns, WorkOf(op.cls));
          if (first == kNoNode) first = last;
        }
        item_end[item] = last;
      };
      auto add_layer = [&](const PassWork& pass, int64_t layer) {
        const size_t before = maker.graph().nodes.size();
        uint32_t gathered = kNoNode;
        if (dp && l.zero == 3) {
          gathered = maker.Add(gather[s], "dp_weight_all_gather", 0, WorkClass::kCommunication);
          LUMOS_ASSIGN_OR_RETURN(
              double ns, collective(CollectiveOp::kAllGather, l.gather_bytes() * layer_parameters));
          maker.graph().nodes[gathered].duration_ns = Ns(ns);
          // At most two layers' weights gathered ahead of the one running.
          if (recent_layers.size() >= 2)
            maker.Wait(recent_layers[recent_layers.size() - 2], gathered);
        }
        add_ops(pass, layer);
        const auto layer_first = static_cast<uint32_t>(before + (gathered != kNoNode ? 1 : 0));
        maker.Wait(gathered, layer_first);
        if (!p.backward && p.micro == 0) {
          auto it = weights_ready.find({p.chunk, layer});
          if (it != weights_ready.end()) maker.Wait(it->second, layer_first);
        }
        recent_layers.push_back(last);
        return Status::Ok();
      };
      if (!p.backward) {
        if (first_stage) add_ops(work.first_forward, -2);
        const int64_t chunk_layers = VirtualStageLayers(spec, l, v);
        for (int64_t i = 0; i < chunk_layers; ++i)
          LUMOS_RETURN_IF_ERROR(add_layer(work.layer_forward, i));
        if (!work.chunk_forward.ops.empty()) add_ops(work.chunk_forward, -3);
        if (last_stage) add_ops(work.last_forward, -1);
      } else {
        if (last_stage) add_ops(work.last_backward, -1);
        for (int64_t i = VirtualStageLayers(spec, l, v) - 1; i >= 0; --i) {
          LUMOS_RETURN_IF_ERROR(add_layer(work.layer_backward, i));
        }
        if (!work.chunk_backward.ops.empty()) add_ops(work.chunk_backward, -3);
        if (first_stage) add_ops(work.first_backward, -2);
      }
      if (p.backward && p.micro == m - 1) {
        // This chunk's gradients are complete: its buckets reduced as they fill.
        for (const GradientBucket& b : buckets_of(v)) {
          stage_parameters += b.parameters;
          if (!dp) continue;
          if (!l.dp_overlap) {
            deferred.push_back(b.parameters);
            continue;
          }
          LUMOS_ASSIGN_OR_RETURN(
              double ns,
              collective(reduce_op, b.parameters * static_cast<double>(l.grad_sync_bytes)));
          const uint32_t node =
              maker.Add(dp_stream[s], "dp_gradient_reduce", ns, WorkClass::kCommunication);
          maker.Wait(item_end[b.items.back()], node);
          last_reduce = node;
        }
      }
      // The exchange after the pass: its output sent, the input of the pass that follows (1F1B)
      // or of the next pass this way (interleaved) received; before the first backward, its
      // gradient's receive too.
      std::vector<uint32_t> call;
      const bool steady_forward =
          !p.backward && i >= warm && i + 1 < passes && schedule[i + 1].backward;
      auto exchange = [&](int64_t k) {
        if (has_output(schedule[k])) call.push_back(post_send(schedule[k]));
        const int64_t j = vp == 1 ? k + 1 : next_same(k);
        if (j < passes && needs_input(schedule[j]) && !posted[j]) call.push_back(post_recv(j));
      };
      // Megatron receives the first backward's gradient in the last warm-up exchange (1F1B:
      // the first steady forward's, which receives the next pass's input anyway).
      const bool first_gradient =
          first_backward < passes && (vp == 1 ? i + 1 == first_backward : i + 1 == warm);
      if (vp > 1 && !overlapped && steady_forward) {
        held_forward = i;
        continue;
      }
      if (held_forward >= 0) {
        exchange(held_forward);
        held_forward = -1;
      }
      exchange(i);
      if (first_gradient && needs_input(schedule[first_backward]) && !posted[first_backward]) {
        const uint32_t done = post_recv(first_backward);
        (overlapped ? by_direction[1] : call).push_back(done);
      }
      if (call.empty()) continue;
      // The device synchronize: the gradient reductions launched so far (the weights' gathers
      // are queued at the step's start here, where Megatron launches them as forwards need them).
      if (!overlapped && last_reduce != kNoNode) call.push_back(last_reduce);
      const bool cooldown = p.backward && i > last_forward;
      std::vector<uint32_t>& into =
          !overlapped || cooldown ? blocking : by_direction[p.backward ? 1 : 0];
      into.insert(into.end(), call.begin(), call.end());
    }
    // The last backward's end, before the wait for its exchange (which is the sends', or with a
    // device synchronize the reduction's: exposed after it either way).
    const uint32_t backward_end = maker.graph().processors[compute].nodes.back();
    wait_for(&blocking);
    out.last_backward.push_back(backward_end);
    for (const double parameters : deferred) {
      LUMOS_ASSIGN_OR_RETURN(
          double ns, collective(reduce_op, parameters * static_cast<double>(l.grad_sync_bytes)));
      maker.Wait(backward_end,
                 maker.Add(dp_stream[s], "dp_gradient_reduce", ns, WorkClass::kCommunication));
    }
    // The memory model counts the end stages' extras exactly (position embeddings, the final
    // norm): its figure where it has one, as the fast path's optimizer takes it.
    const std::vector<models::StageMemory>& stages = work.memory.stages;
    if (s == 0) stage_parameters = static_cast<double>(stages.front().parameters);
    if (s == pp - 1) stage_parameters = static_cast<double>(stages.back().parameters);
    const double shard = stage_parameters / (l.zero >= 1 ? static_cast<double>(ranks) : 1.0);
    LUMOS_ASSIGN_OR_RETURN(double adam,
                           TimeOptimizer(costs, shard, stage_parameters, work.fp8_cast_bytes));
    if (work.embedding_grad_ns > 0 && (s == 0 || s == pp - 1)) {
      // After the stage's own reduction (the data-parallel stream's order), with the other end.
      const uint32_t ready =
          maker.Add(dp_stream[s], "embedding_grad_ready", 0, WorkClass::kCommunication);
      maker.Wait(backward_end, ready);
      embedding_grad.push_back(
          {ready, maker.Add(dp_stream[s], "embedding_grad_all_reduce", work.embedding_grad_ns,
                            WorkClass::kCommunication)});
    }
    const uint32_t optimizer = maker.Add(compute, "optimizer", adam, WorkClass::kCompute);
    const std::vector<uint32_t>& reduced = maker.graph().processors[dp_stream[s]].nodes;
    if (!reduced.empty()) maker.Wait(reduced.back(), optimizer);
    out.optimizer_node.push_back(optimizer);
    uint32_t end = optimizer;
    if (gathers && !l.dp_overlap) {  // The updated weights gathered before the step ends.
      uint32_t gathered = kNoNode;
      for (int64_t c = 0; c < vp; ++c) {
        for (const GradientBucket& b : buckets_of(c * pp + s)) {
          LUMOS_ASSIGN_OR_RETURN(
              double ns, collective(CollectiveOp::kAllGather, l.gather_bytes() * b.parameters));
          gathered = maker.Add(dp_stream[s], "dp_weight_all_gather", ns, WorkClass::kCommunication);
          maker.Wait(optimizer, gathered);
        }
      }
      end = maker.Add(compute, "weights_gathered", 0, WorkClass::kCommunication);
      maker.Wait(gathered, end);
    }
    out.end_node.push_back(end);
  }

  if (embedding_grad.size() == 2) {  // An all-reduce: each side starts once both are ready.
    maker.Wait(embedding_grad[0].first, embedding_grad[1].second);
    maker.Wait(embedding_grad[1].first, embedding_grad[0].second);
  }
  // Each transfer starts when its sender's pass has ended and its receiver has posted.
  if (transfers.size() != receives.size()) {
    return ErrorStatus("the pipeline graph of %s has %zu sends for %zu receives",
                       LayoutText(l).c_str(), transfers.size(), receives.size());
  }
  for (const auto& [key, node] : transfers) {
    const auto it = receives.find(key);
    if (it == receives.end()) {
      return ErrorStatus("the pipeline graph of %s sends to a pass that receives nothing",
                         LayoutText(l).c_str());
    }
    maker.Wait(it->second.first, node);
    maker.Wait(node, it->second.second);
  }
  out.graph = maker.Finish(static_cast<uint32_t>(pp));
  return out;
}

namespace {

// Simulates the step with each compute kernel stretched by the communication the schedule puts
// beside it on its GPU (PlanSetup::overlap_slowdown): overlapped for o, a kernel takes
// o s / (1 + s) longer. The overlaps move as the kernels stretch, so a few rounds, each from the
// last one's schedule, until the step moves by less than 0.01 %.
constexpr int kOverlapRounds = 6;

SimResult SimulateWithContention(const PipelineGraph& built, double slowdown, Scenario* scenario) {
  const ExecutionGraph& g = built.graph;
  SimResult r = Simulate(g, *scenario);
  if (!(slowdown > 0) || r.not_run > 0) return r;
  const double stretch = slowdown / (1 + slowdown);
  // Communication beside the compute streams: every comm node off them.
  std::vector<char> compute(g.processors.size(), 0);
  for (uint32_t p : built.compute_stream) compute[p] = 1;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> busy(g.ranks.size());
  auto step_of = [&](const SimResult& sim) {
    int64_t end = 0;
    for (int64_t e : sim.end_ns) end = std::max(end, e);
    return end;
  };
  int64_t last_step = step_of(r);
  for (int round = 0; round < kOverlapRounds; ++round) {
    for (auto& v : busy) v.clear();
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      if (node.work != WorkClass::kCommunication || compute[node.processor] != 0 ||
          r.end_ns[n] <= r.start_ns[n]) {
        continue;
      }
      busy[node.rank_index].push_back({r.start_ns[n], r.end_ns[n]});
    }
    for (auto& v : busy) {  // Merged, so two collectives at once count once.
      std::sort(v.begin(), v.end());
      size_t out = 0;
      for (const auto& iv : v) {
        if (out > 0 && iv.first <= v[out - 1].second) {
          v[out - 1].second = std::max(v[out - 1].second, iv.second);
        } else {
          v[out++] = iv;
        }
      }
      v.resize(out);
    }
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const Node& node = g.nodes[n];
      if (node.work != WorkClass::kCompute || node.duration_ns <= 0) continue;
      const std::vector<std::pair<int64_t, int64_t>>& v = busy[node.rank_index];
      const int64_t start = r.start_ns[n], end = r.end_ns[n];
      auto it = std::upper_bound(v.begin(), v.end(), std::make_pair(start, INT64_MAX));
      if (it != v.begin()) --it;
      int64_t overlapped = 0;
      for (; it != v.end() && it->first < end; ++it) {
        overlapped += std::max<int64_t>(0, std::min(end, it->second) - std::max(start, it->first));
      }
      scenario->duration_ns[n] =
          node.duration_ns + std::llround(static_cast<double>(overlapped) * stretch);
    }
    r = Simulate(g, *scenario);
    if (r.not_run > 0) return r;
    const int64_t step = step_of(r);
    const bool settled = std::abs(static_cast<double>(step - last_step)) <
                         1e-4 * static_cast<double>(std::max<int64_t>(1, step));
    last_step = step;
    if (settled) break;
  }
  return r;
}

}  // namespace

StatusOr<SimulatedStep> SimulateStep(const ModelSpec& spec, const Layout& layout,
                                     const GptCosts& costs, const PlanSetup& setup) {
  LUMOS_RETURN_IF_ERROR(CheckLayout(spec, layout, setup.gpus_per_node));
  LUMOS_ASSIGN_OR_RETURN(LayoutWork work, LayoutWorkOf(spec, layout, costs, setup));
  LUMOS_ASSIGN_OR_RETURN(PipelineGraph built, BuildPipelineGraph(spec, layout, work, costs));
  const ExecutionGraph& g = built.graph;
  Scenario scenario = MeasuredScenario(g);
  const SimResult r = SimulateWithContention(built, setup.overlap_slowdown, &scenario);
  if (r.not_run > 0) {
    return ErrorStatus("the pipeline graph of %s deadlocked: %s", LayoutText(layout).c_str(),
                       r.diagnostics.empty() ? "" : r.diagnostics.front().what.c_str());
  }
  SimulatedStep out;
  out.nodes = g.nodes.size();
  for (size_t s = 0; s < built.end_node.size(); ++s) {
    const uint32_t end = built.end_node[s];
    if (s > 0 && r.end_ns[end] <= out.step_ns) continue;
    out.step_ns = static_cast<double>(r.end_ns[end]);
    out.stage = static_cast<int64_t>(s);
  }
  out.host_ns = setup.host_step_ns;
  out.step_ns += out.host_ns;
  const auto stage = static_cast<size_t>(out.stage);
  double busy = 0;
  for (uint32_t node : g.processors[built.compute_stream[stage]].nodes) {
    if (node != built.optimizer_node[stage] && node != built.end_node[stage]) {
      busy += static_cast<double>(scenario.duration_ns[node]);
      out.overlap_cost_ns +=
          static_cast<double>(scenario.duration_ns[node] - g.nodes[node].duration_ns);
    }
  }
  for (const Node& n : g.nodes) {
    if (n.rank_index != stage) continue;
    const std::string_view name = n.name;
    const auto ns = static_cast<double>(n.duration_ns);
    if (name == "dp_gradient_reduce" || name == "dp_weight_all_gather") out.dp_comm_ns += ns;
    if (name == "embedding_grad_all_reduce") out.embedding_grad_ns += ns;
    if (name == "send_forward" || name == "send_backward") out.sends_ns += ns;
  }
  const auto backward_end = static_cast<double>(r.end_ns[built.last_backward[stage]]);
  const uint32_t optimizer = built.optimizer_node[stage];
  out.busy_ns = busy;
  out.idle_ns = backward_end - busy;
  // Before the optimizer (the gradients' reduction) and after it (ZeRO's gathers, no overlap).
  out.dp_exposed_ns = static_cast<double>(r.start_ns[optimizer]) - backward_end +
                      static_cast<double>(r.end_ns[built.end_node[stage]] - r.end_ns[optimizer]) -
                      out.embedding_grad_ns;
  out.optimizer_ns = static_cast<double>(r.end_ns[optimizer] - r.start_ns[optimizer]);
  return out;
}

}  // namespace lumos::modeler::plan
