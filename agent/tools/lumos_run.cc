// lumos-run [-o DIR] [OPTIONS] [--] COMMAND [ARGS...]: runs COMMAND with liblumos_agent.so
// loaded. Each option sets the LUMOS_* variable it names (kOptions), checked here with the
// agent's own parser, so a bad value is a usage error before the job starts rather than a
// warning and a default in every process of the job.
// Sets LUMOS_OUTPUT_DIR (made absolute; created if missing), prepends the agent to LD_PRELOAD
// (keeping what is there), sets NVTX_INJECTION64_PATH, CUDA_INJECTION64_PATH (the CUDA driver then
// starts the CUPTI channel at cuInit) and NCCL_PROFILER_PLUGIN (a user's own profiler plugin is
// kept, with one warning: NCCL loads one), then execs COMMAND, so COMMAND's exit status is
// lumos-run's. The agent is found next to this binary, else at the build tree's path.
// Tracing problems never stop the job: a directory that cannot be created is left to the agent,
// which reports it in one line and runs the job untraced.
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "agent/core/agent_config.h"
#include "agent/core/env_lookup.h"
#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"

#ifndef LUMOS_AGENT_BUILD_PATH
#define LUMOS_AGENT_BUILD_PATH ""
#endif
#ifndef LUMOS_VERSION
#define LUMOS_VERSION "unknown"
#endif

namespace {

constexpr char kAgentName[] = "liblumos_agent.so";

// The options besides -o, each the LUMOS_* variable of the same name (agent/core/agent_config.h
// and the README say what each takes).
struct Option {
  const char* flag;
  const char* value;  // What the value is, for --help.
  const char* variable;
  const char* help;
};
constexpr Option kOptions[] = {
    {"--job-id", "ID", "LUMOS_JOB_ID", "job id, in file names and headers"},
    {"--channels", "LIST", "LUMOS_CHANNELS", "all, or a comma list of channels (README)"},
    {"--max-file-bytes", "SIZE", "LUMOS_MAX_FILE_BYTES", "stop writing at SIZE (0: no limit)"},
    {"--flush-interval-ms", "MS", "LUMOS_FLUSH_INTERVAL_MS", "how often the writer flushes"},
    {"--zstd-level", "N", "LUMOS_ZSTD_LEVEL", "compression level, 1..19"},
    {"--ring-bytes", "SIZE", "LUMOS_RING_BYTES", "per-thread record ring"},
    {"--cupti-buffer-bytes", "SIZE", "LUMOS_CUPTI_BUFFER_BYTES", "one CUPTI activity buffer"},
    {"--cupti-buffers", "N", "LUMOS_CUPTI_BUFFERS", "CUPTI activity buffers"},
    {"--nvtx-chain", "off|cupti|PATH", "LUMOS_NVTX_CHAIN", "pass NVTX calls on to another library"},
    {"--clock", "tsc|monotonic", "LUMOS_CLOCK", "how records are timed"},
    {"--log-level", "LEVEL", "LUMOS_LOG_LEVEL", "debug, info, warn or error"},
    {"--mode", "continuous|periodic|on-demand", "LUMOS_MODE", "the whole run, or windows of it"},
    {"--period-s", "S", "LUMOS_PERIOD_S", "periodic: seconds between window starts"},
    {"--jitter", "F", "LUMOS_JITTER", "periodic: random start shift, fraction of the period"},
    {"--window-iterations", "K", "LUMOS_WINDOW_ITERATIONS", "a window of K whole iterations"},
    {"--window-s", "S", "LUMOS_WINDOW_S", "a window of S seconds instead (0: iterations)"},
    {"--iteration-marker", "GLOB", "LUMOS_ITERATION_MARKER", "range name marking an iteration"},
    {"--max-disk", "SIZE", "LUMOS_MAX_DISK", "delete the oldest windows above SIZE (0: no quota)"},
};

constexpr char kDescription[] =
    "Runs COMMAND with the Lumos agent (liblumos_agent.so) loaded and writes one trace per\n"
    "process, DIR/<job>.<host>.<pid>.rank<R>.pb.zst, readable with `lumos-model inspect`.\n"
    "Sets LUMOS_OUTPUT_DIR, LD_PRELOAD (the agent first, existing entries kept),\n"
    "NVTX_INJECTION64_PATH (NVTX ranges), CUDA_INJECTION64_PATH (CUPTI: kernels, copies,\n"
    "syncs, CUDA events and API calls; the driver loads the agent at cuInit) and\n"
    "NCCL_PROFILER_PLUGIN (NCCL collectives; a value already set is kept, with a warning, and\n"
    "the LD_PRELOAD wrappers still record NCCL calls), all naming the same liblumos_agent.so,\n"
    "which keeps one state. Other LUMOS_* variables pass through to the agent.\n"
    "The options end at `--` or at COMMAND, whichever comes first.";

constexpr char kExitStatus[] =
    "exit status: COMMAND's; 2 bad arguments (nothing is run); 127 COMMAND or the agent not\n"
    "found, 126 COMMAND not executable; 1 this help or version could not be written.";

bool IsFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The agent's absolute path: next to this binary (installed layout), else the build tree.
std::string FindAgent() {
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir.resize(dir.rfind('/') + 1);
    if (IsFile(dir + kAgentName)) return dir + kAgentName;
    if (IsFile(dir + "../lib/" + kAgentName)) {
      char resolved[PATH_MAX] = {};
      if (realpath((dir + "../lib/" + kAgentName).c_str(), resolved) != nullptr) return resolved;
    }
  }
  if (IsFile(LUMOS_AGENT_BUILD_PATH)) return LUMOS_AGENT_BUILD_PATH;
  return "";
}

