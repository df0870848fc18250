#include <algorithm>

#include "modeler/io/name_pattern.h"
#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {

std::vector<RankNodes> IndexRanks(const ExecutionGraph& g, size_t ranks) {
  std::vector<RankNodes> out(ranks);
  for (const Processor& p : g.processors) {
    if (p.rank_index >= ranks) continue;
    RankNodes& r = out[p.rank_index];
    if (!p.gpu) {
      std::vector<uint32_t>& nodes = r.threads[p.id];
      nodes.insert(nodes.end(), p.nodes.begin(), p.nodes.end());
      continue;
    }
    r.gpu.insert(r.gpu.end(), p.nodes.begin(), p.nodes.end());
  }
  auto by_start = [&g](uint32_t a, uint32_t b) {
    return g.nodes[a].start_ns != g.nodes[b].start_ns ? g.nodes[a].start_ns < g.nodes[b].start_ns
                                                      : a < b;
  };
  for (RankNodes& r : out) {
    for (auto& [thread, nodes] : r.threads) std::sort(nodes.begin(), nodes.end(), by_start);
    std::sort(r.gpu.begin(), r.gpu.end(), by_start);
    for (uint32_t n : r.gpu) {
      if (g.nodes[n].kind == NodeKind::kKernel) r.kernels.push_back(n);
    }
  }
  return out;
}

namespace {

// [first, last) of `nodes` (by start) starting in [begin, end).
std::pair<size_t, size_t> StartingIn(const ExecutionGraph& g, const std::vector<uint32_t>& nodes,
                                     int64_t begin, int64_t end) {
  auto at = [&g](uint32_t n, int64_t t) { return g.nodes[n].start_ns < t; };
  const auto a = std::lower_bound(nodes.begin(), nodes.end(), begin, at);
  const auto b = std::lower_bound(a, nodes.end(), end, at);
  return {static_cast<size_t>(a - nodes.begin()), static_cast<size_t>(b - nodes.begin())};
}

}  // namespace

std::vector<uint32_t> CollectNodes(const ExecutionGraph& g, const RankNodes& rank, int64_t begin,
                                   int64_t end, const std::vector<uint64_t>& threads,
                                   bool unlaunched) {
  std::vector<uint32_t> out;
  auto add_thread = [&](const std::vector<uint32_t>& nodes) {
    const auto [a, b] = StartingIn(g, nodes, begin, end);
    for (size_t i = a; i < b; ++i) {
      const uint32_t n = nodes[i];
      out.push_back(n);
      for (uint32_t e = g.out_begin[n]; e < g.out_begin[n + 1]; ++e) {
        if (g.edges[e].kind == EdgeKind::kLaunch) out.push_back(g.edges[e].to);
      }
    }
  };
  if (threads.empty()) {
    for (const auto& [id, nodes] : rank.threads) add_thread(nodes);
  } else {
    for (uint64_t id : threads) {
      if (auto t = rank.threads.find(id); t != rank.threads.end()) add_thread(t->second);
    }
  }
  if (unlaunched) {
    const auto [a, b] = StartingIn(g, rank.gpu, begin, end);
    for (size_t i = a; i < b; ++i) {
      if (g.nodes[rank.gpu[i]].launch == kNoNode) out.push_back(rank.gpu[i]);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

Phase PhaseOfRangeName(std::string_view name) {
  const std::string lower = Lower(name);
  const size_t cut = lower.find_first_of("-_ .#:/");
  const std::string_view first = std::string_view(lower).substr(0, cut);
  const bool has_backward = lower.find("backward") != std::string::npos;
  if ((first == "forward" || first == "fwd") && !has_backward) return Phase::kForward;
  if (first == "backward" || first == "bwd") return Phase::kBackward;
  if (first == "optimizer" && lower.find("zero_grad") == std::string::npos) {
    return Phase::kOptimizer;
  }
  return Phase::kOther;
}

bool IsLayerRangeName(std::string_view name) {
  // A module path ending in its layer's index (Megatron / NeMo "decoder.layers.3", "layers.3",
  // "layer_3", Hugging Face "model.layers.3", GPT-2's "transformer.h.3"), or a layer class
  // (PyTorch profiler module ranges: "nn.Module: ParallelTransformerLayer_3").
  static const NamePattern kPath =
      NamePattern::Compile(R"((^|[^A-Za-z0-9])(layers?|h|blocks?)[._]?\d+$)", /*ignore_case=*/true)
          .value();
  static const NamePattern kClass =
      NamePattern::Compile(
          R"((TransformerLayer|TransformerBlock|DecoderLayer|EncoderLayer|GPT2Block|BertLayer)(_\d+)?$)")
          .value();
  if (name.size() > 512) return false;
  return kPath.Search(name) || kClass.Search(name);
}

bool IsLayerGemm(const Node& node, models::KernelClass c) {
  if (c != models::KernelClass::kGemm && c != models::KernelClass::kAttention) return false;
  return Lower(node.name).find("splitkreduce") == std::string::npos;
}

Repetition LongestRepetition(const std::vector<uint32_t>& ids, size_t min_period) {
  Repetition best;
  const size_t n = ids.size();
  min_period = std::max<size_t>(min_period, 1);
  for (size_t period = min_period; period * 2 <= n; ++period) {
    // No period this long can beat the best coverage (at most n / period copies).
    if ((n / period) * period <= best.period * best.count) continue;
    size_t run = 0;
    for (size_t i = 0; i + period <= n; ++i) {
      const bool match = i + period < n && ids[i] == ids[i + period];
      if (match) {
        ++run;
        continue;
      }
      const size_t count = (run + period) / period;
      if (count >= 2 && count * period > best.count * best.period) {
        best = {i - run, period, count};
      }
      run = 0;
    }
  }
  return best;
}

}  // namespace lumos::modeler::structure::internal
