// NVTX push/pop through the shipped liblumos_agent.so, the way a job reaches it: NVTX's own
// header implementation dlopens NVTX_INJECTION64_PATH at the first NVTX call and the agent
// patches NVTX's tables (docs/performance.md "Agent channels (issue 3)"). Unlike
// lumos_agent_channels_benchmark, which links the channel code into the executable, this pays
// the shared object's costs too: general-dynamic TLS for the NVTX push stack and calls across
// the library boundary. A binary of its own: NVTX allows one injection per process.
//
// The agent in the .so is a separate instance this program cannot drain, so the rings are made
// large (LUMOS_RING_BYTES=64M: 1 M records) and the writer fast (LUMOS_FLUSH_INTERVAL_MS=10),
// and the loop pauses (untimed) after every kPairsPerBurst pairs long enough for the writer to
// empty the ring (it drains up to 65,536 records per ring per pass). Whether it did is in the
// trace: run with LUMOS_OUTPUT_DIR=DIR and check `lumos-model inspect DIR/*.pb.zst` for loss.
// NVTX_INJECTION64_PATH, when set, names another agent build to compare (a before/after).
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace lumos::bench {
namespace {

constexpr uint64_t kPairsPerBurst = 400'000;  // 40% of the ring.
constexpr auto kWriterCatchUp = std::chrono::milliseconds(150);

constexpr const char* kRangeNames[] = {"forward", "decoder.layers.17", "self_attention", "mlp",
                                       "decoder.layers.0.self_attention.linear_qkv"};

std::string& TemporaryOutputDir() {
  static std::string dir;
  return dir;
}

void RemoveTemporaryOutputDir() {
  std::error_code ignored;
  if (!TemporaryOutputDir().empty()) std::filesystem::remove_all(TemporaryOutputDir(), ignored);
}

// Points NVTX at the agent and configures it; once, before the first NVTX call.
bool InjectAgent() {
  static const bool injected = [] {
    const char* output = getenv("LUMOS_OUTPUT_DIR");  // NOLINT(concurrency-mt-unsafe): set-up.
    if (output == nullptr || output[0] == '\0') {
      const char* tmp = getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): set-up.
      std::string pattern =
          std::string(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp") + "/lumos_so_bench_XXXXXX";
      std::vector<char> path(pattern.begin(), pattern.end());
      path.push_back('\0');
      if (mkdtemp(path.data()) == nullptr) return false;
      TemporaryOutputDir() = path.data();
      std::atexit(RemoveTemporaryOutputDir);  // Runs after the agent's own atexit Stop().
      setenv("LUMOS_OUTPUT_DIR", path.data(), 1);
    }
    setenv("NVTX_INJECTION64_PATH", LUMOS_AGENT_SO_PATH, /*overwrite=*/0);  // Or another build's.
    setenv("LUMOS_CHANNELS", "nvtx", 1);
    setenv("LUMOS_RING_BYTES", "64M", 1);
    setenv("LUMOS_ARENA_BYTES", "256M", 1);
    setenv("LUMOS_FLUSH_INTERVAL_MS", "10", 1);
    setenv("LUMOS_MAX_FILE_BYTES", "256M", 1);
    setenv("LUMOS_LOG_LEVEL", "warn", 1);
    nvtxMarkA("lumos-bench-start");  // NVTX loads the injection here.
    return true;
  }();
  return injected;
}

// One push/pop pair (one PUSH_POP record) inside an open outer range; names as in
// lumos_agent_channels_benchmark's BM_NvtxPushPop, so the two compare.
void BM_NvtxPushPopAgentSo(benchmark::State& state) {
  if (!InjectAgent()) {
    state.SkipWithError("no temporary output folder");
    return;
  }
  std::this_thread::sleep_for(kWriterCatchUp);  // What an earlier run left.
  nvtxRangePushA("step");
  uint64_t i = 0;
  uint64_t in_burst = 0;
  for (auto _ : state) {
    nvtxRangePushA(kRangeNames[i++ % 5]);
    nvtxRangePop();
    if (++in_burst == kPairsPerBurst) {
      state.PauseTiming();
      std::this_thread::sleep_for(kWriterCatchUp);
      in_burst = 0;
      state.ResumeTiming();
    }
  }
  nvtxRangePop();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_NvtxPushPopAgentSo);

}  // namespace
}  // namespace lumos::bench
