// The Setup from the trace, then --base, then what follows from both.
// Shapes (the first forward layer instance, in rank order, whose kernels have GEMM shapes):
// its linear GEMMs (no attention problem, batch <= 1) in launch order are Megatron's QKV,
// attention output, fc1 and fc2. Whatever the convention (cuBLAS column-major m = out,
// n = tokens; an imported operator's m = tokens, n = out), k is the input width and the
// tokens of the micro-batch are the dimension the four share:
//   hidden = k(QKV); tp (shape) = hidden / k(attention output) (its input is split over TP);
//   ffn = k(fc2) x tp; tokens = seq x mbs.
// Attention: an imported attention problem (m = query length = seq, batch = mbs x heads per
// TP rank, heads), else a batched GEMM (Q K^T: m = n = seq, batch = mbs x heads per TP rank,
// k = head dim, heads per TP rank = hidden / tp / head dim): heads = heads per TP rank x tp.
// vocab = the widest output of a GEMM with k = hidden after the last forward layer x tp (the
// output layer is split over TP).
// Structure: layers = layer instances in the first forward phase x pp; micro_batches = forward
// phases in the first iteration; world = the ranks' world size; dp, tp, pp, ep = the size of
// the communicator with that role.
// Defaults (origin derived, which a given value overrides): tp, pp, cp, ep = 1 when no
// communicator has the role and the shapes do not say; dp = world / (tp pp cp); seq or mbs =
// tokens / the other.
#include <algorithm>
#include <set>

#include "modeler/structure/structure_internal.h"

