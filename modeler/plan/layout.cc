#include "modeler/plan/layout.h"

#include <algorithm>
#include <charconv>

namespace lumos::modeler::plan {
namespace {

std::string Ll(int64_t v) { return std::to_string(v); }

// What `search --set` may fix: the settings no search enumerates.
constexpr std::string_view kFixedKeys[] = {"grad_sync_bytes",
                                           "dp_overlap",
                                           "p2p_overlap",
                                           "flash_attention",
                                           "cp",
                                           "ends_in_split",
                                           "fp8_current_scaling",
                                           "fp8_param_gather",
                                           "tp_only_amax_red",
                                           "p2p_scatter_gather"};

// The keys that switch a setting on (1) or off (0).
struct FlagKey {
  std::string_view key;
  bool Layout::*field;
};
constexpr FlagKey kFlagKeys[] = {{"sequence_parallel", &Layout::sequence_parallel},
                                 {"tp_overlap", &Layout::tp_overlap},
                                 {"dp_overlap", &Layout::dp_overlap},
                                 {"p2p_overlap", &Layout::p2p_overlap},
                                 {"flash_attention", &Layout::flash_attention},
                                 {"ends_in_split", &Layout::ends_in_split},
                                 {"fp8_current_scaling", &Layout::fp8_current_scaling},
                                 {"fp8_param_gather", &Layout::fp8_param_gather},
                                 {"tp_only_amax_red", &Layout::tp_only_amax_reduction},
                                 {"p2p_scatter_gather", &Layout::p2p_scatter_gather}};

std::string FixedKeysText() {
  std::string text;
  for (std::string_view key : kFixedKeys) text.append(text.empty() ? "" : ", ").append(key);
  return text;
}

// ApplyLayoutSettings, and ApplyFixedSettings with `fixed_only`.
Status ApplySettings(std::string_view text, Layout* layout, bool fixed_only) {
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return ErrorStatus("--set: '%.*s' is not K=V", static_cast<int>(item.size()), item.data());
    }
    const std::string key(item.substr(0, eq));
    const std::string_view value = item.substr(eq + 1);
    if (fixed_only &&
        std::find(std::begin(kFixedKeys), std::end(kFixedKeys), key) == std::end(kFixedKeys)) {
      return ErrorStatus(
          "--set: %s is not fixed in a search (it fixes %s; the rest is what it "
          "searches)",
          key.c_str(), FixedKeysText().c_str());
    }
    if (key == "recompute") {
      if (value == "none") {
        layout->recompute = models::Recompute::kNone;
      } else if (value == "selective") {
        layout->recompute = models::Recompute::kSelective;
      } else if (value == "full") {
        layout->recompute = models::Recompute::kFull;
      } else {
        return ErrorStatus("--set: recompute=%.*s: none, selective or full",
                           static_cast<int>(value.size()), value.data());
      }
      continue;
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 0 ||
        v > (int64_t{1} << 24)) {
      return ErrorStatus("--set: %s=%.*s: must be a whole number in 0..16777216", key.c_str(),
                         static_cast<int>(value.size()), value.data());
    }
    const auto flag = std::find_if(std::begin(kFlagKeys), std::end(kFlagKeys),
                                   [&](const FlagKey& f) { return f.key == key; });
    if (flag != std::end(kFlagKeys)) {
      if (v > 1) return ErrorStatus("--set: %s is 0 or 1", key.c_str());
      layout->*(flag->field) = v == 1;
      continue;
    }
    if (key != "zero" && key != "gbs" && v == 0) {
      return ErrorStatus("--set: %s must be at least 1", key.c_str());
    }
    if (key == "tp") {
      layout->tp = v;
    } else if (key == "pp") {
      layout->pp = v;
    } else if (key == "dp") {
      layout->dp = v;
    } else if (key == "vp") {
      layout->vp = v;
    } else if (key == "cp") {
      layout->cp = v;
    } else if (key == "mbs") {
      layout->mbs = v;
    } else if (key == "gbs") {
      layout->gbs = v;
    } else if (key == "zero") {
      layout->zero = static_cast<int>(v);
    } else if (key == "grad_sync_bytes") {
      if (v != 2 && v != 4) return ErrorStatus("--set: grad_sync_bytes is 2 (bf16) or 4 (fp32)");
      layout->grad_sync_bytes = v;
    } else {
      return ErrorStatus(
          "--set: unknown layout key '%s' (tp, pp, dp, vp, cp, mbs, gbs, sequence_parallel, "
          "recompute, zero, tp_overlap, dp_overlap, p2p_overlap, flash_attention, "
          "grad_sync_bytes, ends_in_split, fp8_current_scaling, fp8_param_gather, "
          "tp_only_amax_red, p2p_scatter_gather)",
          key.c_str());
    }
  }
  return Status::Ok();
}

}  // namespace

Status ApplyLayoutSettings(std::string_view text, Layout* layout) {
  return ApplySettings(text, layout, false);
}

