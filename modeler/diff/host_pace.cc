#include "modeler/diff/host_pace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "modeler/diff/run_profile.h"
#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler::diff {
namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  const auto at = static_cast<size_t>(std::lround(q * static_cast<double>(sorted.size() - 1)));
  return sorted[std::min(at, sorted.size() - 1)];
}

}  // namespace

std::vector<HostCallSequence> HostCallSequences(
    const ExecutionGraph& g, const std::vector<std::vector<std::pair<int64_t, int64_t>>>& ranges) {
  models::KernelClassCache classes;
  // Each API node's key: its name and the class of the first GPU op it launched.
  auto key = [&](uint32_t node) {
    std::string k(g.nodes[node].name);
    for (uint32_t e = g.out_begin[node]; e < g.out_begin[node + 1]; ++e) {
      if (g.edges[e].kind != EdgeKind::kLaunch) continue;
      const Node& op = g.nodes[g.edges[e].to];
      k += ' ';
      k += op.kind == NodeKind::kKernel ? models::KernelClassName(classes.Get(op.name))
                                        : std::string(op.name);
      break;
    }
    return k;
  };
  // Per (rank index, thread processor): per iteration, its calls' keys and gaps.
  struct Calls {
    std::vector<std::string> keys;
    std::vector<int64_t> gaps;
  };
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Calls>> by_thread;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> first_call;  // In the first iteration.
  for (uint32_t p = 0; p < g.processors.size(); ++p) {
    const Processor& processor = g.processors[p];
    if (processor.gpu || processor.rank_index >= ranges.size()) continue;
    const auto& rr = ranges[processor.rank_index];
    if (rr.empty()) continue;
    std::vector<Calls>& per_iteration = by_thread[{processor.rank_index, p}];
    per_iteration.resize(rr.size());
    size_t it = 0;
    int64_t previous_end = INT64_MIN;
    size_t previous_iteration = SIZE_MAX;
    for (uint32_t node : processor.nodes) {
      const Node& n = g.nodes[node];
      while (it < rr.size() && n.start_ns >= rr[it].second) ++it;
      if (it == rr.size()) break;
      if (n.start_ns < rr[it].first) continue;
      Calls& calls = per_iteration[it];
      calls.keys.push_back(key(node));
      calls.gaps.push_back(previous_iteration == it ? n.start_ns - previous_end : 0);
      if (it == 0 && calls.keys.size() == 1) first_call[{processor.rank_index, p}] = n.start_ns;
      previous_end = n.end_ns();
      previous_iteration = it;
    }
  }
  // Threads of a rank in the order of their first call in its first iteration.
  std::map<uint32_t, std::vector<std::pair<int64_t, uint32_t>>> threads_of_rank;
  for (const auto& [at, start] : first_call)
    threads_of_rank[at.first].push_back({start, at.second});
  std::vector<HostCallSequence> out;
  for (auto& [rank_index, threads] : threads_of_rank) {
    std::sort(threads.begin(), threads.end());
    for (uint32_t order = 0; order < threads.size(); ++order) {
      const std::vector<Calls>& iterations = by_thread[{rank_index, threads[order].second}];
      const Calls& reference = iterations.front();
      HostCallSequence sequence;
      sequence.rank = g.ranks[rank_index];
      sequence.thread_order = order;
      sequence.keys = reference.keys;
      // Each iteration counts at the positions where it still matches the reference.
      std::vector<std::vector<int64_t>> gaps(reference.keys.size());
      for (const Calls& calls : iterations) {
        for (size_t i = 0; i < calls.keys.size() && i < reference.keys.size(); ++i) {
          if (calls.keys[i] != reference.keys[i]) break;
          gaps[i].push_back(calls.gaps[i]);
        }
      }
      for (const std::vector<int64_t>& values : gaps) sequence.gap_ns.push_back(Median(values));
      out.push_back(std::move(sequence));
    }
  }
  return out;
}

std::optional<HostPace> CompareHostPace(const std::vector<HostCallSequence>& a,
                                        const std::vector<HostCallSequence>& b) {
  std::map<std::pair<int32_t, uint32_t>, const HostCallSequence*> b_threads;
  for (const HostCallSequence& s : b) b_threads[{s.rank, s.thread_order}] = &s;
  std::vector<double> ratios;
  double sum_a = 0, sum_b = 0;
  for (const HostCallSequence& x : a) {
    auto found = b_threads.find({x.rank, x.thread_order});
    if (found == b_threads.end()) continue;
    const HostCallSequence& y = *found->second;
    for (size_t i = 1; i < x.keys.size() && i < y.keys.size(); ++i) {
      if (x.keys[i] != y.keys[i]) break;
      const int64_t ga = x.gap_ns[i], gb = y.gap_ns[i];
      if (std::min(ga, gb) < kMinGapNs || std::max(ga, gb) > kMaxGapNs) continue;
      ratios.push_back(static_cast<double>(gb) / static_cast<double>(ga));
      sum_a += static_cast<double>(ga);
      sum_b += static_cast<double>(gb);
    }
  }
  if (ratios.size() < kMinMatched) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  HostPace pace;
  pace.matched = ratios.size();
  pace.ratio = sum_b / sum_a;
  pace.low = Quantile(ratios, 0.25);
  pace.high = Quantile(ratios, 0.75);
  return pace;
}

}  // namespace lumos::modeler::diff
