// `lumos-model import kineto IN... -o OUT [--job-id ID]`: PyTorch profiler traces to Lumos
// traces. Argument handling only; the work is in modeler/import/kineto_import.h.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "modeler/import/kineto_import.h"
#include "modeler/tools/commands.h"

namespace lumos::modeler {
namespace {

constexpr const char kImportUsage[] =
    "usage: lumos-model import kineto IN... -o OUT [--job-id ID]\n"
    "\n"
    "Converts PyTorch profiler (Kineto) Chrome-trace JSON into Lumos traces (*.pb.zst).\n"
    "\n"
    "inputs (recognised by content, not by name):\n"
    "  IN.json, IN.json.gz     one trace (one rank)\n"
    "  IN.tar.gz, IN.tgz, IN.tar\n"
    "                          an archive with one .json or .json.gz per rank\n"
    "  PyTorch Execution Traces (\"nodes\"/\"schema\") are a different format: not accepted.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT        one trace in total: the file to write; several: a directory\n"
    "                          (created) that gets one <input stem>.pb.zst per trace\n"
    "  --job-id ID             job id of every output (default: the input's name, or the\n"
    "                          output directory's name when there are several inputs)\n"
    "  --zstd-level N          compression level, 1..19 (default 19; 54 MB of JSON takes ~2 s)\n"
    "  -h, --help              this help\n";

int Usage(const char* message) {
  std::fprintf(stderr, "lumos-model import: %s (see lumos-model import --help)\n", message);
  return 2;
}

// "--flag=value" or "--flag value"; false (with `i` unchanged) when args[i] is not `flag`.
bool TakeValue(const Args& args, size_t* i, const std::string& flag, std::string* value,
               bool* missing) {
  const std::string& arg = args[*i];
  if (arg == flag) {
    if (*i + 1 >= args.size()) {
      *missing = true;
      return true;
    }
    *value = args[++*i];
    return true;
  }
  if (arg.size() > flag.size() + 1 && arg.compare(0, flag.size(), flag) == 0 &&
      arg[flag.size()] == '=') {
    *value = arg.substr(flag.size() + 1);
    return true;
  }
  return false;
}

}  // namespace

int RunImport(const Args& args) {
  for (const std::string& arg : args) {
    if (arg == "--help" || arg == "-h") {
      std::fputs(kImportUsage, stdout);
      return 0;
    }
  }
  if (args.empty()) return Usage("missing the input format (kineto)");
  if (args[0] != "kineto") {
    return Usage(("unknown input format '" + args[0] + "' (supported: kineto)").c_str());
  }
  kineto::ImportRequest request;
  std::string level;
  for (size_t i = 1; i < args.size(); ++i) {
    bool missing = false;
    if (TakeValue(args, &i, "-o", &request.output, &missing) ||
        TakeValue(args, &i, "--output", &request.output, &missing) ||
        TakeValue(args, &i, "--job-id", &request.job_id, &missing) ||
        TakeValue(args, &i, "--zstd-level", &level, &missing)) {
      if (missing) return Usage(("option " + args[i] + " needs a value").c_str());
      continue;
    }
    if (args[i].size() > 1 && args[i][0] == '-') {
      return Usage(("unknown option '" + args[i] + "'").c_str());
    }
    request.inputs.push_back(args[i]);
  }
  if (request.inputs.empty()) return Usage("no input trace given");
  if (request.output.empty()) return Usage("no output given (-o OUT)");
  if (!level.empty()) {
    char* end = nullptr;
    long value = std::strtol(level.c_str(), &end, 10);
    if (*end != '\0' || value < 1 || value > 19) return Usage("--zstd-level must be 1..19");
    request.zstd_level = static_cast<int>(value);
  }

  auto imported = kineto::ImportKineto(request);
  if (!imported.ok()) {
    std::fprintf(stderr, "lumos-model import: %s\n", imported.status().message().c_str());
    return 1;
  }
  for (const kineto::ImportedTrace& trace : *imported) {
    const kineto::ConvertStats& s = trace.stats;
    std::printf(
        "%s: %llu bytes, %llu kernels, %llu API calls, %llu memcpy, %llu memset, %llu syncs, "
        "%llu host ranges, %llu collectives, %llu communicators, %llu threads",
        trace.output_path.c_str(), static_cast<unsigned long long>(s.output_bytes),
        static_cast<unsigned long long>(s.kernels), static_cast<unsigned long long>(s.api_calls),
        static_cast<unsigned long long>(s.memcpys), static_cast<unsigned long long>(s.memsets),
        static_cast<unsigned long long>(s.syncs), static_cast<unsigned long long>(s.host_ranges),
        static_cast<unsigned long long>(s.collectives),
        static_cast<unsigned long long>(s.communicators),
        static_cast<unsigned long long>(s.threads));
    if (s.skipped != 0) {
      std::printf(", %llu skipped", static_cast<unsigned long long>(s.skipped));
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace lumos::modeler
