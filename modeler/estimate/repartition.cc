#include "modeler/estimate/repartition.h"

#include <algorithm>
#include <cmath>

#include "modeler/plan/pipeline_graph.h"

namespace lumos::modeler::estimate {
namespace {

using whatif::SettingKey;

std::string Name(SettingKey key) { return whatif::SettingKeyName(key); }

// The measured values this path needs, each named with how to give it when unknown.
Status NeedKnown(const structure::JobStructure& s, std::initializer_list<SettingKey> keys) {
  for (SettingKey key : keys) {
    const structure::Value* v = structure::SetupField(s.setup, Name(key));
    if (v != nullptr && v->known() && v->value > 0) continue;
    return Status::Error("re-partitioning needs the measured " + Name(key) +
                         ", which the trace does not show (" + (v != nullptr ? v->how : "") +
                         "); give it with --base " + Name(key) + "=N");
  }
  return Status::Ok();
}

plan::PlanSetup SetupFor(const models::GpuSpec* gpu, const models::NetworkSpec& net) {
  plan::PlanSetup setup;
  setup.gpu = gpu;
  setup.net = net;
  setup.gpus_per_node = gpu->nvlink_domain_gpus.value_or(8);
  return setup;
}

// The fast path and the slow path of one layout.
StatusOr<plan::StepEstimate> Both(const plan::ModelSpec& spec, const plan::Layout& layout,
                                  const GptCosts& costs, const plan::PlanSetup& setup) {
  LUMOS_ASSIGN_OR_RETURN(plan::StepEstimate e, plan::EstimateStep(spec, layout, costs, setup));
  LUMOS_ASSIGN_OR_RETURN(e.simulated, plan::SimulateStep(spec, layout, costs, setup));
  return e;
}

std::string Seconds(double ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4f", ns / 1e9);
  return text;
}

}  // namespace

bool ChangesPartitioning(const whatif::SettingList& settings, const whatif::SetupValues& measured) {
  for (const whatif::Setting& s : settings) {
    if (s.key == SettingKey::kTp && s.integer != measured.tp) return true;
    if (s.key == SettingKey::kPp && s.integer != measured.pp) return true;
    if (s.key == SettingKey::kVp && s.integer != 1) return true;
    if (s.key == SettingKey::kSequenceParallel && s.integer != 0) return true;
  }
  return false;
}

StatusOr<RepartitionResult> RunRepartition(const EstimateContext& ctx,
                                           const whatif::SettingList& settings) {
  const structure::JobStructure& s = *ctx.structure;
  LUMOS_RETURN_IF_ERROR(
      NeedKnown(s, {SettingKey::kLayers, SettingKey::kHidden, SettingKey::kHeads, SettingKey::kSeq,
                    SettingKey::kMbs, SettingKey::kMicroBatches, SettingKey::kVocab,
                    SettingKey::kTp, SettingKey::kPp, SettingKey::kDp}));
  const whatif::SetupValues measured = MeasuredSetup(s);
  RepartitionResult r;
  r.settings_text = whatif::FormatSettings(settings);
  r.spec_before.layers = measured.layers;
  r.spec_before.hidden = measured.hidden;
  r.spec_before.ffn = measured.ffn;  // 0 (unknown): 4 x hidden.
  r.spec_before.heads = measured.heads;
  r.spec_before.seq = measured.seq;
  r.spec_before.vocab = measured.vocab;
  r.before.tp = measured.tp;
  r.before.pp = measured.pp;
  r.before.dp = measured.dp;
  r.before.cp = std::max<int64_t>(1, measured.cp);  // The trace's context parallelism kept.
  r.before.mbs = measured.mbs;
  r.before.gbs = measured.dp * measured.mbs * measured.micro_batches;

  r.spec_after = r.spec_before;
  r.after = r.before;
  const models::GpuSpec* gpu = ctx.source_gpu;
  models::NetworkSpec net = ctx.source_net;
  int64_t micro_batches = measured.micro_batches;
  const whatif::Setting* world = nullptr;
  bool dp_given = false;
  for (const whatif::Setting& setting : settings) {
    const int64_t v = setting.integer;
    switch (setting.key) {
      case SettingKey::kLayers:
        r.spec_after.layers = v;
        break;
      case SettingKey::kHidden:
        r.spec_after.hidden = v;
        break;
      case SettingKey::kFfn:
        r.spec_after.ffn = v;
        break;
      case SettingKey::kHeads:
        r.spec_after.heads = v;
        break;
      case SettingKey::kSeq:
        r.spec_after.seq = v;
        break;
      case SettingKey::kVocab:
        r.spec_after.vocab = v;
        break;
      case SettingKey::kMbs:
        r.after.mbs = v;
        break;
      case SettingKey::kMicroBatches:
        micro_batches = v;
        break;
      case SettingKey::kTp:
        r.after.tp = v;
        break;
      case SettingKey::kPp:
        r.after.pp = v;
        break;
      case SettingKey::kVp:
        r.after.vp = v;
        break;
      case SettingKey::kDp:
        r.after.dp = v;
        dp_given = true;
        break;
      case SettingKey::kWorld:
        world = &setting;
        break;
      case SettingKey::kSequenceParallel:
        r.after.sequence_parallel = v != 0;
        break;
      case SettingKey::kZero:
        r.after.zero = static_cast<int>(v);
        break;
      case SettingKey::kRecompute:
        r.after.recompute = setting.recompute();
        break;
      case SettingKey::kGpu:
        gpu = ctx.specs->FindGpu(setting.name);
        if (gpu == nullptr) return Status::Error("--set gpu=" + setting.text + ": unknown");
        break;
      case SettingKey::kNet: {
        StatusOr<models::NetworkSpec> n = ctx.specs->ResolveNetwork(setting.text);
        if (!n.ok())
          return Status::Error("--set net=" + setting.text + ": " + n.status().message());
        net = *n;
        break;
      }
      case SettingKey::kNetGbps:
        net.bytes_per_s = setting.number * 1e9 / 8;
        break;
      case SettingKey::kNetUs:
        net.latency_ns = std::llround(setting.number * 1000);
        break;
      case SettingKey::kCp:
      case SettingKey::kEp:
      case SettingKey::kHost:
        return Status::Error("--set " + Name(setting.key) + "=" + setting.text +
                             ": not estimated together with a re-partitioning (tp, pp, vp, "
                             "sequence_parallel)");
    }
  }
  // The world follows tp x pp x dp unless given; given, it sets dp.
  if (world != nullptr) {
    const int64_t per_replica = r.after.tp * r.after.cp * r.after.pp;
    if (world->integer % per_replica != 0 ||
        (dp_given && r.after.dp * per_replica != world->integer)) {
      return Status::Error("--set world=" + world->text + ": not tp x cp x pp x dp (" +
                           std::to_string(r.after.tp) + " x " + std::to_string(r.after.cp) + " x " +
                           std::to_string(r.after.pp) + " x dp)");
    }
    r.after.dp = world->integer / per_replica;
  }
  r.after.gbs = r.after.dp * r.after.mbs * micro_batches;
  r.gpu_before = ctx.source_gpu->name;
  r.gpu_after = gpu->name;
  r.net_after = net.name;

  const plan::PlanSetup setup_before = SetupFor(ctx.source_gpu, ctx.source_net);
  const plan::PlanSetup setup_after = SetupFor(gpu, net);
  if (Status bad = plan::CheckLayout(r.spec_after, r.after, setup_after.gpus_per_node); !bad.ok()) {
    return Status::Error("--set " + r.settings_text + ": " + bad.message());
  }
  if (Status bad = plan::CheckLayout(r.spec_before, r.before, setup_before.gpus_per_node);
      !bad.ok()) {
    return Status::Error("the measured layout (" + plan::LayoutText(r.before) +
                         ") cannot be built as a step graph: " + bad.message());
  }
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<GptCosts> costs_before,
                         GptCosts::Make(*ctx.source_gpu, *ctx.specs, *ctx.model, &ctx.source_net));
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<GptCosts> costs_after,
                         GptCosts::Make(*gpu, *ctx.specs, *ctx.model, &net));
  LUMOS_ASSIGN_OR_RETURN(r.fast_before, Both(r.spec_before, r.before, *costs_before, setup_before));
  LUMOS_ASSIGN_OR_RETURN(r.fast_after, Both(r.spec_after, r.after, *costs_after, setup_after));
  r.measured_ns = static_cast<double>(ctx.base_summary.iteration_ns);
  // The GPU-busy share of the measured iteration scales; the share the GPU waited (for the
  // host, mostly) stays as measured.
  const Breakdown& b = ctx.base_summary.breakdown;
  r.measured_busy_ns =
      std::min(r.measured_ns,
               static_cast<double>(b.exposed_compute_ns + b.overlapped_ns + b.exposed_comm_ns));
  r.estimate_ns = (r.measured_ns - r.measured_busy_ns) + r.measured_busy_ns *
                                                             r.fast_after.simulated->step_ns /
                                                             r.fast_before.simulated->step_ns;
  const double tokens = static_cast<double>(r.after.global_batch() * r.spec_after.seq);
  r.tokens_per_s = r.estimate_ns > 0 ? tokens / (r.estimate_ns / 1e9) : 0;
  r.assumptions = {
      "re-partitioning: the measured GPU-busy time x simulated(asked) / simulated(measured)",
      "both layouts built as modeler/plan's step graph on the trace's own costs",
      "the time the GPU waited (for the host) kept as measured",
      "the measured kernels are not rewritten: each layer's ops are the plan's",
      "micro-batches per data-parallel replica as measured unless micro_batches= is given",
  };

  for (const std::string& line : plan::StepAssumptions()) r.assumptions.push_back(line);
  for (const std::string& line : plan::SimulationAssumptions()) r.assumptions.push_back(line);
  return r;
}

