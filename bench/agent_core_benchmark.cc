// Agent core benchmarks (issue 3; docs/performance.md "Agent core (issue 3)"):
// - the capture hot path: ns per record from a capture thread, counting everything a callback
//   does after CUPTI hands it the data: the enabled-flag check, the thread-local ring look-up,
//   filling a 64-byte record, and the push (target <= 50 ns median). Variants add the clock
//   reads a callback makes itself, an NVTX inline name copy, and a consumer thread draining at
//   the same time;
// - the writer side: ring drain alone, and drain + encode + zstd + file (events/s);
// - the fixed memory footprint, as counters.
#include <benchmark/benchmark.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/control/period_detector.h"
#include "agent/core/agent_config.h"
#include "agent/core/record.h"
#include "agent/core/record_encoding.h"
#include "agent/core/string_table.h"
#include "agent/core/thread_rings.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent {
namespace {

constexpr uint64_t kRingBytes = AgentConfig::kDefaultRingBytes;  // 16,384 records.
constexpr uint64_t kArenaBytes = AgentConfig::kDefaultArenaBytes;

std::unique_ptr<ThreadRings> MakeRings() {
  auto rings = ThreadRings::Create(kArenaBytes, kRingBytes);
  if (!rings.ok()) {
    std::fprintf(stderr, "%s\n", rings.status().message().c_str());
    std::abort();
  }
  return std::move(rings).value();
}

void DrainAndDiscard(ThreadRings& rings) {
  rings.DrainAll([](const ThreadRing&, const Record&, const Record*) {}, SIZE_MAX);
}

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// What a CUPTI API-exit callback does with the data it is handed: entry check, ring look-up,
// fill, push. noinline so the measured loop pays a real call, as a callback does.
__attribute__((noinline)) void OnApiExit(ThreadRings& rings, const EnabledFlag& flag,
                                         uint32_t correlation_id, uint64_t stream, int64_t start_ns,
                                         int64_t end_ns) {
  if (!flag.enabled()) return;
  ThreadRing* ring = rings.CurrentThreadRing();
  Record record{};
  record.kind = RecordKind::kApiCall;
  record.thread_id = ring->thread_id();
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  ApiCallPayload& api = record.payload.api_call;
  api.stream_id = stream;
  api.correlation_id = correlation_id;
  api.name_id = 1;
  api.cbid = 211;
  api.api_kind = static_cast<uint8_t>(schema::ApiKind::kLaunchKernel);
  api.domain = static_cast<uint8_t>(schema::ApiDomain::kRuntime);
  ring->Push(record);
}

// What an NVTX push/pop pair records at the pop: the range with its name copied inline.
__attribute__((noinline)) void OnNvtxPop(ThreadRings& rings, const EnabledFlag& flag,
                                         const char* message, uint16_t depth, int64_t start_ns,
                                         int64_t end_ns) {
  if (!flag.enabled()) return;
  ThreadRing* ring = rings.CurrentThreadRing();
  Record record{};
  record.kind = RecordKind::kNvtxRange;
  record.thread_id = ring->thread_id();
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  SetNvtxInlineName(&record, message);
  record.payload.nvtx.depth = depth;
  record.payload.nvtx.nvtx_kind = static_cast<uint8_t>(schema::NvtxKind::kPushPop);
  ring->Push(record);
}

// Runs `body(i)` once per iteration and empties the ring (untimed) whenever it is full, so
// every timed push succeeds.
template <typename Body>
void RunHotPath(benchmark::State& state, ThreadRings& rings, Body body) {
  const uint64_t capacity = rings.ring_capacity();
  uint64_t i = 0;
  uint64_t in_ring = 0;
  for (auto _ : state) {
    body(i++);
    if (++in_ring == capacity) {
      state.PauseTiming();
      DrainAndDiscard(rings);
      in_ring = 0;
      state.ResumeTiming();
    }
  }
  state.counters["drops"] = static_cast<double>(rings.CurrentThreadRing()->drops());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_HotPathApiCall(benchmark::State& state) {
  auto rings = MakeRings();
  EnabledFlag flag;
  flag.Set(true);
  uint64_t stream = 0x7f00'0000'1000;
  benchmark::DoNotOptimize(stream);
  RunHotPath(state, *rings, [&](uint64_t i) {
    const auto t = static_cast<int64_t>(i) * 1000;
    OnApiExit(*rings, flag, static_cast<uint32_t>(i), stream, t, t + 700);
  });
}
BENCHMARK(BM_HotPathApiCall);

// The same with the two clock reads (entry, exit) a callback makes when it times calls itself.
void BM_HotPathApiCallWithClock(benchmark::State& state) {
  auto rings = MakeRings();
  EnabledFlag flag;
  flag.Set(true);
  uint64_t stream = 0x7f00'0000'1000;
  benchmark::DoNotOptimize(stream);
  RunHotPath(state, *rings, [&](uint64_t i) {
    const int64_t start = MonotonicNs();
    OnApiExit(*rings, flag, static_cast<uint32_t>(i), stream, start, MonotonicNs());
  });
}
BENCHMARK(BM_HotPathApiCallWithClock);

void BM_HotPathNvtx(benchmark::State& state) {
  auto rings = MakeRings();
  EnabledFlag flag;
  flag.Set(true);
  const char* names[] = {"forward", "decoder.layers.17", "self_attention", "mlp",
                         "decoder.layers.0.self_attention.linear_qkv"};  // The last is cut.
  RunHotPath(state, *rings, [&](uint64_t i) {
    const auto t = static_cast<int64_t>(i) * 1000;
    OnNvtxPop(*rings, flag, names[i % 5], static_cast<uint16_t>(i & 3), t, t + 900);
  });
}
BENCHMARK(BM_HotPathNvtx);

// Disabled agent: the cost every callback pays while no capture window is open.
void BM_HotPathDisabled(benchmark::State& state) {
  auto rings = MakeRings();
  EnabledFlag flag;
  uint64_t i = 0;
  for (auto _ : state) {
    OnApiExit(*rings, flag, static_cast<uint32_t>(i), i, 0, 0);
    ++i;
  }
}
BENCHMARK(BM_HotPathDisabled);

// Producer and writer thread at the same time, so the ring's cache lines move between cores.
// Arg 0: the consumer spins (drains whenever anything is there: a cache-line transfer per push,
// the worst case); arg 1: it drains in batches and sleeps 20 us when it found fewer than 1024
// events, like the agent's writer thread, which wakes up periodically. Pushes that find the ring
// full are dropped and counted ("drops"), as in the agent.
void BM_HotPathWithConcurrentDrain(benchmark::State& state) {
  const bool batched = state.range(0) != 0;
  auto rings = MakeRings();
  EnabledFlag flag;
  flag.Set(true);
  rings->CurrentThreadRing();  // Register before the consumer starts iterating.
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      uint64_t n = rings->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, 4096);
      if (batched && n < 1024) {
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      } else if (n == 0) {
        std::this_thread::yield();
      }
    }
  });
  uint64_t i = 0;
  for (auto _ : state) {
    const auto t = static_cast<int64_t>(i) * 1000;
    OnApiExit(*rings, flag, static_cast<uint32_t>(i), i, t, t + 700);
    ++i;
  }
  stop.store(true);
  consumer.join();
  const auto drops = static_cast<double>(rings->CurrentThreadRing()->drops());
  state.counters["drops"] = drops;
  state.counters["dropped_fraction"] = drops / static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_HotPathWithConcurrentDrain)->ArgName("batched")->Arg(0)->Arg(1)->UseRealTime();

