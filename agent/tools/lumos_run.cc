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
#include <map>
#include <string>
#include <string_view>

#include "agent/core/agent_config.h"
#include "agent/core/env_lookup.h"

#ifndef LUMOS_AGENT_BUILD_PATH
#define LUMOS_AGENT_BUILD_PATH ""
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
};

constexpr char kUsage[] =
    "usage: lumos-run [-o DIR] [OPTIONS] [--] COMMAND [ARGS...]\n"
    "Runs COMMAND with the Lumos agent (liblumos_agent.so) loaded and writes one trace per\n"
    "process, DIR/<job>.<host>.<pid>.rank<R>.pb.zst, readable with `lumos-model inspect`.\n"
    "  -o DIR      trace directory (created if missing; a relative one is taken from the\n"
    "              current directory; default: LUMOS_OUTPUT_DIR, else \".\")\n"
    "  -h, --help  this text\n"
    "Options (each sets the LUMOS_* variable of the same name, checked before COMMAND runs;\n"
    "--opt VALUE or --opt=VALUE):\n"
    "Sets LUMOS_OUTPUT_DIR, LD_PRELOAD (the agent first, existing entries kept),\n"
    "NVTX_INJECTION64_PATH (NVTX ranges), CUDA_INJECTION64_PATH (CUPTI: kernels, copies,\n"
    "syncs, CUDA events and API calls; the driver loads the agent at cuInit) and\n"
    "NCCL_PROFILER_PLUGIN (NCCL collectives; a value already set is kept, with a warning, and\n"
    "the LD_PRELOAD wrappers still record NCCL calls), all naming the same liblumos_agent.so,\n"
    "which keeps one state. Other LUMOS_* variables (LUMOS_CHANNELS, LUMOS_FLUSH_INTERVAL_MS,\n"
    "LUMOS_JOB_ID, ...) pass through to the agent.\n"
    "Exit status: COMMAND's; 2 for a usage error, 127 when COMMAND or the agent is not found.\n";

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

// The option `arg` names ("--zstd-level" or "--zstd-level=3"), or null.
const Option* FindOption(std::string_view arg) {
  const std::string_view flag = arg.substr(0, arg.find('='));
  for (const Option& option : kOptions) {
    if (flag == option.flag) return &option;
  }
  return nullptr;
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
  int index = 1;
  while (index < argc) {
    const char* arg = argv[index];
    if (std::strcmp(arg, "-h") == 0 || std::strcmp(arg, "--help") == 0) {
      std::fputs(kUsage, stdout);
      for (const Option& option : kOptions) {
        const std::string usage = std::string(option.flag) + " " + option.value;
        std::printf("  %-28s %s\n", usage.c_str(), option.help);
      }
      return 0;
    }
    if (const Option* option = FindOption(arg)) {
      const char* equals = std::strchr(arg, '=');
      const char* value = equals != nullptr ? equals + 1 : nullptr;
      if (value == nullptr && index + 1 < argc) value = argv[++index];
      if (value == nullptr || value[0] == '\0') {
        std::fprintf(stderr, "lumos-run: %s needs a value (see --help)\n", option->flag);
        return 2;
      }
      setenv(option->variable, value, 1);
      if (const std::string problem = ProblemWith(option->variable); !problem.empty()) {
        std::fprintf(stderr, "lumos-run: %s %s: %s\n", option->flag, value, problem.c_str());
        return 2;
      }
      ++index;
      continue;
    }
    if (std::strcmp(arg, "--") == 0) {
      ++index;
      break;
    }
    if (std::strcmp(arg, "-o") == 0) {
      if (index + 1 >= argc || argv[index + 1][0] == '\0') {
        std::fputs("lumos-run: -o needs a directory (see --help)\n", stderr);
        return 2;
      }
      output_dir = argv[index + 1];
      index += 2;
      continue;
    }
    if (arg[0] == '-') {
      std::fprintf(stderr, "lumos-run: unknown option %s (see --help)\n", arg);
      return 2;
    }
    break;
  }
  if (index >= argc) {
    std::fputs("lumos-run: no command given (see --help)\n", stderr);
    return 2;
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
  execvp(argv[index], argv + index);
  std::fprintf(stderr, "lumos-run: cannot run %s: %s\n", argv[index], std::strerror(errno));
  return errno == ENOENT ? 127 : 126;
}
