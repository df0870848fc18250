// RankBuilder's last steps (see rank_builder.h), once all its edges exist: the delays of the
// GPU ops' in-edges, the nodes renumbered in time order, the edges grouped by source.
#include <algorithm>
#include <string>
#include <vector>

#include "modeler/graph/duration_text.h"
#include "modeler/graph/median.h"
#include "modeler/graph/rank_builder.h"

namespace lumos::modeler::internal {

// Delays of GPU in-edges (see execution_graph.h): the binding edge carries the residual.
void RankBuilder::SetGpuDelays(const GraphOptions& options) {
  // In-edges of this rank's GPU ops (edges were appended for this rank only so far), grouped
  // by target (counting sort: no allocation per node, node order kept).
  const size_t count = g_.nodes.size() - base_node_;
  std::vector<uint32_t> begin(count + 1, 0);
  for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
    if (g_.nodes[g_.edges[e].to].gpu()) ++begin[g_.edges[e].to - base_node_ + 1];
  }
  for (size_t i = 1; i <= count; ++i) begin[i] += begin[i - 1];
  std::vector<size_t> in_edges(begin[count]);
  {
    std::vector<uint32_t> next(begin.begin(), begin.end() - 1);
    for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
      if (g_.nodes[g_.edges[e].to].gpu()) in_edges[next[g_.edges[e].to - base_node_]++] = e;
    }
  }
  auto ready = [&](const Edge& e) {
    const Node& from = g_.nodes[e.from];
    return e.from_start() ? from.start_ns : from.end_ns();
  };
  std::vector<int64_t> launch_latencies;
  std::vector<size_t> binding(count, SIZE_MAX);
  for (size_t local = 0; local < count; ++local) {
    if (begin[local] == begin[local + 1]) continue;
    size_t best = in_edges[begin[local]];
    for (uint32_t i = begin[local]; i < begin[local + 1]; ++i) {
      if (ready(g_.edges[in_edges[i]]) > ready(g_.edges[best])) best = in_edges[i];
    }
    binding[local] = best;
    if (g_.edges[best].kind == EdgeKind::kLaunch) {
      launch_latencies.push_back(g_.nodes[base_node_ + local].start_ns - ready(g_.edges[best]));
    }
  }
  const int64_t typical_launch = MedianOf(launch_latencies, kDefaultLaunchLatencyNs);
  g_.typical_launch_ns[rank_index_] = typical_launch;
  for (size_t local = 0; local < count; ++local) {
    const uint32_t node = static_cast<uint32_t>(base_node_ + local);
    const int64_t start = g_.nodes[node].start_ns;
    for (uint32_t i = begin[local]; i < begin[local + 1]; ++i) {
      const size_t e = in_edges[i];
      Edge& edge = g_.edges[e];
      const int64_t slack = start - ready(edge);
      if (slack < 0) {
        ++g_.stats.negative_slack_edges;
        g_.stats.max_negative_slack_ns = std::max(g_.stats.max_negative_slack_ns, -slack);
        if (negative_reported_++ == 0) {
          Diagnose(start,
                   std::string(EdgeKindName(edge.kind)) + " edge into '" +
                       std::string(g_.nodes[node].name) + "' has negative slack (" +
                       DurationText(-slack) +
                       ": it started before its predecessor allows; clock skew "
                       "between host and GPU?); further ones counted",
                   g_.nodes[node].name);
        }
      }
      if (e == binding[local]) {
        edge.delay_ns = slack;
        edge.binding = true;
        if (edge.kind == EdgeKind::kStreamOrder && slack > options.unexplained_wait_ns) {
          g_.stats.unexplained_gpu_wait_ns += slack;
          ++g_.stats.unexplained_gpu_waits;
        }
      } else if (edge.kind == EdgeKind::kLaunch) {
        edge.delay_ns = std::min(typical_launch, slack);
      } else {
        edge.delay_ns = std::min<int64_t>(0, slack);
      }
    }
  }
}

// Renumbers this rank's nodes by measured start: the simulator and the analysis visit nodes
// roughly in time order, so time-ordered ids turn their random accesses to the per-node
// arrays into nearly sequential ones (3x faster replay on a 512-rank job, perf).
void RankBuilder::NumberInTimeOrder() {
  const size_t count = g_.nodes.size() - base_node_;
  std::vector<uint32_t> order(count);
  for (uint32_t i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return g_.nodes[base_node_ + a].start_ns < g_.nodes[base_node_ + b].start_ns;
  });
  std::vector<uint32_t> new_id(count);
  for (uint32_t i = 0; i < count; ++i) new_id[order[i]] = static_cast<uint32_t>(base_node_ + i);
  auto remap = [&](uint32_t& id) {
    if (id != kNoNode && id >= base_node_) id = new_id[id - base_node_];
  };
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (uint32_t i = 0; i < count; ++i) nodes.push_back(g_.nodes[base_node_ + order[i]]);
  std::copy(nodes.begin(), nodes.end(), g_.nodes.begin() + static_cast<ptrdiff_t>(base_node_));
  if (!g_.node_source.empty()) {
    std::vector<uint32_t> sources(count);
    for (uint32_t i = 0; i < count; ++i) sources[i] = g_.node_source[base_node_ + order[i]];
    std::copy(sources.begin(), sources.end(),
              g_.node_source.begin() + static_cast<ptrdiff_t>(base_node_));
  }
  for (size_t i = base_node_; i < g_.nodes.size(); ++i) remap(g_.nodes[i].launch);
  for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
    remap(g_.edges[e].from);
    remap(g_.edges[e].to);
  }
  for (const auto& [id, processor] : threads_) {
    for (uint32_t& node : g_.processors[processor].nodes) remap(node);
  }
  for (const auto& [id, processor] : streams_) {
    for (uint32_t& node : g_.processors[processor].nodes) remap(node);
  }
  for (size_t i = first_sync_; i < g_.syncs.size(); ++i) {
    remap(g_.syncs[i].node);
    remap(g_.syncs[i].record_node);
  }
  for (Member& m : members) remap(m.node);
  GroupEdgesBySource();
}

// Every edge of this rank leaves one of its nodes, and ranks' nodes come in increasing
// ranges, so grouping each rank's edges by source (a counting sort, stable: each source's
// edges stay in build order) leaves the whole edge list grouped: Finish only counts.
void RankBuilder::GroupEdgesBySource() {
  const size_t count = g_.nodes.size() - base_node_;
  std::vector<uint32_t> next(count + 1, 0);
  for (size_t e = first_edge_; e < g_.edges.size(); ++e) ++next[g_.edges[e].from - base_node_ + 1];
  for (size_t i = 1; i <= count; ++i) next[i] += next[i - 1];
  std::vector<Edge> sorted(g_.edges.size() - first_edge_);
  for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
    sorted[next[g_.edges[e].from - base_node_]++] = g_.edges[e];
  }
  std::copy(sorted.begin(), sorted.end(), g_.edges.begin() + static_cast<ptrdiff_t>(first_edge_));
}

}  // namespace lumos::modeler::internal
