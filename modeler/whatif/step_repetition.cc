#include "modeler/whatif/step_repetition.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

namespace lumos::modeler::whatif {
namespace {

constexpr uint32_t kNoStep = UINT32_MAX;

bool ProcessorOrder(EdgeKind kind) {
  return kind == EdgeKind::kThreadOrder || kind == EdgeKind::kStreamOrder;
}

uint64_t StepProcessorKey(uint32_t step, uint32_t processor) {
  return (uint64_t{step} << 32) | processor;
}

class Rewriter {
 public:
  Rewriter(const ExecutionGraph& g, const Scenario& base, const std::vector<StepCopies>& steps)
      : g_(g), base_(base), steps_(steps) {}

  StatusOr<RewrittenGraph> Run() {
    if (Status s = IndexSteps(); !s.ok()) return s;
    // Node ids are 32-bit: a rewrite past kMaxRewrittenNodes is refused before any is assigned.
    uint64_t total = 0;
    for (uint32_t n = 0; n < g_.nodes.size(); ++n) total += Copies(n);
    if (total > kMaxRewrittenNodes) {
      return Status::Error("the rewritten graph would have " + std::to_string(total) +
                           " nodes, more than the " + std::to_string(kMaxRewrittenNodes) +
                           " a graph can hold");
    }
    AssignIds();
    EmitNodes();
    EmitEdges();
    EmitSyncs();
    EmitCollectives();
    FinishGraph();
    return std::move(out_);
  }

 private:
  uint32_t Copies(uint32_t n) const {
    return step_of_[n] == kNoStep ? 1 : steps_[step_of_[n]].copies;
  }

  Status IndexSteps() {
    const size_t n = g_.nodes.size();
    step_of_.assign(n, kNoStep);
    for (uint32_t j = 0; j < steps_.size(); ++j) {
      for (uint32_t node : steps_[j].nodes) {
        if (node >= n) {
          return Status::Error("step " + std::to_string(j) + " names node " + std::to_string(node) +
                               ", beyond the graph's " + std::to_string(n));
        }
        if (step_of_[node] != kNoStep) {
          if (step_of_[node] == j) continue;  // Listed twice in one step: harmless.
          return Status::Error("node " + std::to_string(node) + " ('" +
                               std::string(g_.nodes[node].name) + "') is in steps " +
                               std::to_string(step_of_[node]) + " and " + std::to_string(j));
        }
        step_of_[node] = j;
      }
    }
    // A collective is repeated or removed whole: one with members in different steps, or some
    // outside any, stays out of them all.
    for (const CollectiveGroup& group : g_.collectives) {
      bool mixed = false;
      for (uint32_t m : group.nodes) mixed |= step_of_[m] != step_of_[group.nodes.front()];
      if (!mixed) continue;
      ++out_.collectives_left_out;
      for (uint32_t m : group.nodes) step_of_[m] = kNoStep;
    }
    position_.assign(n, 0);
    pred_edge_.assign(n, kNoNode);
    for (uint32_t p = 0; p < g_.processors.size(); ++p) {
      const auto& nodes = g_.processors[p].nodes;
      for (uint32_t i = 0; i < nodes.size(); ++i) {
        position_[nodes[i]] = i;
        const uint32_t j = step_of_[nodes[i]];
        if (j == kNoStep) continue;
        auto [it, inserted] = span_.try_emplace(StepProcessorKey(j, p), i, i);
        if (!inserted) it->second.second = i;
        const Node& x = g_.nodes[nodes[i]];
        auto [t, first] =
            time_span_.try_emplace(StepProcessorKey(j, x.rank_index), x.start_ns, x.end_ns());
        if (!first) {
          t->second.first = std::min(t->second.first, x.start_ns);
          t->second.second = std::max(t->second.second, x.end_ns());
        }
      }
    }
    for (uint32_t e = 0; e < g_.edges.size(); ++e) {
      if (ProcessorOrder(g_.edges[e].kind)) pred_edge_[g_.edges[e].to] = e;
    }
    // The nearest node at or before each node on its processor that survives.
    survivor_.assign(n, kNoNode);
    for (const Processor& p : g_.processors) {
      uint32_t last = kNoNode;
      for (uint32_t node : p.nodes) {
        if (Copies(node) > 0) last = node;
        survivor_[node] = last;
      }
    }
    return Status::Ok();
  }

