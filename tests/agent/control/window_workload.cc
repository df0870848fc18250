// A CPU-only "training loop" for the windowed-capture tests (window_capture_test.cc) and the
// window-start latency measurement (scripts/bench-windows.sh): linked to the fake libnccl.so.2
// (tests/agent/nccl/fake_nccl), NVTX ranges like PyTorch's profiler steps. Usage:
//   window_workload STEPS STEP_MS
// RANK / WORLD_SIZE from the environment (default 0 / 1): ncclCommInitRank on one shared id (the
// same communicator in every process), then STEPS iterations (0: until SIGTERM or until the file
// $WINDOW_WORKLOAD_STOP exists), each "ProfilerStep#i" { "forward" { sleep STEP_MS/2 },
// ncclAllReduce, sleep STEP_MS/2 }. Prints "ready" after the communicator, and at the end
// "done N max_marker_push_ns=P max_call_ns=C": the longest ProfilerStep push (where a window
// starts and ends: the job's own thread decides it) and the longest of all NVTX and NCCL calls,
// both from the second iteration on (the first NVTX call loads and wires the NVTX injection:
// a one-time cost of any NVTX tool, printed as first_iteration_ns=F).
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

volatile sig_atomic_t g_stop = 0;
void OnTerm(int) { g_stop = 1; }

int64_t NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

int EnvInt(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::atoi(text) : fallback;
}

void SleepMs(int ms) {
  timespec pause{ms / 1000, static_cast<long>(ms % 1000) * 1'000'000};
  nanosleep(&pause, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s STEPS STEP_MS\n", argv[0]);
    return 2;
  }
  const long steps = std::atol(argv[1]);
  const int step_ms = std::atoi(argv[2]);
  const char* stop_file = std::getenv("WINDOW_WORKLOAD_STOP");
  struct sigaction action {};
  action.sa_handler = &OnTerm;
  sigaction(SIGTERM, &action, nullptr);

  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::strcpy(id.internal, "lumos-window-workload");
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, EnvInt("WORLD_SIZE", 1), id, EnvInt("RANK", 0)) != ncclSuccess) {
    std::fprintf(stderr, "ncclCommInitRank failed\n");
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  float buffer[256] = {};
  int64_t max_marker = 0, max_call = 0, first_push = 0;
  long i = 0;
  for (; (steps == 0 || i < steps) && !g_stop; ++i) {
    if (stop_file != nullptr && access(stop_file, F_OK) == 0) break;
    const std::string marker = "ProfilerStep#" + std::to_string(i);
    int64_t t = NowNs();
    nvtxRangePushA(marker.c_str());
    int64_t d = NowNs() - t;
    if (i == 0) first_push = d;
    if (i == 0) d = 0;  // The injection's set-up, not a window's start.
    if (std::getenv("WINDOW_WORKLOAD_SLOW") != nullptr && d > 5000) {
      std::fprintf(stderr, "slow push %ld %lld\n", i, static_cast<long long>(d));
    }
    max_marker = std::max(max_marker, d);
    max_call = std::max(max_call, d);
    t = NowNs();
    nvtxRangePushA("forward");
    max_call = std::max(max_call, NowNs() - t);
    SleepMs(step_ms / 2);
    t = NowNs();
    nvtxRangePop();
    max_call = std::max(max_call, NowNs() - t);
    t = NowNs();
    if (ncclAllReduce(buffer, buffer, 256, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) {
      return 1;
    }
    max_call = std::max(max_call, NowNs() - t);
    SleepMs(step_ms - step_ms / 2);
    t = NowNs();
    nvtxRangePop();
    max_call = std::max(max_call, NowNs() - t);
  }
  ncclCommDestroy(comm);
  std::printf("done %ld max_marker_push_ns=%lld max_call_ns=%lld first_iteration_ns=%lld\n", i,
              static_cast<long long>(max_marker), static_cast<long long>(max_call),
              static_cast<long long>(first_push));
  return 0;
}