namespace lumos::modeler::structure::internal {
namespace {

using schema::GemmApi;

bool IsAttentionApi(GemmApi api) {
  return api == GemmApi::kFrameworkAttention || api == GemmApi::kFrameworkAttentionBackward;
}

void Set(Value* v, int64_t value, Origin origin, std::string how) {
  v->value = value;
  v->origin = origin;
  v->how = std::move(how);
}

std::string Hex(uint64_t id) {
  char text[24];
  std::snprintf(text, sizeof(text), "%llx", static_cast<unsigned long long>(id));
  return text;
}

struct Shapes {
  bool found = false;
  int64_t hidden = 0, tokens = 0, tp_shape = 0, ffn_per_tp = 0;
  int64_t heads_per_tp = 0, head_dim = 0, seq = 0, mbs = 0, vocab_per_tp = 0;
  std::string attention_how;
};

Shapes ReadShapes(const Job& job, const ExecutionGraph& g, const JobStructure& s) {
  Shapes out;
  if (g.node_source.size() != g.nodes.size()) return out;
  auto gemm_of = [&](uint32_t n) -> const schema::GemmCallEvent* {
    if (g.nodes[n].kind != NodeKind::kKernel) return nullptr;
    return job.ranks[g.nodes[n].rank_index].GemmOf(g.node_source[n]);
  };
  auto by_start = [&g](std::vector<uint32_t> v) {
    std::sort(v.begin(), v.end(), [&g](uint32_t a, uint32_t b) {
      return g.nodes[a].start_ns != g.nodes[b].start_ns ? g.nodes[a].start_ns < g.nodes[b].start_ns
                                                        : a < b;
    });
    return v;
  };
  for (const RankStructure& rank : s.ranks) {
    for (const Segment& layer : rank.layers) {
      if (layer.phase != Phase::kForward) continue;
      std::vector<const schema::GemmCallEvent*> linear;
      const schema::GemmCallEvent* attention = nullptr;
      const schema::GemmCallEvent* batched = nullptr;
      for (uint32_t n : by_start(layer.nodes)) {
        const schema::GemmCallEvent* gemm = gemm_of(n);
        if (gemm == nullptr) continue;
        if (IsAttentionApi(gemm->api)) {
          if (attention == nullptr && gemm->api == GemmApi::kFrameworkAttention) attention = gemm;
        } else if (gemm->batch_count > 1) {
          if (batched == nullptr) batched = gemm;
        } else if (gemm->m > 0 && gemm->n > 0 && gemm->k > 0) {
          linear.push_back(gemm);
        }
      }
      if (linear.size() < 4) continue;
      const auto m = [](const schema::GemmCallEvent* x) { return static_cast<int64_t>(x->m); };
      const auto n = [](const schema::GemmCallEvent* x) { return static_cast<int64_t>(x->n); };
      int64_t tokens = 0;
      for (int64_t candidate : {m(linear[0]), n(linear[0])}) {
        bool shared = true;
        for (size_t i = 1; i < 4; ++i) {
          shared = shared && (m(linear[i]) == candidate || n(linear[i]) == candidate);
        }
        if (shared) {
          tokens = candidate;
          break;
        }
      }
      if (tokens == 0) continue;
      out.found = true;
      out.tokens = tokens;
      out.hidden = static_cast<int64_t>(linear[0]->k);
      const int64_t k_proj = static_cast<int64_t>(linear[1]->k);
      out.tp_shape = k_proj > 0 && out.hidden % k_proj == 0 ? out.hidden / k_proj : 0;
      out.ffn_per_tp = static_cast<int64_t>(linear[3]->k);
      if (attention != nullptr && attention->heads > 0 && attention->batch_count > 0) {
        out.heads_per_tp = attention->heads;
        out.head_dim = static_cast<int64_t>(attention->k);
        out.seq = static_cast<int64_t>(attention->m);
        out.mbs = static_cast<int64_t>(attention->batch_count) / attention->heads;
        out.attention_how = "the layers' attention problem";
      } else if (batched != nullptr && batched->k > 0 && out.tp_shape > 0) {
        out.head_dim = static_cast<int64_t>(batched->k);
        const int64_t per_tp = out.hidden / out.tp_shape;
        if (per_tp % out.head_dim == 0) {
          out.heads_per_tp = per_tp / out.head_dim;
          out.seq = static_cast<int64_t>(batched->m);
          out.mbs = static_cast<int64_t>(batched->batch_count) / out.heads_per_tp;
          out.attention_how = "the layers' first batched GEMM (Q K^T)";
        }
      }
      // The output layer: after the last forward layer of this phase.
      int64_t last_layer_end = layer.end_ns;
      for (const Segment& other : rank.layers) {
        if (other.phase == Phase::kForward && other.iteration == layer.iteration &&
            other.micro_batch == layer.micro_batch) {
          last_layer_end = std::max(last_layer_end, other.end_ns);
        }
      }
      for (const Segment& phase : rank.phases) {
        if (phase.phase != Phase::kForward || phase.iteration != layer.iteration ||
            phase.micro_batch != layer.micro_batch) {
          continue;
        }
        for (uint32_t x : phase.nodes) {
          const schema::GemmCallEvent* gemm = gemm_of(x);
          if (gemm == nullptr || g.nodes[x].start_ns < last_layer_end ||
              IsAttentionApi(gemm->api) || static_cast<int64_t>(gemm->k) != out.hidden) {
            continue;
          }
          const int64_t width = m(gemm) == tokens ? n(gemm) : m(gemm);
          out.vocab_per_tp = std::max(out.vocab_per_tp, width);
        }
      }
      return out;
    }
  }
  return out;
}

}  // namespace

Setup SetupFromTrace(const Job& job, const ExecutionGraph& g, const JobStructure& s) {
  Setup setup;
  int32_t world = 0;
  for (const RankTrace& r : job.ranks)
    world = std::max({world, r.world_size, r.trailer_world_size});
  if (world > 0) Set(&setup.world, world, Origin::kTrace, "the ranks' world size (trace headers)");
  for (const CommGroup& group : s.groups) {
    Value* v = nullptr;
    switch (group.role) {
      case GroupRole::kData:
        v = &setup.dp;
        break;
      case GroupRole::kTensor:
        v = &setup.tp;
        break;
      case GroupRole::kPipeline:
        v = &setup.pp;
        break;
      case GroupRole::kContext:
        v = &setup.cp;
        break;
      case GroupRole::kExpert:
        v = &setup.ep;
        break;
      default:
        break;
    }
    if (v == nullptr || v->known()) continue;
    if (!group.size_recorded && (world == 0 || static_cast<int32_t>(group.ranks.size()) < world)) {
      v->how = "communicator " + Hex(group.comm_id) + " has the role (" + group.evidence +
               ") but its size is not recorded and not all its ranks are loaded";
      continue;
    }
    Set(v, group.size, Origin::kTrace,
        "communicator " + Hex(group.comm_id) + " (" + std::to_string(group.size) +
            " ranks): " + group.evidence);
  }
  // Layers per stage and micro-batches: the first rank that has them.
  for (const RankStructure& rank : s.ranks) {
    if (setup.layers.known()) break;
    int64_t count = 0;
    for (const Segment& l : rank.layers) {
      count += l.phase == Phase::kForward && l.iteration == 0 && l.micro_batch == 0 ? 1 : 0;
    }
    if (count > 0) {
      Set(&setup.layers, count, Origin::kTrace,
          std::to_string(count) + " layer instances in the first forward phase (rank " +
              std::to_string(rank.rank) + ")");
    }
  }
  for (const RankStructure& rank : s.ranks) {
    std::set<uint32_t> forward;
    for (const Segment& p : rank.phases) {
      if (p.phase == Phase::kForward && p.iteration == 0) forward.insert(p.micro_batch);
    }
    if (!forward.empty()) {
      Set(&setup.micro_batches, static_cast<int64_t>(forward.size()), Origin::kTrace,
          "forward phases in the first iteration (rank " + std::to_string(rank.rank) + ")");
      break;
    }
  }
  const Shapes shapes = ReadShapes(job, g, s);
  if (shapes.found) {
    Set(&setup.hidden, shapes.hidden, Origin::kTrace, "k of the layers' first GEMM (QKV)");
    if (!setup.tp.known() && shapes.tp_shape > 0) {
      Set(&setup.tp, shapes.tp_shape, Origin::kTrace,
          "hidden / k of the layers' second GEMM (attention output)");
    }
    // Per-TP-rank widths; scaled by tp in MergeSetup.
    Set(&setup.ffn, shapes.ffn_per_tp, Origin::kTrace, "k of the layers' fourth GEMM (fc2)");
    if (shapes.heads_per_tp > 0) {
      Set(&setup.heads, shapes.heads_per_tp, Origin::kTrace, "heads of " + shapes.attention_how);
      Set(&setup.seq, shapes.seq, Origin::kTrace, "query length of " + shapes.attention_how);
      Set(&setup.mbs, shapes.mbs, Origin::kTrace, "batch / heads of " + shapes.attention_how);
    } else {
      // Only their product is known: kept in `how` for MergeSetup.
      setup.seq.how = "no attention shape in the layers; tokens per micro-batch (seq x mbs) = " +
                      std::to_string(shapes.tokens);
      setup.mbs.how = setup.seq.how;
      setup.seq.value = setup.mbs.value = shapes.tokens;
    }
    if (shapes.vocab_per_tp > 0) {
      Set(&setup.vocab, shapes.vocab_per_tp, Origin::kTrace,
          "widest GEMM output with k = hidden after the last forward layer (output layer)");
    }
  }
  return setup;
}

}  // namespace lumos::modeler::structure::internal
