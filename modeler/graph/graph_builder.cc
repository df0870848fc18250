// GraphBuilder: the job's graph rank by rank (RankBuilder, rank_builder.h), then in Finish the
// clock offsets, the collective groups across ranks and the edges' CSR; see execution_graph.h.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modeler/graph/collective_key.h"
#include "modeler/graph/duration_text.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/rank_builder.h"

namespace lumos::modeler {
namespace {

// Drops the later copies of repeated nodes (records fused into one GPU op), keeping the order.
void RemoveRepeats(std::vector<uint32_t>* nodes) {
  std::vector<uint32_t> distinct = *nodes;
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end()) return;  // Usual.
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<bool> kept_already(distinct.size(), false);
  std::vector<uint32_t> kept;
  for (uint32_t node : *nodes) {
    const auto at = static_cast<size_t>(std::lower_bound(distinct.begin(), distinct.end(), node) -
                                        distinct.begin());
    if (kept_already[at]) continue;
    kept_already[at] = true;
    kept.push_back(node);
  }
  *nodes = std::move(kept);
}

}  // namespace

const char* EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kThreadOrder:
      return "thread-order";
    case EdgeKind::kStreamOrder:
      return "stream-order";
    case EdgeKind::kLaunch:
      return "launch";
    case EdgeKind::kEventWait:
      return "event-wait";
    case EdgeKind::kThreadHandoff:
      return "thread-handoff";
  }
  return "?";
}

GraphBuilder::GraphBuilder(GraphOptions options) : options_(options) {}

void GraphBuilder::AddRank(const RankTrace& rank, uint32_t rank_index) {
  if (g_.ranks.size() <= rank_index) {
    g_.ranks.resize(rank_index + 1, 0);
    g_.typical_launch_ns.resize(rank_index + 1, internal::kDefaultLaunchLatencyNs);
  }
  g_.ranks[rank_index] = rank.rank;
  // Offsets are applied in Finish (clock alignment needs every rank's collectives first).
  internal::RankBuilder builder(rank, rank_index, &g_);
  builder.Build(options_);
  if (++ranks_added_ == 1 && expected_ranks_ > 1) {
    // The other ranks of a job are about the size of the first: reserve for them all, with
    // some room (pages that are never touched cost no memory).
    const size_t ranks = expected_ranks_ + expected_ranks_ / 8;
    g_.nodes.reserve(g_.nodes.size() * ranks);
    g_.edges.reserve(g_.edges.size() * ranks);
  }
  for (const auto& m : builder.members) {
    Operation& operation = members_[m.key];
    if (operation.nodes.empty()) operation.first = *m.event;
    operation.nodes.push_back(m.node);
    if (m.event->comm_size != 0) {
      comm_sizes_[m.key.comm_id] = m.event->comm_size;
      known_sizes_.insert(m.key.comm_id);
    }
  }
  // Operations whose records share a GPU op (NCCL ran a group of calls as one kernel) are to
  // be one group: a member cannot wait for two groups.
  std::vector<const internal::RankBuilder::Member*> by_node;
  by_node.reserve(builder.members.size());
  for (const auto& m : builder.members) by_node.push_back(&m);
  std::stable_sort(by_node.begin(), by_node.end(),
                   [](const auto* a, const auto* b) { return a->node < b->node; });
  for (size_t i = 1; i < by_node.size(); ++i) {
    if (by_node[i]->node == by_node[i - 1]->node && by_node[i]->key != by_node[i - 1]->key) {
      fused_.emplace_back(by_node[i - 1]->key, by_node[i]->key);
    }
  }
  for (const CommunicatorInfo& c : rank.communicators) {
    if (c.comm_size != 0 && comm_sizes_.emplace(c.comm_id, c.comm_size).second) {
      known_sizes_.insert(c.comm_id);
    }
  }
}

