#include "modeler/report/iteration_detection.h"

#include <algorithm>
#include <unordered_map>

#include "modeler/graph/execution_graph.h"

namespace lumos::modeler {
namespace {

// The rank's kernels in start order as name ids (ids in order of first occurrence).
struct KernelSequence {
  std::vector<uint32_t> nodes;
  std::vector<uint32_t> ids;
  std::vector<int64_t> idle_before_ns;  // Start minus the latest end of all earlier kernels.
  uint32_t names = 0;
  bool capped = false;
};

KernelSequence SequenceOf(const ExecutionGraph& g, uint32_t rank_index) {
  KernelSequence seq;
  for (const Processor& p : g.processors) {
    if (!p.gpu || p.rank_index != rank_index) continue;
    for (uint32_t n : p.nodes) {
      if (g.nodes[n].kind == NodeKind::kKernel) seq.nodes.push_back(n);
    }
  }
  std::sort(seq.nodes.begin(), seq.nodes.end(), [&g](uint32_t a, uint32_t b) {
    return g.nodes[a].start_ns != g.nodes[b].start_ns ? g.nodes[a].start_ns < g.nodes[b].start_ns
                                                      : a < b;
  });
  if (seq.nodes.size() > kMaxKernels) {
    seq.nodes.resize(kMaxKernels);
    seq.capped = true;
  }
  std::unordered_map<std::string_view, uint32_t> id_of;
  seq.ids.reserve(seq.nodes.size());
  seq.idle_before_ns.reserve(seq.nodes.size());
  int64_t latest_end = INT64_MIN;
  for (uint32_t n : seq.nodes) {
    const Node& node = g.nodes[n];
    auto [it, added] = id_of.try_emplace(node.name, seq.names);
    if (added) ++seq.names;
    seq.ids.push_back(it->second);
    seq.idle_before_ns.push_back(
        latest_end == INT64_MIN ? 0 : std::max<int64_t>(0, node.start_ns - latest_end));
    latest_end = std::max(latest_end, node.end_ns());
  }
  return seq;
}

// Positions of each id, grouped by id (CSR): occurrences of id are
// positions[offsets[id] .. offsets[id + 1]), ascending.
struct Occurrences {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> positions;
};

Occurrences OccurrencesOf(const KernelSequence& seq) {
  Occurrences occ;
  occ.offsets.assign(seq.names + 1, 0);
  for (uint32_t id : seq.ids) ++occ.offsets[id + 1];
  for (uint32_t id = 0; id < seq.names; ++id) occ.offsets[id + 1] += occ.offsets[id];
  occ.positions.resize(seq.ids.size());
  std::vector<uint32_t> next(occ.offsets.begin(), occ.offsets.end() - 1);
  for (uint32_t i = 0; i < seq.ids.size(); ++i) occ.positions[next[seq.ids[i]]++] = i;
  return occ;
}

uint32_t Tolerance(uint32_t period) { return std::max<uint32_t>(1, period / 20); }

// A name recurring regularly: its occurrences first..last (indices into Occurrences::positions)
// are each `period` kernels apart, within Tolerance(period).
struct Candidate {
  uint32_t id = 0;
  uint32_t period = 0;
  uint32_t first = 0, last = 0;
};

std::vector<Candidate> Candidates(const KernelSequence& seq, const Occurrences& occ) {
  std::vector<Candidate> out;
  std::vector<uint32_t> gaps, sorted;
  const size_t n = seq.ids.size();
  for (uint32_t id = 0; id < seq.names; ++id) {
    const uint32_t begin = occ.offsets[id], end = occ.offsets[id + 1];
    if (end - begin < 3) continue;
    gaps.clear();
    for (uint32_t i = begin; i + 1 < end; ++i) {
      gaps.push_back(occ.positions[i + 1] - occ.positions[i]);
    }
    sorted = gaps;
    auto middle = sorted.begin() + static_cast<ptrdiff_t>((sorted.size() - 1) / 2);
    std::nth_element(sorted.begin(), middle, sorted.end());
    const uint32_t period = *middle;
    const uint32_t tolerance = Tolerance(period);
    // Longest run of successive gaps near the median (the first, of equal ones).
    size_t best_from = 0, best_length = 0, from = 0;
    for (size_t i = 0; i <= gaps.size(); ++i) {
      const bool near =
          i < gaps.size() && (gaps[i] > period ? gaps[i] - period : period - gaps[i]) <= tolerance;
      if (near) continue;
      if (i - from > best_length) best_from = from, best_length = i - from;
      from = i + 1;
    }
    if (best_length < 2) continue;  // Fewer than 2 whole repetitions.
    Candidate c{id, period, begin + static_cast<uint32_t>(best_from),
                begin + static_cast<uint32_t>(best_from + best_length)};
    const uint64_t covered =
        uint64_t{occ.positions[c.last]} - occ.positions[c.first] + uint64_t{period};
    if (2 * covered < n) continue;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [&occ](const Candidate& a, const Candidate& b) {
    return a.period != b.period ? a.period < b.period
                                : occ.positions[a.first] < occ.positions[b.first];
  });
  return out;
}

// Whether successive segments between the candidate's occurrences hold the same names (as
// multisets), but for at most 10% of their kernels, and a segment holds at least 2 names.
bool SegmentsRepeat(const KernelSequence& seq, const Occurrences& occ, const Candidate& c) {
  std::vector<int32_t> count(seq.names, 0);
  std::vector<uint32_t> touched;
  uint64_t unmatched = 0, compared = 0;
  for (uint32_t k = c.first; k + 1 < c.last; ++k) {
    const uint32_t a = occ.positions[k], b = occ.positions[k + 1], e = occ.positions[k + 2];
    uint32_t distinct = 0;
    for (uint32_t i = a; i < b; ++i) {
      if (count[seq.ids[i]]++ == 0) {
        touched.push_back(seq.ids[i]);
        ++distinct;
      }
    }
    if (k == c.first && distinct < 2) return false;
    uint64_t common = 0;
    for (uint32_t i = b; i < e; ++i) {
      if (count[seq.ids[i]] > 0) --count[seq.ids[i]], ++common;
    }
    for (uint32_t id : touched) count[id] = 0;
    touched.clear();
    const uint64_t lengths = uint64_t{b - a} + (e - b);
    unmatched += lengths - 2 * common;
    compared += lengths;
  }
  return compared > 0 && 10 * unmatched <= compared;
}

int64_t MedianIdle(const KernelSequence& seq, const Occurrences& occ, const Candidate& c) {
  std::vector<int64_t> idle;
  for (uint32_t k = c.first; k <= c.last; ++k) idle.push_back(seq.idle_before_ns[occ.positions[k]]);
  auto middle = idle.begin() + static_cast<ptrdiff_t>((idle.size() - 1) / 2);
  std::nth_element(idle.begin(), middle, idle.end());
  return *middle;
}

}  // namespace

DetectedIterations DetectIterations(const ExecutionGraph& graph, uint32_t rank_index) {
  DetectedIterations out;
  const KernelSequence seq = SequenceOf(graph, rank_index);
  out.kernels = seq.ids.size();
  out.capped = seq.capped;
  if (seq.ids.size() < 6) return out;
  const Occurrences occ = OccurrencesOf(seq);
  const std::vector<Candidate> candidates = Candidates(seq, occ);

  // The smallest verified period. Candidates of a period already refused are not retried: their
  // segments are the same repetitions, cut elsewhere.
  size_t verified = candidates.size();
  size_t verifications = 0;
  uint32_t refused_period = 0;
  for (size_t i = 0; i < candidates.size() && verifications < kMaxVerifications; ++i) {
    if (candidates[i].period == refused_period) continue;
    ++verifications;
    if (SegmentsRepeat(seq, occ, candidates[i])) {
      verified = i;
      break;
    }
    refused_period = candidates[i].period;
  }
  if (verified == candidates.size()) return out;

  // The phase: among the names regular with this period (those sorted after the verified one,
  // up to its tolerance; the ones before it were refused) that mark about as many repetitions
  // (a rotation may lose one at an edge), the one after the longest GPU idle.
  const Candidate& reference = candidates[verified];
  const uint32_t tolerance = Tolerance(reference.period);
  const Candidate* anchor = &reference;
  int64_t anchor_idle = MedianIdle(seq, occ, reference);
  for (size_t i = verified + 1; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.period > reference.period + tolerance) break;
    if (c.last - c.first + 1 < reference.last - reference.first) continue;
    const int64_t idle = MedianIdle(seq, occ, c);
    const bool earlier = occ.positions[c.first] < occ.positions[anchor->first];
    if (idle > anchor_idle || (idle == anchor_idle && earlier)) anchor = &c, anchor_idle = idle;
  }
  for (uint32_t k = anchor->first; k <= anchor->last; ++k) {
    out.anchors.push_back(seq.nodes[occ.positions[k]]);
  }
  out.anchor_name = graph.nodes[out.anchors.front()].name;
  out.period_kernels = anchor->period;
  return out;
}

}  // namespace lumos::modeler
