// Phases of an iteration, first rule that finds any:
//  1. named ranges: NVTX or host ranges starting in the iteration whose name marks a phase
//     (PhaseOfRangeName), the outermost of each; the k-th forward and the k-th backward are
//     micro-batch k; each is a segment over its own extent.
//  2. PyTorch's autograd ranges ("autograd::engine::evaluate_function: ..."): they mark the
//     backward pass, on the autograd threads. Consecutive ones belong to one backward pass
//     unless a host thread that runs no autograd range launched GPU work between them (the
//     next micro-batch's forward). Forward k spans from the end of backward k-1 (or the
//     iteration's start) to the start of backward k; backward k to the start of forward k+1,
//     the last one to the optimizer (or the iteration's end).
//  3. the kernel stream (neither of the above): the runs of a repeating block holding >= 4
//     GEMM/attention kernels (split-K reductions not counted) and attention or softmax (the layers:
//     LongestRepetition, then again left and right of each run found; a block that itself repeats
//     such a block, a whole micro-batch repeated, is searched copy by copy), in order, alternate
//     forward, backward (micro-batch k = run k / 2), told apart by their blocks: a backward's has
//     kernels named for gradients and about twice the forward's GEMMs (RunPhases); runs that are
//     all forward are a forward-only profile (inference, a forward benchmark), one forward per
//     micro-batch. The boundary between two runs is the longest host gap (launch to launch) between
//     them (the loss, or the next micro-batch's data); the first forward starts with the iteration,
//     the last backward (or forward) runs to the optimizer (or the iteration's end). Runs that
//     neither alternate nor are all forward: none.
// The optimizer: an "Optimizer.step#..." / "optimizer" range after the first backward, else
// from the launch of the first optimizer kernel (models::ClassifyKernel kOptimizer) after the
// last backward (or in the iteration, when none) to the iteration's end.
// Segments of one rank never overlap: each ends at the latest where the next begins.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

// Rule 3: the repetition of kernels [lo, hi) if its block is a layer's (layers.cc).
Repetition LayerLike(const ExecutionGraph& g, const std::vector<uint32_t>& seq,
                     const std::vector<uint32_t>& kernels, const std::vector<NodeInfo>& nodes,
                     size_t lo, size_t hi) {
  if (hi - lo < 6) return {};
  const std::vector<uint32_t> part(seq.begin() + static_cast<ptrdiff_t>(lo),
                                   seq.begin() + static_cast<ptrdiff_t>(hi));
  Repetition rep = LongestRepetition(part, 3);
  if (rep.period == 0) return {};
  size_t gemms = 0;
  bool attention = false;
  for (size_t i = lo + rep.start; i < lo + rep.start + rep.period; ++i) {
    gemms += IsLayerGemm(g.nodes[kernels[i]], nodes[kernels[i]].kernel_class) ? 1 : 0;
    attention = attention || IsAttention(nodes[kernels[i]].kernel_class);
  }
  if (gemms < 4 || !attention) return {};
  rep.start += lo;
  return rep;
}

// Rule 3: runs of layers in kernels [lo, hi), in order. A repeating block that itself holds a
// repetition (a micro-batch of layers, repeated) is searched copy by copy.
void FindRuns(const ExecutionGraph& g, const std::vector<uint32_t>& seq,
              const std::vector<uint32_t>& kernels, const std::vector<NodeInfo>& nodes, size_t lo,
              size_t hi, std::vector<std::pair<size_t, size_t>>* runs, int depth) {
  if (depth > 16) return;
  const Repetition rep = LayerLike(g, seq, kernels, nodes, lo, hi);
  if (rep.period == 0) return;
  const size_t begin = rep.start, end = begin + rep.period * rep.count;
  FindRuns(g, seq, kernels, nodes, lo, begin, runs, depth + 1);
  if (LayerLike(g, seq, kernels, nodes, begin, begin + rep.period).period != 0) {
    for (size_t j = 0; j < rep.count; ++j) {
      FindRuns(g, seq, kernels, nodes, begin + j * rep.period, begin + (j + 1) * rep.period, runs,
               depth + 1);
    }
  } else {
    runs->push_back({begin, end});
  }
  FindRuns(g, seq, kernels, nodes, end, hi, runs, depth + 1);
}

