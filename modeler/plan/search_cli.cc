#include "modeler/plan/search_cli.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <string_view>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/io/json_writer.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/plan/search.h"

namespace lumos::modeler::plan {
namespace {

constexpr const char kDescription[] =
    "Every layout of N GPUs for a model given by its sizes (no trace): tensor, pipeline (and\n"
    "interleaved virtual stages), data parallel degrees, micro-batch size, recomputation,\n"
    "ZeRO stage and TP overlap; each estimated on the fast path (the step added up from the\n"
    "cost models: modeler/plan/step_model.h says what it assumes), those that fit in memory\n"
    "ranked by step time, the others listed after them with their shortfall.\n"
    "\n"
    "  lumos-model search --model gpt:layers=96,hidden=12288,heads=96,seq=2048,vocab=51200 \\n"
    "    --gpus 512 --gpu H100-SXM5-80GB --gbs 2048 --dtype fp8 --costs costs.json\n"
    "\n"
    "Give a cost model (`lumos-model costs fit ../shared/data/costs -o costs.json`: measured\n"
    "GEMM and NCCL tables) for answers from measurements; without one every kernel is its\n"
    "roofline and every collective NCCL's constants on the specs' links.";

constexpr const char kExitStatus[] =
    "exit status: 0 answered; 1 the cost model file cannot be read; 2 bad arguments. Bad\n"
    "arguments include an unknown key, a model or layout that cannot exist (the rule it breaks is\n"
    "named), GPU counts of which no layout can exist (search: the rule the plainest one breaks;\n"
    "a count among others that can is answered so in its place) and a GPU or network the specs\n"
    "do not know.";

StatusOr<std::vector<int64_t>> ParseCounts(std::string_view text, const char* flag = "--gpus") {
  std::vector<int64_t> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 1 || v > 1'000'000) {
      return ErrorStatus("%s: '%.*s' must be a whole number in 1..1000000", flag,
                         static_cast<int>(item.size()), item.data());
    }
    out.push_back(v);
  }
  if (out.empty()) return ErrorStatus("%s: give at least one count", flag);
  return out;
}

double Gb(int64_t bytes) { return static_cast<double>(bytes) / 1e9; }

// The simulated step in seconds, "-" when the layout was not simulated.
std::string Seconds(const StepEstimate& e) {
  if (!e.simulated) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", e.simulated->step_ns / 1e9);
  return text;
}

// "tied embedding's gradient all-reduce X s, " where there is one.
std::string EmbeddingGradText(double ns) {
  if (!(ns > 0)) return "";
  char text[64];
  std::snprintf(text, sizeof(text), "tied embedding's gradient all-reduce %.3f s, ", ns / 1e9);
  return text;
}

// JSON's value of the simulated step's fields (null when not simulated).
std::string SimulatedJson(const StepEstimate& e) {
  if (!e.simulated) {
    return "\"simulated_step_s\": null, \"simulated_stage\": null, \"simulated_idle_s\": null, "
           "\"simulated_dp_exposed_s\": null, \"simulated_dp_comm_s\": null, "
           "\"simulated_sends_s\": null, \"simulated_overlap_cost_s\": null, "
           "\"simulated_embedding_grad_s\": null, \"graph_nodes\": null";
  }
  const SimulatedStep& s = *e.simulated;
  char text[448];
  std::snprintf(
      text, sizeof(text),
      "\"simulated_step_s\": %.6f, \"simulated_stage\": %lld, \"simulated_idle_s\": %.6f, "
      "\"simulated_dp_exposed_s\": %.6f, \"simulated_dp_comm_s\": %.6f, "
      "\"simulated_sends_s\": %.6f, \"simulated_overlap_cost_s\": %.6f, "
      "\"simulated_embedding_grad_s\": %.6f, \"graph_nodes\": %zu",
      s.step_ns / 1e9, static_cast<long long>(s.stage), s.idle_ns / 1e9, s.dp_exposed_ns / 1e9,
      s.dp_comm_ns / 1e9, s.sends_ns / 1e9, s.overlap_cost_ns / 1e9, s.embedding_grad_ns / 1e9,
      s.nodes);
  return text;
}

