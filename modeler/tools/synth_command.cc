// `lumos-model synth FILE|DIR|GLOB... -o OUT_DIR --ranks N [--iterations K] [--jitter F]
// [--seed S] [--ranks-per-host H] [--job ID]`: a large job from a real one
// (modeler/synth/job_synth.h); `lumos-model synth gpt -o DIR [--set K=V,...] [--seed N]
// [--no-nvtx] [--forward-only] [--costs MODEL.json] [--window STAMP] [--slow-rank R=F] [--scale
// SPEC]...`: a GPT training job's traces from the cost models, a test double of a GPU run
// (modeler/synth/gpt_synth.h).
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/graph/job.h"
#include "modeler/io/output_file.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/sim/replay_scales.h"
#include "modeler/synth/gpt_synth.h"
#include "modeler/synth/job_synth.h"
#include "modeler/tools/commands.h"
#include "modeler/trace/trace_set.h"
#include "modeler/trace/window_stamp.h"

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
    "all of one job (--job picks one).\n"
    "\n"
    "`lumos-model synth gpt --help`: traces of a GPT training job from the cost models instead\n"
    "(a test double for a GPU run, not a measurement).";

constexpr const char kGptDescription[] =
    "A TEST DOUBLE FOR A GPU RUN, NOT A MEASUREMENT: writes the traces a Megatron-style GPT\n"
    "training job (PyTorch, tensor + data parallel, bf16, flash attention, Adam) would give\n"
    "with the Lumos agent, one DIR/gpt.rank<R>.pb.zst per rank (tp x dp ranks, job id\n"
    "gpt_synth, producer SYNTHETIC). Every iteration: zero-grad memset, per micro-batch a\n"
    "forward on the main thread and a backward on the autograd thread (TP all-reduces on the\n"
    "TP stream; in the last micro-batch, DP gradient all-reduces per ~25 MB bucket on their\n"
    "own stream, overlapping it), Adam kernels, a cudaStreamSynchronize for the loss. GPU\n"
    "durations come from the cost models on the GPU (GEMM, kernel and collective models; their\n"
    "defaults, rooflines and NCCL's constants, unless --costs gives a fitted model) times a\n"
    "seeded lognormal jitter (3 %); host calls take 4-6 us with 1-3 us Python gaps. Existing\n"
    "files of the same names in DIR are replaced only once all ranks are written; other files\n"
    "are left alone.\n"
    "\n"
    "--set keys (defaults): layers=4, hidden=1024, ffn=4*hidden, heads=16, seq=1024, mbs=2,\n"
    "micro_batches=2, vocab=32000, tp=2, dp=2, pp=1 (only 1), iterations=3,\n"
    "gpu=H100-SXM5-80GB (a GPU of the built-in specs). heads must divide hidden; tp must\n"
    "divide heads, ffn and vocab.\n"
    "\n"
    "What an operator looks for, put in on purpose (after the jitter, so all else stays the\n"
    "same): --slow-rank R=F (a straggler: rank R's kernels and memsets take F times as long),\n"
    "--scale kernel:REGEX=F (matching kernels on every rank), --scale comm=F (collective\n"
    "transfers: a slow link). --window STAMP (YYYYMMDDTHHMMSSZ) writes the files as one\n"
    "periodic capture window starting that second, as the agent does (header and trailer\n"
    "CaptureWindow; put them in DIR/<job>/<STAMP>/ for `lumos-model summarize`).";

constexpr const char kGptExitStatus[] =
    "exit status: 0 written; 1 the cost model cannot be read, or nothing could be written;\n"
    "2 bad arguments (an unknown key, a value that is not a whole number, sizes that do not\n"
    "divide, pp other than 1, an unknown GPU).";

// "R=F": a rank and a finite factor >= 0.
Status ParseSlowRank(const std::string& text, GptConfig* config) {
  const size_t eq = text.find('=');
  char* end = nullptr;
  const std::string rank = text.substr(0, eq == std::string::npos ? text.size() : eq);
  const long long r = std::strtoll(rank.c_str(), &end, 10);
  const bool rank_ok = !rank.empty() && end != nullptr && *end == '\0' && r >= 0 && r < INT32_MAX;
  double factor = -1;
  if (eq != std::string::npos && eq + 1 < text.size()) {
    const std::string f = text.substr(eq + 1);
    factor = std::strtod(f.c_str(), &end);
    if (end == nullptr || *end != '\0') factor = -1;
  }
  if (!rank_ok || !std::isfinite(factor) || factor < 0) {
    return ErrorStatus("--slow-rank '%s': expected R=F (a rank and a factor >= 0, e.g. 3=1.5)",
                       text.c_str());
  }
  config->slow_rank = r;
  config->slow_rank_factor = factor;
  return Status::Ok();
}