// A kernel name that says it computes gradients (layer_norm_grad_input, GammaBetaBackward,
// gelu_backward, cuDNN's sdpa bprop, flash_bwd, wgrad/dgrad GEMMs).
bool GradientName(std::string_view name) {
  for (std::string_view marker : {"backward", "Backward", "_bwd", "bprop", "grad", "Grad"}) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

// Rule 3: each run's phase by its block: a backward layer runs two GEMMs (input and weight
// gradients) for each of the forward's, and kernels named for gradients; so a block with at
// least 1.5 times the fewest layer GEMMs of the iteration's runs, or with a kernel named for
// gradients, is backward, the others forward. The runs must then read forward, backward,
// forward, ... (micro-batches) or be all forward (a forward-only profile: inference, a forward
// benchmark); anything else is no answer (empty).
std::vector<Phase> RunPhases(const ExecutionGraph& g, const std::vector<uint32_t>& seq,
                             const std::vector<uint32_t>& kernels,
                             const std::vector<NodeInfo>& nodes,
                             const std::vector<std::pair<size_t, size_t>>& runs) {
  std::vector<size_t> gemms;
  std::vector<bool> gradients;
  for (const auto& [begin, end] : runs) {
    const Repetition rep = LayerLike(g, seq, kernels, nodes, begin, end);
    const size_t first = rep.period != 0 ? rep.start : begin;
    const size_t last = rep.period != 0 ? rep.start + rep.period : end;
    size_t count = 0;
    bool gradient = false;
    for (size_t i = first; i < last; ++i) {
      count += IsLayerGemm(g.nodes[kernels[i]], nodes[kernels[i]].kernel_class) ? 1 : 0;
      gradient = gradient || GradientName(g.nodes[kernels[i]].name);
    }
    gemms.push_back(count);
    gradients.push_back(gradient);
  }
  if (gemms.empty()) return {};
  const size_t fewest = *std::min_element(gemms.begin(), gemms.end());
  std::vector<Phase> phases;
  for (size_t k = 0; k < gemms.size(); ++k) {
    phases.push_back(gradients[k] || 2 * gemms[k] >= 3 * fewest ? Phase::kBackward
                                                                : Phase::kForward);
  }
  const bool any_backward =
      std::find(phases.begin(), phases.end(), Phase::kBackward) != phases.end();
  if (!any_backward) return phases;
  for (size_t k = 0; k < phases.size(); ++k) {
    if (phases[k] != (k % 2 == 0 ? Phase::kForward : Phase::kBackward)) return {};
  }
  return phases.size() % 2 == 0 ? phases : std::vector<Phase>();
}

struct Span {
  int64_t begin, end;
  uint64_t thread;
};

constexpr std::string_view kAutograd = "autograd::engine::evaluate_function:";

// Outermost spans (by start, longest first among equal starts).
std::vector<Span> Outermost(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<Span> out;
  for (const Span& s : spans) {
    if (!out.empty() && s.end <= out.back().end && s.thread == out.back().thread) continue;
    out.push_back(s);
  }
  return out;
}

}  // namespace

Segment MakeSegment(const ExecutionGraph& g, const RankNodes& rank, uint32_t rank_index,
                    int64_t begin, int64_t end, const std::vector<uint64_t>& threads) {
  Segment s;
  s.rank_index = rank_index;
  s.begin_ns = begin;
  s.end_ns = end;
  s.nodes = CollectNodes(g, rank, begin, end, threads, /*unlaunched=*/threads.empty());
  return s;
}

