#include "modeler/estimate/estimate_cli.h"

#include <algorithm>
#include <atomic>
#include <optional>
#include <thread>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "base/cli/progress.h"
#include "base/memory_budget.h"
#include "modeler/estimate/estimate_report.h"
#include "modeler/estimate/repartition.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/io/output_file.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/costs/cost_queries.h"
#include "modeler/replay/replay_timeline.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::estimate {
namespace {

constexpr const char kDescription[] =
    "Estimates a setup nobody ran from the trace of one that ran: recovers the job's structure\n"
    "(iterations, phases, micro-batches, layers, parallel groups, model sizes; see `lumos-model\n"
    "structure`), rewrites its execution graph for the new setup (layers and micro-batches\n"
    "repeated or removed, kernels and collectives re-costed for new sizes, data-parallel\n"
    "degree, GPU and network by the cost models) and replays it. Prints the base (the replayed\n"
    "measurement) and the estimate side by side: iteration time, tokens/s, MFU, breakdown,\n"
    "critical path, GPU time per kernel class and collective, what the estimate rests on\n"
    "(measured, interpolated, scaled, model only), memory per GPU against its capacity, and\n"
    "what it assumed.\n"
    "\n"
    "keys of --set and --sweep: layers, hidden, ffn, heads, seq, mbs, micro_batches, vocab,\n"
    "world, dp, tp, pp, vp (cp, ep only at their measured values), gpu, net, net_gbps, net_us,\n"
    "zero (0-3), recompute (none|selective|full), sequence_parallel (0|1), host (the host's\n"
    "time for its own work x F: another CPU, or a run whose host was slower or faster).\n"
    "A new tp, pp, vp or sequence parallelism re-partitions the model: the measured layout and\n"
    "the asked one are built as step graphs (one GPU per pipeline stage, Megatron-LM's\n"
    "schedules) on the trace's own costs, simulated, and the measured iteration scaled by\n"
    "their ratio (modeler/estimate/repartition.h).\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns.";

constexpr const char kExitStatus[] =
    "exit status: 0 estimated from sound input; 1 an input is unreadable (skipped), has a\n"
    "damaged frames or no trailer (estimated from what was read; one line on stderr per file),\n"
    "nothing could be read, the trace's GPU is not in the specs, or an output could not be\n"
    "written; 2 bad arguments. Bad arguments include an unknown key, a value that is not a\n"
    "number, dp not dividing the world, heads not dividing hidden, a GPU the specs do not\n"
    "know, a change the trace gives no base for, and a --base value the trace contradicts.";

}  // namespace

int RunEstimateCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  std::string set_text, base_text, sweep_text, costs_file, net_name = models::kDefaultNetwork;
  std::string timeline, job_name, iteration, iterations_text, window_name, max_memory_text;
  bool json = false, job_given = false, window_given = false, set_given = false,
       sweep_given = false;
  bool base_given = false, costs_given = false, gpu_given = false;
  std::string gpu_name;
  const models::SpecTable& specs = models::SpecTable::Builtin();
  bool force = false;
  cli::ArgParser parser(
      "lumos-model estimate",
      "FILE|DIR|GLOB... --set K=V,... [--base K=V,...] [--sweep 'K=V1,V2;K2=...']\n"
      "                            [--costs MODEL.json] [--gpu NAME] [--net NAME] [--json]\n"
      "                            [--timeline OUT.json] [--max-memory SIZE]");
  parser.Description(kDescription)
      .String("--set", "K=V,...", "the setup to estimate (keys above)", &set_text)
      .Given(&set_given)
      .String("--base", "K=V,...",
              "what the trace does not show about the measured run (layers, hidden, ffn, heads, "
              "seq, mbs, micro_batches, vocab, world, dp, tp, pp, cp, ep); a value the trace "
              "contradicts is an error",
              &base_text)
      .Given(&base_given)
      .String("--sweep", "'K=V1,V2;K2=...'",
              "every combination (with --set applied to each), one line each, fastest first",
              &sweep_text)
      .Given(&sweep_given)
      .String("--costs", "MODEL.json",
              "a cost model from `lumos-model costs fit` (measured tables, other traces) for what "
              "the trace itself does not measure (another GPU's GEMMs, collectives)",
              &costs_file)
      .Given(&costs_given)
      .String("--net", "NAME",
              "the network between the measured job's nodes (ib400, roce400, ... or numbers "
              "such as 400Gbps,3us; default ib400)",
              &net_name)
      .String("--gpu", "NAME",
              "the measured job's GPU (default: the one its trace headers name; needed when the "
              "specs do not know that one)",
              &gpu_name)
      .Given(&gpu_given)
      .String("--iteration", "REGEX", "iterations are the host/NVTX ranges matching REGEX",
              &iteration)
      .String("--iterations", "WHICH", kIterationsHelp, &iterations_text)
      .String("--job", "ID", "the job to read when the files hold several (header job id)",
              &job_name)
      .Given(&job_given)
      .String("--window", "STAMP",
              "the capture window to read when the files hold several (its directory's stamp, "
              "e.g. 20261204T144812Z; default: the first, said in a warning)",
              &window_name)
      .Given(&window_given)
      .String("--max-memory", "SIZE",
              "the memory an estimate may plan to use (e.g. 64G; default: half of this "
              "machine's, less under ulimit -v); a configuration whose rewritten graph needs "
              "more is refused before anything is allocated",
              &max_memory_text)
      .Flag("--json", "print the estimate as JSON instead of text", &json)
      .String("--timeline", "OUT.json",
              "write the replayed and the estimated timelines side by side (Perfetto)", &timeline)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  if (!set_given && !sweep_given) return parser.UsageError(err, "give --set or --sweep");
  if (sweep_given && !timeline.empty()) {
    return parser.UsageError(err, "--timeline shows one estimate: not with --sweep");
  }
  if (!max_memory_text.empty()) {
    std::optional<uint64_t> parsed = ParseSizeBytes(max_memory_text);
    if (!parsed || *parsed == 0) {
      return parser.UsageError(
          err, "--max-memory '" + max_memory_text + "': expected a size such as 512M, 64G or 2T");
    }
    SetMemoryBudget(*parsed);  // The traces' loading honours it too.
  }
  const uint64_t max_memory = MemoryBudget();
  // Settings first: a bad one is exit 2 before any file is read.
  whatif::SettingList set;
  if (set_given) {
    StatusOr<whatif::SettingList> parsed =
        whatif::ParseSettings(set_text, whatif::SettingScope::kSet, specs);
    if (!parsed.ok()) return parser.UsageError(err, parsed.status().message());
    set = std::move(*parsed);
  }
  std::vector<whatif::SettingList> configurations;
  if (sweep_given) {
    StatusOr<std::vector<whatif::SettingList>> sweep = whatif::ParseSweep(sweep_text, specs);
    if (!sweep.ok()) return parser.UsageError(err, sweep.status().message());
    for (const whatif::SettingList& combination : *sweep) {
      configurations.push_back(whatif::MergeSettings(set, combination));
    }
  } else {
    configurations.push_back(set);
  }
  structure::StructureOptions structure_options;
  if (base_given) {
    StatusOr<whatif::SettingList> base =
        whatif::ParseSettings(base_text, whatif::SettingScope::kBase, specs);
    if (!base.ok()) return parser.UsageError(err, base.status().message());
    for (const whatif::Setting& s : *base) {
      structure::Value* v =
          structure::SetupField(&structure_options.base, whatif::SettingKeyName(s.key));
      if (v == nullptr) continue;
      v->value = s.integer;
      v->origin = structure::Origin::kGiven;
      v->how = "--base";
    }
  }
  AnalysisOptions analysis;
  if (!iteration.empty()) {
    if (Status s = SetIterationPattern(iteration, &analysis); !s.ok()) {
      return parser.UsageError(err, s.message());
    }
    structure_options.iteration_pattern = iteration;
  }
  if (!iterations_text.empty()) {
    if (Status s = SetIterationChoice(iterations_text, &analysis); !s.ok()) {
      return parser.UsageError(err, s.message());
    }
  }
  StatusOr<models::NetworkSpec> source_net = specs.ResolveNetwork(net_name);
  if (!source_net.ok()) return parser.UsageError(err, "--net " + source_net.status().message());

  cli::CommandOutcome outcome("lumos-model estimate", out, err);
  std::vector<std::string> missing;
  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  for (const std::string& path : *paths) {
    if (!timeline.empty() && io::SameFile(path, timeline)) {
      return parser.UsageError(err, "the timeline " + timeline + " is also an input");
    }
  }
  cli::Progress progress("lumos-model estimate", err);
  progress.Step("loading");
  progress.Update(-1);
  PrepareOptions prepare;
  if (job_given) prepare.job_id = job_name;
  if (window_given) prepare.window = window_name;
  prepare.structure = structure_options;
  prepare.analysis = analysis;
  prepare.net = *source_net;
  if (costs_given) prepare.costs_file = costs_file;
  if (gpu_given) {
    const models::GpuSpec* gpu = specs.FindGpu(gpu_name);
    if (gpu == nullptr) {
      return parser.UsageError(err, "--gpu " + gpu_name + ": unknown (" + specs.GpuNames() + ")");
    }
    prepare.gpu = gpu->name;
  }
  std::vector<std::string> problems;
  bool usage = false;
  StatusOr<std::unique_ptr<PreparedJob>> prepared = PrepareJob(*paths, prepare, &problems, &usage);
  progress.Clear();
  for (const std::string& problem : problems) outcome.InputProblem(problem);
  if (!prepared.ok()) {
    if (usage) return parser.UsageError(err, prepared.status().message());
    return outcome.Fail(prepared.status());
  }
  const PreparedJob& job = **prepared;
  const EstimateContext& ctx = job.ctx;
  ReportHeader header;
  header.job_id = job.job.job_id;
  header.ranks = job.job.ranks.size();
  header.source_gpu = ctx.source_gpu->name;
  header.source_net = ctx.source_net.name;
  header.structure = &job.structure;
  header.iteration_choice = job.ctx.iteration_choice;
  header.warnings = job.job.warnings;
  // A re-partitioning (tp, pp, vp, sequence parallelism) takes the step graph's path
  // (repartition.h) for every configuration of the invocation.
  const whatif::SetupValues measured = MeasuredSetup(job.structure);
  const bool repartition =
      std::any_of(configurations.begin(), configurations.end(),
                  [&](const whatif::SettingList& c) { return ChangesPartitioning(c, measured); });
  if (repartition) {
    if (!timeline.empty()) {
      return parser.UsageError(err,
                               "--timeline: not with a re-partitioning (tp, pp, vp, "
                               "sequence_parallel): its step graph is not the trace's");
    }
    std::vector<RepartitionResult> results;
    for (const whatif::SettingList& c : configurations) {
      StatusOr<RepartitionResult> r = RunRepartition(ctx, c);
      if (!r.ok()) return parser.UsageError(err, r.status().message());
      results.push_back(std::move(*r));
    }
    if (sweep_given) {
      WriteRepartitionSweep(header, results, json, out);
    } else if (json) {
      WriteRepartitionJson(header, results.front(), out);
    } else {
      WriteRepartitionText(header, results.front(), out);
    }
    return outcome.Finish();
  }
  // Every configuration is checked before any is run: a bad one is exit 2 with nothing printed.
  // Configurations run on up to one thread per core, each holding its own rewritten graph: the
  // largest ones together must fit in the memory budget.
  const size_t threads = std::min<size_t>(
      configurations.size(), std::max(1u, std::min(8u, std::thread::hardware_concurrency())));
  for (const whatif::SettingList& c : configurations) {
    StatusOr<Plan> plan = MakePlan({ctx.structure, ctx.specs, ctx.source_gpu, ctx.source_net}, c);
    const std::string where =
        configurations.size() > 1 ? " (configuration " + whatif::FormatSettings(c) + ")" : "";
    if (!plan.ok()) {
      progress.Clear();
      return parser.UsageError(err, plan.status().message() + where);
    }
    const double nodes = ProjectedNodes(ctx, *plan);
    const double bytes = nodes * kBytesPerEstimatedNode * static_cast<double>(threads);
    if (nodes > static_cast<double>(whatif::kMaxRewrittenNodes) ||
        bytes > static_cast<double>(max_memory)) {
      progress.Clear();
      char count[32];
      std::snprintf(count, sizeof(count), "%.3g", nodes);
      const std::string per_thread =
          threads > 1 ? " for " + std::to_string(threads) + " configurations at once" : "";
      std::string why =
          nodes > static_cast<double>(whatif::kMaxRewrittenNodes)
              ? "more than the " + std::to_string(whatif::kMaxRewrittenNodes) + " a graph can hold"
              : "about " + FormatBytes(bytes) + " at " +
                    std::to_string(static_cast<int>(kBytesPerEstimatedNode)) + " B a node" +
                    per_thread + ", more than the limit of " + FormatBytes(max_memory) +
                    (!MemoryBudgetWasSet()
                         ? " (the default, half of this machine's memory; --max-memory)"
                         : " (--max-memory or LUMOS_MAX_MEMORY)");
      return parser.UsageError(err, whatif::FormatSettings(c) +
                                        ": the estimated job's graph "
                                        "would have " +
                                        count + " nodes (measured: " +
                                        std::to_string(ctx.graph->nodes.size()) + "): " + why);
    }
  }
  // Configurations run on up to one thread per core (each holds its own scenario and
  // simulation; the context is shared read-only); results keep the order given.
  std::vector<std::optional<StatusOr<EstimateResult>>> runs(configurations.size());
  RunOptions run_options;
  run_options.keep_graph = !timeline.empty();
  run_options.summary_only = sweep_given;
  std::atomic<size_t> next{0}, done{0};
  // The calling thread (the last worker) also draws the progress bar.
  auto worker = [&](bool draws) {
    for (size_t i = next++; i < configurations.size(); i = next++) {
      runs[i] = RunEstimate(ctx, configurations[i], run_options);
      ++done;
      if (draws) {
        progress.Update(static_cast<double>(done) / static_cast<double>(configurations.size()));
      }
    }
  };
  progress.Step("estimating");
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker, false);
  worker(true);
  for (std::thread& t : pool) t.join();
  std::vector<EstimateResult> results;
  for (auto& run : runs) {
    if (!run->ok()) {
      progress.Clear();
      return parser.UsageError(err, run->status().message());
    }
    results.push_back(std::move(**run));
  }
  progress.Clear();
  if (!timeline.empty()) {
    const EstimateResult& r = results.front();
    Status status = WriteTimelines(
        {{&job.graph, &ctx.base_sim, "replayed"}, {&r.rewritten->graph, &*r.sim, "estimated"}},
        timeline, force);
    if (!status.ok()) outcome.OutputFailed(status.message());
  }
  Status written = Status::Ok();
  if (sweep_given) {
    if (json) {
      written = WriteSweepJson(header, results, out);
    } else {
      WriteSweepText(header, results, out);
    }
  } else if (json) {
    written = WriteEstimateJson(header, results.front(), out);
  } else {
    WriteEstimateText(header, results.front(), out);
  }
  if (!written.ok() && std::ferror(out) == 0) outcome.OutputFailed(written.message());
  return outcome.Finish();
}

}  // namespace lumos::modeler::estimate
