// `lumos-model structure FILE|DIR|GLOB... [--base K=V,...] [--iteration REGEX] [--job ID]
// [--json]`: the structure of a training job recovered from its trace
// (modeler/structure/job_structure.h).
#include <cstdio>
#include <optional>
#include <string>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/structure/base_values.h"
#include "modeler/structure/job_structure.h"
#include "modeler/structure/structure_report.h"
#include "modeler/tools/commands.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Recovers the structure of a training job from its traces (one file per rank): per rank\n"
    "its iterations; in each, the forward, backward and optimizer phases and the\n"
    "micro-batches; the repeating transformer layers; the parallel groups (data, tensor,\n"
    "pipeline, expert) from the communicators and their collectives; and the model's sizes\n"
    "(layers, hidden, ffn, heads, seq, mbs, micro_batches, vocab; world, dp, tp, pp, cp, ep)\n"
    "where the trace shows them (GEMM and attention shapes inside the layers), each with its\n"
    "origin (trace, given, derived) and evidence; what stays unknown is listed.\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns.";

constexpr const char kExitStatus[] =
    "exit status: 0 recovered from sound input; 1 an input is unreadable (skipped: its rank is\n"
    "missing), has damaged frames or no trailer (recovered as far as it goes; one line on stderr\n"
    "per file), nothing could be read, or the output could not be written; 2 bad arguments.\n"
    "A --base value the trace contradicts is a bad argument (the message names both).";

}  // namespace

int RunStructure(const Args& args) {
  std::vector<std::string> inputs;
  std::string base_text, iteration, job_name, window_name;
  bool json = false, job_given = false, window_given = false;
  structure::StructureOptions options;
  cli::ArgParser parser("lumos-model structure",
                        "FILE|DIR|GLOB... [--base K=V,...] [--iteration REGEX] [--json]");
  parser.Description(kDescription)
      .String("--base", "K=V,...",
              "values the trace may not show, whole positive numbers, keys: layers, hidden, ffn, "
              "heads, seq, mbs, micro_batches, vocab, world, dp, tp, pp, cp, ep (a value the "
              "trace contradicts is an error)",
              &base_text)
      .Check([&options](const std::string& text) {
        StatusOr<structure::Setup> base = structure::ParseBaseValues(text);
        if (!base.ok()) return base.status();
        options.base = *base;
        return Status::Ok();
      })
      .String("--iteration", "REGEX",
              "iterations are the host/NVTX ranges whose name matches REGEX (default: "
              "ProfilerStep#N ranges; none: detected from the repeating kernel stream, else the "
              "whole trace), as replay's",
              &iteration)
      .Check([&options](const std::string& pattern) {
        AnalysisOptions checked;  // Only the check: structure recovery compiles it again.
        LUMOS_RETURN_IF_ERROR(SetIterationPattern(pattern, &checked));
        options.iteration_pattern = pattern;
        return Status::Ok();
      })
      .String("--job", "ID", "the job to read when the files hold several (header job id)",
              &job_name)
      .Given(&job_given)
      .String("--window", "STAMP",
              "the capture window to read when the files hold several (its directory's stamp, "
              "e.g. 20261204T144812Z; default: the first, said in a warning)",
              &window_name)
      .Given(&window_given)
      .Flag("--json", "print the structure as JSON instead of text", &json)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;

  cli::CommandOutcome outcome("lumos-model structure", stdout, stderr);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  auto paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  LoadOptions load;
  if (job_given) load.job_id = job_name;
  if (window_given) load.window = window_name;
  StatusOr<Job> job = LoadJob(*paths, load);
  if (!job.ok()) return outcome.Fail(job.status());
  for (const std::string& problem : job->input_problems) outcome.InputProblem(problem);
  const ClockAlignment alignment = AlignClocks(*job);
  GraphOptions graph_options;
  graph_options.record_sources = true;
  const ExecutionGraph graph = BuildGraph(*job, alignment.rank_offset_ns, graph_options);
  if (graph.nodes.empty()) {
    return outcome.Fail("no API calls or GPU ops in the input: no structure to recover");
  }
  StatusOr<structure::JobStructure> recovered = structure::RecoverStructure(*job, graph, options);
  if (!recovered.ok()) return parser.UsageError(stderr, recovered.status().message());
  structure::StructureReport report;
  report.job_id = job->job_id;
  report.structure = &*recovered;
  report.warnings = job->warnings;
  if (json) {
    Status status = structure::WriteStructureJson(report, stdout);
    if (!status.ok() && std::ferror(stdout) == 0) outcome.OutputFailed(status.message());
  } else {
    structure::WriteStructureText(report, stdout);
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler
