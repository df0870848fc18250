// The NCCL channel's real code (docs/performance.md "Agent channels (issue 3)"):
// - the LD_PRELOAD wrappers (agent/nccl/nccl_wrappers.cc, compiled into this binary so that its
//   ncclAllReduce interposes on the fake libnccl.so.2 linked below, as the preloaded agent does
//   on the real one): ns per ncclAllReduce through the wrapper, against the fake's
//   pncclAllReduce called directly. The difference is what the wrapper adds: a relaxed channel
//   load, a thread-local reentrancy guard, two CLOCK_MONOTONIC reads, a lock-free CommTable
//   look-up, a seq counter and one two-record ring push. (A preloaded agent adds one more PLT
//   hop, the application's call into the .so.)
// - the profiler plugin (ncclProfiler_v5), driven like NCCL 2.28 drives it for one ungrouped
//   all-reduce on 2 channels: GroupApi, CollApi, Coll (stopped when enqueued), then per channel
//   KernelCh start, its stop timer, KernelCh stop; CollApi and GroupApi stop. 12 plugin calls,
//   6 clock reads (4 CLOCK_MONOTONIC, and a REALTIME/MONOTONIC pair to place the GPU start),
//   2 event-pool slots and one two-record push per collective. Real NCCL sends the KernelCh
//   events from its proxy thread; here they come from the same thread.
// Both push into the real agent's rings (bench/channel_bench_agent.h).
#include <benchmark/benchmark.h>
#include <nccl.h>
#include <time.h>

#include <cstring>
#include <memory>
#include <span>

#include "agent/nccl/comm_table.h"
#include "agent/nccl/nccl_channel.h"
#include "agent/nccl/nccl_profiler.h"
#include "bench/channel_bench_agent.h"
#include "schema/nccl_names.h"

