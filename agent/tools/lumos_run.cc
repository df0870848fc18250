// lumos-run [-o DIR] [--] COMMAND [ARGS...]: runs COMMAND with liblumos_agent.so loaded.
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
#include <string>

#ifndef LUMOS_AGENT_BUILD_PATH
#define LUMOS_AGENT_BUILD_PATH ""
#endif

namespace {

constexpr char kAgentName[] = "liblumos_agent.so";

constexpr char kUsage[] =
    "usage: lumos-run [-o DIR] [--] COMMAND [ARGS...]\n"
    "Runs COMMAND with the Lumos agent (liblumos_agent.so) loaded and writes one trace per\n"
    "process, DIR/<job>.<host>.<pid>.rank<R>.pb.zst, readable with `lumos-model inspect`.\n"
    "  -o DIR      trace directory (created if missing; a relative one is taken from the\n"
    "              current directory; default: LUMOS_OUTPUT_DIR, else \".\")\n"
    "  -h, --help  this text\n"
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

// `dir` from the current directory. lumos-run resolves the trace directory before the job
// starts: the job may change directory first (a shell's `cd`, a launcher's working-directory
// option), and a relative name would then point elsewhere, or nowhere.
std::string Absolute(const std::string& dir) {
  if (dir[0] == '/') return dir;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return dir;
  return std::string(cwd) + "/" + dir;
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
      return 0;
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
    output_dir = Absolute(output_dir);
    MakeDirs(output_dir);
    setenv("LUMOS_OUTPUT_DIR", output_dir.c_str(), 1);
  } else if (const char* env_dir = getenv("LUMOS_OUTPUT_DIR");
             env_dir != nullptr && env_dir[0] != '\0' && env_dir[0] != '/') {
    setenv("LUMOS_OUTPUT_DIR", Absolute(env_dir).c_str(), 1);
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
