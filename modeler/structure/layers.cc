// Layers of a rank, first rule that finds any:
//  1. layer ranges: NVTX or host ranges named like a transformer layer (IsLayerRangeName), the
//     outermost per thread, each a segment over its extent on its thread, in the phase segment
//     its start falls in (none: phase kOther);
//  2. the kernel stream of each forward and each backward phase (its kernels in start order,
//     as name ids): the longest run of L >= 2 back-to-back copies of a block of P >= 3 kernels
//     (LongestRepetition) whose block holds >= 2 distinct names and >= 4 GEMM or attention
//     kernels, split-K reductions not counted, and an attention or softmax kernel (a
//     transformer layer has 4 GEMMs and attention forward, twice the GEMMs backward; that
//     leaves out an MLP's layers, one GEMM each, as DLRM's, and other repeating blocks
//     without attention, as the 38-GEMM towers of the shared df_index_resolver trace). Instance j
//     covers kernels [start + jP, start + (j+1)P): from the launch of its first kernel to the
//     launch of the next instance's first (the last one: to the end of its last kernel's launch),
//     on the thread that launched its first kernel; kernels without a launch call: the block's
//     kernels alone. Right before and right after the run (within 1.25 blocks), a near copy of
//     the block is one more instance, marked partial: the longest common subsequence of the
//     two holds at least 80 % of the block's kernels and the copy is itself layer-like (a
//     transformer's backward starts with its last layer, which adds no residual gradient, and
//     ends with its first, whose input needs none: each a few kernels short of the others).
//     The estimate copies whole layers, never a partial one.
// Indices count from 0 in execution order within (iteration, phase, micro-batch).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

struct LayerRange {
  int64_t begin, end;
  uint64_t thread;
};

bool MayBeLayerName(std::string_view name) {
  if (name.empty()) return false;
  const char last = name.back();
  return (last >= '0' && last <= '9') || name.find("Layer") != std::string_view::npos ||
         name.find("Block") != std::string_view::npos;
}

const Segment* PhaseAt(const std::vector<Segment>& phases, int64_t t) {
  for (const Segment& s : phases) {
    if (s.begin_ns <= t && t < s.end_ns) return &s;
  }
  return nullptr;
}

void Number(std::vector<Segment>* layers) {
  std::sort(layers->begin(), layers->end(), [](const Segment& a, const Segment& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.nodes < b.nodes;
  });
  std::map<std::tuple<uint32_t, Phase, uint32_t>, uint32_t> next;
  for (Segment& s : *layers) s.layer = next[{s.iteration, s.phase, s.micro_batch}]++;
}

// A near copy of `block` in seq[from, to): the longest common subsequence of the two holds at
// least kMirrorShare of the block's kernels; `first` and `last` are the first and last
// positions of seq it uses.
struct Mirror {
  bool found = false;
  size_t first = 0, last = 0;
};
constexpr double kMirrorShare = 0.8;