int RunSynthGpt(const Args& args) {
  std::string out_dir, settings, costs_path, window, slow_rank;
  std::vector<std::string> scales;
  bool no_nvtx = false, forward_only = false, costs_given = false;
  GptConfig config;
  bool force = false;
  cli::ArgParser parser("lumos-model synth gpt",
                        "-o DIR [--set K=V,...] [--seed N] [--no-nvtx] [--forward-only] "
                        "[--costs MODEL.json] "
                        "[--window STAMP] [--slow-rank R=F] [--scale SPEC]...");
  parser.Description(kGptDescription)
      .String("-o, --output", "DIR", "the directory to write (created if missing)", &out_dir)
      .Required()
      .String("--set", "K=V,...", "model, parallelism and GPU settings (see above)", &settings)
      .Int<uint64_t>("--seed", "N", "seed of the jitter (default 1)", 0, INT64_MAX, &config.seed)
      .Flag("--force", io::kForceHelp, &force)
      .Flag("--no-nvtx", "no NVTX ranges (only the ProfilerStep#N ranges remain)", &no_nvtx)
      .Flag("--forward-only",
            "forwards only (a forward benchmark's or inference's profile): no backward, "
            "optimizer or gradient reduction",
            &forward_only)
      .String("--costs", "MODEL.json", "a `lumos-model costs fit` model to take durations from",
              &costs_path)
      .Given(&costs_given)
      .String("--window", "STAMP",
              "write one periodic capture window starting at STAMP (YYYYMMDDTHHMMSSZ, UTC)",
              &window)
      .Check([&config](const std::string& text) {
        const std::optional<uint64_t> start = ParseWindowStamp(text);
        if (!start || *start == 0) {
          return ErrorStatus("--window '%s': expected a UTC stamp YYYYMMDDTHHMMSSZ after 1970",
                             text.c_str());
        }
        config.window_realtime_ns = *start;
        return Status::Ok();
      })
      .String("--slow-rank", "R=F", "rank R's kernels and memsets take F times as long", &slow_rank)
      .Check([&config](const std::string& text) { return ParseSlowRank(text, &config); })
      .Strings("--scale", "SPEC",
               "repeatable: kernel:REGEX=F (kernels matching REGEX take F times as long), "
               "comm=F (collective transfers)",
               &scales)
      .Check([&config](const std::string& spec) {
        StatusOr<ReplayScale> scale = ParseScale(spec);
        if (!scale.ok()) return scale.status();
        if (scale->kind == ReplayScale::Kind::kKernel) {
          config.kernel_scales.push_back({scale->pattern, scale->regex, scale->factor});
        } else if (scale->kind == ReplayScale::Kind::kComm) {
          config.comm_factor *= scale->factor;
        } else {
          return ErrorStatus("--scale '%s': synth gpt takes kernel:REGEX=F or comm=F",
                             spec.c_str());
        }
        return Status::Ok();
      })
      .Epilogue(kGptExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  config.nvtx = !no_nvtx;
  config.forward_only = forward_only;
  const models::SpecTable& specs = models::SpecTable::Builtin();
  if (Status s = ApplyGptSettings(settings, &config); !s.ok()) {
    return parser.UsageError(stderr, s.message());
  }
  if (Status s = CheckGptConfig(config, specs); !s.ok()) {
    return parser.UsageError(stderr, s.message());
  }
  cli::CommandOutcome outcome("lumos-model synth gpt", stdout, stderr);
  models::CostModel costs;
  if (costs_given) {
    auto read = models::ReadCostModel(costs_path);
    if (!read.ok()) return outcome.Fail(read.status());
    costs = std::move(read).value();
  }
  auto result = SynthesizeGpt(config, specs, std::move(costs), out_dir, force);
  if (!result.ok()) return outcome.Fail(result.status());
  std::printf("%s: %" PRIu64 " files, %" PRIu64
              " events, %.1f MB (synthetic: a test double, "
              "not a measurement)\n",
              out_dir.c_str(), result->files, result->events,
              static_cast<double>(result->bytes) / 1e6);
  return outcome.Finish();
}

constexpr const char kExitStatus[] =
    "exit status: 0 written from sound input; 1 an input is unreadable (skipped), has a damaged\n"
    "tail or no trailer (what could be read is still used; one line on stderr per file), or\n"
    "nothing could be built or written; 2 bad arguments.";

}  // namespace

int RunSynth(const Args& args) {
  if (!args.empty() && args[0] == "gpt") return RunSynthGpt(Args(args.begin() + 1, args.end()));
  std::vector<std::string> inputs;
  std::string out_dir, job_name;
  bool job_given = false;
  SynthOptions options;
  bool force = false;
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
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;

  cli::CommandOutcome outcome("lumos-model synth", stdout, stderr);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  auto paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());
  LoadOptions load;
  if (job_given) load.job_id = job_name;
  auto job = LoadJob(*paths, load);
  if (!job.ok()) return outcome.Fail(job.status());
  for (const std::string& problem : job->input_problems) outcome.InputProblem(problem);
  options.force = force;
  auto result = SynthesizeJob(*job, options, out_dir);
  if (!result.ok()) return outcome.Fail(result.status());
  std::printf("%s: %" PRIu64 " files, %" PRIu64 " events, %.1f MB\n", out_dir.c_str(),
              result->files, result->events, static_cast<double>(result->bytes) / 1e6);
  return outcome.Finish();
}

}  // namespace lumos::modeler