Status ApplyFixedSettings(std::string_view text, Layout* layout) {
  return ApplySettings(text, layout, true);
}

Status CheckLayout(const ModelSpec& spec, const Layout& l, int64_t gpus_per_node) {
  auto fail = [](const std::string& rule) { return Status::Error("layout: " + rule); };
  if (spec.heads % l.tp != 0)
    return fail("tp (" + Ll(l.tp) + ") must divide heads (" + Ll(spec.heads) + ")");
  if (spec.kv_heads_count() % l.tp != 0) {
    return fail("tp (" + Ll(l.tp) + ") must divide kv_heads (" + Ll(spec.kv_heads_count()) + ")");
  }
  if (spec.ffn_size() % l.tp != 0) {
    return fail("tp (" + Ll(l.tp) + ") must divide ffn (" + Ll(spec.ffn_size()) + ")");
  }
  if (l.tp > gpus_per_node) {
    return fail("tp (" + Ll(l.tp) + ") must fit in one node (" + Ll(gpus_per_node) +
                " GPUs): its collectives run on NVLink");
  }
  if (l.pp > spec.layers)
    return fail("pp (" + Ll(l.pp) + ") larger than layers (" + Ll(spec.layers) + ")");
  if (l.vp > 1 && l.pp == 1) return fail("vp (" + Ll(l.vp) + ") needs pp > 1");
  // What the pipeline splits: the layers, and with ends_in_split the embedding and the loss.
  const int64_t split = spec.layers + (l.ends_in_split ? 2 : 0);
  const std::string what = l.ends_in_split ? "layers + 2" : "layers";
  if (split % l.pp != 0) {
    return fail("pp (" + Ll(l.pp) + ") must divide " + what + " (" + Ll(split) +
                (l.ends_in_split ? ": ends_in_split)" : ")"));
  }
  if (l.vp > 1 && (split / l.pp) % l.vp != 0) {
    return fail("vp (" + Ll(l.vp) + ") must divide the " + what + " per stage (" +
                Ll(split / l.pp) + ")");
  }
  if (l.ends_in_split && split / (l.pp * l.vp) < 2 && l.pp * l.vp > 1) {
    return fail("ends_in_split needs 2 or more layers a virtual stage (" + Ll(split) + " over " +
                Ll(l.pp * l.vp) +
                "): the first and the last give one to the embedding and the loss");
  }
  if (l.cp > 1) {
    if (spec.seq % (2 * l.cp) != 0) {
      return fail(
          "cp (" + Ll(l.cp) + ") needs seq (" + Ll(spec.seq) +
          ") a multiple of 2 x cp (each GPU holds two chunks, balanced for the causal mask)");
    }
    if (!l.flash_attention) return fail("cp needs flash_attention (ring attention is fused)");
  }
  if (l.global_batch() % (l.dp * l.mbs) != 0) {
    return fail("dp x mbs (" + Ll(l.dp) + " x " + Ll(l.mbs) + ") must divide gbs (" +
                Ll(l.global_batch()) + ")");
  }
  if (l.vp > 1 && l.micro_batches() % l.pp != 0) {
    return fail("the interleaved schedule (vp " + Ll(l.vp) + ") needs the micro-batches (" +
                Ll(l.micro_batches()) + ") a multiple of pp (" + Ll(l.pp) + ")");
  }
  if (l.sequence_parallel && l.tp == 1) return fail("sequence_parallel needs tp > 1");
  if (l.zero < 0 || l.zero > 3) return fail("zero must be 0..3");
  if (l.tp_overlap && !l.sequence_parallel) {
    return fail("tp_overlap needs sequence_parallel (as Transformer Engine's overlap does)");
  }
  return Status::Ok();
}

int64_t VirtualStageLayers(const ModelSpec& spec, const Layout& l, int64_t v) {
  const int64_t stages = l.pp * l.vp;
  if (!l.ends_in_split) return spec.layers / stages;
  const int64_t per = (spec.layers + 2) / stages;
  if (stages == 1) return spec.layers;
  return per - (v == 0 ? 1 : 0) - (v == stages - 1 ? 1 : 0);
}

int64_t StageLayers(const ModelSpec& spec, const Layout& l, int64_t s) {
  int64_t layers = 0;
  for (int64_t c = 0; c < l.vp; ++c) layers += VirtualStageLayers(spec, l, c * l.pp + s);
  return layers;
}