std::vector<Segment> FindPhases(const Job& job, const ExecutionGraph& g, uint32_t r,
                                const RankNodes& rank, const std::vector<Segment>& iterations,
                                const std::vector<NodeInfo>& nodes, std::string* method) {
  const RankTrace& trace = job.ranks[r];
  const int64_t offset = g.rank_offset_ns[r];
  std::vector<Span> named[3];  // Forward, backward, optimizer.
  std::vector<Span> autograd;
  auto add = [&](std::string_view name, int64_t start, uint64_t duration, uint64_t thread) {
    const Span span{start + offset, start + offset + static_cast<int64_t>(duration), thread};
    if (name.substr(0, kAutograd.size()) == kAutograd) {
      autograd.push_back(span);
      return;
    }
    const Phase phase = PhaseOfRangeName(name);
    if (phase != Phase::kOther && duration > 0) named[static_cast<int>(phase)].push_back(span);
  };
  for (const schema::NvtxEvent& n : trace.nvtx) add(n.name, n.start_ns, n.duration_ns, n.thread_id);
  for (const schema::HostRangeEvent& h : trace.host_ranges) {
    if (h.category == schema::HostRangeCategory::kStep) continue;
    add(h.name, h.start_ns, h.duration_ns, h.thread_id);
  }
  for (auto& list : named) list = Outermost(std::move(list));
  autograd = Outermost(std::move(autograd));
  std::vector<uint64_t> backward_threads;
  backward_threads.reserve(autograd.size());
  for (const Span& s : autograd) backward_threads.push_back(s.thread);
  std::sort(backward_threads.begin(), backward_threads.end());
  backward_threads.erase(std::unique(backward_threads.begin(), backward_threads.end()),
                         backward_threads.end());
  // Launch times of threads that run no autograd range (forward work).
  std::vector<int64_t> forward_launches;
  for (const auto& [thread, list] : rank.threads) {
    if (std::binary_search(backward_threads.begin(), backward_threads.end(), thread)) continue;
    for (uint32_t n : list) {
      for (uint32_t e = g.out_begin[n]; e < g.out_begin[n + 1]; ++e) {
        if (g.edges[e].kind == EdgeKind::kLaunch) {
          forward_launches.push_back(g.nodes[n].start_ns);
          break;
        }
      }
    }
  }
  std::sort(forward_launches.begin(), forward_launches.end());
  auto launches_between = [&](int64_t a, int64_t b) {
    auto it = std::upper_bound(forward_launches.begin(), forward_launches.end(), a);
    return it != forward_launches.end() && *it < b;
  };
  // The host time (launch start, else GPU start) of optimizer kernels, in order.
  std::vector<int64_t> optimizer_starts;
  for (uint32_t n : rank.kernels) {
    if (nodes[n].kernel_class != models::KernelClass::kOptimizer) continue;
    const Node& k = g.nodes[n];
    optimizer_starts.push_back(k.launch != kNoNode ? g.nodes[k.launch].start_ns : k.start_ns);
  }
  std::sort(optimizer_starts.begin(), optimizer_starts.end());
  auto host_time = [&g](uint32_t n) {
    const Node& k = g.nodes[n];
    return k.launch != kNoNode ? g.nodes[k.launch].start_ns : k.start_ns;
  };
  std::unordered_map<std::string_view, uint32_t> ids;  // Kernel names, for rule 3.

  bool used_named = false, used_autograd = false, used_kernels = false, used_repetition = false;
  bool forward_only = false;
  std::vector<Segment> out;
  for (uint32_t it = 0; it < iterations.size(); ++it) {
    const int64_t b = iterations[it].begin_ns, e = iterations[it].end_ns;
    auto inside = [&](const std::vector<Span>& list) {
      std::vector<Span> in;
      for (const Span& s : list) {
        if (s.begin >= b && s.begin < e) in.push_back({s.begin, std::min(s.end, e), s.thread});
      }
      return in;
    };
    std::vector<Segment> phases;
    auto push = [&](Phase phase, uint32_t micro_batch, int64_t begin, int64_t end) {
      if (begin >= end) return;
      Segment s;
      s.rank_index = r;
      s.iteration = it;
      s.phase = phase;
      s.micro_batch = micro_batch;
      s.begin_ns = begin;
      s.end_ns = end;
      phases.push_back(std::move(s));
    };
    const std::vector<Span> forward = inside(named[0]), backward = inside(named[1]);
    const std::vector<Span> optimizer = inside(named[2]);
    int64_t last_backward_end = b, first_backward = e;
    const bool named_here = !forward.empty() || !backward.empty();
    if (named_here) {
      used_named = true;
      for (size_t k = 0; k < forward.size(); ++k) {
        push(Phase::kForward, static_cast<uint32_t>(k), forward[k].begin, forward[k].end);
      }
      for (size_t k = 0; k < backward.size(); ++k) {
        push(Phase::kBackward, static_cast<uint32_t>(k), backward[k].begin, backward[k].end);
        last_backward_end = std::max(last_backward_end, backward[k].end);
        first_backward = std::min(first_backward, backward[k].begin);
      }
    } else if (const std::vector<Span> bw = inside(autograd); !bw.empty()) {
      used_autograd = true;
      std::vector<std::pair<int64_t, int64_t>> clusters{{bw[0].begin, bw[0].end}};
      for (size_t k = 1; k < bw.size(); ++k) {
        if (launches_between(clusters.back().second, bw[k].begin)) {
          clusters.push_back({bw[k].begin, bw[k].end});
        } else {
          clusters.back().second = std::max(clusters.back().second, bw[k].end);
        }
      }
      first_backward = clusters.front().first;
      last_backward_end = clusters.back().second;
      for (size_t k = 0; k < clusters.size(); ++k) {
        const int64_t fwd_begin = k == 0 ? b : clusters[k - 1].second;
        push(Phase::kForward, static_cast<uint32_t>(k), fwd_begin, clusters[k].first);
        // The last one runs to the optimizer (clipped below) or the iteration's end.
        const int64_t bwd_end = k + 1 < clusters.size() ? clusters[k].second : e;
        push(Phase::kBackward, static_cast<uint32_t>(k), clusters[k].first, bwd_end);
      }
      // The optimizer starts after the last backward pass starts.
      last_backward_end = clusters.back().first;
    } else {
      // Rule 3, up to the first optimizer kernel.
      auto o = std::lower_bound(optimizer_starts.begin(), optimizer_starts.end(), b);
      const int64_t stop = o != optimizer_starts.end() && *o < e ? *o : e;
      std::vector<uint32_t> kernels, seq;
      for (uint32_t n : rank.kernels) {
        const int64_t t = host_time(n);
        if (t >= b && t < stop && nodes[n].kernel_class != models::KernelClass::kCommunication) {
          kernels.push_back(n);
        }
      }
      std::sort(kernels.begin(), kernels.end(),
                [&](uint32_t x, uint32_t y) { return host_time(x) < host_time(y); });
      constexpr size_t kMaxKernels = 1 << 14;  // Bounds the O(n^2) search.
      if (kernels.size() > kMaxKernels) kernels.resize(kMaxKernels);
      for (uint32_t n : kernels) {
        seq.push_back(
            ids.try_emplace(g.nodes[n].name, static_cast<uint32_t>(ids.size())).first->second);
      }
      std::vector<std::pair<size_t, size_t>> runs;
      FindRuns(g, seq, kernels, nodes, 0, kernels.size(), &runs, 0);
      const std::vector<Phase> run_phases = RunPhases(g, seq, kernels, nodes, runs);
      if (!run_phases.empty()) {
        used_repetition = true;
        forward_only =
            forward_only || std::count(run_phases.begin(), run_phases.end(), Phase::kBackward) == 0;
        // Boundaries: the longest launch-to-launch gap between consecutive runs.
        std::vector<int64_t> cuts{b};
        for (size_t k = 0; k + 1 < runs.size(); ++k) {
          size_t best = runs[k].second;
          int64_t widest = -1;
          for (size_t i = runs[k].second; i < runs[k + 1].first; ++i) {
            const int64_t gap = host_time(kernels[i]) - host_time(kernels[i - 1]);
            if (gap > widest) widest = gap, best = i;
          }
          cuts.push_back(host_time(kernels[best]));
        }
        cuts.push_back(stop);
        uint32_t forwards = 0, backwards = 0;
        for (size_t k = 0; k < runs.size(); ++k) {
          const bool backward = run_phases[k] == Phase::kBackward;
          push(run_phases[k], backward ? backwards++ : forwards++, cuts[k], cuts[k + 1]);
        }
        last_backward_end = stop;
      }
    }
    bool found = false;
    for (const Span& s : optimizer) {
      if (s.begin >= std::min(first_backward, last_backward_end)) {
        // Named: over its own extent, or to the iteration's end when found by autograd.
        push(Phase::kOptimizer, 0, s.begin, named_here ? s.end : e);
        found = true;
        break;
      }
    }
    if (!found) {
      auto o =
          std::lower_bound(optimizer_starts.begin(), optimizer_starts.end(), last_backward_end);
      if (o != optimizer_starts.end() && *o < e) {
        push(Phase::kOptimizer, 0, *o, e);
        used_kernels = true;
      }
    }
    std::sort(phases.begin(), phases.end(),
              [](const Segment& x, const Segment& y) { return x.begin_ns < y.begin_ns; });
    for (size_t k = 0; k + 1 < phases.size(); ++k) {
      phases[k].end_ns = std::min(phases[k].end_ns, phases[k + 1].begin_ns);
    }
    for (Segment& s : phases) {
      if (s.begin_ns >= s.end_ns) continue;
      s.nodes = CollectNodes(g, rank, s.begin_ns, s.end_ns, {}, /*unlaunched=*/true);
      out.push_back(std::move(s));
    }
  }
  std::string how;
  if (used_named) how = "NVTX/host ranges 'forward', 'backward', 'optimizer'";
  if (used_autograd) {
    if (!how.empty()) how += "; ";
    how += "PyTorch autograd ranges (backward), forward before them";
  }
  if (used_repetition) {
    how += std::string(how.empty() ? "" : "; ") +
           (forward_only ? "kernel repetition (runs of repeating layers, all forward: no run's "
                           "block has the backward's gradient kernels or twice the GEMMs)"
                         : "kernel repetition (runs of repeating layers: a backward's block has "
                           "gradient kernels, about twice the forward's GEMMs)");
  }
  if (used_kernels) how += std::string(how.empty() ? "" : "; ") + "optimizer kernels";
  if (how.empty()) {
    how = "none: no 'forward'/'backward' ranges, no autograd ranges, no optimizer kernels";
  }
  *method = how;
  return out;
}

}  // namespace lumos::modeler::structure::internal