void PrintText(std::FILE* out, const SearchResult& r, size_t top) {
  std::fprintf(out, "\n%lld GPUs: %zu layouts, %zu fit in memory%s\n",
               static_cast<long long>(r.gpus), r.ranked.size(), r.fitting,
               r.failed > 0 ? (", " + std::to_string(r.failed) +
                               " the models could not answer: " + r.first_failure.message())
                                  .c_str()
                            : "");
  std::fprintf(out, "  %4s  %-60s %9s %9s %11s %9s %8s %8s %8s %13s\n", "rank", "layout", "sim s",
               "fast s", "tok/s/GPU", "bubble s", "dp s", "tp s/mb", "opt s", "memory GB");
  if (!r.no_layout.ok()) std::fprintf(out, "  %s\n", r.no_layout.message().c_str());
  const size_t shown = std::min(top, r.ranked.size());
  for (size_t i = 0; i < shown; ++i) {
    const StepEstimate& e = r.ranked[i];
    const std::string memory =
        std::to_string(std::lround(Gb(e.memory.total_bytes()))) +
        (e.memory.fits
             ? ""
             : " (short " + std::to_string(std::lround(Gb(e.memory.shortfall_bytes))) + ")");
    std::fprintf(out, "  %4zu  %-60s %9s %9.3f %11.0f %9.3f %8.3f %8.4f %8.4f %13s\n", i + 1,
                 LayoutText(e.layout).c_str(), Seconds(e).c_str(), e.step_ns / 1e9,
                 e.tokens_per_s_per_gpu, e.bubble_ns / 1e9, e.dp_exposed_ns / 1e9,
                 e.tp_comm_ns / 1e9, e.optimizer_ns / 1e9, memory.c_str());
  }
  if (r.fitting == 0 && shown > 0) {
    std::fprintf(out, "  (none of them fits in memory)\n");
  } else if (r.fitting < shown) {
    std::fprintf(out, "  (rows after %zu do not fit in memory)\n", r.fitting);
  }
  if (r.checked && r.fitting > r.simulated) {
    if (r.unsettled == 0 && !r.ranked.empty() && r.ranked.front().simulated) {
      std::fprintf(out,
                   "  the first is the slow path's fastest of all %zu that fit: the %zu not "
                   "simulated cannot beat it (their lower bound is above its step)\n",
                   r.fitting, r.ruled_out);
    } else {
      std::fprintf(out,
                   "  %zu not simulated might still beat the first (their lower bound is below its "
                   "step; --check more to settle them), %zu cannot\n",
                   r.unsettled, r.ruled_out);
    }
    if (r.check_failures > 0) {
      std::fprintf(out, "  %zu of the graphs checked could not be simulated: %s\n",
                   r.check_failures, r.first_check_failure.message().c_str());
    }
  }
  if (r.simulated_failures > 0) {
    std::fprintf(out, "  %zu of the %zu simulated kept the fast path's figure: %s\n",
                 r.simulated_failures, r.simulated, r.first_simulation_failure.message().c_str());
  }
}

void PrintCsvRows(std::FILE* out, const SearchResult& r, size_t top) {
  for (size_t i = 0; i < std::min(top, r.ranked.size()); ++i) {
    const StepEstimate& e = r.ranked[i];
    const Layout& l = e.layout;
    std::fprintf(
        out,
        "%lld,%zu,%lld,%lld,%lld,%lld,%lld,%lld,%d,%s,%d,%d,%.6f,%.1f,%.6f,%.6f,%.6f,%.3f,%d,"
        "%.3f,%s,%lld\n",
        static_cast<long long>(r.gpus), i + 1, static_cast<long long>(l.tp),
        static_cast<long long>(l.pp), static_cast<long long>(l.vp), static_cast<long long>(l.dp),
        static_cast<long long>(l.mbs), static_cast<long long>(l.global_batch()),
        l.sequence_parallel ? 1 : 0, models::RecomputeName(l.recompute), l.zero,
        l.tp_overlap ? 1 : 0, e.step_ns / 1e9, e.tokens_per_s_per_gpu, e.bubble_ns / 1e9,
        e.dp_exposed_ns / 1e9, e.optimizer_ns / 1e9, Gb(e.memory.total_bytes()),
        e.memory.fits ? 1 : 0, Gb(e.memory.shortfall_bytes), e.simulated ? Seconds(e).c_str() : "",
        static_cast<long long>(l.cp));
  }
}

// The FP8 settings of a layout need FP8 GEMMs; "" when they have them.
std::string Fp8SettingsProblem(const Layout& l, const PlanSetup& setup) {
  if ((l.fp8_current_scaling || l.fp8_param_gather || l.tp_only_amax_reduction) &&
      setup.gemm_dtype != models::DType::kFp8) {
    return "--set fp8_current_scaling=1, fp8_param_gather=1 and tp_only_amax_red=1 need --dtype "
           "fp8";
  }
  if (l.tp_only_amax_reduction && l.fp8_current_scaling) {
    return "--set tp_only_amax_red=1 is for delayed scaling: current scaling reduces no amax "
           "history (drop one of the two)";
  }
  return "";
}

