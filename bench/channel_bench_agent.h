// The real agent (Agent::Get()) as the channel benchmarks run it: started once per process with
// the NVTX and NCCL channels on, writing its trace into a private temporary folder that is
// removed at exit. The capture paths push into the agent's own rings; a benchmark that pushes
// faster than the writer thread drains (every LUMOS_FLUSH_INTERVAL_MS) makes room with
// DrainAgentRings(), untimed, so that every timed push lands in the ring, as it does in a job.
// Threading: the benchmark thread; the agent's writer thread runs beside it, as in a job.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <string>

namespace lumos::bench {

// Starts the agent on first use (later calls return the first result). False: it could not
// start (the reason is logged); the benchmark should SkipWithError.
bool StartChannelAgent();

// Asks the writer thread to drain every ring now and waits for it (not timed by the caller's
// benchmark when called between PauseTiming and ResumeTiming).
void DrainAgentRings();

// Records the calling thread's ring can take before the next drain.
uint64_t AgentRingCapacity();
// Events the calling thread's ring dropped so far (a full ring: the benchmark made no room).
uint64_t AgentRingDrops();

// Runs body() once per iteration, `records_per_call` records each, and makes room in the
// calling thread's ring (untimed) before it can overflow. Sets items = calls and the "drops"
// counter, which must be 0 for the numbers to mean a push that landed.
template <typename Body>
void RunWithRingRoom(benchmark::State& state, uint64_t records_per_call, Body body) {
  const uint64_t calls_per_drain = AgentRingCapacity() / records_per_call - 1;
  DrainAgentRings();  // What an earlier run (Google Benchmark runs a body several times) left.
  const uint64_t drops_before = AgentRingDrops();
  uint64_t since_drain = 0;
  for (auto _ : state) {
    body();
    if (++since_drain == calls_per_drain) {
      state.PauseTiming();
      DrainAgentRings();
      since_drain = 0;
      state.ResumeTiming();
    }
  }
  state.counters["drops"] = static_cast<double>(AgentRingDrops() - drops_before);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// Pages of [address, address + bytes) resident in memory now (mincore), in bytes.
uint64_t ResidentBytesOf(const void* address, uint64_t bytes);
// Bytes the process has allocated with malloc/new and not freed (mallinfo2: heap + mmap'd).
uint64_t HeapAllocatedBytes();

}  // namespace lumos::bench
