#include "modeler/sim/simulator.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>

#include "modeler/sim/radix_queue.h"

namespace lumos::modeler {
namespace {

class Simulation {
 public:
  Simulation(const ExecutionGraph& g, const Scenario& s,
             const std::function<void(double)>& progress)
      : g_(g), s_(s), progress_(progress) {}

  SimResult Run() {
    const size_t n = g_.nodes.size();
    r_.start_ns.assign(n, SimResult::kNotRun);
    r_.end_ns.assign(n, SimResult::kNotRun);
    r_.start_cause_edge.assign(n, kNoNode);
    r_.end_cause.assign(n, Cause::kOwnDuration);
    r_.end_cause_node.assign(n, kNoNode);
    earliest_.assign(n, INT64_MIN);
    pending_.assign(n, 0);
    waiting_targets_.assign(n, 0);
    position_.assign(n, 0);
    arrived_.assign(g_.collectives.size(), 0);
    history_.resize(g_.processors.size());
    prefix_.assign(g_.processors.size(), 0);
    launched_.assign(n, 0);
    streams_of_rank_.resize(g_.ranks.size());
    for (uint32_t p = 0; p < g_.processors.size(); ++p) {
      const Processor& processor = g_.processors[p];
      for (size_t i = 0; i < processor.nodes.size(); ++i) {
        position_[processor.nodes[i]] = static_cast<uint32_t>(i);
      }
      if (processor.gpu) {
        streams_of_rank_[processor.rank_index].push_back(p);
        history_[p].reserve(processor.nodes.size());  // At most one entry per op.
      }
    }
    // The little the event loop needs per node, packed: reading whole 64-byte Nodes in time
    // order across hundreds of ranks missed the cache on every node (perf).
    flags_.assign(n, 0);
    processor_.assign(n, 0);
    for (uint32_t node = 0; node < n; ++node) {
      const Node& x = g_.nodes[node];
      processor_[node] = x.processor;
      if (x.gpu() && x.launch == kNoNode) flags_[node] |= kUnlaunchedGpu;
      if (x.sync != kNoNode) flags_[node] |= kSyncNode;
      if (x.gpu() && x.collective != kNoNode) flags_[node] |= kCollectiveNode;
    }
    for (const Edge& e : g_.edges) ++pending_[e.to];
    for (uint32_t node = 0; node < n; ++node) {
      if (pending_[node] == 0) {
        earliest_[node] = g_.nodes[node].start_ns;  // A root: its measured start.
        Push(node);
      }
    }
    uint64_t popped = 0;
    while (!ready_.empty()) {
      const uint32_t node = ready_.Pop();
      StartNode(node, earliest_[node]);
      if (progress_ && (++popped & 0xFFFF) == 0) {
        progress_(static_cast<double>(popped) / static_cast<double>(n));
      }
    }
    for (uint32_t node = 0; node < n; ++node) {
      if (r_.ran(node)) continue;
      ++r_.not_run;
      if (r_.diagnostics.size() < 10) {
        const Node& x = g_.nodes[node];
        r_.diagnostics.push_back(
            {static_cast<uint32_t>(g_.ranks[x.rank_index]), x.start_ns,
             "'" + std::string(x.name) + "' never ran in the replay (" +
                 (r_.start_ns[node] != SimResult::kNotRun
                      ? "it started but waited forever for a sync target or collective peer"
                      : "a dependency never finished") +
                 ")",
             x.name});
      }
    }
    return std::move(r_);
  }

 private:
  void Push(uint32_t node) { ready_.Push(earliest_[node], node); }

  void Release(uint32_t edge, int64_t at) {
    const Edge& e = g_.edges[edge];
    const int64_t candidate = at + s_.delay_ns[edge];
    if (r_.start_cause_edge[e.to] == kNoNode || candidate > earliest_[e.to]) {
      earliest_[e.to] = candidate;
      r_.start_cause_edge[e.to] = edge;
    }
    if (--pending_[e.to] == 0) Push(e.to);
  }

