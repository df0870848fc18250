// A single-threaded NVTX program for the agent's lifecycle tests (lifecycle_test.cc). Its first
// NVTX call starts the agent under lumos-run; it behaves the same with and without the agent.
// Modes:
//   ranges N: N push/pop pairs with distinct pseudo-random 20-letter names (poorly
//     compressible: a trace that grows fast), then prints "done N".
//   resethand TERM|INT: installs a one-shot (SA_RESETHAND) handler, starts the agent, raises
//     the signal twice: the handler prints "handled" once, the second signal kills.
//   nodefer: installs an SA_NODEFER SIGTERM handler that raises SIGTERM once more from inside
//     itself, raises SIGTERM and prints "deepest N" (2: it nested, 1: it was deferred).
//   siginfo: installs an SA_SIGINFO SIGTERM handler, raises SIGTERM and prints what the handler
//     saw: "siginfo signo=15 own_pid=1 context=1".
//   default INT|TERM: starts the agent and raises the signal with its default action (dies).
//   cuinit: what the CUDA driver does at cuInit (there is none here): dlopens
//     CUDA_INJECTION64_PATH and calls its InitializeInjection; prints "cuinit R" (its result).
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

volatile sig_atomic_t g_depth = 0;
volatile sig_atomic_t g_deepest = 0;
volatile sig_atomic_t g_raised_again = 0;

void Say(const char* text) { (void)!write(STDOUT_FILENO, text, strlen(text)); }

void OnSignal(int) { Say("handled\n"); }

void OnSignalNested(int signo) {
  g_depth = g_depth + 1;
  if (g_depth > g_deepest) g_deepest = g_depth;
  if (!g_raised_again) {
    g_raised_again = 1;
    raise(signo);  // With SA_NODEFER it runs now, nested; else once this handler returns.
  }
  g_depth = g_depth - 1;
}

void OnSignalWithInfo(int signo, siginfo_t* info, void* context) {
  char line[96];
  const int n =
      snprintf(line, sizeof(line), "siginfo signo=%d own_pid=%d context=%d\n", signo,
               info != nullptr && info->si_pid == getpid() ? 1 : 0, context != nullptr ? 1 : 0);
  (void)!write(STDOUT_FILENO, line, static_cast<size_t>(n));
}

int SignalNamed(const char* name) { return strcmp(name, "INT") == 0 ? SIGINT : SIGTERM; }

void Install(int signo, void (*handler)(int), int flags) {
  struct sigaction action {};
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  sigaction(signo, &action, nullptr);
}

void StartAgent() {
  nvtxRangePushA("start");
  nvtxRangePop();
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ranges";
  const char* arg = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "ranges") == 0) {
    const long count = argc > 2 ? atol(arg) : 1000;
    unsigned state = 12345;
    char name[21];
    for (long i = 0; i < count; ++i) {
      for (int k = 0; k < 20; ++k) {
        state = state * 1103515245u + 12345u;
        name[k] = static_cast<char>('a' + (state >> 16) % 26);
      }
      name[20] = '\0';
      nvtxRangePushA(name);
      nvtxRangePop();
    }
    printf("done %ld\n", count);
    return 0;
  }
  if (strcmp(mode, "resethand") == 0) {
    const int signo = SignalNamed(arg);
    Install(signo, OnSignal, SA_RESETHAND);
    StartAgent();
    raise(signo);
    raise(signo);  // The action is SIG_DFL again: this one kills.
    Say("survived\n");
    return 0;
  }
  if (strcmp(mode, "nodefer") == 0) {
    Install(SIGTERM, OnSignalNested, SA_NODEFER);
    StartAgent();
    raise(SIGTERM);
    printf("deepest %d\n", static_cast<int>(g_deepest));
    return 0;
  }
  if (strcmp(mode, "siginfo") == 0) {
    struct sigaction action {};
    action.sa_sigaction = OnSignalWithInfo;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    StartAgent();
    raise(SIGTERM);
    return 0;
  }
  if (strcmp(mode, "default") == 0) {
    StartAgent();
    raise(SignalNamed(arg));
    Say("survived\n");
    return 0;
  }
  if (strcmp(mode, "cuinit") == 0) {
    const char* path = getenv("CUDA_INJECTION64_PATH");
    void* library = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
    auto initialize = library != nullptr
                          ? reinterpret_cast<int (*)()>(dlsym(library, "InitializeInjection"))
                          : nullptr;
    if (initialize == nullptr) {
      fprintf(stderr, "lifecycle_workload: no InitializeInjection in %s\n", path ? path : "-");
      return 3;
    }
    printf("cuinit %d\n", initialize());
    return 0;
  }
  fprintf(stderr, "lifecycle_workload: unknown mode %s\n", mode);
  return 2;
}