// Fills one ring with a 2:1 mix of single records and two-record events (untimed), drains it
// (timed). items = events.
void BM_Drain(benchmark::State& state) {
  auto rings = MakeRings();
  ThreadRing* ring = rings->CurrentThreadRing();
  uint64_t events = 0;
  uint64_t sum = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Record record{};
    record.kind = RecordKind::kKernel;
    for (uint64_t i = 0;; ++i) {
      record.start_ns = static_cast<int64_t>(i);
      if (!(i % 3 == 2 ? ring->Push(record, record) : ring->Push(record))) break;
    }
    state.ResumeTiming();
    events += rings->DrainAll(
        [&](const ThreadRing&, const Record& head, const Record* ext) {
          sum += static_cast<uint64_t>(head.start_ns) + (ext != nullptr ? 1 : 0);
        },
        SIZE_MAX);
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_Drain);

// The writer thread's loop: drain -> RecordEncoder -> TraceFileWriter (zstd 3, 1 MiB frames) ->
// file under $TMPDIR. Mix like the agent's host path: API calls 60%, kernels with extensions 30%,
// NVTX 7%, syncs 3%. items = events; bytes/event = file bytes per event.
void BM_DrainEncodeWrite(benchmark::State& state) {
  auto rings = MakeRings();
  ThreadRing* ring = rings->CurrentThreadRing();
  StringTable strings;
  const uint32_t api_name = strings.Intern("cudaLaunchKernel");
  uint32_t kernel_names[8];
  for (uint32_t k = 0; k < 8; ++k) {
    kernel_names[k] = strings.Intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize" +
                                     std::to_string(k) + "x128x64_warpgroupsize1x1x1");
  }
  const char* tmp = getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): benchmark set-up.
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/lumos_agent_core_" +
                           std::to_string(getpid()) + ".pb.zst";
  schema::HeaderInfo header;
  header.producer = schema::Producer::kSynthetic;
  auto writer = schema::TraceFileWriter::Create(path, header, schema::WriterOptions{});
  if (!writer.ok()) {
    state.SkipWithError(writer.status().message().c_str());
    return;
  }
  RecordEncoder encoder(&strings, writer->get());
  uint64_t seq = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (;; ++seq) {
      const auto t = static_cast<int64_t>(seq) * 1500;
      Record r{};
      r.start_ns = t;
      r.end_ns = t + 1200;
      r.thread_id = 4242;
      const uint64_t pick = seq % 100;
      bool pushed;
      if (pick < 60) {
        r.kind = RecordKind::kApiCall;
        r.payload.api_call = {.stream_id = 7,
                              .correlation_id = static_cast<uint32_t>(seq),
                              .name_id = api_name,
                              .cbid = 211,
                              .api_kind = 2,
                              .domain = 1};
        pushed = ring->Push(r);
      } else if (pick < 90) {
        r.kind = RecordKind::kKernel;
        r.thread_id = 0;
        r.payload.kernel = {.stream_id = 7,
                            .correlation_id = static_cast<uint32_t>(seq),
                            .name_id = kernel_names[seq % 8],
                            .grid_x = 132,
                            .grid_y = 1,
                            .grid_z = 1,
                            .block_x = 384,
                            .block_y = 1,
                            .block_z = 1,
                            .registers_per_thread = 168,
                            .dynamic_shared_memory_bytes = 232448};
        Record ext{};
        ext.payload.kernel_ext = {
            .context_id = 1, .cluster_x = 2, .cluster_y = 1, .cluster_z = 1, .launch_type = 1};
        pushed = ring->Push(r, ext);
      } else if (pick < 97) {
        r.kind = RecordKind::kNvtxRange;
        SetNvtxInlineName(&r, pick % 2 == 0 ? "forward" : "decoder.layers.17");
        r.payload.nvtx.nvtx_kind = 1;
        pushed = ring->Push(r);
      } else {
        r.kind = RecordKind::kSync;
        r.payload.sync = {
            .stream_id = 7, .correlation_id = static_cast<uint32_t>(seq), .sync_type = 3};
        pushed = ring->Push(r);
      }
      if (!pushed) break;
    }
    state.ResumeTiming();
    rings->DrainAll(
        [&](const ThreadRing&, const Record& head, const Record* ext) { encoder.Add(head, ext); },
        SIZE_MAX);
  }
  Status closed = (*writer)->Close(0);
  const schema::WriterStats& stats = (*writer)->stats();
  state.SetItemsProcessed(static_cast<int64_t>(encoder.events()));
  state.counters["bytes/event"] = static_cast<double>(stats.bytes_written) /
                                  static_cast<double>(encoder.events() ? encoder.events() : 1);
  if (!closed.ok()) state.SkipWithError(closed.message().c_str());
  std::remove(path.c_str());
}
BENCHMARK(BM_DrainEncodeWrite)->Unit(benchmark::kMillisecond);

