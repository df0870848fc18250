// The NVTX channel's real handlers (docs/performance.md "Agent channels (issue 3)"), reached the
// way an application reaches them: nvtxRangePushA / nvtxRangePop through NVTX's own header
// implementation and its static injection (as tests/agent/nvtx/nvtx_static_injection_test.cc),
// which calls InitializeNvtxInjection and then jumps through the patched CORE table into the
// agent's handlers. Per push/pop pair: two CLOCK_MONOTONIC reads (push: start, pop: end), the
// inline name copy at push, the thread's push stack, and one 64-byte push into the agent's ring
// at pop. bench/agent_core_benchmark.cc's BM_HotPathNvtx times a stand-in body, not this.
// clang-format off
#include <cstdint>
// NVTX's static-injection pointer, defined below; declared first because NVTX's implementation
// refers to it, and NVTX_STATIC_INJECTION_IMPL makes NVTX skip its own weak definition.
extern "C" int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>
// clang-format on
#include <benchmark/benchmark.h>

#include <span>

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

// Range names as a training loop pushes them; the last is longer than the 24 inline bytes and
// is cut (the rare out-of-line path).
constexpr const char* kRangeNames[] = {"forward", "decoder.layers.17", "self_attention", "mlp",
                                       "decoder.layers.0.self_attention.linear_qkv"};

bool InjectionReady(benchmark::State& state) {
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return false;
  }
  // The first NVTX call runs the injection (NVTX calls it once per process).
  nvtxMarkA("lumos-bench-start");
  return true;
}

// One push/pop pair (one PUSH_POP record), nested one deep inside an open outer range as in a
// training step; items = pairs.
void BM_NvtxPushPop(benchmark::State& state) {
  if (!InjectionReady(state)) return;
  nvtxRangePushA("step");
  uint64_t i = 0;
  bench::RunWithRingRoom(state, 1, [&] {
    nvtxRangePushA(kRangeNames[i++ % 5]);
    nvtxRangePop();
  });
  nvtxRangePop();
}
BENCHMARK(BM_NvtxPushPop);

// The same with names that always fit inline (no cut), to show the cut path's share.
void BM_NvtxPushPopShortNames(benchmark::State& state) {
  if (!InjectionReady(state)) return;
  uint64_t i = 0;
  bench::RunWithRingRoom(state, 1, [&] {
    nvtxRangePushA(kRangeNames[i++ % 4]);
    nvtxRangePop();
  });
}
BENCHMARK(BM_NvtxPushPopShortNames);

// A start/end pair on one thread (one START_END record, two records with the range id).
void BM_NvtxStartEnd(benchmark::State& state) {
  if (!InjectionReady(state)) return;
  uint64_t i = 0;
  bench::RunWithRingRoom(state, 2, [&] { nvtxRangeEnd(nvtxRangeStartA(kRangeNames[i++ % 4])); });
}
BENCHMARK(BM_NvtxStartEnd);

// The NVTX channel's fixed memory, measured: the static start/end slot table (size from the code;
// resident pages by mincore after a full cycle of range ids has visited every slot, the steady
// state) and the push stack each pushing thread allocates once.
void BM_NvtxFootprint(benchmark::State& state) {
  if (!InjectionReady(state)) return;
  for (auto _ : state) {
    for (uint64_t i = 0; i < kStartEndSlots; ++i) {
      nvtxRangeEnd(nvtxRangeStartA("footprint"));
      if (i % 4096 == 4095) bench::DrainAgentRings();
    }
    bench::DrainAgentRings();
    const std::span<const std::byte> slots = internal::NvtxStartEndSlotMemory();
    state.counters["start_end_slots_bytes"] = static_cast<double>(slots.size());
    state.counters["start_end_slots_resident"] =
        static_cast<double>(bench::ResidentBytesOf(slots.data(), slots.size()));
    state.counters["push_stack_bytes_per_thread"] =
        static_cast<double>(internal::NvtxPushStackBytes());
  }
}
BENCHMARK(BM_NvtxFootprint)->Iterations(1);

}  // namespace
}  // namespace lumos::agent