ExecutionGraph GraphBuilder::Finish(const std::vector<int64_t>& rank_offset_ns) {
  ExecutionGraph g = std::move(g_);
  g_ = ExecutionGraph();
  g.rank_offset_ns = rank_offset_ns;
  g.rank_offset_ns.resize(g.ranks.size(), 0);
  for (Node& n : g.nodes) n.start_ns += g.rank_offset_ns[n.rank_index];
  std::unordered_map<int32_t, uint32_t> index_of_rank;
  for (uint32_t r = 0; r < g.ranks.size(); ++r) index_of_rank[g.ranks[r]] = r;
  for (GraphDiagnostic& d : g.diagnostics) {
    auto it = index_of_rank.find(static_cast<int32_t>(d.rank));
    if (d.rank != kWholeJob && it != index_of_rank.end()) {
      d.time_ns += g.rank_offset_ns[it->second];
    }
  }
  // A communicator whose size no record gives is as large as its largest collective.
  for (const auto& [key, operation] : members_) {
    if (key.kind == CollectiveKey::Kind::kPointToPoint) continue;  // A pair says nothing.
    const auto records = static_cast<uint32_t>(operation.nodes.size());
    auto [it, added] = comm_sizes_.try_emplace(key.comm_id, records);
    if (!added && !known_sizes_.count(key.comm_id)) it->second = std::max(it->second, records);
  }
  // Groups: operations in key order, joined where they share a GPU op (union-find; a group is
  // represented by its first operation, so groups come out in the order of their first).
  std::vector<std::pair<const CollectiveKey*, const Operation*>> operations;
  operations.reserve(members_.size());
  for (auto& [key, operation] : members_) {
    operation.index = static_cast<uint32_t>(operations.size());
    operations.emplace_back(&key, &operation);
  }
  std::vector<uint32_t> parent(operations.size());
  for (uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&parent](uint32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const auto& [a, b] : fused_) {
    const uint32_t ra = root(members_.at(a).index), rb = root(members_.at(b).index);
    parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<std::vector<uint32_t>> parts;  // Operation indices of each group.
  std::vector<uint32_t> part_of_root(operations.size(), UINT32_MAX);
  for (uint32_t i = 0; i < operations.size(); ++i) {
    uint32_t& part = part_of_root[root(i)];
    if (part == UINT32_MAX) {
      part = static_cast<uint32_t>(parts.size());
      parts.emplace_back();
    }
    parts[part].push_back(i);
  }
  auto rank_of = [&g](uint32_t node) {
    return static_cast<uint32_t>(g.ranks[g.nodes[node].rank_index]);
  };
  auto diagnose = [&g](uint32_t rank, int64_t time, std::string what) {
    if (g.diagnostics.size() < kMaxDiagnostics) {
      g.diagnostics.push_back({rank, time, std::move(what)});
    }
  };
  // Collective groups: transfer = earliest end - latest start over the members (aligned).
  for (const std::vector<uint32_t>& part : parts) {
    const CollectiveKey& first = *operations[part.front()].first;
    CollectiveGroup group;
    group.comm_id = first.comm_id;
    group.seq_number = first.ordinal;
    const schema::CollectiveEvent& record = operations[part.front()].second->first;
    group.op = record.op;
    group.bytes = record.bytes;
    group.data_type = record.data_type;
    group.algorithm = record.algorithm;
    group.protocol = record.protocol;
    group.channels = record.channels;
    group.operations = static_cast<uint32_t>(part.size());
    std::vector<uint32_t>& members = group.nodes;
    for (uint32_t i : part) {
      const std::vector<uint32_t>& nodes = operations[i].second->nodes;
      members.insert(members.end(), nodes.begin(), nodes.end());
    }
    RemoveRepeats(&members);
    int64_t latest_start = INT64_MIN, earliest_end = INT64_MAX;
    for (uint32_t node : members) {
      latest_start = std::max(latest_start, g.nodes[node].start_ns);
      earliest_end = std::min(earliest_end, g.nodes[node].end_ns());
    }
    group.transfer_ns = earliest_end - latest_start;
    std::string name = first.Describe();
    if (part.size() > 1) {
      name += " and " + std::to_string(part.size() - 1) + " operation(s) run in the same kernels";
    }
    if (group.transfer_ns < 0) {
      // A member ended before another started: the clocks disagree (or the pairing is wrong).
      ++g.stats.negative_slack_edges;
      g.stats.max_negative_slack_ns = std::max(g.stats.max_negative_slack_ns, -group.transfer_ns);
      if (g.stats.collectives_inconsistent++ == 0) {
        uint32_t first_end = members.front(), last_start = members.front();
        for (uint32_t node : members) {
          if (g.nodes[node].end_ns() < g.nodes[first_end].end_ns()) first_end = node;
          if (g.nodes[node].start_ns > g.nodes[last_start].start_ns) last_start = node;
        }
        diagnose(rank_of(first_end), g.nodes[first_end].end_ns(),
                 name + " ended on rank " + std::to_string(rank_of(first_end)) + " " +
                     DurationText(-group.transfer_ns) + " before it started on rank " +
                     std::to_string(rank_of(last_start)) +
                     ": their clocks disagree or their seq numbers do not line up; replayed "
                     "with no transfer time (further ones counted)");
      }
      group.transfer_ns = 0;
      earliest_end = latest_start;
    }
    for (uint32_t node : members) {
      group.tail_ns.push_back(std::max<int64_t>(0, g.nodes[node].end_ns() - earliest_end));
    }
    // Complete when each operation has all its records (unknown communicator size: assumed).
    const CollectiveKey* short_key = nullptr;
    const Operation* short_operation = nullptr;
    uint32_t expected = 0;
    for (uint32_t i : part) {
      const auto& [key, operation] = operations[i];
      auto size = comm_sizes_.find(key->comm_id);
      if (key->kind != CollectiveKey::Kind::kPointToPoint && size == comm_sizes_.end()) continue;
      expected = key->ExpectedRecords(size != comm_sizes_.end() ? size->second : 0);
      if (operation->nodes.size() < expected) {
        short_key = key;
        short_operation = operation;
        break;
      }
    }
    group.complete = short_key == nullptr;
    if (!group.complete && g.stats.collectives_incomplete++ == 0) {
      const std::vector<uint32_t>& present = short_operation->nodes;
      std::string ranks;
      for (uint32_t node : present) {
        ranks += (ranks.empty() ? "" : ",") + std::to_string(rank_of(node));
      }
      std::string what = short_key->Describe();
      what += ": only rank(s) " + ranks;
      what += " of " + std::to_string(expected);
      what +=
          " took part (ranks missing, cut short, or seq numbers that do not line up); the "
          "present ones are coupled among themselves (further ones counted)";
      diagnose(rank_of(present.front()), g.nodes[present.front()].start_ns, std::move(what));
    }
    const uint32_t index = static_cast<uint32_t>(g.collectives.size());
    for (uint32_t node : group.nodes) g.nodes[node].collective = index;
    g.collectives.push_back(std::move(group));
  }
  members_.clear();
  fused_.clear();
  comm_sizes_.clear();
  known_sizes_.clear();
  g.origin_ns = INT64_MAX;
  for (const Node& n : g.nodes) g.origin_ns = std::min(g.origin_ns, n.start_ns);
  if (g.nodes.empty()) g.origin_ns = 0;
  // CSR by source; the edges are already grouped (RankBuilder::GroupEdgesBySource).
  g.out_begin.assign(g.nodes.size() + 1, 0);
  for (const Edge& e : g.edges) ++g.out_begin[e.from + 1];
  for (size_t i = 1; i < g.out_begin.size(); ++i) g.out_begin[i] += g.out_begin[i - 1];
  return g;
}

ExecutionGraph BuildGraph(const Job& job, const std::vector<int64_t>& rank_offset_ns,
                          const GraphOptions& options) {
  GraphBuilder builder(options);
  for (uint32_t r = 0; r < job.ranks.size(); ++r) builder.AddRank(job.ranks[r], r);
  return builder.Finish(rank_offset_ns);
}

}  // namespace lumos::modeler