namespace lumos::agent {
namespace {

namespace abi = nccl_abi;

// ---- the wrappers ----

// A communicator created through the wrapper, so that the CommTable knows it.
ncclComm_t WrappedComm() {
  static ncclComm_t comm = [] {
    ncclUniqueId id{};
    std::strncpy(id.internal, "lumos-bench", sizeof(id.internal));
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

// The fake's all-reduce called directly: the baseline the wrapper adds to.
void BM_NcclAllReduceDirect(benchmark::State& state) {
  if (!bench::StartChannelAgent() || WrappedComm() == nullptr) {
    state.SkipWithError("the agent or the fake communicator did not start");
    return;
  }
  ncclComm_t comm = WrappedComm();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        pncclAllReduce(nullptr, nullptr, 1 << 20, ncclBfloat16, ncclSum, comm, BenchStream()));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_NcclAllReduceDirect);

// The same call through the agent's wrapper (records one Collective: head + extension).
void BM_NcclAllReduceWrapped(benchmark::State& state) {
  if (!bench::StartChannelAgent() || WrappedComm() == nullptr) {
    state.SkipWithError("the agent or the fake communicator did not start");
    return;
  }
  ncclComm_t comm = WrappedComm();
  bench::RunWithRingRoom(state, 2, [&] {
    benchmark::DoNotOptimize(
        ncclAllReduce(nullptr, nullptr, 1 << 20, ncclBfloat16, ncclSum, comm, BenchStream()));
  });
}
BENCHMARK(BM_NcclAllReduceWrapped);

// ---- the profiler plugin ----

// NCCL's side of one ungrouped all-reduce on `channels` channels, as NCCL 2.28 reports it.
class FakeNcclCore {
 public:
  explicit FakeNcclCore(void* context) : context_(context) {}

  void AllReduce(uint64_t seq, uint8_t channels, uint64_t gpu_timer_ns) {
    abi::EventDescrV5 group{};
    group.type = abi::kProfileGroupApi;
    void* group_handle = Start(&group);

    abi::EventDescrV5 api{};
    api.type = abi::kProfileCollApi;
    api.parent = group_handle;
    api.coll_api = {"AllReduce", 1 << 20, "ncclBfloat16", 0, stream_, false};
    void* api_handle = Start(&api);

    abi::EventDescrV5 coll{};
    coll.type = abi::kProfileColl;
    coll.parent = api_handle;
    coll.coll = {seq,      "AllReduce", nullptr, nullptr, 1 << 20, 0, "ncclBfloat16",
                 channels, 8,           "Ring",  "LL",    nullptr};
    void* coll_handle = Start(&coll);
    ncclProfiler_v5.stop_event(coll_handle);  // Enqueued.

    for (uint8_t channel = 0; channel < channels; ++channel) {
      abi::EventDescrV5 kernel{};
      kernel.type = abi::kProfileKernelCh;
      kernel.parent = coll_handle;
      kernel.kernel_ch = {channel, gpu_timer_ns + 100 * channel};
      void* kernel_handle = Start(&kernel);
      abi::EventStateArgs stop{};
      stop.kernel_ch.timer = gpu_timer_ns + 100 * channel + 5000;
      ncclProfiler_v5.record_event_state(kernel_handle, abi::kStateKernelChStop, &stop);
      ncclProfiler_v5.stop_event(kernel_handle);
    }
    ncclProfiler_v5.stop_event(api_handle);
    ncclProfiler_v5.stop_event(group_handle);
  }

 private:
  void* Start(abi::EventDescrV5* descr) {
    void* handle = nullptr;
    ncclProfiler_v5.start_event(context_, &handle, descr);
    return handle;
  }

  void* context_;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): a handle the plugin only records.
  void* stream_ = reinterpret_cast<void*>(uintptr_t{0x7f00'0000'1000});
};

uint64_t RealtimeNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

// The part of a Coll start that maps NCCL's strings to schema enums (schema/nccl_names.cc: each
// table remembers a name by its address, else a case-insensitive scan of its API names): op,
// datatype, algorithm and protocol of the all-reduce above. "ncclBfloat16", the usual training
// datatype, is the 15th of 17 API names.
void BM_NcclCollNameLookups(benchmark::State& state) {
  const char* names[] = {"AllReduce", "ncclBfloat16", "Ring", "LL"};
  for (auto _ : state) {
    benchmark::DoNotOptimize(names);
    benchmark::DoNotOptimize(schema::CollectiveOpFromNcclName(names[0]));
    benchmark::DoNotOptimize(schema::DataTypeFromNcclName(names[1]));
    benchmark::DoNotOptimize(schema::AlgorithmFromNcclName(names[2]));
    benchmark::DoNotOptimize(schema::ProtocolFromNcclName(names[3]));
  }
}
BENCHMARK(BM_NcclCollNameLookups);

// Registered after the wrapper benchmarks: while a plugin context lives, the wrappers leave the
// collectives to the plugin. The context is finalized at the end, so the order only matters
// within one run.
void BM_NcclProfilerCollective(benchmark::State& state) {
  const auto channels = static_cast<uint8_t>(state.range(0));
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return;
  }
  void* context = nullptr;
  int mask = 0;
  if (ncclProfiler_v5.init(&context, 0xbe7c4, &mask, "bench", 1, 8, 3, nullptr) != ncclSuccess ||
      context == nullptr) {
    state.SkipWithError("the plugin did not create a context");
    return;
  }
  FakeNcclCore core(context);
  // The GPU's globaltimer is realtime-based; the plugin maps it to CLOCK_MONOTONIC.
  const uint64_t gpu_timer_ns = RealtimeNs();
  uint64_t seq = 0;
  bench::RunWithRingRoom(state, 2, [&] { core.AllReduce(seq++, channels, gpu_timer_ns); });
  ncclProfiler_v5.finalize(context);
  state.counters["plugin_calls"] = 6 + 3 * channels;
}
BENCHMARK(BM_NcclProfilerCollective)->ArgName("channels")->Arg(2)->Arg(8);

// ---- fixed memory ----

// The NCCL channel's fixed memory, measured: the plugin's static event pool and context table
// (sizes from the code; resident pages by mincore after enough collectives that the pool's
// cursor has visited every slot, the steady state), and the wrappers' communicator table (a
// CommTable is constructed whole, so all of it is resident once the wrappers run).
void BM_NcclFootprint(benchmark::State& state) {
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return;
  }
  for (auto _ : state) {
    void* context = nullptr;
    int mask = 0;
    if (ncclProfiler_v5.init(&context, 0xf007, &mask, "footprint", 1, 8, 3, nullptr) !=
            ncclSuccess ||
        context == nullptr) {
      state.SkipWithError("the plugin did not create a context");
      return;
    }
    FakeNcclCore core(context);
    const uint64_t gpu_timer_ns = RealtimeNs();
    for (uint64_t seq = 0; seq < kNcclEventPoolSize; ++seq) {
      core.AllReduce(seq, 2, gpu_timer_ns);
      if (seq % 4096 == 4095) bench::DrainAgentRings();
    }
    ncclProfiler_v5.finalize(context);
    bench::DrainAgentRings();
    const std::span<const std::byte> pool = internal::NcclEventPoolMemory();
    const std::span<const std::byte> contexts = internal::NcclContextTableMemory();
    state.counters["event_pool_bytes"] = static_cast<double>(pool.size());
    state.counters["event_pool_resident"] =
        static_cast<double>(bench::ResidentBytesOf(pool.data(), pool.size()));
    state.counters["context_table_bytes"] = static_cast<double>(contexts.size());
    state.counters["context_table_resident"] =
        static_cast<double>(bench::ResidentBytesOf(contexts.data(), contexts.size()));
    auto comms = std::make_unique<CommTable>();
    state.counters["comm_table_bytes"] = static_cast<double>(sizeof(CommTable));
    state.counters["comm_table_resident"] =
        static_cast<double>(bench::ResidentBytesOf(comms.get(), sizeof(CommTable)));
  }
}
BENCHMARK(BM_NcclFootprint)->Iterations(1);

}  // namespace
}  // namespace lumos::agent