// The stages the memory model sizes (the first, a middle one with ends_in_split, the last);
// interleaved (vp > 1) they hold chunks of a micro-batch's layers, else whole micro-batches.
std::string StagesText(const models::MemoryEstimate& m, int64_t vp) {
  std::string text = "by stage:";
  for (size_t i = 0; i < m.stages.size(); ++i) {
    const models::StageMemory& s = m.stages[i];
    char part[160];
    std::snprintf(part, sizeof(part), "%s stage %lld %.1f GB (%lld layers, activations of %lld %s)",
                  i ? "," : "", static_cast<long long>(s.stage), Gb(s.total_bytes),
                  static_cast<long long>(s.layers), static_cast<long long>(s.chunks_in_flight),
                  vp > 1 ? "chunks" : "micro-batches");
    text += part;
  }
  return text;
}

std::string StagesJson(const models::MemoryEstimate& m) {
  std::string json = "[";
  for (size_t i = 0; i < m.stages.size(); ++i) {
    const models::StageMemory& s = m.stages[i];
    char part[200];
    std::snprintf(part, sizeof(part),
                  "%s{\"stage\": %lld, \"gb\": %.3f, \"layers\": %lld, \"chunks_in_flight\": "
                  "%lld, \"activation_gb\": %.3f}",
                  i ? ", " : "", static_cast<long long>(s.stage), Gb(s.total_bytes),
                  static_cast<long long>(s.layers), static_cast<long long>(s.chunks_in_flight),
                  Gb(s.activation_bytes));
    json += part;
  }
  return json + "]";
}

// The host time a step the commands add (PlanSetup::host_step_ns), as an assumption line: the
// library's lists (StepAssumptions, SimulationAssumptions) serve a re-partitioned trace too,
// which keeps its own host time.
std::string HostAssumption(const PlanSetup& setup) {
  char line[160];
  if (setup.host_step_ns > 0) {
    std::snprintf(
        line, sizeof(line),
        "host time a step: %.1f ms, once, after everything (%s; --host-step-ms)",
        setup.host_step_ns / 1e6,
        std::abs(setup.host_step_ns - kHostStepNs) < 1 ? "calibrated, pass_work.h" : "given");
  } else {
    std::snprintf(line, sizeof(line), "host time a step: none (--host-step-ms 0)");
  }
  return line;
}

void PrintJson(std::FILE* out, const std::vector<SearchResult>& results, size_t top,
               const PlanSetup& setup) {
  std::fprintf(out, "{\"searches\": [");
  for (size_t s = 0; s < results.size(); ++s) {
    const SearchResult& r = results[s];
    std::string no_layout = "null";
    if (!r.no_layout.ok()) {
      no_layout.clear();
      io::AppendJsonString(r.no_layout.message(), &no_layout);
    }
    std::fprintf(out,
                 "%s{\"gpus\": %lld, \"layouts\": %zu, \"fitting\": %zu, \"simulated\": %zu, "
                 "\"ruled_out\": %zu, \"unsettled\": %s, \"no_layout\": %s, \"ranked\": [",
                 s ? ", " : "", static_cast<long long>(r.gpus), r.ranked.size(), r.fitting,
                 r.simulated, r.ruled_out, r.checked ? std::to_string(r.unsettled).c_str() : "null",
                 no_layout.c_str());
    for (size_t i = 0; i < std::min(top, r.ranked.size()); ++i) {
      const StepEstimate& e = r.ranked[i];
      const Layout& l = e.layout;
      std::fprintf(
          out,
          "%s{\"tp\": %lld, \"pp\": %lld, \"vp\": %lld, \"cp\": %lld, \"dp\": %lld, \"mbs\": %lld, "
          "\"gbs\": %lld, \"sequence_parallel\": %s, \"recompute\": \"%s\", \"zero\": %d, "
          "\"tp_overlap\": %s, \"step_s\": %.6f, \"tokens_per_s_per_gpu\": %.1f, "
          "\"forward_ms\": %.4f, \"backward_ms\": %.4f, \"gemm_ms\": %.4f, \"attention_ms\": %.4f, "
          "\"elementwise_ms\": %.4f, \"tp_comm_ms\": %.4f, \"p2p_ms\": %.4f, "
          "\"bubble_s\": %.6f, \"dp_exposed_s\": "
          "%.6f, \"overlap_cost_s\": %.6f, \"embedding_grad_s\": %.6f, \"optimizer_s\": %.6f, "
          "\"host_step_s\": %.6f, \"memory_gb\": %.3f, \"fits\": "
          "%s, \"shortfall_gb\": %.3f, \"memory_stages\": %s, "
          "%s}",
          i ? ", " : "", static_cast<long long>(l.tp), static_cast<long long>(l.pp),
          static_cast<long long>(l.vp), static_cast<long long>(l.cp), static_cast<long long>(l.dp),
          static_cast<long long>(l.mbs), static_cast<long long>(l.global_batch()),
          l.sequence_parallel ? "true" : "false", models::RecomputeName(l.recompute), l.zero,
          l.tp_overlap ? "true" : "false", e.step_ns / 1e9, e.tokens_per_s_per_gpu,
          e.forward_ns / 1e6, e.backward_ns / 1e6, e.gemm_ns / 1e6, e.attention_ns / 1e6,
          e.elementwise_ns / 1e6, e.tp_comm_ns / 1e6, e.p2p_ns / 1e6, e.bubble_ns / 1e9,
          e.dp_exposed_ns / 1e9, e.overlap_cost_ns / 1e9, e.embedding_grad_ns / 1e9,
          e.optimizer_ns / 1e9, e.host_ns / 1e9, Gb(e.memory.total_bytes()),
          e.memory.fits ? "true" : "false", Gb(e.memory.shortfall_bytes),
          StagesJson(e.memory).c_str(), SimulatedJson(e).c_str());
    }
    std::fprintf(out, "]}");
  }
  std::fprintf(out, "], \"assumptions\": [");
  const auto& lines = StepAssumptions();
  for (size_t i = 0; i < lines.size(); ++i) {
    std::fprintf(out, "%s\"%s\"", i ? ", " : "", lines[i].c_str());
  }
  std::fprintf(out, ", \"%s\"]}\n", HostAssumption(setup).c_str());
}

