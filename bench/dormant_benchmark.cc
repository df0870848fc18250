// The agent between capture windows (LUMOS_MODE=on-demand, no window requested: docs/
// performance.md "Dormant agent (issue 15)"): what an NVTX push/pop and an NCCL call cost a job
// that keeps the agent loaded all the time. The same real handlers as nvtx_channel_benchmark.cc
// and nccl_channel_benchmark.cc (NVTX through its static injection, the NCCL wrappers compiled
// in over the fake libnccl.so.2); the agent runs, with its controller, and its gate is closed.
// Per dormant push: the controller pointer, the marker's first byte against the name's, the
// gate; per pop: the thread's stack pointer. Per NCCL call: the gate, then the real call.
// clang-format off
#include <cstdint>
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>
// clang-format on
#include <benchmark/benchmark.h>
#include <nccl.h>

#include <cstring>

#include "agent/nvtx/nvtx_injection.h"
#include "agent/runtime/agent_runtime.h"
#include "bench/channel_bench_agent.h"

extern "C" {
// NOLINTNEXTLINE(bugprone-reserved-identifier): NVTX's documented static-injection symbol.
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr =
    &lumos::agent::InitializeNvtxInjection;
}

namespace lumos::agent {
namespace {

constexpr const char* kRangeNames[] = {"forward", "decoder.layers.17", "self_attention", "mlp",
                                       "decoder.layers.0.self_attention.linear_qkv"};

bool DormantReady(benchmark::State& state) {
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return false;
  }
  nvtxMarkA("lumos-bench-start");  // The first NVTX call runs the injection.
  const control::WindowController* windows = Agent::Get().windows();
  if (windows == nullptr || windows->state() != control::WindowState::kDormant ||
      Agent::Get().enabled().enabled()) {
    state.SkipWithError("the agent is not a dormant windowed agent");
    return false;
  }
  return true;
}

// One push/pop pair of ordinary names (no marker): items = pairs (a call is half of one).
void BM_DormantNvtxPushPop(benchmark::State& state) {
  if (!DormantReady(state)) return;
  uint64_t i = 0;
  for (auto _ : state) {
    nvtxRangePushA(kRangeNames[i++ % 5]);
    nvtxRangePop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNvtxPushPop);

// A push/pop of a name whose first byte is the marker's ("ProfilerStep*"), but no marker: the
// glob runs (a "P..." range in every iteration of a real loop is rare; this is the bound).
void BM_DormantNvtxMarkerCandidate(benchmark::State& state) {
  if (!DormantReady(state)) return;
  for (auto _ : state) {
    nvtxRangePushA("Pipeline stage 3");
    nvtxRangePop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNvtxMarkerCandidate);

// The marker itself ("ProfilerStep#N", once per iteration): glob, index, the controller's
// boundary bookkeeping (a few relaxed atomics; no window is armed).
void BM_DormantNvtxIterationMarker(benchmark::State& state) {
  if (!DormantReady(state)) return;
  for (auto _ : state) {
    nvtxRangePushA("ProfilerStep#1234");
    nvtxRangePop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNvtxIterationMarker);

// The same pairs through the wide API (nvtxRangePushW): the marker's first character against
// the name's first wchar_t, the gate; no UTF-8 conversion while dormant.
void BM_DormantNvtxPushWPop(benchmark::State& state) {
  if (!DormantReady(state)) return;
  constexpr const wchar_t* kWideNames[] = {L"forward", L"decoder.layers.17", L"self_attention",
                                           L"mlp", L"decoder.layers.0.self_attention.linear_qkv"};
  uint64_t i = 0;
  for (auto _ : state) {
    nvtxRangePushW(kWideNames[i++ % 5]);
    nvtxRangePop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNvtxPushWPop);

ncclComm_t DormantComm() {
  static ncclComm_t comm = [] {
    ncclUniqueId id{};
    std::strncpy(id.internal, "lumos-bench-dormant", sizeof(id.internal));
    ncclComm_t created = nullptr;
    if (ncclCommInitRank(&created, 8, id, 3) != ncclSuccess) return ncclComm_t{nullptr};
    return created;
  }();
  return comm;
}

cudaStream_t BenchStream() {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle the fake never dereferences.
  return reinterpret_cast<cudaStream_t>(uintptr_t{0x7f00'0000'1000});
}

// The fake's all-reduce directly: the baseline.
void BM_DormantNcclAllReduceDirect(benchmark::State& state) {
  if (!DormantReady(state) || DormantComm() == nullptr) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pncclAllReduce(nullptr, nullptr, 1 << 20, ncclBfloat16, ncclSum,
                                            DormantComm(), BenchStream()));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNcclAllReduceDirect);

// Through the agent's wrapper, dormant: the difference to the direct call is the dormant cost.
void BM_DormantNcclAllReduceWrapped(benchmark::State& state) {
  if (!DormantReady(state) || DormantComm() == nullptr) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(ncclAllReduce(nullptr, nullptr, 1 << 20, ncclBfloat16, ncclSum,
                                           DormantComm(), BenchStream()));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_DormantNcclAllReduceWrapped);

}  // namespace
}  // namespace lumos::agent
