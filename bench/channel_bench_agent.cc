#include "bench/channel_bench_agent.h"

#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>
#include <vector>

#include "agent/core/fast_clock.h"
#include "agent/core/thread_rings.h"
#include "agent/runtime/agent_runtime.h"

namespace lumos::bench {
namespace {

std::string& OutputDir() {
  static std::string dir;
  return dir;
}

// Runs after the agent's own atexit Stop() (registered later, so it runs first): the trace is
// closed by then.
void RemoveOutputDir() {
  std::error_code ignored;
  if (!OutputDir().empty()) std::filesystem::remove_all(OutputDir(), ignored);
}

bool StartOnce() {
  const char* tmp = getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): before any thread.
  std::string pattern =
      std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/lumos_channels_bench_XXXXXX";
  std::vector<char> path(pattern.begin(), pattern.end());
  path.push_back('\0');
  if (mkdtemp(path.data()) == nullptr) {
    std::perror("mkdtemp");
    return false;
  }
  OutputDir() = path.data();
  std::atexit(RemoveOutputDir);
  // The agent reads its configuration once, at the first Start(): every channel these
  // benchmarks drive in-process with the agent's rings. The CUPTI channels are not started
  // through the agent (there is no CUDA driver here); their handlers are driven directly.
  setenv("LUMOS_OUTPUT_DIR", OutputDir().c_str(), 1);
  setenv("LUMOS_CHANNELS", "nvtx,nccl_plugin,nccl_wrappers,cublas", 1);
  setenv("LUMOS_LOG_LEVEL", "warn", 1);
  // The trace is thrown away; a cap keeps long runs from filling the disk (past it the writer
  // counts the events as lost instead of writing them, which the hot path never sees).
  setenv("LUMOS_MAX_FILE_BYTES", "256M", 1);
#ifdef LUMOS_BENCH_AGENT_MODE
  // The dormant benchmarks: a windowed agent between windows (no window is ever requested).
  setenv("LUMOS_MODE", LUMOS_BENCH_AGENT_MODE, 1);
#endif
  // The fake libnccl would otherwise load a profiler plugin at communicator init.
  unsetenv("NCCL_PROFILER_PLUGIN");
  agent::Agent& agent = agent::Agent::Get();
  agent.LoadConfig();
  if (!agent.Start()) return false;
  // The hot path reads the TSC once the writer's first refinement is published (~10 ms); wait
  // for it so the first benchmark does not time clock_gettime instead. Bounded: without an
  // invariant TSC (or with LUMOS_CLOCK=monotonic) it never comes.
  for (int i = 0; i < 200 && !agent::FastClock::Get().running(); ++i) {
    const timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
  }
  return true;
}

}  // namespace

bool StartChannelAgent() {
  static std::once_flag once;
  static bool started = false;
  std::call_once(once, [] { started = StartOnce(); });
  return started;
}

void DrainAgentRings() { agent::Agent::Get().FlushFromSignal(/*finish=*/false, 5'000'000'000); }

uint64_t AgentRingCapacity() {
  agent::ThreadRings* rings = agent::Agent::Get().rings();
  return rings != nullptr ? rings->CurrentThreadRing()->capacity() : 0;
}

uint64_t AgentRingDrops() {
  agent::ThreadRings* rings = agent::Agent::Get().rings();
  return rings != nullptr ? rings->CurrentThreadRing()->drops() : 0;
}

uint64_t ResidentBytesOf(const void* address, uint64_t bytes) {
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(address) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(address) + bytes;
  const uint64_t pages = (end - begin + page - 1) / page;
  std::vector<unsigned char> in_core(pages);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a page-aligned address of our own memory.
  if (mincore(reinterpret_cast<void*>(begin), pages * page, in_core.data()) != 0) return 0;
  uint64_t resident = 0;
  for (unsigned char flags : in_core) resident += (flags & 1) != 0 ? page : 0;
  return resident;
}

uint64_t HeapAllocatedBytes() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<uint64_t>(info.uordblks) + static_cast<uint64_t>(info.hblkhd);
}

}  // namespace lumos::bench