constexpr const char* kOverlapHelp =
    "compute beside communication on its GPU takes (1 + S) x its time (default 0.189, the mean "
    "measured in arXiv:2507.03114; 0: overlap is free)";
// The default said from kHostStepNs itself, so a recalibration changes one number.
std::string HostStepHelp() {
  char help[200];
  std::snprintf(help, sizeof(help),
                "host time a step with the GPUs idle, added once (default %.1f: calibrated on "
                "MLPerf v5.1 Llama 3.1 8B B200 runs with a full-iteration CUDA graph, "
                "pass_work.h; 0: none)",
                kHostStepNs / 1e6);
  return help;
}

// The GPU, network, GEMM precision and cost model both commands take; a usage error is
// returned as {exit 2, message}, an unreadable cost model as {exit 1, message}.
struct Resolved {
  PlanSetup setup;
  std::unique_ptr<GptCosts> costs;
};
StatusOr<Resolved> Resolve(const std::string& gpu_name, const std::string& net_name,
                           const std::string& dtype_name, const std::string& costs_file,
                           int64_t gpus_per_node, int* exit_code) {
  const models::SpecTable& specs = models::SpecTable::Builtin();
  Resolved r;
  *exit_code = 2;
  r.setup.gpu = specs.FindGpu(gpu_name);
  if (r.setup.gpu == nullptr) return ErrorStatus("--gpu '%s': not in the specs", gpu_name.c_str());
  LUMOS_ASSIGN_OR_RETURN(r.setup.net, specs.ResolveNetwork(net_name));
  if (dtype_name == "fp8") {
    r.setup.gemm_dtype = models::DType::kFp8;
  } else if (dtype_name != "bf16") {
    return ErrorStatus("--dtype '%s': bf16 or fp8", dtype_name.c_str());
  }
  const int64_t domain = r.setup.gpu->nvlink_domain_gpus.value_or(8);
  if (gpus_per_node > domain) {
    return ErrorStatus("--gpus-per-node %lld: more than %s's NVLink domain holds (%lld)",
                       static_cast<long long>(gpus_per_node), r.setup.gpu->name.c_str(),
                       static_cast<long long>(domain));
  }
  r.setup.gpus_per_node = gpus_per_node > 0 ? gpus_per_node : domain;
  *exit_code = 1;
  models::CostModel model;
  if (!costs_file.empty()) {
    LUMOS_ASSIGN_OR_RETURN(model, models::ReadCostModel(costs_file));
  }
  LUMOS_ASSIGN_OR_RETURN(r.costs,
                         GptCosts::Make(*r.setup.gpu, specs, std::move(model), &r.setup.net));
  *exit_code = 0;
  return r;
}

