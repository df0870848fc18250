// RankBuilder's thread hand-offs (see rank_builder.h): where one host thread waited for
// another, inferred from the calls' times, made into edges so that work added to or removed
// from the thread that ran reaches the one that waited.
//
// PyTorch runs backward on its autograd thread ("pt_autograd_0") while the main thread blocks
// on a condition variable CUDA never sees: the main thread's last forward call is followed by
// a gap of the whole backward, then the optimizer. Recorded as a fixed thread-order gap, that
// wait would not grow when backward does (layers copied, launches re-costed), and the autograd
// thread's first backward call would wait a fixed time after its previous one (the last
// step's backward) instead of for the forward. The rule, per pair of consecutive calls a -> b
// on a thread W with a gap of at least kMinWaitNs between them:
//   another thread U of the rank made at least kMinCalls calls inside the gap, busy for at
//   least half of it (first start to last end), and was idle at both ends: its call before
//   them ended before a did, and its call after them (if any) starts after b does.
// Then W forked U's work and joined it: a fork edge a -> U's first call (delay: the measured
// time between them), a join edge U's last call -> b (delay: likewise), and the two
// thread-order delays the hand-off explains drop to 0 (W's a -> b: it was waiting; U's
// previous call -> its first: it was waiting for work). Replayed with measured durations the
// timeline is unchanged. A gap that another thread only partly covers, or one where the other
// thread was already busy, is left as a gap: nothing in the times says who waited for whom.
#include <algorithm>
#include <utility>
#include <vector>

#include "modeler/graph/rank_builder.h"

namespace lumos::modeler::internal {
namespace {

// Shorter idle times are the framework's own work between launches (tens of µs per op in
// eager PyTorch), not a wait for another thread.
constexpr int64_t kMinWaitNs = 200'000;
constexpr size_t kMinCalls = 2;

}  // namespace

void RankBuilder::AddThreadHandoffs() {
  if (threads_.size() < 2) return;
  // This rank's thread-order edge into each API node (one at most).
  std::vector<size_t> order_edge_into;
  for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
    const Edge& edge = g_.edges[e];
    if (edge.kind == EdgeKind::kThreadOrder) Local(&order_edge_into, edge.to, SIZE_MAX) = e;
  }
  auto order_edge = [&](uint32_t node) {
    const size_t local = node - base_node_;
    return local < order_edge_into.size() ? order_edge_into[local] : SIZE_MAX;
  };
  struct Handoff {
    uint32_t before, first, last, after;  // a, U's first and last call in the gap, b.
  };
  std::vector<Handoff> found;
  for (const auto& [waiter_id, waiter] : threads_) {
    const std::vector<uint32_t>& calls = g_.processors[waiter].nodes;
    for (size_t i = 1; i < calls.size(); ++i) {
      const Node& a = g_.nodes[calls[i - 1]];
      const Node& b = g_.nodes[calls[i]];
      const int64_t gap = b.start_ns - a.end_ns();
      if (gap < kMinWaitNs) continue;
      for (const auto& [worker_id, worker] : threads_) {
        if (worker == waiter) continue;
        const std::vector<uint32_t>& work = g_.processors[worker].nodes;
        // The worker's first call starting after a ended, and the first starting at b or after.
        auto by_start = [&](uint32_t node, int64_t t) { return g_.nodes[node].start_ns < t; };
        const auto first =
            std::lower_bound(work.begin(), work.end(), a.end_ns() + 1, by_start) - work.begin();
        const auto end =
            std::lower_bound(work.begin(), work.end(), b.start_ns, by_start) - work.begin();
        if (end - first < static_cast<ptrdiff_t>(kMinCalls)) continue;
        const Node& u_first = g_.nodes[work[first]];
        const Node& u_last = g_.nodes[work[end - 1]];
        if (u_last.end_ns() > b.start_ns) continue;  // Still busy when W went on.
        if (first > 0 && g_.nodes[work[first - 1]].end_ns() > a.end_ns()) continue;  // Busy.
        if (2 * (u_last.end_ns() - u_first.start_ns) < gap) continue;  // Mostly idle too.
        found.push_back({calls[i - 1], work[first], work[end - 1], calls[i]});
      }
    }
  }
  // Two threads that take turns (the main thread forks backward, the autograd thread's
  // finish lets it go on) match the rule both ways, with the same two edges: add each once.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (const Handoff& h : found) {
    edges.emplace_back(h.before, h.first);
    edges.emplace_back(h.last, h.after);
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  for (const auto& [from, to] : edges) {
    AddEdge(from, to, EdgeKind::kThreadHandoff,
            std::max<int64_t>(0, g_.nodes[to].start_ns - g_.nodes[from].end_ns()),
            /*inferred=*/true);
    // The thread that waited did nothing of its own in that time.
    if (const size_t e = order_edge(to); e != SIZE_MAX) g_.edges[e].delay_ns = 0;
  }
}

}  // namespace lumos::modeler::internal