  // Ids rank by rank in the original order, each step's copies after its last node of a rank.
  void AssignIds() {
    const size_t n = g_.nodes.size();
    out_.instance_begin.assign(n + 1, 0);
    for (size_t i = 0; i < n; ++i) {
      out_.instance_begin[i + 1] = out_.instance_begin[i] + Copies(static_cast<uint32_t>(i));
    }
    out_.instance_ids.assign(out_.instance_begin[n], kNoNode);
    // Per step, its nodes sorted; the copies of each rank's run go after the run's last node.
    std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, std::vector<uint32_t>>>> after;
    for (uint32_t j = 0; j < steps_.size(); ++j) {
      if (steps_[j].copies < 2) continue;
      std::vector<uint32_t> sorted;  // Without the members of collectives left out.
      for (uint32_t m : steps_[j].nodes) {
        if (step_of_[m] == j) sorted.push_back(m);
      }
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      size_t b = 0;
      while (b < sorted.size()) {
        size_t e = b;
        const uint32_t rank = g_.nodes[sorted[b]].rank_index;
        while (e < sorted.size() && g_.nodes[sorted[e]].rank_index == rank) ++e;
        after[sorted[e - 1]].push_back(
            {j, std::vector<uint32_t>(sorted.begin() + static_cast<ptrdiff_t>(b),
                                      sorted.begin() + static_cast<ptrdiff_t>(e))});
        b = e;
      }
    }
    uint32_t next = 0;
    out_.origin.reserve(out_.instance_ids.size());
    out_.copy.reserve(out_.instance_ids.size());
    shift_.reserve(out_.instance_ids.size());
    auto add = [&](uint32_t orig, uint32_t k, int64_t shift) {
      out_.instance_ids[out_.instance_begin[orig] + k] = next++;
      out_.origin.push_back(orig);
      out_.copy.push_back(k);
      shift_.push_back(shift);
    };
    for (uint32_t i = 0; i < n; ++i) {
      if (Copies(i) > 0) add(i, 0, 0);
      auto it = after.find(i);
      if (it == after.end()) continue;
      for (const auto& [j, run] : it->second) {
        int64_t begin = INT64_MAX, end = INT64_MIN;
        for (uint32_t m : run) {
          begin = std::min(begin, g_.nodes[m].start_ns);
          end = std::max(end, g_.nodes[m].end_ns());
        }
        const int64_t span = std::max<int64_t>(0, end - begin);
        for (uint32_t k = 1; k < steps_[j].copies; ++k) {
          for (uint32_t m : run) add(m, k, span * k);
        }
      }
    }
  }

  uint32_t Instance(uint32_t n, uint32_t k) const {
    return k < Copies(n) ? out_.instance_ids[out_.instance_begin[n] + k] : kNoNode;
  }
  uint32_t LastInstance(uint32_t n) const {
    const uint32_t c = Copies(n);
    return c == 0 ? kNoNode : Instance(n, c - 1);
  }

  // Whether `n` comes before (after) step j: on its processor, by position; on a processor the
  // step does not use, by measured time against the step's span on n's rank (an op that ran
  // during the step, like a collective left out of it, is neither).
  bool BeforeStep(uint32_t n, uint32_t j) const {
    auto it = span_.find(StepProcessorKey(j, g_.nodes[n].processor));
    if (it != span_.end()) return position_[n] < it->second.first;
    auto t = time_span_.find(StepProcessorKey(j, g_.nodes[n].rank_index));
    return t == time_span_.end() || g_.nodes[n].end_ns() <= t->second.first;
  }
  bool AfterStep(uint32_t n, uint32_t j) const {
    auto it = span_.find(StepProcessorKey(j, g_.nodes[n].processor));
    if (it != span_.end()) return position_[n] > it->second.second;
    auto t = time_span_.find(StepProcessorKey(j, g_.nodes[n].rank_index));
    return t == time_span_.end() || g_.nodes[n].start_ns >= t->second.second;
  }

  // What instance copy `k` of `v` depends on, for a dependency u -> v of the measured graph;
  // kNoNode: none (the file comment's rules).
  // A launch is who launched the op, not something it waits for: an op kept once (a member of
  // a collective left out of the steps) keeps the original's call as its launch.
  uint32_t SourceFor(uint32_t u, uint32_t v, uint32_t k, bool launch = false) const {
    const uint32_t su = step_of_[u], sv = step_of_[v];
    if (su != kNoStep && su == sv) return Instance(u, k);
    if (k >= 1 && sv != kNoStep && !BeforeStep(u, sv)) return kNoNode;
    if (su == kNoStep) return Instance(u, 0);
    if (steps_[su].copies == 0) {
      const uint32_t s = survivor_[u];
      return s == kNoNode ? kNoNode : LastInstance(s);
    }
    return !launch && AfterStep(v, su) ? LastInstance(u) : Instance(u, 0);
  }

  void EmitNodes() {
    const size_t count = out_.origin.size();
    ExecutionGraph& ng = out_.graph;
    ng.nodes.resize(count);
    out_.scenario.duration_ns.resize(count);
    if (!g_.node_source.empty()) ng.node_source.resize(count);
    for (uint32_t id = 0; id < count; ++id) {
      const uint32_t orig = out_.origin[id];
      Node node = g_.nodes[orig];
      node.start_ns += shift_[id];
      node.collective = kNoNode;
      node.sync = kNoNode;
      if (node.launch != kNoNode) {
        node.launch = SourceFor(node.launch, orig, out_.copy[id], /*launch=*/true);
      }
      ng.nodes[id] = node;
      out_.scenario.duration_ns[id] = base_.duration_ns[orig];
      if (!g_.node_source.empty()) ng.node_source[id] = g_.node_source[orig];
    }
    ng.processors.resize(g_.processors.size());
    for (uint32_t p = 0; p < g_.processors.size(); ++p) {
      const Processor& op = g_.processors[p];
      Processor& np = ng.processors[p];
      np.rank_index = op.rank_index;
      np.gpu = op.gpu;
      np.id = op.id;
      for (uint32_t i = 0; i < op.nodes.size(); ++i) {
        const uint32_t n = op.nodes[i];
        if (Copies(n) > 0) np.nodes.push_back(Instance(n, 0));
        const uint32_t j = step_of_[n];
        if (j == kNoStep || steps_[j].copies < 2) continue;
        const auto [first, last] = span_.at(StepProcessorKey(j, p));
        if (i != last) continue;
        for (uint32_t k = 1; k < steps_[j].copies; ++k) {
          for (uint32_t q = first; q <= last; ++q) {
            if (step_of_[op.nodes[q]] == j) np.nodes.push_back(Instance(op.nodes[q], k));
          }
        }
      }
    }
  }

  void AddEdge(const Edge& original, uint32_t from, uint32_t to, int64_t delay) {
    Edge e = original;
    e.from = from;
    e.to = to;
    edges_.push_back(e);
    delays_.push_back(delay);
  }

  void EmitEdges() {
    const ExecutionGraph& ng = out_.graph;
    // Processor order from the new node orders; each edge as the original's into its node.
    for (const Processor& p : ng.processors) {
      for (size_t i = 1; i < p.nodes.size(); ++i) {
        const uint32_t to = p.nodes[i];
        const uint32_t pe = pred_edge_[out_.origin[to]];
        Edge e;
        e.kind = p.gpu ? EdgeKind::kStreamOrder : EdgeKind::kThreadOrder;
        int64_t delay = 0;
        if (pe != kNoNode) {
          e = g_.edges[pe];
          delay = base_.delay_ns[pe];
        }
        AddEdge(e, p.nodes[i - 1], to, delay);
      }
    }
    for (uint32_t ei = 0; ei < g_.edges.size(); ++ei) {
      const Edge& e = g_.edges[ei];
      if (ProcessorOrder(e.kind)) continue;
      for (uint32_t k = 0; k < Copies(e.to); ++k) {
        const uint32_t from = SourceFor(e.from, e.to, k, e.kind == EdgeKind::kLaunch);
        if (from != kNoNode) AddEdge(e, from, Instance(e.to, k), base_.delay_ns[ei]);
      }
    }
  }

  void EmitSyncs() {
    ExecutionGraph& ng = out_.graph;
    for (uint32_t s = 0; s < g_.syncs.size(); ++s) {
      const SyncSpec& spec = g_.syncs[s];
      for (uint32_t k = 0; k < Copies(spec.node); ++k) {
        SyncSpec copy = spec;
        copy.node = Instance(spec.node, k);
        if (spec.record_node != kNoNode) {
          copy.record_node = SourceFor(spec.record_node, spec.node, k);
          if (copy.record_node == kNoNode && k > 0) {
            copy.record_node = SourceFor(spec.record_node, spec.node, 0);
          }
          if (copy.record_node == kNoNode) {
            // Its record was removed with nothing before it: wait for the record's stream.
            copy.target = SyncSpec::Target::kStream;
            copy.stream_processor = spec.record_stream;
            copy.inferred = true;
          }
        }
        ng.nodes[copy.node].sync = static_cast<uint32_t>(ng.syncs.size());
        ng.syncs.push_back(copy);
        out_.scenario.sync_min_ns.push_back(base_.sync_min_ns[s]);
        out_.scenario.sync_wake_ns.push_back(base_.sync_wake_ns[s]);
      }
    }
  }

