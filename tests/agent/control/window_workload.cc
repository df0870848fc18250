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
// WINDOW_WORKLOAD_LOCKSTEP=DIR: the ranks keep in step as a real job's collectives keep them
// (the fake NCCL's do no work and wait for nobody): at each all-reduce a rank writes its
// iteration to DIR/rank<R> and waits until every rank's file holds it (or the stop file, a
// SIGTERM or 30 s end the wait).
// WINDOW_WORKLOAD_MARKER_API names the NVTX call that marks each step (default A):
//   A            nvtxRangePushA("ProfilerStep#i") / nvtxRangePop
//   W            nvtxRangePushW(L"ProfilerStep#i") / nvtxRangePop
//   StartW       nvtxRangeStartW(L"ProfilerStep#i") / nvtxRangeEnd
//   ExUnicode    nvtxRangePushEx (NVTX_MESSAGE_TYPE_UNICODE) / nvtxRangePop
//   DomainExW    nvtxDomainRangePushEx (UNICODE) in a domain made by nvtxDomainCreateW /
//                nvtxDomainRangePop
//   RegisteredW  nvtxDomainRangePushEx of the string nvtxDomainRegisterStringW(L"ProfilerStep")
//                (registered once, so its steps are counted, not numbered) / nvtxDomainRangePop
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

enum class MarkerApi { kA, kW, kStartW, kExUnicode, kDomainExW, kRegisteredW };

// The step's marker range, opened by the API asked for; Close() ends it.
class StepMarker {
 public:
  explicit StepMarker(MarkerApi api) : api_(api) {
    if (api_ == MarkerApi::kDomainExW || api_ == MarkerApi::kRegisteredW) {
      domain_ = nvtxDomainCreateW(L"lumos-window-workload");
    }
    if (api_ == MarkerApi::kRegisteredW) {
      registered_ = nvtxDomainRegisterStringW(domain_, L"ProfilerStep");
    }
  }
  // The step's name, made before the timed Open().
  void Prepare(long step) {
    name_ = "ProfilerStep#" + std::to_string(step);
    wide_.assign(name_.begin(), name_.end());
    attributes_ = nvtxEventAttributes_t{};
    attributes_.version = NVTX_VERSION;
    attributes_.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes_.messageType = NVTX_MESSAGE_TYPE_UNICODE;
    attributes_.message.unicode = wide_.c_str();
    if (api_ == MarkerApi::kRegisteredW) {
      attributes_.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
      attributes_.message.registered = registered_;
    }
  }
  void Open() {
    switch (api_) {
      case MarkerApi::kA:
        nvtxRangePushA(name_.c_str());
        break;
      case MarkerApi::kW:
        nvtxRangePushW(wide_.c_str());
        break;
      case MarkerApi::kStartW:
        range_ = nvtxRangeStartW(wide_.c_str());
        break;
      case MarkerApi::kExUnicode:
        nvtxRangePushEx(&attributes_);
        break;
      case MarkerApi::kDomainExW:
      case MarkerApi::kRegisteredW:
        nvtxDomainRangePushEx(domain_, &attributes_);
        break;
    }
  }
  void Close() {
    switch (api_) {
      case MarkerApi::kStartW:
        nvtxRangeEnd(range_);
        break;
      case MarkerApi::kDomainExW:
      case MarkerApi::kRegisteredW:
        nvtxDomainRangePop(domain_);
        break;
      default:
        nvtxRangePop();
        break;
    }
  }

 private:
  MarkerApi api_;
  std::string name_;
  std::wstring wide_;
  nvtxEventAttributes_t attributes_{};
  nvtxDomainHandle_t domain_ = nullptr;
  nvtxStringHandle_t registered_ = nullptr;
  nvtxRangeId_t range_ = 0;
};

bool ParseMarkerApi(const char* text, MarkerApi* api) {
  const std::string name = text != nullptr ? text : "A";
  const struct {
    const char* name;
    MarkerApi api;
  } kApis[] = {{"A", MarkerApi::kA},
               {"W", MarkerApi::kW},
               {"StartW", MarkerApi::kStartW},
               {"ExUnicode", MarkerApi::kExUnicode},
               {"DomainExW", MarkerApi::kDomainExW},
               {"RegisteredW", MarkerApi::kRegisteredW}};
  for (const auto& known : kApis) {
    if (name == known.name) {
      *api = known.api;
      return true;
    }
  }
  return false;
}

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

// The iteration DIR/rank<R> holds; -1 when it holds none yet.
long ReadRankIteration(const std::string& dir, int rank) {
  std::FILE* f = std::fopen((dir + "/rank" + std::to_string(rank)).c_str(), "r");
  if (f == nullptr) return -1;
  long i = -1;
  if (std::fscanf(f, "%ld", &i) != 1) i = -1;
  std::fclose(f);
  return i;
}

// WINDOW_WORKLOAD_LOCKSTEP: this rank reached iteration i's all-reduce; wait for the others.
void Lockstep(const std::string& dir, int rank, int world, long i, const char* stop_file) {
  const std::string mine = dir + "/rank" + std::to_string(rank);
  std::FILE* f = std::fopen((mine + ".tmp").c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f, "%ld\n", i);
  std::fclose(f);
  std::rename((mine + ".tmp").c_str(), mine.c_str());  // Readers see a whole number.
  const int64_t give_up = NowNs() + 30'000'000'000;
  for (;;) {
    bool all = true;
    for (int r = 0; r < world && all; ++r) all = ReadRankIteration(dir, r) >= i;
    if (all || g_stop || NowNs() > give_up) return;
    if (stop_file != nullptr && access(stop_file, F_OK) == 0) return;
    timespec pause{0, 200'000};
    nanosleep(&pause, nullptr);
  }
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
  MarkerApi api = MarkerApi::kA;
  if (!ParseMarkerApi(std::getenv("WINDOW_WORKLOAD_MARKER_API"), &api)) {
    std::fprintf(stderr, "unknown WINDOW_WORKLOAD_MARKER_API\n");
    return 2;
  }
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
  const char* lockstep = std::getenv("WINDOW_WORKLOAD_LOCKSTEP");
  const int rank = EnvInt("RANK", 0), world = EnvInt("WORLD_SIZE", 1);
  float buffer[256] = {};
  StepMarker step_marker(api);
  int64_t max_marker = 0, max_call = 0, first_push = 0;
  long i = 0;
  for (; (steps == 0 || i < steps) && !g_stop; ++i) {
    if (stop_file != nullptr && access(stop_file, F_OK) == 0) break;
    step_marker.Prepare(i);
    int64_t t = NowNs();
    step_marker.Open();
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
    if (lockstep != nullptr) Lockstep(lockstep, rank, world, i, stop_file);
    SleepMs(step_ms - step_ms / 2);
    t = NowNs();
    step_marker.Close();
    max_call = std::max(max_call, NowNs() - t);
  }
  ncclCommDestroy(comm);
  std::printf("done %ld max_marker_push_ns=%lld max_call_ns=%lld first_iteration_ns=%lld\n", i,
              static_cast<long long>(max_marker), static_cast<long long>(max_call),
              static_cast<long long>(first_push));
  return 0;
}