void WriteRepartitionText(const ReportHeader& header, const RepartitionResult& r, std::FILE* out) {
  const plan::SimulatedStep& before = *r.fast_before.simulated;
  const plan::SimulatedStep& after = *r.fast_after.simulated;
  std::fprintf(out, "job %s, %zu ranks traced on %s; re-partitioned: --set %s\n",
               header.job_id.c_str(), header.ranks, r.gpu_before.c_str(), r.settings_text.c_str());
  std::fprintf(out, "measured  %s (%lld GPUs) on %s\n", plan::LayoutText(r.before).c_str(),
               static_cast<long long>(r.before.gpus()), r.gpu_before.c_str());
  std::fprintf(out, "asked     %s (%lld GPUs) on %s, %s between nodes\n",
               plan::LayoutText(r.after).c_str(), static_cast<long long>(r.after.gpus()),
               r.gpu_after.c_str(), r.net_after.c_str());
  std::fprintf(out, "\n%-28s %12s %12s\n", "", "measured", "estimate");
  std::fprintf(out, "%-28s %12s %12s\n", "iteration s", Seconds(r.measured_ns).c_str(),
               Seconds(r.estimate_ns).c_str());
  std::fprintf(out, "%-28s %12s %12s\n", "step graph, simulated s", Seconds(before.step_ns).c_str(),
               Seconds(after.step_ns).c_str());
  std::fprintf(out, "%-28s %12s %12s\n", "  waiting (bubble, sends) s",
               Seconds(before.idle_ns).c_str(), Seconds(after.idle_ns).c_str());
  std::fprintf(out, "%-28s %12s %12s\n", "  exposed DP reduction s",
               Seconds(before.dp_exposed_ns).c_str(), Seconds(after.dp_exposed_ns).c_str());
  std::fprintf(out, "%-28s %12s %12s\n", "step graph, fast path s",
               Seconds(r.fast_before.step_ns).c_str(), Seconds(r.fast_after.step_ns).c_str());
  std::fprintf(out, "%-28s %12.1f %12.1f\n", "memory per GPU GB",
               static_cast<double>(r.fast_before.memory.total_bytes()) / 1e9,
               static_cast<double>(r.fast_after.memory.total_bytes()) / 1e9);
  std::fprintf(
      out,
      "\nthe GPU was busy %s s of the measured %s s; the step graph of the measured layout "
      "takes %s s of it (%.0f %%: the rest, kernels the graph does not name or costs it "
      "misses, is carried by the ratio); the %s s the GPU waited stays\n",
      Seconds(r.measured_busy_ns).c_str(), Seconds(r.measured_ns).c_str(),
      Seconds(before.step_ns).c_str(), 100 * before.step_ns / std::max(1.0, r.measured_busy_ns),
      Seconds(r.measured_ns - r.measured_busy_ns).c_str());
  std::fprintf(out, "estimate: %s s an iteration, %.0f tokens/s; memory %s\n",
               Seconds(r.estimate_ns).c_str(), r.tokens_per_s,
               r.fast_after.memory.fits
                   ? "fits"
                   : ("does not fit, short " +
                      std::to_string(std::lround(
                          static_cast<double>(r.fast_after.memory.shortfall_bytes) / 1e9)) +
                      " GB")
                         .c_str());
  std::fprintf(out, "assumptions:\n");
  for (const std::string& line : r.assumptions) std::fprintf(out, "  %s\n", line.c_str());
}

