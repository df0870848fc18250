// `lumos-model costs fit IN... -o MODEL.json [--net NAME] [--specs FILE]` and `lumos-model
// costs predict MODEL.json QUERIES.csv [--gpu NAME] [--net NAME] [-o OUT.csv] [--specs FILE]`:
// the cost models (modeler/models/costs/cost_queries.h). Argument handling only.
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/io/csv_table.h"
#include "modeler/io/output_file.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_queries.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {
namespace {

constexpr const char kSynopsis[] =
    "fit IN... -o MODEL.json [--net NAME] [--specs FILE]\n"
    "       lumos-model costs predict MODEL.json QUERIES.csv [--gpu NAME] [--net NAME]\n"
    "                                 [-o OUT.csv] [--specs FILE]";

constexpr const char kDescription[] =
    "Cost models of GEMM kernels, other kernels (copies, memsets, elementwise, attention, ...)\n"
    "and NCCL collectives: fit them to measurements, then predict durations for other shapes,\n"
    "sizes, dtypes, rank counts, GPUs or networks, each with its source.\n"
    "\n"
    "  fit      IN are CSV tables with the columns of ../shared/data/costs/, Lumos traces\n"
    "           (*.pb.zst), or directories and patterns of them. What a table holds is read\n"
    "           from its header: GEMMs (gpu, dtype, m, n, k, latency_us; batch optional),\n"
    "           collectives (gpu, op, dtype, ranks, elements, bytes, latency_us; nodes\n"
    "           optional) or measured kernels (gpu, class, dtype, bytes, flops,\n"
    "           latency_us: each row a sample of its class on its GPU). A traced job's\n"
    "           collectives (op, bytes, dtype, algorithm, protocol, channels, the transfer\n"
    "           time the replay sees) calibrate the collective model on\n"
    "           the GPU its headers name, and its GEMM kernels with a shape (schema 2.2) the\n"
    "           GEMM model: one point per shape and dtype, the median of its calls (a split-K\n"
    "           GEMM's kernels summed); a shape in a table too is the trace's. Each job says\n"
    "           in one line what it calibrated. Its copies and memsets (by their bytes)\n"
    "           calibrate the non-GEMM kernel model per GPU and class (kernels carry no work\n"
    "           in Lumos traces yet). --net names the network between the\n"
    "           traced nodes (default ib400). Writes MODEL.json (versioned;\n"
    "           modeler/models/README.md), reused by predict.\n"
    "  predict  QUERIES.csv has the columns of one kind of table without latency_us; rows\n"
    "           without a gpu (no column, or an empty cell) run on --gpu. Collective rows whose\n"
    "           ranks exceed one NVLink domain (or that name nodes) span nodes over --net\n"
    "           (default ib400). Writes every query column plus predicted_us and source to\n"
    "           OUT.csv or stdout. GEMM sources: measured, interpolated, scaled from GPU DTYPE\n"
    "           measured|interpolated, surface fitted on GPU DTYPE, roofline only. Collective\n"
    "           sources: measured, interpolated, scaled from GPU OP fit, model only (GPU OP fit;\n"
    "           network|NVLS|protocol never measured), model only (NCCL's constants).\n"
    "           Kernel queries (a class column): class, dtype, bytes, flops[, gpu]; class is\n"
    "           attention, convolution, elementwise, norm, softmax, reduction, optimizer,\n"
    "           embedding, memset, other, or memcpy HtoD|DtoH|DtoD|PtoP|HtoH [pinned|pageable];\n"
    "           bytes and flops >= 0 (empty: 0, not both). Attention rows may give their shape\n"
    "           instead: batch, heads, seq_q, head_dim (seq_kv, kv_heads, causal, backward\n"
    "           optional: 0|1), bytes and flops empty. Sources: class fit on GPU (KEY; N\n"
    "           kernels), roofline only (no calibration of the class).\n"
    "\n"
    "GPUs and networks come from the built-in specs (modeler/models/hardware/specs/hardware.txt) "
    "and\n"
    "--specs FILE (same format: adds entries or replaces them by name); a GPU may be named as\n"
    "in the specs (H100-SXM5-80GB) or as CUDA names it in trace headers (NVIDIA H100 80GB HBM3).\n"
    "Networks: ib100, ib200, ib400, roce400, ib800, roce800, or numbers such as 400Gbps,3us\n"
    "(the line rate per GPU and the one-way latency).\n"
    "\n"
    "example:\n"
    "  lumos-model costs fit ../shared/data/costs -o costs.json\n"
    "  printf 'm,n,k,dtype\\n8192,8192,8192,bf16\\n' > gemm.csv\n"
    "  lumos-model costs predict costs.json gemm.csv --gpu H100-SXM5-80GB\n"
    "  printf 'op,dtype,ranks,bytes\\nall_reduce,bfloat16,64,1073741824\\n' > ar.csv\n"
    "  lumos-model costs predict costs.json ar.csv --gpu H100-SXM5-80GB --net ib400\n"
    "  lumos-model costs predict costs.json ar.csv --gpu B200 --net ib800 -o ar_b200.csv\n"
    "  lumos-model costs fit examples/dlrm-8rank -o dlrm.json\n"
    "  lumos-model costs fit run.pb.zst --attention batch=8,heads=16,seq_q=1024,head_dim=128 \\\n"
    "    -o run.json\n"
    "  printf 'class,dtype,bytes,flops\\nmemcpy HtoD pinned,fp32,8388608,\\n' > k.csv\n"
    "  lumos-model costs predict dlrm.json k.csv --gpu V100-SXM2-32GB";

constexpr const char kExitStatus[] =
    "exit status: 0 done; 1 an input could not be read, a row is malformed, names an unknown\n"
    "GPU or an impossible query (one line on stderr names the file and line; nothing is\n"
    "written), a trace was damaged or unreadable (fit: named, the rest is fitted and written),\n"
    "nothing could be fitted, or the output could not be written; 2 bad arguments.";

// --attention "batch=B,heads=H,seq_q=S,head_dim=D[,seq_kv=S,kv_heads=K,causal=0|1]" (causal by
// default: a GPT's training attention).
StatusOr<models::AttentionShape> ParseAttention(std::string_view text) {
  models::AttentionShape shape;
  shape.causal = true;
  bool batch = false, heads = false, seq = false, dim = false;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (eq == std::string_view::npos || ec != std::errc() || end != value.data() + value.size() ||
        v < 0 || v > (int64_t{1} << 31)) {
      return ErrorStatus("--attention: '%.*s' must be KEY=N (a whole number)",
                         static_cast<int>(item.size()), item.data());
    }
    if (key == "batch") {
      shape.batch = v, batch = true;
    } else if (key == "heads") {
      shape.heads = v, heads = true;
    } else if (key == "seq_q") {
      shape.seq_q = v, seq = true;
    } else if (key == "head_dim") {
      shape.head_dim = v, dim = true;
    } else if (key == "seq_kv") {
      shape.seq_kv = v;
    } else if (key == "kv_heads") {
      shape.kv_heads = v;
    } else if (key == "causal" && v <= 1) {
      shape.causal = v == 1;
    } else {
      return ErrorStatus(
          "--attention: '%.*s': keys batch, heads, seq_q, head_dim (required), seq_kv, kv_heads, "
          "causal (0|1)",
          static_cast<int>(item.size()), item.data());
    }
  }
  if (!batch || !heads || !seq || !dim) {
    return ErrorStatus("--attention: give batch, heads, seq_q and head_dim");
  }
  LUMOS_RETURN_IF_ERROR(models::AttentionWork(shape, models::DType::kBf16).status());
  return shape;
}

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

