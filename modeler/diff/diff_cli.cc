#include "modeler/diff/diff_cli.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "base/cli/progress.h"
#include "modeler/diff/diff_timeline.h"
#include "modeler/diff/run_diff.h"
#include "modeler/diff/run_profile.h"
#include "modeler/io/output_file.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::diff {
namespace {

constexpr const char kDescription[] =
    "What changed between two runs, A and B, each a trace set: one argument each (a trace\n"
    "file, a directory: every *.pb.zst inside, recursively, or a quoted glob). Both are measured\n"
    "as replay measures them (iterations, breakdown; no simulation), counting only what lies\n"
    "inside iterations, per iteration and rank so runs of different length or size compare:\n"
    "the iteration time (median and mean), the breakdown (exposed compute, overlapped, exposed\n"
    "communication, idle), host time (API calls, syncs, gaps between calls), kernels by (name,\n"
    "grid, block, GEMM shape) and collectives by (op, bytes, ranks) with count, time and time\n"
    "per call, new and missing ones, sorted by their contribution to the change (B - A), and\n"
    "ranks by the change in their GPU compute time (the one that got slower computes longer;\n"
    "the others wait for it). The text starts with a headline; --json has every row\n"
    "(modeler/diff/README.md).";

constexpr const char kExitStatus[] =
    "exit status: 0 both runs read from sound input; 1 an input is unreadable, damaged or\n"
    "unclosed (one line each; what could be read is compared), a run has nothing to compare\n"
    "(no readable trace, no GPU op or API call, no iteration), or an output could not be\n"
    "written; 2 bad arguments. Not exactly two inputs, or a timeline that is one of the\n"
    "inputs, is a bad argument: nothing is read or written.";

}  // namespace

int RunDiffCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  ProfileOptions options;
  std::string job_a, job_b, iteration, iterations_text, timeline;
  bool job_given = false, job_b_given = false, json = false;
  size_t top = 10;
  bool force = false;
  cli::ArgParser parser("lumos-model diff", "A B [options]");
  parser.Description(kDescription)
      .String("--iteration", "REGEX",
              "iterations are the host/NVTX ranges whose name matches REGEX (default: "
              "ProfilerStep#N ranges; none: detected from the repeating kernel stream, else the "
              "whole trace), as replay's; the same for both runs",
              &iteration)
      .Check([&options](const std::string& pattern) {
        return SetIterationPattern(pattern, &options.analysis);
      })
      .String("--iterations", "WHICH", kIterationsHelp, &iterations_text)
      .Check([&options](const std::string& text) {
        return SetIterationChoice(text, &options.analysis);
      })
      .String("--job", "ID", "the job to compare when a run's files hold several (header job id)",
              &job_a)
      .Given(&job_given)
      .String("--job-b", "ID", "B's job when it differs from --job's", &job_b)
      .Given(&job_b_given)
      .Flag("--json", "print the comparison as JSON (every row) instead of text", &json)
      .String("--timeline", "OUT.json",
              "write both runs into one Perfetto/Chrome trace (processes A/rank R, B/rank R), B "
              "shifted so that its first matched iteration starts where A's does",
              &timeline)
      .Int("--top", "N", "rows per table in the text (default 10)", size_t{1}, size_t{100000}, &top)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("A B", "input", 2, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, out, err)) return *exit;
  if (inputs.size() != 2) {
    return parser.UsageError(err, "exactly two inputs (A B) expected, got " +
                                      std::to_string(inputs.size()) +
                                      " (quote a glob: 'runs/a/*.pb.zst')");
  }
  cli::CommandOutcome outcome("lumos-model diff", out, err);
  std::set<std::string> said;  // A and B may share files: each problem once.
  auto problem = [&](const std::string& message) {
    if (said.insert(message).second) outcome.InputProblem(message);
  };
  std::vector<std::string> paths[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<std::string> missing;
    StatusOr<std::vector<std::string>> expanded = ExpandTracePaths({inputs[k]}, &missing);
    for (const std::string& m : missing) problem(m);
    if (!expanded.ok()) return outcome.Fail(expanded.status());
    paths[k] = std::move(expanded).value();
    for (const std::string& path : paths[k]) {
      if (!timeline.empty() && io::SameFile(path, timeline)) {
        return parser.UsageError(err, "the timeline " + timeline + " is also an input");
      }
    }
  }
  options.keep_graph = !timeline.empty();
  if (job_given) options.job_id = job_a;
  cli::Progress progress("lumos-model diff", err);
  std::optional<RunProfile> profiles[2];
  const char* labels[2] = {"A", "B"};
  for (int k = 0; k < 2; ++k) {
    progress.Step(k == 0 ? "loading A" : "loading B");
    progress.Update(-1);
    ProfileOptions side = options;
    if (k == 1 && job_b_given) side.job_id = job_b;
    StatusOr<RunProfile> p = ProfileRun(paths[k], side);
    progress.Clear();
    if (!p.ok()) {
      return outcome.Fail(std::string(labels[k]) + " (" + inputs[k] + "): " + p.status().message());
    }
    for (const std::string& m : p->input_problems) problem(m);
    profiles[k] = std::move(p).value();
  }
  const RunDiff d = CompareRuns({"A", inputs[0], &*profiles[0]}, {"B", inputs[1], &*profiles[1]});
  const std::string text = json ? DiffJson(d) : DiffText(d, top);
  // A write that fails (a full disk) is said here, with its reason, once: stdio keeps no
  // errno for Finish() when a long text went past its buffer.
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
    const int error = errno;
    outcome.OutputFailed(std::string("cannot write to standard output: ") +
                         (error != 0 ? std::strerror(error) : "write error"));
    std::clearerr(out);
  }
  if (!timeline.empty()) {
    StatusOr<Alignment> alignment = AlignRuns(*profiles[0], *profiles[1]);
    if (!alignment.ok()) return outcome.Fail(alignment.status());
    if (Status s = WriteDiffTimeline(*profiles[0], *profiles[1], *alignment, timeline, force);
        !s.ok()) {
      outcome.OutputFailed(s.message());
    }
  }
  return outcome.Finish();
}

}  // namespace lumos::modeler::diff