  void EmitCollectives() {
    ExecutionGraph& ng = out_.graph;
    for (uint32_t c = 0; c < g_.collectives.size(); ++c) {
      const CollectiveGroup& group = g_.collectives[c];
      uint32_t most = 0;
      for (uint32_t m : group.nodes) most = std::max(most, Copies(m));
      for (uint32_t k = 0; k < most; ++k) {
        CollectiveGroup copy = group;
        copy.nodes.clear();
        copy.tail_ns.clear();
        for (size_t i = 0; i < group.nodes.size(); ++i) {
          const uint32_t member = Instance(group.nodes[i], k);
          if (member == kNoNode) continue;
          copy.nodes.push_back(member);
          copy.tail_ns.push_back(i < group.tail_ns.size() ? group.tail_ns[i] : 0);
        }
        if (copy.nodes.empty()) continue;
        copy.complete = group.complete && copy.nodes.size() == group.nodes.size();
        const auto index = static_cast<uint32_t>(ng.collectives.size());
        for (uint32_t member : copy.nodes) ng.nodes[member].collective = index;
        ng.collectives.push_back(std::move(copy));
        out_.scenario.transfer_ns.push_back(base_.transfer_ns[c]);
      }
    }
  }

  void FinishGraph() {
    ExecutionGraph& ng = out_.graph;
    // Edges grouped by source (CSR), each source's in the order made.
    const size_t count = ng.nodes.size();
    ng.out_begin.assign(count + 1, 0);
    for (const Edge& e : edges_) ++ng.out_begin[e.from + 1];
    for (size_t i = 0; i < count; ++i) ng.out_begin[i + 1] += ng.out_begin[i];
    std::vector<uint32_t> fill(ng.out_begin.begin(), ng.out_begin.end() - 1);
    ng.edges.resize(edges_.size());
    out_.scenario.delay_ns.resize(edges_.size());
    for (size_t i = 0; i < edges_.size(); ++i) {
      const uint32_t at = fill[edges_[i].from]++;
      ng.edges[at] = edges_[i];
      out_.scenario.delay_ns[at] = delays_[i];
    }
    ng.rank_offset_ns = g_.rank_offset_ns;
    ng.ranks = g_.ranks;
    ng.typical_launch_ns = g_.typical_launch_ns;
    ng.origin_ns = g_.origin_ns;
    ng.stats = g_.stats;
    for (uint64_t& kind : ng.stats.edges_by_kind) kind = 0;
    for (const Edge& e : ng.edges) ++ng.stats.edges_by_kind[static_cast<int>(e.kind)];
  }

  const ExecutionGraph& g_;
  const Scenario& base_;
  const std::vector<StepCopies>& steps_;
  std::vector<uint32_t> step_of_, position_, pred_edge_, survivor_;
  // (step, processor) -> first and last position of the step's nodes on the processor.
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> span_;
  // (step, rank index) -> the step's measured begin and end on the rank.
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> time_span_;
  std::vector<int64_t> shift_;
  std::vector<Edge> edges_;
  std::vector<int64_t> delays_;
  RewrittenGraph out_;
};

}  // namespace

uint32_t RewrittenGraph::Instance(uint32_t n, uint32_t k) const {
  return k < Instances(n) ? instance_ids[instance_begin[n] + k] : kNoNode;
}

StatusOr<RewrittenGraph> RepeatSteps(const ExecutionGraph& graph, const Scenario& base,
                                     const std::vector<StepCopies>& steps) {
  return Rewriter(graph, base, steps).Run();
}

RewrittenGraph Unchanged(const ExecutionGraph& graph, const Scenario& base) {
  RewrittenGraph out;
  out.graph = graph;
  out.scenario = base;
  const auto n = static_cast<uint32_t>(graph.nodes.size());
  out.origin.resize(n);
  out.copy.assign(n, 0);
  out.instance_begin.resize(n + 1);
  out.instance_ids.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    out.origin[i] = i;
    out.instance_begin[i] = i;
    out.instance_ids[i] = i;
  }
  out.instance_begin[n] = n;
  return out;
}

}  // namespace lumos::modeler::whatif