// Whether two paths name one file: the same absolute path after resolving what exists of it
// (neither need exist yet), or one existing file under two names. Never throws.
bool SamePath(const std::string& a, const std::string& b) {
  std::error_code ec_a, ec_b;
  const std::filesystem::path x =
      std::filesystem::weakly_canonical(std::filesystem::absolute(a, ec_a), ec_a);
  const std::filesystem::path y =
      std::filesystem::weakly_canonical(std::filesystem::absolute(b, ec_b), ec_b);
  if (!ec_a && !ec_b && x == y) return true;
  return a == b || io::SameFile(a, b);
}

// Writes `text` to `path` through modeler/io (temporary file + rename), or to stdout.
bool WriteOutput(const std::string& path, const std::string& text, bool force,
                 cli::CommandOutcome* outcome) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), outcome->out());
    return true;
  }
  auto file = io::OutputFile::Create(path, {.force = force});
  Status status = file.ok() ? (*file)->Write(text) : file.status();
  if (status.ok()) status = (*file)->Commit();
  if (!status.ok()) {
    outcome->OutputFailed(status.message());
    return false;
  }
  return true;
}

// --net: a network of the specs or numbers; a usage error otherwise.
std::optional<models::NetworkSpec> ResolveNet(const models::SpecTable& specs,
                                              const std::string& name, bool given,
                                              const cli::ArgParser& parser) {
  auto network = specs.ResolveNetwork(given ? name : models::kDefaultNetwork);
  if (!network.ok()) {
    parser.UsageError(stderr, "--net: " + network.status().message());
    return std::nullopt;
  }
  return *network;
}