Mirror NearCopy(const std::vector<uint32_t>& seq, size_t from, size_t to,
                const std::vector<uint32_t>& block) {
  Mirror m;
  if (to <= from || block.empty()) return m;
  const size_t n = to - from, p = block.size();
  // lcs[i][j]: LCS of seq[from + i ..] and block[j ..] (suffixes), to walk it forward.
  std::vector<std::vector<uint16_t>> lcs(n + 1, std::vector<uint16_t>(p + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = p; j-- > 0;) {
      lcs[i][j] = seq[from + i] == block[j] ? static_cast<uint16_t>(lcs[i + 1][j + 1] + 1)
                                            : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  if (static_cast<double>(lcs[0][0]) < kMirrorShare * static_cast<double>(p)) return m;
  size_t i = 0, j = 0;
  bool any = false;
  while (i < n && j < p) {
    if (seq[from + i] == block[j]) {
      if (!any) m.first = from + i;
      m.last = from + i;
      any = true;
      ++i;
      ++j;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      ++i;
    } else {
      ++j;
    }
  }
  m.found = any;
  return m;
}

}  // namespace

std::vector<Segment> FindLayers(const Job& job, const ExecutionGraph& g, uint32_t r,
                                const RankNodes& rank, const std::vector<Segment>& phases,
                                const std::vector<NodeInfo>& nodes, std::string* method) {
  const RankTrace& trace = job.ranks[r];
  const int64_t offset = g.rank_offset_ns[r];
  std::vector<LayerRange> ranges;
  auto add = [&](std::string_view name, int64_t start, uint64_t duration, uint64_t thread) {
    if (duration == 0 || !MayBeLayerName(name) || !IsLayerRangeName(name)) return;
    ranges.push_back({start + offset, start + offset + static_cast<int64_t>(duration), thread});
  };
  for (const schema::NvtxEvent& n : trace.nvtx) add(n.name, n.start_ns, n.duration_ns, n.thread_id);
  for (const schema::HostRangeEvent& h : trace.host_ranges) {
    if (h.category != schema::HostRangeCategory::kStep) {
      add(h.name, h.start_ns, h.duration_ns, h.thread_id);
    }
  }
  std::vector<Segment> out;
  if (!ranges.empty()) {
    std::sort(ranges.begin(), ranges.end(), [](const LayerRange& a, const LayerRange& b) {
      return a.thread != b.thread ? a.thread < b.thread
             : a.begin != b.begin ? a.begin < b.begin
                                  : a.end > b.end;
    });
    const LayerRange* outer = nullptr;
    for (const LayerRange& range : ranges) {
      if (outer != nullptr && outer->thread == range.thread && range.end <= outer->end) continue;
      outer = &range;
      const Segment* phase = PhaseAt(phases, range.begin);
      Segment s = MakeSegment(g, rank, r, range.begin, range.end, {range.thread});
      if (phase != nullptr) {
        s.iteration = phase->iteration;
        s.phase = phase->phase;
        s.micro_batch = phase->micro_batch;
        s.end_ns = std::min(s.end_ns, phase->end_ns);
      }
      out.push_back(std::move(s));
    }
    Number(&out);
    *method = "NVTX/host ranges named like layers ('layers.N', 'layer_N', '...TransformerLayer')";
    return out;
  }
  std::unordered_map<std::string_view, uint32_t> ids;
  size_t found_period = 0, found_count = 0, mirrors = 0;
  for (const Segment& phase : phases) {
    if (phase.phase != Phase::kForward && phase.phase != Phase::kBackward) continue;
    std::vector<uint32_t> kernels;
    for (uint32_t n : phase.nodes) {
      if (g.nodes[n].kind == NodeKind::kKernel) kernels.push_back(n);
    }
    std::sort(kernels.begin(), kernels.end(), [&g](uint32_t a, uint32_t b) {
      return g.nodes[a].start_ns != g.nodes[b].start_ns ? g.nodes[a].start_ns < g.nodes[b].start_ns
                                                        : a < b;
    });
    constexpr size_t kMaxPhaseKernels = 1 << 14;  // Bounds the O(n^2) search.
    if (kernels.size() > kMaxPhaseKernels) kernels.resize(kMaxPhaseKernels);
    std::vector<uint32_t> seq;
    seq.reserve(kernels.size());
    for (uint32_t n : kernels) {
      seq.push_back(
          ids.try_emplace(g.nodes[n].name, static_cast<uint32_t>(ids.size())).first->second);
    }
    const Repetition rep = LongestRepetition(seq, 3);
    if (rep.period == 0) continue;
    size_t gemms = 0;
    bool attention = false;
    std::vector<uint32_t> distinct(seq.begin() + static_cast<ptrdiff_t>(rep.start),
                                   seq.begin() + static_cast<ptrdiff_t>(rep.start + rep.period));
    for (size_t i = rep.start; i < rep.start + rep.period; ++i) {
      gemms += IsLayerGemm(g.nodes[kernels[i]], nodes[kernels[i]].kernel_class) ? 1 : 0;
      attention = attention || IsAttention(nodes[kernels[i]].kernel_class);
    }
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (gemms < 4 || !attention || distinct.size() < 2) continue;
    found_period = rep.period;
    auto host_start = [&](uint32_t k) {
      const Node& n = g.nodes[k];
      return n.launch != kNoNode ? g.nodes[n.launch].start_ns : n.start_ns;
    };
    // The instances' kernels [first, last], in execution order: the run, and a mirror on
    // either side of it (see the file comment) when there is one.
    struct Instance {
      size_t first, last;
      bool partial;
    };
    std::vector<Instance> instances;
    const size_t run_end = rep.start + rep.count * rep.period;
    const std::vector<uint32_t> block(seq.begin() + static_cast<ptrdiff_t>(rep.start),
                                      seq.begin() + static_cast<ptrdiff_t>(rep.start + rep.period));
    auto layer_like = [&](size_t first, size_t last) {
      size_t layer_gemms = 0;
      bool has_attention = false;
      for (size_t i = first; i <= last; ++i) {
        layer_gemms += IsLayerGemm(g.nodes[kernels[i]], nodes[kernels[i]].kernel_class) ? 1 : 0;
        has_attention = has_attention || IsAttention(nodes[kernels[i]].kernel_class);
      }
      return layer_gemms >= 4 && has_attention;
    };
    const size_t reach = rep.period + rep.period / 4;
    if (const Mirror m = NearCopy(seq, rep.start > reach ? rep.start - reach : 0, rep.start, block);
        m.found && layer_like(m.first, rep.start - 1)) {
      instances.push_back({m.first, rep.start - 1, true});
    }
    for (size_t j = 0; j < rep.count; ++j) {
      instances.push_back(
          {rep.start + j * rep.period, rep.start + (j + 1) * rep.period - 1, false});
    }
    if (const Mirror m = NearCopy(seq, run_end, std::min(seq.size(), run_end + reach), block);
        m.found && layer_like(run_end, m.last)) {
      instances.push_back({run_end, m.last, true});
    }
    found_count = std::max(found_count, instances.size());
    for (size_t j = 0; j < instances.size(); ++j) {
      const size_t first = instances[j].first, last = instances[j].last;
      bool launched = true;
      for (size_t i = first; i <= last; ++i)
        launched = launched && g.nodes[kernels[i]].launch != kNoNode;
      const int64_t begin = host_start(kernels[first]);
      int64_t end = 0;
      if (j + 1 < instances.size()) {
        end = host_start(kernels[instances[j + 1].first]);
      } else {
        const Node& k = g.nodes[kernels[last]];
        end = launched ? g.nodes[k.launch].end_ns() : k.end_ns();
      }
      end = std::max(std::min(end, phase.end_ns), begin + 1);
      Segment s;
      if (launched) {
        const Node& launch = g.nodes[g.nodes[kernels[first]].launch];
        s = MakeSegment(g, rank, r, begin, end, {g.processors[launch.processor].id});
      } else {
        s.rank_index = r;
        s.begin_ns = begin;
        s.end_ns = end;
        for (size_t i = first; i <= last; ++i) {
          s.nodes.push_back(kernels[i]);
          if (g.nodes[kernels[i]].launch != kNoNode) s.nodes.push_back(g.nodes[kernels[i]].launch);
        }
        std::sort(s.nodes.begin(), s.nodes.end());
      }
      s.iteration = phase.iteration;
      s.phase = phase.phase;
      s.micro_batch = phase.micro_batch;
      s.partial = instances[j].partial;
      out.push_back(std::move(s));
      mirrors += instances[j].partial ? 1 : 0;
    }
  }
  Number(&out);
  if (!out.empty()) {
    *method = "kernel repetition: a block of " + std::to_string(found_period) +
              " kernels repeated up to " + std::to_string(found_count) + " times per phase";
    if (mirrors > 0) {
      *method += " (" + std::to_string(mirrors) +
                 " of them a near copy: a first or last layer whose kernels differ a little)";
    }
  } else if (phases.empty()) {
    *method = "none: no layer ranges, and no forward/backward phases to search for repetition";
  } else {
    *method =
        "none: no layer ranges, and no forward/backward phase repeats a block of >= 3 kernels "
        "holding >= 4 GEMM/attention kernels and attention or softmax (a transformer layer)";
  }
  return out;
}

}  // namespace lumos::modeler::structure::internal
