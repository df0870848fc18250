// A single-threaded NVTX program for the agent's lifecycle tests (lifecycle_test.cc). Its first
// NVTX call starts the agent under lumos-run; it behaves the same with and without the agent.
// Modes:
//   ranges N: N push/pop pairs with distinct pseudo-random 20-letter names (poorly
//     compressible: a trace that grows fast), then prints "done N".
//   resethand TERM|INT: installs a one-shot (SA_RESETHAND) handler, starts the agent, raises
//     the signal twice: the handler prints "handled" once, the second signal kills.
//   nodefer: installs an SA_NODEFER SIGTERM handler that raises SIGTERM once more from inside
//     itself, raises SIGTERM and prints "deepest N" (2: it nested, 1: it was deferred).
//   nested-during-flush: (under trace_write_shim.c's gate) installs an SA_NODEFER SIGTERM
//     handler, starts the agent and raises SIGTERM; a second thread waits until the flush's
//     write waits at the gate, notes the time and sends SIGTERM to the main thread (whose agent
//     handler still waits for that flush). The job's handler opens the gate at its first entry,
//     so the flush cannot end before it. Prints "nested handled after D ms, entries E, during
//     the flush F": D from that second signal to the handler's first entry, E the entries in
//     all (2), F whether the write still waited at the first entry (1).
//   siginfo: installs an SA_SIGINFO SIGTERM handler, raises SIGTERM and prints what the handler
//     saw: "siginfo signo=15 own_pid=1 context=1".
//   default INT|TERM: starts the agent and raises the signal with its default action (dies).
//   cuinit: what the CUDA driver does at cuInit (there is none here): dlopens
//     CUDA_INJECTION64_PATH and calls its InitializeInjection; prints "cuinit R" (its result).
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
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

int64_t MonotonicMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1'000'000;
}

pthread_t g_main_thread;
volatile sig_atomic_t g_entries = 0;
std::atomic<int64_t> g_first_entry_ms{0};
std::atomic<int64_t> g_second_signal_ms{0};
std::atomic<int> g_first_entry_during_flush{-1};
// trace_write_shim.c's gate (resolved before any signal).
int (*g_trace_write_waiting)() = nullptr;
void (*g_open_trace_writes)() = nullptr;

void OnSignalCountingEntries(int) {
  g_entries = g_entries + 1;
  int64_t none = 0;
  if (g_first_entry_ms.compare_exchange_strong(none, MonotonicMs())) {
    g_first_entry_during_flush.store(g_trace_write_waiting());
    g_open_trace_writes();
  }
}

void* SendSecondSignal(void*) {
  // Until the flush's write waits at the gate (60 s at most: then the handler gets no nested
  // signal, and the output says so).
  const timespec pause{0, 1'000'000};
  for (int i = 0; i < 60'000 && g_trace_write_waiting() == 0; ++i) nanosleep(&pause, nullptr);
  g_second_signal_ms.store(MonotonicMs());
  pthread_kill(g_main_thread, SIGTERM);
  return nullptr;
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

// `count` push/pop pairs with distinct pseudo-random 20-letter names.
void Ranges(long count) {
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
    Ranges(count);
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
  if (strcmp(mode, "nested-during-flush") == 0) {
    g_trace_write_waiting =
        reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "lumos_shim_trace_write_waiting"));
    g_open_trace_writes =
        reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "lumos_shim_open_trace_writes"));
    if (g_trace_write_waiting == nullptr || g_open_trace_writes == nullptr) {
      fprintf(stderr, "lifecycle_workload: nested-during-flush needs trace_write_shim\n");
      return 3;
    }
    Install(SIGTERM, OnSignalCountingEntries, SA_NODEFER);
    StartAgent();
    g_main_thread = pthread_self();
    pthread_t sender;
    if (pthread_create(&sender, nullptr, SendSecondSignal, nullptr) != 0) return 4;
    raise(SIGTERM);
    pthread_join(sender, nullptr);  // Its signal was handled before the join returns.
    printf("nested handled after %lld ms, entries %d, during the flush %d\n",
           static_cast<long long>(g_first_entry_ms.load() - g_second_signal_ms.load()),
           static_cast<int>(g_entries), g_first_entry_during_flush.load());
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