// The traced GEMM points as a measured table (gpu, dtype, m, n, k, latency_us), GPU by GPU.
std::string TracedGemmTable(const std::vector<models::TraceCalibration>& jobs) {
  std::string csv = "gpu,dtype,m,n,k,latency_us\n";
  for (const models::TraceCalibration& job : jobs) {
    for (const models::TracedGemms& traced : job.gemms) {
      if (traced.gpu == nullptr) continue;
      for (const models::GemmPoint& p : traced.points) {
        char latency[32];
        std::snprintf(latency, sizeof(latency), "%.3f", static_cast<double>(p.latency_ns) / 1000.0);
        csv += traced.gpu->name + "," + std::string(models::DTypeName(traced.dtype)) + "," +
               std::to_string(p.shape.m) + "," + std::to_string(p.shape.n) + "," +
               std::to_string(p.shape.k) + "," + latency + "\n";
      }
    }
  }
  return csv;
}

int RunFit(const Args& args) {
  std::vector<std::string> inputs;
  std::string output, specs_file, net_name, gpu_name, attention_text, traced_output;
  bool specs_given = false, net_given = false, gpu_given = false, attention_given = false;
  bool force = false;
  cli::ArgParser parser("lumos-model costs fit",
                        "IN... -o MODEL.json [--net NAME] [--gpu NAME] [--attention SHAPE] "
                        "[--traced-gemms OUT.csv] [--specs FILE]");
  parser.Description(kDescription)
      .String("-o, --output", "MODEL.json", "the model file to write", &output)
      .Required()
      .String("--net", "NAME",
              "the network between the nodes of traced jobs (ib400, roce400, ib800, ... or "
              "numbers such as 400Gbps,3us; default ib400)",
              &net_name)
      .Given(&net_given)
      .String("--gpu", "NAME",
              "the GPU of traced jobs whose files name none (traces of an agent before schema "
              "2.4); a GPU the files name always wins",
              &gpu_name)
      .Given(&gpu_given)
      .String("--attention", "batch=B,heads=H,seq_q=S,head_dim=D[,seq_kv=,kv_heads=,causal=0|1]",
              "the attention problem (per GPU) the traced jobs' attention kernels solved: their "
              "main forward and backward kernels calibrate the attention class (causal unless "
              "causal=0)",
              &attention_text)
      .Given(&attention_given)
      .String("--traced-gemms", "OUT.csv",
              "also write the traced jobs' GEMM points (one per GPU, dtype and shape: the median "
              "of its calls) as a measured table, the columns of ../shared/data/costs, to compare "
              "with `costs predict` from tables alone",
              &traced_output)
      .String("--specs", "FILE",
              "more GPUs and networks (modeler/models/hardware/specs/hardware.txt)", &specs_file)
      .Given(&specs_given)
      .Flag("--force", io::kForceHelp, &force)
      .Positionals("IN...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  if (!traced_output.empty() && SamePath(output, traced_output)) {
    return parser.UsageError(stderr, "-o and --traced-gemms name the same file");
  }
  std::optional<models::AttentionShape> attention;
  if (attention_given) {
    StatusOr<models::AttentionShape> parsed = ParseAttention(attention_text);
    if (!parsed.ok()) return parser.UsageError(stderr, parsed.status().message());
    attention = *parsed;
  }
  cli::CommandOutcome outcome("lumos-model costs fit", stdout, stderr);
  std::optional<models::SpecTable> specs = LoadSpecs(specs_file, specs_given, &outcome);
  if (!specs) return outcome.exit_status();
  std::optional<models::NetworkSpec> network = ResolveNet(*specs, net_name, net_given, parser);
  if (!network) return cli::kExitUsage;
  if (gpu_given && specs->FindGpu(gpu_name) == nullptr) {
    return parser.UsageError(stderr, "--gpu " + models::UnknownGpu(gpu_name, *specs).message());
  }
  models::FitLog log;  // Arguments that name no trace, damaged traces: one line each, exit 1.
  auto expanded = models::ExpandCostInputs(inputs, &log.problems);
  if (!expanded.ok()) return outcome.Fail(expanded.status());
  if (gpu_given) expanded->unnamed_gpu = gpu_name;
  expanded->attention = attention;
  // No output is one of the inputs, named or found in a directory or pattern.
  for (const std::vector<std::string>* found : {&expanded->tables, &expanded->traces}) {
    for (const std::string& input : *found) {
      for (const std::string& out : {output, traced_output}) {
        if (!out.empty() && SamePath(input, out)) {
          std::string message = "the output ";
          message.append(out).append(" is also an input (").append(input).append(")");
          return parser.UsageError(stderr, message);
        }
      }
    }
  }
  auto model = models::FitCostInputs(*expanded, *specs, *network, &log);
  for (const std::string& line : log.problems) outcome.InputProblem(line);
  if (!model.ok()) return outcome.Fail(model.status());
  // Both outputs are made before either is put in place, so that a refused or unwritable one
  // leaves the other's destination as it was.
  std::vector<std::pair<std::string, std::string>> outputs = {
      {output, models::CostModelJson(*model)}};
  if (!traced_output.empty()) {
    std::vector<std::string> ignored;  // Already reported by the fit.
    auto traced = models::ReadTraceCalibrations(expanded->traces, *specs, &ignored,
                                                expanded->unnamed_gpu, nullptr);
    if (!traced.ok()) return outcome.Fail(traced.status());
    outputs.emplace_back(traced_output, TracedGemmTable(*traced));
  }
  std::vector<std::unique_ptr<io::OutputFile>> files;
  for (const auto& [path, text] : outputs) {
    auto file = io::OutputFile::Create(path, {.force = force});
    Status status = file.ok() ? (*file)->Write(text) : file.status();
    if (status.ok()) status = (*file)->Finish();
    if (!status.ok()) {
      outcome.OutputFailed(status.message());
      return outcome.Finish();
    }
    files.push_back(std::move(*file));
  }
  for (const std::unique_ptr<io::OutputFile>& file : files) {
    if (Status status = file->Commit(); !status.ok()) {
      outcome.OutputFailed(status.message());
      return outcome.Finish();
    }
  }
  size_t jobs = log.notes.size();
  std::fprintf(outcome.out(),
               "%s: %zu GEMM calibration(s), %zu collective calibration(s), %zu kernel "
               "calibration(s) from %zu table(s) and %zu traced job(s)\n",
               output.c_str(), model->gemm.calibrations().size(), model->collectives.size(),
               model->kernels.calibrations().size(), expanded->tables.size(), jobs);
  for (const std::string& note : log.notes) std::fprintf(outcome.out(), "  %s\n", note.c_str());
  for (const std::string& note : log.skipped) std::fprintf(outcome.out(), "  %s\n", note.c_str());
  std::fputs(models::DescribeCostModel(*model).c_str(), outcome.out());
  return outcome.Finish();
}