  // The last op on a stream whose launch had started at or before `time` (kNoNode: none).
  uint32_t LastLaunched(uint32_t stream, int64_t time) const {
    const auto& history = history_[stream];
    // Syncs ask about the present (everything launched so far) far more often than the past.
    if (!history.empty() && history.back().first <= time) return history.back().second;
    auto it = std::upper_bound(history.begin(), history.end(), std::make_pair(time, UINT32_MAX));
    // The history holds the FIFO frontier only, so the last entry by then is the furthest op.
    return it == history.begin() ? kNoNode : std::prev(it)->second;
  }

  // The history records the stream's launched prefix: the last op such that it and every op
  // before it on the stream have been launched. A sync waits for that op. Launches come in
  // stream order in a measurement; a what-if can make a thread launch later ops of a shared
  // stream before another thread launches an earlier one, and a sync must not then wait for
  // ops that cannot run before an op launched after it (CUDA would have queued them behind).
  void NoteLaunch(uint32_t op, int64_t time) {
    const uint32_t stream = processor_[op];
    launched_[op] = 1;
    const std::vector<uint32_t>& ops = g_.processors[stream].nodes;
    uint32_t& prefix = prefix_[stream];
    if (position_[op] != prefix) return;  // A gap before it: covered when the gap fills.
    while (prefix < ops.size() && launched_[ops[prefix]]) ++prefix;
    auto& history = history_[stream];
    // Pops come in time order (a negative slack aside: clamped), so the history stays sorted.
    if (!history.empty()) time = std::max(time, history.back().first);
    history.push_back({time, ops[prefix - 1]});
  }

  void StartNode(uint32_t node, int64_t time) {
    const uint8_t flags = flags_[node];
    r_.start_ns[node] = time;
    // Launches: released now, the API call's start.
    if (flags & kUnlaunchedGpu) NoteLaunch(node, time);
    for (uint32_t e = g_.out_begin[node]; e < g_.out_begin[node + 1]; ++e) {
      if (g_.edges[e].from_start()) {
        NoteLaunch(g_.edges[e].to, time);
        Release(e, time);
      }
    }
    if (flags & kSyncNode) return StartSync(node, time);
    if (flags & kCollectiveNode) return ArriveCollective(node);
    Finish(node, time + s_.duration_ns[node], Cause::kOwnDuration, kNoNode);
  }

  void StartSync(uint32_t node, int64_t time) {
    const uint32_t index = g_.nodes[node].sync;
    const SyncSpec& spec = g_.syncs[index];
    std::vector<uint32_t> targets;
    auto add = [&](uint32_t stream, int64_t at) {
      const uint32_t op = LastLaunched(stream, at);
      if (op != kNoNode) targets.push_back(op);
    };
    switch (spec.target) {
      case SyncSpec::Target::kStream:
        add(spec.stream_processor, time);
        break;
      case SyncSpec::Target::kDevice:
        for (uint32_t stream : streams_of_rank_[g_.nodes[node].rank_index]) add(stream, time);
        break;
      case SyncSpec::Target::kEvent:
        if (r_.start_ns[spec.record_node] != SimResult::kNotRun) {
          add(spec.record_stream, r_.start_ns[spec.record_node]);
        }
        break;
    }
    uint32_t unfinished = 0;
    for (uint32_t op : targets) {
      if (!r_.ran(op)) {
        waiters_[op].push_back(node);
        flags_[op] |= kHasWaiters;
        ++unfinished;
      }
    }
    sync_targets_[node] = std::move(targets);
    waiting_targets_[node] = unfinished;
    if (unfinished == 0) FinishSync(node);
  }

  void FinishSync(uint32_t node) {
    const int64_t start = r_.start_ns[node];
    int64_t end = start + s_.sync_min_ns[g_.nodes[node].sync];
    Cause cause = Cause::kOwnDuration;
    uint32_t cause_node = kNoNode;
    auto it = sync_targets_.find(node);
    if (it != sync_targets_.end()) {
      for (uint32_t op : it->second) {
        const int64_t candidate = r_.end_ns[op] + s_.sync_wake_ns[g_.nodes[node].sync];
        if (candidate > end) {
          end = candidate;
          cause = Cause::kSyncTarget;
          cause_node = op;
        }
      }
      sync_targets_.erase(it);
    }
    Finish(node, end, cause, cause_node);
  }

