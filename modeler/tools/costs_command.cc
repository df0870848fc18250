// `lumos-model costs fit IN... -o MODEL.json [--specs FILE]` and `lumos-model costs predict
// MODEL.json QUERIES.csv [--gpu NAME] [--net NAME] [-o OUT.csv] [--specs FILE]`: the cost
// models (modeler/models/cost_queries.h). Argument handling only.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/io/output_file.h"
#include "modeler/models/cost_queries.h"
#include "modeler/models/hardware_specs.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {
namespace {

constexpr const char kSynopsis[] =
    "fit IN... -o MODEL.json [--specs FILE]\n"
    "       lumos-model costs predict MODEL.json QUERIES.csv [--gpu NAME] [--net NAME]\n"
    "                                 [-o OUT.csv] [--specs FILE]";

constexpr const char kDescription[] =
    "Kernel cost models: fit them to measurements, then predict durations of kernels of\n"
    "other shapes, dtypes or GPUs, each with its source.\n"
    "\n"
    "  fit      IN are CSV tables with the columns of ../shared/data/costs/ (gpu, dtype, m, n,\n"
    "           k, latency_us for GEMMs; batch optional), or directories of them (every *.csv\n"
    "           inside). What a table holds is read from its header. Only GEMM tables are\n"
    "           fitted for now: Lumos traces carry no GEMM shapes yet (refused), and collective\n"
    "           tables are not part of this command yet (skipped, with a line saying so).\n"
    "           Writes MODEL.json (versioned; modeler/models/README.md), reused by predict.\n"
    "  predict  QUERIES.csv has the columns of the tables without latency_us; rows without a\n"
    "           gpu (no column, or an empty cell) run on --gpu. Writes every query column plus\n"
    "           predicted_us and source (measured, interpolated, scaled from GPU DTYPE\n"
    "           measured|interpolated, surface fitted on GPU DTYPE, roofline only) to OUT.csv\n"
    "           or stdout.\n"
    "\n"
    "GPUs and networks come from the built-in specs (modeler/models/specs/hardware.txt) and\n"
    "--specs FILE (same format: adds entries or replaces them by name); a GPU may be named as\n"
    "in the specs (H100-SXM5-80GB) or as CUDA names it in trace headers (NVIDIA H100 80GB HBM3).\n"
    "\n"
    "example:\n"
    "  lumos-model costs fit ../shared/data/costs/gemm_a100_bf16.csv -o a100.json\n"
    "  lumos-model costs predict a100.json queries.csv --gpu H100-SXM5-80GB -o predicted.csv";

constexpr const char kExitStatus[] =
    "exit status: 0 done; 1 an input could not be read, a row is malformed, names an unknown\n"
    "GPU or an impossible shape (one line on stderr names the file and line; nothing is\n"
    "written), a table was skipped (fit: the rest is fitted and written), or the output could\n"
    "not be written; 2 bad arguments.";

// --specs: the built-in table, plus the user's file.
std::optional<models::SpecTable> LoadSpecs(const std::string& file, bool given,
                                           cli::CommandOutcome* outcome) {
  models::SpecTable specs = models::SpecTable::Builtin();
  if (given) {
    Status status = specs.AddFile(file);
    if (!status.ok()) {
      outcome->Fail(status.message());
      return std::nullopt;
    }
  }
  return specs;
}

// Writes `text` to `path` through modeler/io (temporary file + rename), or to stdout.
bool WriteOutput(const std::string& path, const std::string& text, cli::CommandOutcome* outcome) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), outcome->out());
    return true;
  }
  auto file = io::OutputFile::Create(path);
  Status status = file.ok() ? (*file)->Write(text) : file.status();
  if (status.ok()) status = (*file)->Commit();
  if (!status.ok()) {
    outcome->OutputFailed(status.message());
    return false;
  }
  return true;
}

int RunFit(const Args& args) {
  std::vector<std::string> inputs;
  std::string output, specs_file;
  bool specs_given = false;
  cli::ArgParser parser("lumos-model costs fit", "IN... -o MODEL.json [--specs FILE]");
  parser.Description(kDescription)
      .String("-o, --output", "MODEL.json", "the model file to write", &output)
      .Required()
      .String("--specs", "FILE", "more GPUs and networks (modeler/models/specs/hardware.txt)",
              &specs_file)
      .Given(&specs_given)
      .Positionals("IN...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  for (const std::string& input : inputs) {
    if (io::SameFile(input, output)) {
      return parser.UsageError(stderr, "the output " + output + " is also an input");
    }
  }
  cli::CommandOutcome outcome("lumos-model costs fit", stdout, stderr);
  std::optional<models::SpecTable> specs = LoadSpecs(specs_file, specs_given, &outcome);
  if (!specs) return outcome.exit_status();
  auto paths = models::ExpandCostInputs(inputs);
  if (!paths.ok()) return outcome.Fail(paths.status().message());
  std::vector<std::string> skipped;  // Tables of a kind not fitted yet: named, exit 1.
  auto model = models::FitCostTables(*paths, *specs, &skipped);
  if (!model.ok()) return outcome.Fail(model.status().message());
  for (const std::string& line : skipped) outcome.InputProblem(line);
  if (!WriteOutput(output, models::CostModelJson(*model), &outcome)) return outcome.Finish();
  std::printf("%s: %zu GEMM calibration(s) from %zu table(s)\n%s", output.c_str(),
              model->gemm.calibrations().size(), model->inputs.size(),
              models::DescribeCostModel(*model).c_str());
  return outcome.Finish();
}