void PrintOne(std::FILE* out, const std::string& model_text, const StepEstimate& e,
              const PlanSetup& setup) {
  const Layout& l = e.layout;
  std::fprintf(out, "model %s on %lld x %s (%s between nodes)\n", model_text.c_str(),
               static_cast<long long>(l.gpus()), setup.gpu->name.c_str(), setup.net.name.c_str());
  std::fprintf(out, "layout %s (%lld micro-batches a replica)\n", LayoutText(l).c_str(),
               static_cast<long long>(l.micro_batches()));
  if (e.simulated) {
    const SimulatedStep& s = *e.simulated;
    std::fprintf(out,
                 "step %.3f s, %.0f tokens/s per GPU (simulated: a graph of %zu nodes, one GPU per "
                 "pipeline stage)\n",
                 s.step_ns / 1e9, e.tokens_per_s_per_gpu, s.nodes);
    std::fprintf(out,
                 "  stage %lld ends last: compute %.3f s, waiting %.3f s (bubble, sends, weight "
                 "gathers), data-parallel reduction exposed %.3f s, %soptimizer %.3f s, host "
                 "%.3f s (--host-step-ms)\n",
                 static_cast<long long>(s.stage), s.busy_ns / 1e9, s.idle_ns / 1e9,
                 s.dp_exposed_ns / 1e9, EmbeddingGradText(s.embedding_grad_ns).c_str(),
                 s.optimizer_ns / 1e9, s.host_ns / 1e9);
    if (s.dp_comm_ns + s.sends_ns > 0) {
      std::fprintf(out,
                   "  data-parallel collectives %.3f s, %.3f s of them beside compute; sends "
                   "%.3f s; the compute beside them %.0f %% slower: %.3f s of its time\n",
                   s.dp_comm_ns / 1e9, std::max(0.0, s.dp_comm_ns - s.dp_exposed_ns) / 1e9,
                   s.sends_ns / 1e9, 100 * setup.overlap_slowdown, s.overlap_cost_ns / 1e9);
    }
    std::fprintf(out, "fast path (the cost models added up): step %.3f s\n", e.step_ns / 1e9);
    // Where the two part, say why: they cost the same ops and differ only in what overlaps.
    const double apart = s.step_ns / e.step_ns - 1;
    if (std::abs(apart) > 0.1) {
      std::fprintf(out,
                   "  the paths differ by %+.0f %%: the simulation overlaps the data-parallel "
                   "collectives and the sends with compute, the fast path exposes %.3f s of the "
                   "reduction and adds the sends to every slot (measured H100 steps, MLPerf "
                   "GPT-3 and Megatron-Bridge Llama, lie above both, nearer the fast path: "
                   "docs/validation.md)\n",
                   100 * apart, e.dp_exposed_ns / 1e9);
    }
  } else {
    std::fprintf(out, "step %.3f s, %.0f tokens/s per GPU (fast path: the cost models added up)\n",
                 e.step_ns / 1e9, e.tokens_per_s_per_gpu);
  }
  std::fprintf(out, "  per micro-batch on the slowest stage: forward %.3f ms, backward %.3f ms\n",
               e.forward_ns / 1e6, e.backward_ns / 1e6);
  std::fprintf(
      out,
      "    of which GEMMs %.3f ms, attention %.3f ms, elementwise %.3f ms, tensor-parallel "
      "collectives %.3f ms, pipeline sends %.3f ms\n",
      e.gemm_ns / 1e6, e.attention_ns / 1e6, e.elementwise_ns / 1e6, e.tp_comm_ns / 1e6,
      e.p2p_ns / 1e6);
  std::fprintf(
      out,
      "  pipeline %.3f s (bubble %.3f s), data-parallel reduction %.3f s (exposed %.3f s, the "
      "compute beside the rest slowed %.3f s), %soptimizer %.3f s, host %.3f s\n",
      e.pipeline_ns / 1e9, e.bubble_ns / 1e9, e.dp_comm_ns / 1e9, e.dp_exposed_ns / 1e9,
      e.overlap_cost_ns / 1e9, EmbeddingGradText(e.embedding_grad_ns).c_str(), e.optimizer_ns / 1e9,
      e.host_ns / 1e9);
  std::fprintf(out, "memory per GPU %.1f GB of %.1f GB: ", Gb(e.memory.total_bytes()),
               e.memory.capacity_bytes ? Gb(*e.memory.capacity_bytes) : 0.0);
  if (e.memory.fits) {
    std::fprintf(out, "fits\n");
  } else {
    std::fprintf(out, "does not fit, short %.1f GB\n", Gb(e.memory.shortfall_bytes));
  }
  if (e.memory.stages.size() > 1)
    std::fprintf(out, "  %s\n", StagesText(e.memory, e.layout.vp).c_str());
  std::fprintf(out, "assumptions:\n");
  for (const std::string& line : StepAssumptions()) std::fprintf(out, "  %s\n", line.c_str());
  std::fprintf(out, "  %s\n", HostAssumption(setup).c_str());
  if (e.simulated) {
    for (const std::string& line : SimulationAssumptions())
      std::fprintf(out, "  %s\n", line.c_str());
  }
  for (const std::string& line : e.memory.assumptions) std::fprintf(out, "  %s\n", line.c_str());
}

}  // namespace

int RunModelEstimateCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::string model_text, set_text, gpu_name, net_name = models::kDefaultNetwork, costs_file;
  std::string dtype_name = "bf16";
  int64_t gpus_per_node = 0;
  double overlap_slowdown = kOverlapComputeSlowdown, host_step_ms = kHostStepNs / 1e6;
  bool json = false, fast = false;
  cli::ArgParser parser("lumos-model estimate",
                        "--model SPEC --set tp=T,pp=P,dp=D,mbs=B,gbs=G[,...] --gpu NAME\n"
                        "                            [--net NAME] [--dtype bf16|fp8] "
                        "[--costs MODEL.json] [--fast] [--json]");
  parser
      .Description(
          "A layout's step from a model's sizes alone (no trace): the step built as a graph\n"
          "(one GPU per pipeline stage) and simulated (modeler/plan/pipeline_graph.h), beside\n"
          "the fast path's sum (step_model.h), with memory per GPU and whether it fits.")
      .String("--model", "SPEC",
              "gpt:layers=L,hidden=H,heads=A,seq=S,vocab=V[,ffn=F,kv_heads=K,dropout=0|1]",
              &model_text)
      .String("--set", "K=V,...",
              "the layout: tp, pp, dp, vp, mbs, gbs, sequence_parallel, recompute, zero", &set_text)
      .String("--gpu", "NAME", "the GPU (a specs entry)", &gpu_name)
      .String("--net", "NAME", "the network between nodes (default ib400)", &net_name)
      .String("--dtype", "bf16|fp8", "the GEMMs' precision", &dtype_name)
      .String("--costs", "MODEL.json", "a cost model from `lumos-model costs fit`", &costs_file)
      .Int("--gpus-per-node", "G", "GPUs per node (default: the GPU's NVLink domain, else 8)",
           int64_t{0}, int64_t{4096}, &gpus_per_node)
      .Double("--overlap-slowdown", "S", kOverlapHelp, 0.0, 10.0, false, &overlap_slowdown)
      .Double("--host-step-ms", "MS", HostStepHelp(), 0.0, 1e6, false, &host_step_ms)
      .Flag("--fast", "the fast path only (no graph simulated)", &fast)
      .Flag("--json", "print JSON", &json)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  if (model_text.empty() || gpu_name.empty()) {
    return parser.UsageError(err, "give --model and --gpu");
  }
  StatusOr<ModelSpec> spec = ParseModelSpec(model_text);
  if (!spec.ok()) return parser.UsageError(err, spec.status().message());
  Layout layout;
  if (Status s = ApplyLayoutSettings(set_text, &layout); !s.ok()) {
    return parser.UsageError(err, s.message());
  }
  int code = 0;
  StatusOr<Resolved> r = Resolve(gpu_name, net_name, dtype_name, costs_file, gpus_per_node, &code);
  if (!r.ok() && code == 2) return parser.UsageError(err, r.status().message());
  cli::CommandOutcome outcome("lumos-model estimate", out, err);
  if (!r.ok()) return outcome.Fail(r.status());
  r->setup.overlap_slowdown = overlap_slowdown;
  r->setup.host_step_ns = host_step_ms * 1e6;
  if (std::string problem = Fp8SettingsProblem(layout, r->setup); !problem.empty()) {
    return parser.UsageError(err, problem);
  }
  if (Status s = CheckLayout(*spec, layout, r->setup.gpus_per_node); !s.ok()) {
    return parser.UsageError(err, s.message());
  }
  StatusOr<StepEstimate> e = EstimateStep(*spec, layout, *r->costs, r->setup);
  if (!e.ok()) return outcome.Fail(e.status());
  SearchResult one;
  one.gpus = layout.gpus();
  one.ranked.push_back(*e);
  one.fitting = 1;  // Simulated whether it fits or not: the user asked for this layout.
  if (!fast) SimulateTop(*spec, *r->costs, r->setup, 1, &one);
  if (one.simulated_failures > 0) {
    std::fprintf(err,
                 "lumos-model estimate: the slow path cannot take it (%s); the fast path's "
                 "figure stands\n",
                 one.first_simulation_failure.message().c_str());
  }
  e = one.ranked.front();
  one.fitting = e->memory.fits ? 1 : 0;
  if (json) {
    PrintJson(out, {one}, 1, r->setup);
  } else {
    PrintOne(out, model_text, *e, r->setup);
  }
  return outcome.Finish();
}

int RunSearchCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::string model_text, gpus_text, gpu_name, net_name = models::kDefaultNetwork, costs_file;
  std::string dtype_name = "bf16";
  int64_t gbs = 0, top = 20, gpus_per_node = 0, simulate = 10, check = 1000;
  double overlap_slowdown = kOverlapComputeSlowdown, host_step_ms = kHostStepNs / 1e6;
  std::string fixed_text, cp_text;
  bool json = false, csv = false, no_recompute = false, no_zero = false, no_tp_overlap = false;
  cli::ArgParser parser(
      "lumos-model search",
      "--model SPEC --gpus N[,N2,...] --gpu NAME [--net NAME] [--gbs G]\n"
      "                          [--dtype bf16|fp8] [--costs MODEL.json] [--top K] "
      "[--json|--csv]");
  parser.Description(kDescription)
      .String("--model", "SPEC",
              "gpt:layers=L,hidden=H,heads=A,seq=S,vocab=V[,ffn=F,kv_heads=K,dropout=0|1] (or "
              "llama:...)",
              &model_text)
      .String("--gpus", "N[,N2,...]",
              "GPU counts to lay the model out on (several: a Pareto table)", &gpus_text)
      .String("--gpu", "NAME", "the GPU (a specs entry: H100-SXM5-80GB, A100-SXM4-80GB, ...)",
              &gpu_name)
      .String("--net", "NAME", "the network between nodes (default ib400)", &net_name)
      .Int("--gbs", "G", "sequences per step (default: one micro-batch per replica)", int64_t{0},
           int64_t{1} << 24, &gbs)
      .String("--dtype", "bf16|fp8", "the GEMMs' precision (attention stays bf16)", &dtype_name)
      .String("--costs", "MODEL.json", "a cost model from `lumos-model costs fit`", &costs_file)
      .Int("--top", "K", "layouts to print per GPU count (default 20)", int64_t{1},
           int64_t{1} << 20, &top)
      .Int("--gpus-per-node", "G", "GPUs per node (default: the GPU's NVLink domain, else 8)",
           int64_t{0}, int64_t{4096}, &gpus_per_node)
      .Int("--simulate", "K",
           "the first K layouts that fit simulated as graphs and ranked again (default 10; 0: "
           "the fast path alone)",
           int64_t{0}, int64_t{10000}, &simulate)
      .Int("--check", "N",
           "then up to N more graphs simulated, the other layouts in order of a lower bound on "
           "their simulated step, until none left could beat the fastest (default 1000; 0: no "
           "check)",
           int64_t{0}, int64_t{100000}, &check)
      .Double("--overlap-slowdown", "S", kOverlapHelp, 0.0, 10.0, false, &overlap_slowdown)
      .Double("--host-step-ms", "MS", HostStepHelp(), 0.0, 1e6, false, &host_step_ms)
      .String("--set", "K=V,...",
              "fixed for every layout: grad_sync_bytes (2: bf16, 4: fp32, the default), "
              "dp_overlap, p2p_overlap, flash_attention, cp, ends_in_split, fp8_current_scaling, "
              "fp8_param_gather, tp_only_amax_red, p2p_scatter_gather",
              &fixed_text)
      .String("--cp", "C[,C2,...]",
              "context-parallel degrees to try (default 1; each needs seq a multiple of 2 C)",
              &cp_text)
      .Flag("--no-recompute", "do not try activation recomputation", &no_recompute)
      .Flag("--no-zero", "do not try ZeRO stages 1-3", &no_zero)
      .Flag("--no-tp-overlap", "do not try TP overlap (Transformer Engine's userbuffers)",
            &no_tp_overlap)
      .Flag("--json", "print JSON", &json)
      .Flag("--csv", "print CSV, one row per layout", &csv)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  if (model_text.empty()) return parser.UsageError(err, "give --model");
  if (gpus_text.empty()) return parser.UsageError(err, "give --gpus");
  if (gpu_name.empty()) return parser.UsageError(err, "give --gpu");
  if (json && csv) return parser.UsageError(err, "--json or --csv, not both");
  StatusOr<ModelSpec> spec = ParseModelSpec(model_text);
  if (!spec.ok()) return parser.UsageError(err, spec.status().message());
  StatusOr<std::vector<int64_t>> counts = ParseCounts(gpus_text);
  if (!counts.ok()) return parser.UsageError(err, counts.status().message());
  Layout fixed;
  if (Status s = ApplyFixedSettings(fixed_text, &fixed); !s.ok()) {
    return parser.UsageError(err, s.message());
  }
  std::vector<int64_t> cps = {fixed.cp};
  if (!cp_text.empty()) {
    if (fixed.cp != 1) return parser.UsageError(err, "cp in --cp or in --set, not both");
    StatusOr<std::vector<int64_t>> parsed = ParseCounts(cp_text, "--cp");
    if (!parsed.ok()) return parser.UsageError(err, parsed.status().message());
    cps = *parsed;
    std::sort(cps.begin(), cps.end());
    cps.erase(std::unique(cps.begin(), cps.end()), cps.end());
  }
  int code = 0;
  StatusOr<Resolved> resolved =
      Resolve(gpu_name, net_name, dtype_name, costs_file, gpus_per_node, &code);
  if (!resolved.ok() && code == 2) return parser.UsageError(err, resolved.status().message());
  if (resolved.ok()) {
    if (std::string problem = Fp8SettingsProblem(fixed, resolved->setup); !problem.empty()) {
      return parser.UsageError(err, problem);
    }
  }
  cli::CommandOutcome outcome("lumos-model search", out, err);
  if (!resolved.ok()) return outcome.Fail(resolved.status());
  resolved->setup.overlap_slowdown = overlap_slowdown;
  resolved->setup.host_step_ns = host_step_ms * 1e6;
  const PlanSetup& setup = resolved->setup;
  const GptCosts* costs = resolved->costs.get();
  const bool terminal = isatty(fileno(err)) != 0;
  std::vector<SearchResult> results;
  for (const int64_t n : *counts) {
    SearchSpace space;
    space.gpus = n;
    space.gbs = gbs;
    space.gpus_per_node = setup.gpus_per_node;
    space.recompute = !no_recompute;
    space.zero = !no_zero;
    space.tp_overlap = !no_tp_overlap;
    space.fixed = fixed;
    space.cp = cps;
    auto progress = [&](size_t done, size_t total) {
      if (terminal && (done % 64 == 0 || done == total)) {
        std::fprintf(err, "\r%lld GPUs: %zu/%zu layouts", static_cast<long long>(n), done, total);
        if (done == total) std::fprintf(err, "\n");
      }
    };
    results.push_back(Search(*spec, space, *costs, setup, progress));
    auto simulating = [&](size_t done, size_t total) {
      if (terminal) {
        std::fprintf(err, "\r%lld GPUs: %zu/%zu simulated", static_cast<long long>(n), done, total);
        if (done == total) std::fprintf(err, "\n");
      }
    };
    SimulateTop(*spec, *costs, setup, static_cast<size_t>(simulate), &results.back(), simulating);
    auto checking = [&](size_t done, size_t total) {
      if (terminal) {
        std::fprintf(err, "\r%lld GPUs: %zu/%zu more simulated", static_cast<long long>(n), done,
                     total);
        if (done == total) std::fprintf(err, "\n");
      }
    };
    if (simulate > 0 && check > 0) {
      CheckTheRest(*spec, *costs, setup, static_cast<size_t>(check), &results.back(), checking);
    }
  }
  // Not one layout of any GPU count asked for can exist: bad input, one error.
  if (std::all_of(results.begin(), results.end(),
                  [](const SearchResult& r) { return !r.no_layout.ok(); })) {
    std::string reasons;
    for (const SearchResult& r : results) {
      reasons += (reasons.empty() ? "" : "; ") + r.no_layout.message();
    }
    return parser.UsageError(err, reasons);
  }
  const auto k = static_cast<size_t>(top);
  if (json) {
    PrintJson(out, results, k, setup);
  } else if (csv) {
    std::fprintf(out,
                 "gpus,rank,tp,pp,vp,dp,mbs,gbs,sequence_parallel,recompute,zero,tp_overlap,step_s,"
                 "tokens_per_s_per_gpu,bubble_s,dp_exposed_s,optimizer_s,memory_gb,fits,"
                 "shortfall_gb,simulated_step_s,cp\n");
    for (const SearchResult& r : results) {
      PrintCsvRows(out, r, k);
      // No row to say it in: the reason beside the table.
      if (!r.no_layout.ok()) std::fprintf(err, "%s\n", r.no_layout.message().c_str());
    }
  } else {
    std::fprintf(out, "model %s on %s (%lld a node), %s between nodes, GEMMs in %s; %s\n",
                 model_text.c_str(), setup.gpu->name.c_str(),
                 static_cast<long long>(setup.gpus_per_node), setup.net.name.c_str(),
                 dtype_name.c_str(),
                 costs_file.empty() ? "no cost model: rooflines and NCCL's constants"
                                    : ("costs " + costs_file).c_str());
    for (const SearchResult& r : results) PrintText(out, r, k);
    if (results.size() > 1) {
      std::fprintf(out, "\nfastest layout per GPU count (Pareto: time against GPUs)\n");
      for (const SearchResult& r : results) {
        if (!r.no_layout.ok()) {
          std::fprintf(out, "  %6lld GPUs  %s\n", static_cast<long long>(r.gpus),
                       r.no_layout.message().c_str());
          continue;
        }
        if (r.fitting == 0) {
          std::fprintf(out, "  %6lld GPUs  none fits in memory\n", static_cast<long long>(r.gpus));
          continue;
        }
        const StepEstimate& e = r.ranked.front();
        std::fprintf(out, "  %6lld GPUs  %9.3f s  %11.0f tok/s/GPU  %s\n",
                     static_cast<long long>(r.gpus), e.best_step_ns() / 1e9, e.tokens_per_s_per_gpu,
                     LayoutText(e.layout).c_str());
      }
    }
    std::fprintf(out, "\nassumptions:\n");
    for (const std::string& line : StepAssumptions()) std::fprintf(out, "  %s\n", line.c_str());
    std::fprintf(out, "  %s\n", HostAssumption(setup).c_str());
    if (simulate > 0) {
      for (const std::string& line : SimulationAssumptions()) {
        std::fprintf(out, "  %s\n", line.c_str());
      }
    }
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler::plan
