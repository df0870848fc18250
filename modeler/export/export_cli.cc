#include "modeler/export/export_cli.h"

#include <sys/stat.h>

#include "modeler/export/chrome_trace_export.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler {
namespace {

constexpr const char kHelp[] =
    "usage: lumos-model export INPUT... -o OUT.json [--no-flows] [--quiet]\n"
    "\n"
    "Converts Lumos traces (*.pb.zst, one per rank) into one Chrome trace JSON file that\n"
    "opens in ui.perfetto.dev (or chrome://tracing).\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns\n"
    "        (quote them: 'run/rank*.pb.zst'). Each file becomes one process, in path order.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.json  where to write (required). Written to OUT.json.tmp and renamed,\n"
    "                         so OUT.json is never left half-written.\n"
    "      --no-flows         omit the flow arrows (launch -> kernel, event record -> stream\n"
    "                         wait, and between the ranks of one collective).\n"
    "  -q, --quiet            print nothing when all goes well.\n"
    "  -h, --help             show this help.\n"
    "\n"
    "layout: one process per rank (\"rank R \u00b7 host \u00b7 pid\"), rows for host threads,\n"
    "then GPU streams (\"stream S (device D)\"), \"NCCL\" and \"lumos\" (loss, capture windows).\n"
    "Ranges that overlap without nesting go to an \"(overlap N)\" row below their own.\n"
    "Times are µs from metadata.lumos.time_origin_ns, with ns precision.\n"
    "\n"
    "exit status: 0 ok; 1 failure, or a damaged input (its readable part is still exported and\n"
    "one line names the file and byte offset); 2 usage error.\n";

int Usage(std::FILE* err, const std::string& message) {
  std::fprintf(err, "lumos-model export: %s\n(run `lumos-model export --help` for usage)\n",
               message.c_str());
  return 2;
}

bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return a == b;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

int RunExportCommand(const std::vector<std::string>& args, std::FILE* out, std::FILE* err) {
  std::vector<std::string> inputs;
  std::string output;
  bool have_output = false, quiet = false;
  ExportOptions options;
  bool options_done = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_done || arg.empty() || arg[0] != '-' || arg == "-") {
      inputs.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_done = true;
    } else if (arg == "-h" || arg == "--help") {
      std::fputs(kHelp, out);
      return 0;
    } else if (arg == "-o" || arg == "--output" || arg.rfind("--output=", 0) == 0) {
      if (have_output) return Usage(err, "-o given twice");
      if (arg.rfind("--output=", 0) == 0) {
        output = arg.substr(9);
      } else if (i + 1 < args.size()) {
        output = args[++i];
      } else {
        return Usage(err, arg + " needs a file name");
      }
      if (output.empty()) return Usage(err, "the output file name is empty");
      have_output = true;
    } else if (arg == "--no-flows") {
      options.flows = false;
    } else if (arg == "-q" || arg == "--quiet") {
      quiet = true;
    } else {
      return Usage(err, "unknown option '" + arg + "'");
    }
  }
  if (inputs.empty()) return Usage(err, "no input traces");
  if (!have_output) return Usage(err, "no output file (-o OUT.json)");

  StatusOr<std::vector<std::string>> paths = ExpandTracePaths(inputs);
  if (!paths.ok()) {
    std::fprintf(err, "lumos-model export: %s\n", paths.status().message().c_str());
    return 1;
  }
  for (const std::string& path : *paths) {
    if (SameFile(path, output)) {
      return Usage(err, "the output " + output + " is also an input");
    }
  }

  ExportReport report;
  Status status = ExportChromeTraceFile(*paths, options, output, &report);
  if (!status.ok()) {
    std::fprintf(err, "lumos-model export: %s\n", status.message().c_str());
    return 1;
  }
  for (const ExportFileReport& file : report.files) {
    if (file.damage.ok()) continue;
    std::fprintf(err,
                 "lumos-model export: damaged input: %s (exported the %llu packets before it)\n",
                 file.damage.message().c_str(), static_cast<unsigned long long>(file.packets));
  }
  if (!quiet) {
    std::fprintf(out, "%s: %llu events, %llu flow arrows from %zu trace file%s (%.1f MB)\n",
                 output.c_str(), static_cast<unsigned long long>(report.events),
                 static_cast<unsigned long long>(report.flows), report.files.size(),
                 report.files.size() == 1 ? "" : "s", static_cast<double>(report.bytes) / 1e6);
  }
  return report.damaged() ? 1 : 0;
}

}  // namespace lumos::modeler