int RunPredict(const Args& args) {
  std::vector<std::string> positionals;
  std::string gpu_name, net_name, output, specs_file;
  bool gpu_given = false, net_given = false, specs_given = false;
  cli::ArgParser parser("lumos-model costs predict",
                        "MODEL.json QUERIES.csv [--gpu NAME] [--net NAME] [-o OUT.csv]\n"
                        "                                 [--specs FILE]");
  parser.Description(kDescription)
      .String("--gpu", "NAME", "the GPU of rows that name none (required without a gpu column)",
              &gpu_name)
      .Given(&gpu_given)
      .String("--net", "NAME",
              "the inter-node network (ib400, roce400, ib800, ... or numbers such as "
              "400Gbps,3us); checked now, used by collective queries once they are supported",
              &net_name)
      .Given(&net_given)
      .String("-o, --output", "OUT.csv", "where to write the predictions (default: stdout)",
              &output)
      .String("--specs", "FILE", "more GPUs and networks (modeler/models/specs/hardware.txt)",
              &specs_file)
      .Given(&specs_given)
      .Positionals("MODEL.json QUERIES.csv", "input", 2, &positionals)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  if (positionals.size() != 2) {
    return parser.UsageError(stderr, "give one MODEL.json and one QUERIES.csv");
  }
  for (const std::string& input : positionals) {
    if (!output.empty() && io::SameFile(input, output)) {
      return parser.UsageError(stderr, "the output " + output + " is also an input");
    }
  }
  cli::CommandOutcome outcome("lumos-model costs predict", stdout, stderr);
  std::optional<models::SpecTable> specs = LoadSpecs(specs_file, specs_given, &outcome);
  if (!specs) return outcome.exit_status();
  const models::GpuSpec* gpu = nullptr;
  if (gpu_given) {
    gpu = specs->FindGpu(gpu_name);
    if (gpu == nullptr) {
      return parser.UsageError(stderr, "--gpu: " + models::UnknownGpu(gpu_name, *specs).message());
    }
  }
  if (net_given) {
    auto network = specs->ResolveNetwork(net_name);
    if (!network.ok()) return parser.UsageError(stderr, "--net: " + network.status().message());
  }
  auto model = models::ReadCostModel(positionals[0]);
  if (!model.ok()) return outcome.Fail(model.status().message());
  auto queries = models::ReadCsv(positionals[1]);
  if (!queries.ok()) return outcome.Fail(queries.status().message());
  if (gpu == nullptr && queries->Column("gpu") < 0) {
    return parser.UsageError(stderr, positionals[1] + " has no gpu column: give --gpu NAME");
  }
  auto predicted = models::PredictCostQueries(*model, *queries, gpu, *specs);
  if (!predicted.ok()) return outcome.Fail(predicted.status().message());
  WriteOutput(output, predicted->csv, &outcome);
  return outcome.Finish();
}

}  // namespace

int RunCosts(const Args& args) {
  const std::string sub = args.empty() ? "" : args[0];
  const Args rest = args.empty() ? Args() : Args(args.begin() + 1, args.end());
  if (sub == "fit") return RunFit(rest);
  if (sub == "predict") return RunPredict(rest);
  // `costs --help` documents both: the options of either, under one usage.
  std::string fit_output, specs_file, gpu_name, net_name, predict_output;
  std::vector<std::string> none;
  cli::ArgParser parser("lumos-model costs", kSynopsis);
  parser.Description(kDescription)
      .String("-o, --output", "FILE", "fit: the model file (required); predict: OUT.csv",
              &fit_output)
      .String("--specs", "FILE", "more GPUs and networks (modeler/models/specs/hardware.txt)",
              &specs_file)
      .Section("predict only:")
      .String("--gpu", "NAME", "the GPU of rows that name none", &gpu_name)
      .String("--net", "NAME", "the inter-node network (ib400, ..., or 400Gbps,3us)", &net_name)
      .Positionals("fit|predict", "subcommand", 0, &none)
      .Epilogue(kExitStatus);
  if (sub == "--help" || sub == "-h") {
    std::fputs(parser.Help().c_str(), stdout);
    return cli::kExitOk;
  }
  if (sub.empty()) return parser.UsageError(stderr, "no subcommand given (fit, predict)");
  if (sub[0] == '-') {
    return parser.UsageError(stderr, "give the subcommand first (fit or predict), then '" + sub +
                                         "' and the other options");
  }
  return parser.UsageError(stderr, "unknown subcommand '" + sub + "' (fit, predict)");
}

}  // namespace lumos::modeler
