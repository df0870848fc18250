#include "modeler/analysis/iteration_detection.h"

#include <algorithm>
#include <unordered_map>

#include "modeler/graph/execution_graph.h"

namespace lumos::modeler {
namespace {

// The rank's kernels in start order as name ids (ids in order of first occurrence).
struct KernelSequence {
  std::vector<uint32_t> nodes;
  std::vector<uint32_t> ids;
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
  for (uint32_t n : seq.nodes) {
    auto [it, added] = id_of.try_emplace(g.nodes[n].name, seq.names);
    if (added) ++seq.names;
    seq.ids.push_back(it->second);
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

// Compares stretches of the sequence as multisets of names.
class NameCounter {
 public:
  explicit NameCounter(const KernelSequence& seq) : ids_(seq.ids), count_(seq.names, 0) {}

  // Kernels of [a, a_end) and [b, b_end) with no kernel of the same name in the other;
  // `distinct_a`: how many names [a, a_end) holds.
  uint64_t Unmatched(uint32_t a, uint32_t a_end, uint32_t b, uint32_t b_end,
                     uint32_t* distinct_a = nullptr) {
    uint32_t distinct = 0;
    for (uint32_t i = a; i < a_end; ++i) {
      if (count_[ids_[i]]++ == 0) {
        touched_.push_back(ids_[i]);
        ++distinct;
      }
    }
    uint64_t common = 0;
    for (uint32_t i = b; i < b_end; ++i) {
      if (count_[ids_[i]] > 0) --count_[ids_[i]], ++common;
    }
    for (uint32_t id : touched_) count_[id] = 0;
    touched_.clear();
    if (distinct_a != nullptr) *distinct_a = distinct;
    return uint64_t{a_end - a} + (b_end - b) - 2 * common;
  }

 private:
  const std::vector<uint32_t>& ids_;
  std::vector<int32_t> count_;
  std::vector<uint32_t> touched_;
};

// At most 10% of the kernels compared unmatched.
bool NearlySame(uint64_t unmatched, uint64_t compared) {
  return compared > 0 && 10 * unmatched <= compared;
}

// Whether successive segments between the candidate's occurrences hold the same names (as
// multisets), but for at most 10% of their kernels, and a segment holds at least 2 names.
bool SegmentsRepeat(const KernelSequence& seq, const Occurrences& occ, const Candidate& c) {
  NameCounter counter(seq);
  uint64_t unmatched = 0, compared = 0;
  for (uint32_t k = c.first; k + 1 < c.last; ++k) {
    const uint32_t a = occ.positions[k], b = occ.positions[k + 1], e = occ.positions[k + 2];
    uint32_t distinct = 0;
    unmatched += counter.Unmatched(a, b, b, e, &distinct);
    if (k == c.first && distinct < 2) return false;
    compared += uint64_t{e - a};
  }
  return NearlySame(unmatched, compared);
}

// Kernels from the start of a repetition to the marker: the kernels before the marker's first
// occurrence when they match (as a multiset) the same number of kernels before its second one,
// i.e. the sequence starts with a whole repetition; else 0.
uint32_t MarkerOffset(const KernelSequence& seq, const Occurrences& occ, const Candidate& c) {
  const uint32_t first = occ.positions[c.first], second = occ.positions[c.first + 1];
  if (first == 0 || first >= c.period || second < 2 * first) return 0;
  NameCounter counter(seq);
  return NearlySame(counter.Unmatched(0, first, second - first, second), 2 * uint64_t{first})
             ? first
             : 0;
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

  // The phase: the name regular with this period that comes first (the candidates sorted after
  // the verified one, up to its tolerance, and about as many repetitions: a rotation may lose
  // one at an edge; the ones before it were refused), moved back to the sequence's start when
  // the sequence starts with a whole repetition.
  const Candidate& reference = candidates[verified];
  const uint32_t tolerance = Tolerance(reference.period);
  const Candidate* marker = &reference;
  for (size_t i = verified + 1; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.period > reference.period + tolerance) break;
    if (c.last - c.first + 1 < reference.last - reference.first) continue;
    if (occ.positions[c.first] < occ.positions[marker->first]) marker = &c;
  }
  out.marker_offset_kernels = MarkerOffset(seq, occ, *marker);
  for (uint32_t k = marker->first; k <= marker->last; ++k) {
    out.anchors.push_back(seq.nodes[occ.positions[k] - out.marker_offset_kernels]);
  }
  // Host boundaries when every anchor was launched from one thread (kernels of a CUDA graph
  // have no launch call of their own), in time order (anchors on different streams may be
  // launched out of their GPU order).
  const uint32_t first_launch = graph.nodes[out.anchors.front()].launch;
  for (uint32_t n : out.anchors) {
    const uint32_t launch = graph.nodes[n].launch;
    if (launch == kNoNode || graph.nodes[launch].processor != graph.nodes[first_launch].processor ||
        (!out.launches.empty() &&
         graph.nodes[launch].start_ns <= graph.nodes[out.launches.back()].start_ns)) {
      out.launches.clear();
      break;
    }
    out.launches.push_back(launch);
  }
  out.marker_name = graph.nodes[seq.nodes[occ.positions[marker->first]]].name;
  out.period_kernels = marker->period;
  return out;
}

}  // namespace lumos::modeler
