#include "modeler/estimate/estimate_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace lumos::modeler::estimate {
namespace {

using whatif::SettingKey;

int64_t Known(const structure::Value& v) { return v.known() ? v.value : 0; }

std::string Name(SettingKey key) { return whatif::SettingKeyName(key); }

// Spread `count` positions evenly over [lo, hi] (inclusive), each once.
std::vector<uint32_t> Spread(uint32_t count, uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> out;
  if (count == 0 || hi < lo) return out;
  const uint32_t span = hi - lo + 1;
  for (uint32_t i = 0; i < count && i < span; ++i) {
    out.push_back(lo + static_cast<uint32_t>((static_cast<uint64_t>(2 * i + 1) * span) /
                                             (2 * static_cast<uint64_t>(count))));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // Collisions (count close to span) filled from the first free position.
  for (uint32_t p = lo; out.size() < std::min(count, span) && p <= hi; ++p) {
    if (!std::binary_search(out.begin(), out.end(), p)) {
      out.insert(std::lower_bound(out.begin(), out.end(), p), p);
    }
  }
  return out;
}

// The parameters one GPU holds, for the gradient collectives and the optimizer's work.
// With the vocabulary unknown (a loop with no embedding or LM head, as scripts/gpu/train_loop.py,
// or one the trace does not show) the memory model cannot run: then the transformer layers'
// own weights (attention 4 h^2, MLP 2 h ffn, two norms), split over tp and pp, are the count.
double ParametersPerGpu(const whatif::SetupValues& v) {
  models::MemoryConfig c = MemoryConfigFor(v, 0, models::Recompute::kNone, true);
  StatusOr<models::MemoryEstimate> m = models::EstimateMemory(c, nullptr);
  if (m.ok()) return static_cast<double>(m->Largest().parameters);
  if (v.layers <= 0 || v.hidden <= 0 || v.ffn <= 0 || v.tp <= 0 || v.pp <= 0) return 0.0;
  const auto h = static_cast<double>(v.hidden), ffn = static_cast<double>(v.ffn);
  const double layer = (4 * h * h + 2 * h * ffn) / static_cast<double>(v.tp) + 4 * h;
  return layer * static_cast<double>(v.layers) / static_cast<double>(v.pp);
}

Status CheckKnown(const structure::JobStructure& s, SettingKey key) {
  const structure::Value* v = structure::SetupField(s.setup, Name(key));
  if (v != nullptr && v->known()) return Status::Ok();
  return Status::Error("--set " + Name(key) + ": the measured " + Name(key) +
                       " is not known from the trace (" + (v != nullptr ? v->how : "") +
                       "); give it with --base " + Name(key) + "=N");
}

}  // namespace

whatif::SetupValues MeasuredSetup(const structure::JobStructure& s) {
  whatif::SetupValues v;
  v.layers = Known(s.setup.layers);
  v.hidden = Known(s.setup.hidden);
  v.ffn = Known(s.setup.ffn);
  v.heads = Known(s.setup.heads);
  v.seq = Known(s.setup.seq);
  v.mbs = Known(s.setup.mbs);
  v.micro_batches = Known(s.setup.micro_batches);
  v.vocab = Known(s.setup.vocab);
  v.world = Known(s.setup.world);
  v.dp = Known(s.setup.dp);
  v.tp = Known(s.setup.tp);
  v.pp = Known(s.setup.pp);
  v.cp = s.setup.cp.known() ? s.setup.cp.value : 1;
  v.ep = s.setup.ep.known() ? s.setup.ep.value : 1;
  return v;
}

models::MemoryConfig MemoryConfigFor(const whatif::SetupValues& v, int zero,
                                     models::Recompute recompute, bool flash_attention) {
  models::MemoryConfig c;
  c.layers = v.layers;
  c.hidden = v.hidden;
  c.ffn = v.ffn;
  c.heads = v.heads;
  c.seq = v.seq;
  c.mbs = v.mbs;
  c.micro_batches = std::max<int64_t>(1, v.micro_batches);
  c.vocab = v.vocab;
  c.dp = std::max<int64_t>(1, v.dp);
  c.tp = std::max<int64_t>(1, v.tp);
  c.pp = std::max<int64_t>(1, v.pp);
  c.cp = std::max<int64_t>(1, v.cp);
  c.sequence_parallel = v.sequence_parallel;
  c.zero_stage = zero;
  c.recompute = recompute;
  c.flash_attention = flash_attention;
  return c;
}

std::vector<uint32_t> LayerCopies(uint32_t from, uint32_t to) {
  std::vector<uint32_t> copies(from, 1);
  if (from == 0 || to == from) return copies;
  if (to > from) {
    for (uint32_t& c : copies) c = to / from;
    const uint32_t extra = to % from;
    // Extra copies on inner layers when there are enough of them.
    const uint32_t lo = from > 2 && extra <= from - 2 ? 1 : 0;
    const uint32_t hi = from > 2 && extra <= from - 2 ? from - 2 : from - 1;
    for (uint32_t p : Spread(extra, lo, hi)) ++copies[p];
    return copies;
  }
  const uint32_t remove = from - to;
  const uint32_t lo = to >= 2 ? 1 : 0;
  const uint32_t hi = to >= 2 ? from - 2 : from - 1;
  for (uint32_t p : Spread(remove, lo, hi)) copies[p] = 0;
  return copies;
}

StatusOr<Plan> MakePlan(const PlanInputs& in, const whatif::SettingList& settings) {
  const structure::JobStructure& s = *in.structure;
  Plan plan;
  plan.settings = settings;
  plan.before = MeasuredSetup(s);
  plan.gpu = in.source_gpu;
  plan.net = in.source_net;
  for (const whatif::Setting& setting : settings) {
    switch (setting.key) {
      case SettingKey::kTp:
      case SettingKey::kPp:
      case SettingKey::kCp:
      case SettingKey::kEp: {
        const int64_t measured = setting.key == SettingKey::kTp   ? plan.before.tp
                                 : setting.key == SettingKey::kPp ? plan.before.pp
                                 : setting.key == SettingKey::kCp ? plan.before.cp
                                                                  : plan.before.ep;
        if (setting.integer != measured) {
          return Status::Error("--set " + Name(setting.key) + "=" + setting.text +
                               ": changing the " + Name(setting.key) +
                               " degree (re-partitioning the model) is not estimated yet; the "
                               "trace's is " +
                               (measured > 0 ? std::to_string(measured) : "unknown"));
        }
        break;
      }
      case SettingKey::kGpu: {
        plan.gpu = in.specs->FindGpu(setting.name);
        if (plan.gpu == nullptr) return Status::Error("--set gpu=" + setting.text + ": unknown");
        break;
      }
      case SettingKey::kNet: {
        StatusOr<models::NetworkSpec> net = in.specs->ResolveNetwork(setting.text);
        if (!net.ok())
          return Status::Error("--set net=" + setting.text + ": " + net.status().message());
        plan.net = *net;
        break;
      }
      case SettingKey::kZero:
        plan.zero = static_cast<int>(setting.integer);
        break;
      case SettingKey::kRecompute:
        plan.recompute = setting.recompute();
        break;
      case SettingKey::kHost:
        plan.host_time = setting.number;
        break;
      default:
        if (whatif::IsSetupKey(setting.key) && setting.key != SettingKey::kWorld &&
            setting.key != SettingKey::kDp) {
          LUMOS_RETURN_IF_ERROR(CheckKnown(s, setting.key));
        }
        break;
    }
  }
  // net_gbps / net_us replace the network's figures (after net=, whatever the order).
  for (const whatif::Setting& setting : settings) {
    if (setting.key == SettingKey::kNetGbps) {
      plan.net.bytes_per_s = setting.number * 1e9 / 8;
      plan.net.name += " at " + setting.text + " Gbit/s";
    } else if (setting.key == SettingKey::kNetUs) {
      plan.net.latency_ns = static_cast<int64_t>(setting.number * 1000);
      plan.net.name += " with " + setting.text + " us";
    }
  }
  plan.after = whatif::WithSettings(plan.before, settings);
  // dp and world go together: the other follows from tp x pp x cp.
  const whatif::Setting* dp = whatif::FindSetting(settings, SettingKey::kDp);
  const whatif::Setting* world = whatif::FindSetting(settings, SettingKey::kWorld);
  if (dp != nullptr || world != nullptr) {
    if (plan.before.dp == 0 || plan.before.tp == 0 || plan.before.pp == 0) {
      return Status::Error(std::string("--set ") + (dp != nullptr ? "dp" : "world") +
                           ": the trace's data-parallel degree is not known (" + s.setup.dp.how +
                           "); give the measured degrees with --base dp=D,tp=T,pp=P");
    }
    const int64_t per_replica = plan.before.tp * plan.before.pp * plan.before.cp;
    if (dp != nullptr && world == nullptr) plan.after.world = dp->integer * per_replica;
    if (world != nullptr && dp == nullptr) {
      if (world->integer % per_replica != 0) {
        return Status::Error("--set world=" + world->text +
                             ": not a multiple of tp x pp x cp = " + std::to_string(per_replica));
      }
      plan.after.dp = world->integer / per_replica;
    }
  }
  plan.transformer = plan.before.layers > 0 && plan.before.hidden > 0 && plan.before.ffn > 0 &&
                     plan.before.heads > 0 && plan.before.seq > 0 && plan.before.mbs > 0 &&
                     plan.before.tp > 0 && plan.before.pp > 0 && plan.before.dp > 0 &&
                     plan.before.world > 0;
  if (plan.transformer) {
    // A model without a vocabulary (no embedding or LM head in the trace, none given): the
    // checks that need one pass on a stand-in of 1.
    whatif::SetupValues checked = plan.after;
    if (checked.vocab == 0) checked.vocab = 1;
    LUMOS_RETURN_IF_ERROR(whatif::CheckSetup(checked).WithContext("--set"));
  } else if (plan.after.dp > 0 && plan.after.world > 0 && plan.after.world % plan.after.dp != 0) {
    return Status::Error("--set: dp " + std::to_string(plan.after.dp) +
                         " does not divide the world of " + std::to_string(plan.after.world));
  }
  const whatif::SetupValues& b = plan.before;
  const whatif::SetupValues& a = plan.after;

  // Layers: per (iteration, phase, micro-batch), its layer indices on every rank.
  if (a.layers != b.layers) {
    if (s.layer_method.empty() || s.ranks.empty() || s.ranks[0].layers.empty()) {
      return Status::Error("--set layers=" + std::to_string(a.layers) +
                           ": the trace's layers were not found (" + s.layer_method + ")");
    }
    const int64_t pp = std::max<int64_t>(1, b.pp);
    using Key = std::tuple<uint32_t, structure::Phase, uint32_t>;
    struct Layer {
      std::vector<uint32_t> nodes;
      bool partial = false;
    };
    std::map<Key, std::map<uint32_t, Layer>> by_phase;
    for (const structure::RankStructure& r : s.ranks) {
      for (const structure::Segment& seg : r.layers) {
        Layer& layer = by_phase[{seg.iteration, seg.phase, seg.micro_batch}][seg.layer];
        layer.nodes.insert(layer.nodes.end(), seg.nodes.begin(), seg.nodes.end());
        layer.partial = layer.partial || seg.partial;
      }
    }
    std::map<std::string, size_t> scaled;  // Assumption -> phases it holds for.
    for (auto& [key, layers] : by_phase) {
      const auto measured = static_cast<uint32_t>(layers.size());
      if (static_cast<int64_t>(measured) * pp != b.layers) {
        ++scaled["a phase shows " + std::to_string(measured) + " layers where the model has " +
                 std::to_string(b.layers) + " / pp: its layers scaled in proportion"];
      }
      const auto target = static_cast<uint32_t>(
          std::max<int64_t>(1, (static_cast<int64_t>(measured) * a.layers + b.layers / 2) /
                                   std::max<int64_t>(1, b.layers)));
      // A partial instance (a first or last layer a few kernels short) is kept once; the
      // others are copied or removed to make up the target.
      uint32_t partial = 0;
      for (const auto& [index, layer] : layers) partial += layer.partial ? 1 : 0;
      const uint32_t whole = measured - partial;
      const std::vector<uint32_t> copies = whole > 0 && target > partial
                                               ? LayerCopies(whole, target - partial)
                                               : LayerCopies(measured, target);
      uint32_t i = 0;
      for (auto& [index, layer] : layers) {
        uint32_t c = 1;
        if (whole > 0 && target > partial) {
          if (!layer.partial) c = copies[i++];
        } else {
          c = copies[i++];
        }
        if (c != 1) plan.layer_steps.push_back({std::move(layer.nodes), c});
      }
    }
    for (const auto& [line, phases] : scaled) {
      plan.assumptions.push_back(line + " (" + std::to_string(phases) + " phase(s))");
    }
  }
  // Micro-batches.
  if (a.micro_batches != b.micro_batches) {
    std::set<std::pair<uint32_t, uint32_t>> seen;  // (iteration, micro-batch)
    std::map<uint32_t, uint32_t> per_iteration;
    for (const structure::RankStructure& r : s.ranks) {
      for (const structure::Segment& seg : r.phases) {
        if (seg.phase == structure::Phase::kForward &&
            seen.insert({seg.iteration, seg.micro_batch}).second) {
          ++per_iteration[seg.iteration];
        }
      }
    }
    if (per_iteration.empty()) {
      return Status::Error("--set micro_batches=" + std::to_string(a.micro_batches) +
                           ": the trace's forward phases were not found (" + s.phase_method + ")");
    }
    for (const auto& [iteration, count] : per_iteration) {
      if (a.micro_batches > count) {
        plan.micro_batch_steps.push_back(
            {iteration, 0, static_cast<uint32_t>(a.micro_batches - count + 1)});
      } else {
        for (uint32_t m = 0; m + a.micro_batches < count; ++m) {
          plan.micro_batch_steps.push_back({iteration, m, 0});
        }
      }
    }
  }
  // New work.
  if (plan.transformer) {
    const int64_t tp = b.tp;
    const int64_t t0 = b.mbs * b.seq, t1 = a.mbs * a.seq;
    auto weights = [&](whatif::WorkChange* w) {
      w->tokens = {t0, t1};
      w->gemm = {{3 * b.hidden / tp, 3 * a.hidden / tp},
                 {2 * b.ffn / tp, 2 * a.ffn / tp},
                 {b.ffn / tp, a.ffn / tp},
                 {b.hidden / tp, a.hidden / tp},
                 {b.hidden, a.hidden},
                 {b.ffn, a.ffn},
                 {b.vocab / tp, a.vocab / tp}};
    };
    weights(&plan.layer_work);
    weights(&plan.other_work);
    const double activations = static_cast<double>(t1) * static_cast<double>(a.hidden) /
                               (static_cast<double>(t0) * static_cast<double>(b.hidden));
    for (whatif::WorkChange* w : {&plan.layer_work, &plan.other_work}) {
      w->kernel_bytes = activations;
      w->kernel_flops = activations;
      w->collective_bytes = activations;
      w->attention.batch = static_cast<double>(a.mbs) / static_cast<double>(b.mbs);
      w->attention.heads = static_cast<double>(a.heads) / static_cast<double>(b.heads);
      w->attention.seq = static_cast<double>(a.seq) / static_cast<double>(b.seq);
      w->attention.head_dim = (static_cast<double>(a.hidden) / static_cast<double>(a.heads)) /
                              (static_cast<double>(b.hidden) / static_cast<double>(b.heads));
      // The measured problem per GPU (heads split over tp).
      const double heads_per_gpu =
          static_cast<double>(b.heads) / static_cast<double>(std::max<int64_t>(1, b.tp));
      const double head_dim = static_cast<double>(b.hidden) / static_cast<double>(b.heads);
      const double rows = static_cast<double>(b.mbs) * heads_per_gpu * static_cast<double>(b.seq);
      w->attention.forward_flops = 4 * rows * static_cast<double>(b.seq) * head_dim;
      w->attention.forward_bytes = 8 * rows * head_dim;
    }
    const double p0 = ParametersPerGpu(b), p1 = ParametersPerGpu(a);
    if (p0 > 0 && p1 > 0) {
      plan.gradient_bytes = p1 / p0;
      plan.optimizer_work.kernel_bytes = plan.gradient_bytes;
      plan.optimizer_work.kernel_flops = plan.gradient_bytes;
    }
    if (plan.layer_work.changes()) {
      plan.assumptions.push_back(
          "layer kernels other than GEMMs and attention scale with the activations (tokens x "
          "hidden); tensor-parallel collectives too");
    }
    if (plan.gradient_bytes != 1) {
      plan.assumptions.push_back(
          "gradient collectives and optimizer kernels scale with the parameters per GPU");
    }
  } else {
    for (const whatif::Setting& setting : settings) {
      if (setting.key == SettingKey::kHidden || setting.key == SettingKey::kFfn ||
          setting.key == SettingKey::kHeads || setting.key == SettingKey::kSeq ||
          setting.key == SettingKey::kMbs || setting.key == SettingKey::kVocab) {
        return Status::Error("--set " + Name(setting.key) + "=" + setting.text +
                             ": needs the whole model setup (layers, hidden, ffn, heads, seq, "
                             "mbs, vocab, dp, tp, pp), and the trace does not show all of it; "
                             "give the rest with --base");
      }
    }
  }
  // Data-parallel communicators.
  if (a.dp != b.dp) {
    const uint32_t domain = plan.gpu->nvlink_domain_gpus.value_or(8);
    const int64_t replica = std::max<int64_t>(1, a.tp * std::max<int64_t>(1, a.cp));
    const int64_t per_domain = std::max<int64_t>(1, domain / std::min<int64_t>(domain, replica));
    bool any = false;
    for (const structure::CommGroup& g : s.groups) {
      if (g.role != structure::GroupRole::kData) continue;
      whatif::CostSetup::GroupSize size;
      size.ranks = static_cast<uint32_t>(a.dp);
      size.nodes = static_cast<uint32_t>((a.dp + per_domain - 1) / per_domain);
      plan.group_sizes[g.comm_id] = size;
      any = true;
    }
    if (!any) {
      return Status::Error("--set dp=" + std::to_string(a.dp) +
                           ": the trace shows no data-parallel communicator to re-cost");
    }
    plan.assumptions.push_back("dp: gradient collectives re-costed for " + std::to_string(a.dp) +
                               " ranks (" + std::to_string(per_domain) + " per NVLink domain of " +
                               std::to_string(domain) +
                               "); the traced ranks stand for the rest (local work unchanged)");
  }
  if (plan.gpu != in.source_gpu) {
    plan.assumptions.push_back("gpu: every kernel and collective carried from " +
                               in.source_gpu->name + " to " + plan.gpu->name);
  }
  return plan;
}

}  // namespace lumos::modeler::estimate