void WriteRepartitionJson(const ReportHeader& header, const RepartitionResult& r, std::FILE* out) {
  const plan::SimulatedStep& before = *r.fast_before.simulated;
  const plan::SimulatedStep& after = *r.fast_after.simulated;
  auto layout = [](const plan::Layout& l) {
    char text[320];
    std::snprintf(text, sizeof(text),
                  "{\"tp\": %lld, \"pp\": %lld, \"vp\": %lld, \"dp\": %lld, \"mbs\": %lld, "
                  "\"gbs\": %lld, \"sequence_parallel\": %s, \"zero\": %d, \"recompute\": \"%s\"}",
                  static_cast<long long>(l.tp), static_cast<long long>(l.pp),
                  static_cast<long long>(l.vp), static_cast<long long>(l.dp),
                  static_cast<long long>(l.mbs), static_cast<long long>(l.global_batch()),
                  l.sequence_parallel ? "true" : "false", l.zero,
                  models::RecomputeName(l.recompute));
    return std::string(text);
  };
  std::fprintf(out,
               "{\"job\": \"%s\", \"ranks\": %zu, \"repartition\": true, \"settings\": \"%s\", "
               "\"gpu_before\": \"%s\", \"gpu_after\": \"%s\", \"before\": %s, \"after\": %s, "
               "\"measured_iteration_s\": %.6f, \"measured_gpu_busy_s\": %.6f, "
               "\"estimated_iteration_s\": %.6f, "
               "\"tokens_per_s\": %.1f, \"simulated_before_s\": %.6f, \"simulated_after_s\": %.6f, "
               "\"fast_before_s\": %.6f, \"fast_after_s\": %.6f, \"memory_after_gb\": %.3f, "
               "\"fits\": %s, \"assumptions\": [",
               header.job_id.c_str(), header.ranks, r.settings_text.c_str(), r.gpu_before.c_str(),
               r.gpu_after.c_str(), layout(r.before).c_str(), layout(r.after).c_str(),
               r.measured_ns / 1e9, r.measured_busy_ns / 1e9, r.estimate_ns / 1e9, r.tokens_per_s,
               before.step_ns / 1e9, after.step_ns / 1e9, r.fast_before.step_ns / 1e9,
               r.fast_after.step_ns / 1e9,
               static_cast<double>(r.fast_after.memory.total_bytes()) / 1e9,
               r.fast_after.memory.fits ? "true" : "false");
  for (size_t i = 0; i < r.assumptions.size(); ++i) {
    std::fprintf(out, "%s\"%s\"", i ? ", " : "", r.assumptions[i].c_str());
  }
  std::fprintf(out, "]}\n");
}