uint64_t ResidentBytes() {
  long pages = 0;
  long resident = 0;
  FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  if (std::fscanf(statm, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(statm);
  return static_cast<uint64_t>(resident) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The agent's fixed memory with the default configuration: the arena (address space, reserved
// with MAP_NORESERVE) and what each capture thread commits when it registers.
void BM_Footprint(benchmark::State& state) {
  for (auto _ : state) {
    auto rings = MakeRings();
    const uint64_t before = ResidentBytes();
    std::thread([&] { rings->CurrentThreadRing(); }).join();
    const uint64_t after = ResidentBytes();
    state.counters["arena_bytes"] = static_cast<double>(rings->arena_bytes());
    state.counters["ring_bytes"] = static_cast<double>(rings->ring_bytes());
    state.counters["control_bytes"] = static_cast<double>(ThreadRings::kControlBytes);
    state.counters["sizeof_ThreadRing"] = static_cast<double>(sizeof(ThreadRing));
    const uint64_t threads =
        rings->arena_bytes() / (rings->ring_bytes() + ThreadRings::kControlBytes);
    state.counters["threads_per_arena"] = static_cast<double>(threads);
    state.counters["resident_per_thread"] = static_cast<double>(after - before);
    state.counters["sizeof_StringTable"] = static_cast<double>(sizeof(StringTable));
  }
}
BENCHMARK(BM_Footprint)->Iterations(1);

// The kernel-stream period detector (agent/control/period_detector.h) per launch, as a window
// armed in a job without NVTX markers pays it on every kernel launch: a transformer-like step
// (12 identical layers forward and backward, optimizer chunks) of 187 launches, locked on.
void BM_PeriodDetectorFeed(benchmark::State& state) {
  std::vector<uint64_t> step = {0x1000};
  for (int layer = 0; layer < 12; ++layer) {
    for (uint64_t k = 0; k < 6; ++k) step.push_back(0x2000 + k * 0x40);
  }
  step.push_back(0x4000);
  for (int layer = 0; layer < 12; ++layer) {
    for (uint64_t k = 0; k < 9; ++k) step.push_back(0x3000 + k * 0x40);
  }
  for (int chunk = 0; chunk < 5; ++chunk) step.push_back(0x6000);
  control::PeriodDetector detector;
  size_t i = 0;
  uint64_t boundaries = 0;
  for (auto _ : state) {
    boundaries += detector.Feed(step[i]) ? 1 : 0;
    i = i + 1 == step.size() ? 0 : i + 1;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
  state.counters["period"] = detector.period();
  state.counters["step"] = static_cast<double>(step.size());
  benchmark::DoNotOptimize(boundaries);
}
BENCHMARK(BM_PeriodDetectorFeed);

}  // namespace
}  // namespace lumos::agent