  void ArriveCollective(uint32_t node) {
    const uint32_t index = g_.nodes[node].collective;
    const CollectiveGroup& group = g_.collectives[index];
    if (++arrived_[index] < group.nodes.size()) return;
    int64_t latest = INT64_MIN;
    uint32_t last = kNoNode;
    for (uint32_t member : group.nodes) {
      if (r_.start_ns[member] > latest) {
        latest = r_.start_ns[member];
        last = member;
      }
    }
    const int64_t end = latest + s_.transfer_ns[index];
    for (size_t i = 0; i < group.nodes.size(); ++i) {
      Finish(group.nodes[i], end + group.tail_ns[i],
             group.nodes.size() > 1 ? Cause::kCollective : Cause::kOwnDuration,
             group.nodes.size() > 1 ? last : kNoNode);
    }
  }

  void Finish(uint32_t node, int64_t end, Cause cause, uint32_t cause_node) {
    r_.end_ns[node] = std::max(end, r_.start_ns[node]);
    r_.end_cause[node] = cause;
    r_.end_cause_node[node] = cause_node;
    for (uint32_t e = g_.out_begin[node]; e < g_.out_begin[node + 1]; ++e) {
      if (!g_.edges[e].from_start()) Release(e, r_.end_ns[node]);
    }
    if (!(flags_[node] & kHasWaiters)) return;
    auto waiting = waiters_.find(node);
    if (waiting != waiters_.end()) {
      const std::vector<uint32_t> syncs = std::move(waiting->second);
      waiters_.erase(waiting);
      for (uint32_t waiter : syncs) {
        if (--waiting_targets_[waiter] == 0) FinishSync(waiter);
      }
    }
  }

  const ExecutionGraph& g_;
  const Scenario& s_;
  const std::function<void(double)>& progress_;
  SimResult r_;
  RadixQueue ready_;
  std::vector<int64_t> earliest_;
  std::vector<uint32_t> pending_;
  std::vector<uint32_t> waiting_targets_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> waiters_;  // GPU op -> syncs waiting.
  std::vector<uint32_t> position_;  // Index of a node on its processor.
  static constexpr uint8_t kUnlaunchedGpu = 1, kSyncNode = 2, kCollectiveNode = 4, kHasWaiters = 8;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> processor_;
  std::vector<uint32_t> arrived_;  // Per collective group.
  // Per stream: (launch time, last op of the launched prefix) in time order.
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> history_;
  std::vector<uint32_t> prefix_;   // Per stream: how many of its first ops have been launched.
  std::vector<uint8_t> launched_;  // Per node: its launch has started (GPU ops).
  std::vector<std::vector<uint32_t>> streams_of_rank_;
  std::unordered_map<uint32_t, std::vector<uint32_t>> sync_targets_;
};

}  // namespace

Scenario MeasuredScenario(const ExecutionGraph& g) {
  Scenario s;
  s.duration_ns.reserve(g.nodes.size());
  for (const Node& n : g.nodes) s.duration_ns.push_back(n.duration_ns);
  s.delay_ns.reserve(g.edges.size());
  for (const Edge& e : g.edges) s.delay_ns.push_back(e.delay_ns);
  for (const CollectiveGroup& c : g.collectives) s.transfer_ns.push_back(c.transfer_ns);
  for (const SyncSpec& sync : g.syncs) {
    s.sync_min_ns.push_back(sync.min_duration_ns);
    s.sync_wake_ns.push_back(sync.wake_ns);
  }
  return s;
}

Scenario DependenciesOnlyScenario(const ExecutionGraph& g) {
  Scenario s = MeasuredScenario(g);
  for (size_t e = 0; e < g.edges.size(); ++e) {
    const Edge& edge = g.edges[e];
    if (!edge.binding) continue;
    if (edge.kind == EdgeKind::kLaunch) {
      const int64_t typical = g.typical_launch_ns[g.nodes[edge.to].rank_index];
      s.delay_ns[e] = std::min(s.delay_ns[e], typical);
    } else {
      s.delay_ns[e] = std::min<int64_t>(s.delay_ns[e], 0);
    }
  }
  return s;
}

SimResult Simulate(const ExecutionGraph& graph, const Scenario& scenario,
                   const std::function<void(double)>& progress) {
  return Simulation(graph, scenario, progress).Run();
}

}  // namespace lumos::modeler