void WriteRepartitionSweep(const ReportHeader& header, const std::vector<RepartitionResult>& rs,
                           bool json, std::FILE* out) {
  if (json) {
    std::fprintf(out, "[\n");
    for (size_t i = 0; i < rs.size(); ++i) {
      if (i > 0) std::fprintf(out, ",\n");
      WriteRepartitionJson(header, rs[i], out);
    }
    std::fprintf(out, "]\n");
    return;
  }
  std::vector<size_t> order(rs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return rs[a].estimate_ns < rs[b].estimate_ns; });
  std::fprintf(out, "job %s, %zu ranks traced on %s; measured iteration %s s; re-partitioned\n",
               header.job_id.c_str(), header.ranks, rs.empty() ? "" : rs[0].gpu_before.c_str(),
               rs.empty() ? "-" : Seconds(rs[0].measured_ns).c_str());
  std::fprintf(out, "  %-60s %6s %12s %12s %10s\n", "layout (--set)", "GPUs", "estimate s",
               "simulated s", "memory");
  for (size_t i : order) {
    const RepartitionResult& r = rs[i];
    std::fprintf(out, "  %-60s %6lld %12s %12s %10s\n",
                 (plan::LayoutText(r.after) + " (" + r.settings_text + ")").c_str(),
                 static_cast<long long>(r.after.gpus()), Seconds(r.estimate_ns).c_str(),
                 Seconds(r.fast_after.simulated->step_ns).c_str(),
                 r.fast_after.memory.fits ? "fits" : "too big");
  }
}

}  // namespace lumos::modeler::estimate