int RunPredict(const Args& args) {
  std::vector<std::string> positionals;
  std::string gpu_name, net_name, output, specs_file;
  bool gpu_given = false, net_given = false, specs_given = false;
  bool force = false;
  cli::ArgParser parser("lumos-model costs predict",
                        "MODEL.json QUERIES.csv [--gpu NAME] [--net NAME] [-o OUT.csv]\n"
                        "                                 [--specs FILE]");
  parser.Description(kDescription)
      .String("--gpu", "NAME", "the GPU of rows that name none (required without a gpu column)",
              &gpu_name)
      .Given(&gpu_given)
      .String("--net", "NAME",
              "the network between nodes, for collective queries across NVLink domains "
              "(ib400, roce400, ib800, ... or numbers such as 400Gbps,3us; default ib400)",
              &net_name)
      .Given(&net_given)
      .String("-o, --output", "OUT.csv", "where to write the predictions (default: stdout)",
              &output)
      .String("--specs", "FILE",
              "more GPUs and networks (modeler/models/hardware/specs/hardware.txt)", &specs_file)
      .Given(&specs_given)
      .Flag("--force", io::kForceHelp, &force)
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
  std::optional<models::NetworkSpec> network = ResolveNet(*specs, net_name, net_given, parser);
  if (!network) return cli::kExitUsage;
  auto model = models::ReadCostModel(positionals[0]);
  if (!model.ok()) return outcome.Fail(model.status());
  auto queries = io::ReadCsv(positionals[1]);
  if (!queries.ok()) return outcome.Fail(queries.status());
  if (gpu == nullptr && queries->Column("gpu") < 0) {
    return parser.UsageError(stderr, positionals[1] + " has no gpu column: give --gpu NAME");
  }
  auto predicted = models::PredictCostQueries(*model, *queries, gpu, *specs, &*network);
  if (!predicted.ok()) return outcome.Fail(predicted.status());
  WriteOutput(output, predicted->csv, force, &outcome);
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
      .String("--net", "NAME",
              "the network between nodes (ib100, ib200, ib400, roce400, ib800, roce800, or "
              "400Gbps,3us; default ib400): fit: of the traced jobs; predict: of collective "
              "queries across NVLink domains",
              &net_name)
      .String("--specs", "FILE",
              "more GPUs and networks (modeler/models/hardware/specs/hardware.txt)", &specs_file)
      .Section("predict only:")
      .String("--gpu", "NAME", "the GPU of rows that name none", &gpu_name)
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
