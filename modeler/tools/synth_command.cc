// `lumos-model synth FILE|DIR|GLOB... -o OUT_DIR --ranks N [--iterations K] [--jitter F]
// [--seed S] [--ranks-per-host H] [--job ID]`: a large job from a real one
// (modeler/synth/job_synth.h).
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/graph/job.h"
#include "modeler/synth/job_synth.h"
#include "modeler/tools/commands.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Builds a large job from the traces of a real one (T ranks), to measure the modeler at\n"
    "scale: N (a multiple of T) ranks in N/T groups with their own communicators, rank R in\n"
    "group R mod (N/T), so each group spans hosts; the input repeats K times with seq numbers\n"
    "and ids continued; durations shrink by a random factor in [1-F, 1]; H ranks per host,\n"
    "each host's clock skewed by 1 ms more than the previous one. Writes one .pb.zst per rank.\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns,\n"
    "all of one job (--job picks one).";

constexpr const char kExitStatus[] =
    "exit status: 0 written from sound input; 1 an input is unreadable (skipped), has a damaged\n"
    "tail or no trailer (what could be read is still used; one line on stderr per file), or\n"
    "nothing could be built or written; 2 bad arguments.";

}  // namespace

int RunSynth(const Args& args) {
  std::vector<std::string> inputs;
  std::string out_dir, job_name;
  bool job_given = false;
  SynthOptions options;
  cli::ArgParser parser("lumos-model synth",
                        "FILE|DIR|GLOB... -o OUT_DIR --ranks N [--iterations K] [--jitter F]\n"
                        "                         [--seed S] [--ranks-per-host H] [--job ID]");
  parser.Description(kDescription)
      .String("-o, --output", "OUT_DIR", "the directory to write (created if missing)", &out_dir)
      .Required()
      .Int("--ranks", "N", "ranks to build, a multiple of the input's (required)", 1, 1 << 20,
           &options.ranks)
      .Required()
      .Int("--iterations", "K", "times the input repeats (default 1)", 1, 1 << 20,
           &options.iterations)
      .Double("--jitter", "F", "durations shrink by a random factor in [1-F, 1] (default 0.05)",
              0.0, 1.0, /*max_open=*/true, &options.jitter)
      .Int<uint64_t>("--seed", "S", "seed of the jitter (default 1)", 0, INT64_MAX, &options.seed)
      .Int("--ranks-per-host", "H", "ranks per host (default 8)", 1, 1 << 20,
           &options.ranks_per_host)
      .String("--job", "ID", "the job to build from when the inputs hold several (header job id)",
              &job_name)
      .Given(&job_given)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;

  cli::CommandOutcome outcome("lumos-model synth", stdout, stderr);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  auto paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status().message());
  LoadOptions load;
  if (job_given) load.job_id = job_name;
  auto job = LoadJob(*paths, load);
  if (!job.ok()) return outcome.Fail(job.status().message());
  for (const std::string& problem : job->input_problems) outcome.InputProblem(problem);
  auto result = SynthesizeJob(*job, options, out_dir);
  if (!result.ok()) return outcome.Fail(result.status().message());
  std::printf("%s: %" PRIu64 " files, %" PRIu64 " events, %.1f MB\n", out_dir.c_str(),
              result->files, result->events, static_cast<double>(result->bytes) / 1e6);
  return outcome.Finish();
}

}  // namespace lumos::modeler