std::string LayoutText(const Layout& l) {
  std::string s = "tp=" + Ll(l.tp) + " pp=" + Ll(l.pp);
  if (l.vp > 1) s += " vp=" + Ll(l.vp);
  if (l.cp > 1) s += " cp=" + Ll(l.cp);
  s += " dp=" + Ll(l.dp) + " mbs=" + Ll(l.mbs) + " gbs=" + Ll(l.global_batch());
  if (l.sequence_parallel) s += " sp";
  s += std::string(" recompute=") + models::RecomputeName(l.recompute);
  s += " zero=" + std::to_string(l.zero);
  if (l.tp_overlap) s += " tp-overlap";
  if (!l.dp_overlap) s += " no-dp-overlap";
  if (l.vp > 1 && !l.p2p_overlap) s += " no-p2p-overlap";
  if (!l.flash_attention) s += " unfused-attention";
  if (l.ends_in_split) s += " ends-in-split";
  if (l.fp8_current_scaling) s += " fp8-current-scaling";
  if (l.fp8_param_gather) s += " fp8-param-gather";
  if (l.tp_only_amax_reduction) s += " tp-only-amax";
  if (l.p2p_scatter_gather && l.pp > 1 && l.tp > 1 && !l.sequence_parallel) {
    s += " p2p-scatter-gather";
  }
  return s;
}

namespace {

// EnumerateLayouts for one tp x cp x pp: every virtual-stage count, mbs, recomputation, ZeRO
// stage and TP overlap that CheckLayout accepts.
void AddLayoutsOf(const ModelSpec& spec, const SearchSpace& space, int64_t tp, int64_t cp,
                  int64_t pp, std::vector<Layout>* out) {
  const int64_t dp = space.gpus / (tp * cp * pp);
  std::vector<int64_t> vps = space.vp;
  if (vps.empty()) {
    // CheckLayout drops the pp and vp that do not divide.
    const int64_t per_stage = (spec.layers + (space.fixed.ends_in_split ? 2 : 0)) / pp;
    for (int64_t v = 1; v <= per_stage; ++v) {
      if (per_stage % v == 0 && (v == 1 || pp > 1)) vps.push_back(v);
    }
  }
  for (const int64_t mbs : space.mbs) {
    for (const int64_t vp : vps) {
      for (int recompute = 0; recompute < (space.recompute ? 3 : 1); ++recompute) {
        for (int zero = 0; zero <= (space.zero && dp * cp > 1 ? 3 : 0); ++zero) {
          for (int overlap = 0; overlap <= (space.tp_overlap && tp > 1 ? 1 : 0); ++overlap) {
            Layout l = space.fixed;
            l.tp = tp;
            l.cp = cp;
            l.pp = pp;
            l.dp = dp;
            l.vp = vp;
            l.mbs = mbs;
            l.gbs = space.gbs > 0 ? space.gbs : dp * mbs;
            l.sequence_parallel = tp > 1;
            l.recompute = static_cast<models::Recompute>(recompute);
            l.zero = zero;
            l.tp_overlap = overlap == 1;
            if (CheckLayout(spec, l, space.gpus_per_node).ok()) out->push_back(l);
          }
        }
      }
    }
  }
}

}  // namespace

std::vector<Layout> EnumerateLayouts(const ModelSpec& spec, const SearchSpace& space) {
  std::vector<Layout> out;
  const std::vector<int64_t> cps =
      space.cp.empty() ? std::vector<int64_t>{space.fixed.cp} : space.cp;
  for (int64_t tp = 1; tp <= space.gpus_per_node && tp <= space.gpus; ++tp) {
    for (const int64_t cp : cps) {
      for (int64_t pp = 1; pp <= spec.layers && tp * cp * pp <= space.gpus; ++pp) {
        if (space.gpus % (tp * cp * pp) == 0) AddLayoutsOf(spec, space, tp, cp, pp, &out);
      }
    }
  }
  return out;
}

Status WhyNoLayout(const ModelSpec& spec, const SearchSpace& space) {
  const std::vector<int64_t> cps =
      space.cp.empty() ? std::vector<int64_t>{space.fixed.cp} : space.cp;
  std::string cps_text;
  for (const int64_t cp : cps) {
    cps_text += (cps_text.empty() ? "" : ", ") + Ll(cp);
    if (cp < 1 || space.gpus % cp != 0) continue;
    Layout l = space.fixed;
    l.tp = 1;
    l.pp = 1;
    l.vp = 1;
    l.cp = cp;
    l.dp = space.gpus / cp;
    l.mbs = space.mbs.empty() ? 1 : space.mbs.front();
    l.gbs = space.gbs > 0 ? space.gbs : l.dp * l.mbs;
    l.sequence_parallel = false;
    l.tp_overlap = false;
    Status bad = CheckLayout(spec, l, space.gpus_per_node);
    if (bad.ok()) return bad;  // One can: EnumerateLayouts finds it unless told not to try it.
    std::string rule = bad.message();
    if (rule.rfind("layout: ", 0) == 0) rule.erase(0, 8);
    return ErrorStatus(
        "no layout of %lld GPUs can exist: %s (%s), and no tp x pp of them "
        "mends it",
        static_cast<long long>(space.gpus), rule.c_str(), LayoutText(l).c_str());
  }
  return ErrorStatus("no layout of %lld GPUs can exist: no cp asked for (%s) divides them",
                     static_cast<long long>(space.gpus), cps_text.c_str());
}

}  // namespace lumos::modeler::plan