// The agent's warning about `variable`, if its value is bad ("" when it is good).
std::string ProblemWith(const char* variable) {
  const lumos::agent::ParsedAgentConfig parsed =
      lumos::agent::ParseAgentConfig(lumos::agent::ProcessEnvLookup());
  for (const std::string& warning : parsed.warnings) {
    // The agent goes on with a default; lumos-run stops instead, so that part is left out.
    if (warning.find(variable) != std::string::npos)
      return warning.substr(0, warning.find("; using"));
  }
  return "";
}

// mkdir -p; errors are ignored here (see the file comment).
void MakeDirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos == path.size() || path[pos] == '/') mkdir(path.substr(0, pos).c_str(), 0777);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string output_dir;
  std::vector<std::string> command;
  constexpr size_t kCount = std::size(kOptions);
  std::string values[kCount];
  bool given[kCount] = {};
  lumos::cli::ArgParser parser("lumos-run", "[-o DIR] [OPTIONS] [--] COMMAND [ARGS...]");
  parser.Description(kDescription)
      .Version(std::string("lumos-run ") + LUMOS_VERSION)
      .String("-o", "DIR",
              "trace directory (created if missing; a relative one is taken from the current "
              "directory; default: LUMOS_OUTPUT_DIR, else \".\")",
              &output_dir)
      .Section(
          "agent options (each sets the LUMOS_* variable of the same name, checked by the "
          "agent's parser before COMMAND runs; --opt VALUE or --opt=VALUE):");
  for (size_t i = 0; i < kCount; ++i) {
    parser.String(kOptions[i].flag, kOptions[i].value, kOptions[i].help, &values[i])
        .Given(&given[i]);
  }
  parser.Positionals("COMMAND [ARGS...]", "command", 1, &command)
      .StopAtFirstPositional()
      .Epilogue(kExitStatus);
  if (std::optional<int> exit =
          parser.ParseOrExit(std::vector<std::string>(argv + 1, argv + argc), stdout, stderr)) {
    return lumos::cli::CloseStdout("lumos-run", *exit);
  }
  for (size_t i = 0; i < kCount; ++i) {
    if (!given[i]) continue;
    setenv(kOptions[i].variable, values[i].c_str(), 1);
    if (const std::string problem = ProblemWith(kOptions[i].variable); !problem.empty()) {
      return parser.UsageError(stderr,
                               std::string(kOptions[i].flag) + " " + values[i] + ": " + problem);
    }
  }
  const std::string agent = FindAgent();
  if (agent.empty()) {
    std::fprintf(stderr, "lumos-run: %s not found next to lumos-run\n", kAgentName);
    return 127;
  }
  if (!output_dir.empty()) {
    // Resolved before the job starts: it may change directory first (a shell's `cd`, a
    // launcher's working-directory option).
    output_dir = lumos::agent::AbsoluteDirectory(output_dir);
    MakeDirs(output_dir);
    setenv("LUMOS_OUTPUT_DIR", output_dir.c_str(), 1);
  } else if (const char* env_dir = getenv("LUMOS_OUTPUT_DIR");
             env_dir != nullptr && env_dir[0] != '\0' && env_dir[0] != '/') {
    setenv("LUMOS_OUTPUT_DIR", lumos::agent::AbsoluteDirectory(env_dir).c_str(), 1);
  }
  const char* preload = getenv("LD_PRELOAD");
  std::string new_preload = agent;
  if (preload != nullptr && preload[0] != '\0') new_preload += std::string(":") + preload;
  setenv("LD_PRELOAD", new_preload.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", agent.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", agent.c_str(), 1);
  const char* plugin = getenv("NCCL_PROFILER_PLUGIN");
  if (plugin != nullptr && plugin[0] != '\0' && agent != plugin) {
    std::fprintf(stderr,
                 "lumos-run: NCCL_PROFILER_PLUGIN=%s kept (NCCL loads one profiler plugin); "
                 "NCCL calls are still recorded by the LD_PRELOAD wrappers\n",
                 plugin);
  } else {
    setenv("NCCL_PROFILER_PLUGIN", agent.c_str(), 1);
  }
  std::vector<char*> command_argv;
  command_argv.reserve(command.size() + 1);
  for (std::string& arg : command) command_argv.push_back(arg.data());
  command_argv.push_back(nullptr);
  execvp(command_argv[0], command_argv.data());
  std::fprintf(stderr, "lumos-run: cannot run %s: %s\n", command_argv[0], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
