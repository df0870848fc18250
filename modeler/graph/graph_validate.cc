// Validate: the invariants of a built graph (see execution_graph.h).
#include <string>

#include "modeler/graph/duration_text.h"
#include "modeler/graph/execution_graph.h"

namespace lumos::modeler {
namespace {

template <typename Diagnose>
void CheckAcyclic(const ExecutionGraph& g, const Diagnose& diagnose) {
  std::vector<uint32_t> in_degree(g.nodes.size(), 0);
  for (const Edge& e : g.edges) ++in_degree[e.to];
  std::vector<uint32_t> ready;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    if (in_degree[n] == 0) ready.push_back(n);
  }
  size_t visited = 0;
  while (!ready.empty()) {
    const uint32_t n = ready.back();
    ready.pop_back();
    ++visited;
    for (uint32_t e = g.out_begin[n]; e < g.out_begin[n + 1]; ++e) {
      if (--in_degree[g.edges[e].to] == 0) ready.push_back(g.edges[e].to);
    }
  }
  if (visited != g.nodes.size()) {
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      if (in_degree[n] == 0) continue;
      const Node& node = g.nodes[n];
      diagnose(static_cast<uint32_t>(g.ranks[node.rank_index]), node.start_ns,
               "dependency cycle through '" + std::string(node.name) + "' (" +
                   std::to_string(g.nodes.size() - visited) + " nodes cannot be ordered)",
               node.name);
      break;
    }
  }
}

}  // namespace

uint64_t Validate(ExecutionGraph* graph, bool replay_ran_every_node) {
  ExecutionGraph& g = *graph;
  uint64_t violations = 0;
  auto diagnose = [&](uint32_t rank, int64_t time, std::string what, std::string_view name = {}) {
    ++violations;
    if (g.diagnostics.size() < kMaxDiagnostics)
      g.diagnostics.push_back({rank, time, std::move(what), name});
  };
  // Acyclic: a node on a cycle of fixed edges can never become ready, so a simulation that
  // ran every node proves there is none; otherwise Kahn's algorithm finds it.
  if (!replay_ran_every_node) CheckAcyclic(g, diagnose);
  const GraphStats& s = g.stats;
  if (s.negative_slack_edges != 0) {
    diagnose(kWholeJob, 0,
             std::to_string(s.negative_slack_edges) +
                 (s.negative_slack_edges == 1 ? " dependency has" : " dependencies have") +
                 " negative slack in the measurement (up to " +
                 DurationText(s.max_negative_slack_ns) + ")");
  }
  if (s.unlaunched_gpu_ops != 0) {
    diagnose(kWholeJob, 0,
             std::to_string(s.unlaunched_gpu_ops) + " GPU ops have no launching API call");
  }
  if (s.unmatched_waits != 0) {
    diagnose(kWholeJob, 0, std::to_string(s.unmatched_waits) + " stream waits could not be paired");
  }
  if (s.untargeted_syncs != 0) {
    diagnose(kWholeJob, 0,
             std::to_string(s.untargeted_syncs) +
                 " sync(s) name no target and no stream's work ended by their return: replayed "
                 "as plain calls");
  }
  return violations;
}

}  // namespace lumos::modeler
