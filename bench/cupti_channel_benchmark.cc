// The CUPTI channel's real code (docs/performance.md "Agent channels (issue 3)"):
// - API callbacks: HandleApiCallback as CUPTI calls it, ENTER then EXIT with the same
//   correlationData slot, the call's params struct and return value (fabricated, as
//   tests/agent/cupti/api_callbacks_test.cc does), pushing into the real agent's rings. Per call:
//   two relaxed flag loads, two CLOCK_MONOTONIC reads (ENTER stores the start in the slot, EXIT
//   reads the end), the cbid table look-up, the params read and one 64-byte ring push.
// - Activity decoding on the writer thread: an 8 MiB buffer (LUMOS_CUPTI_BUFFER_BYTES' default)
//   of CUPTI 13.0 records in a training-step mix, walked by the REAL cuptiActivityGetNextRecord
//   (libcupti.so.13, loaded through the channel's own loader) and decoded by ActivityDecoder,
//   alone and into RecordEncoder + TraceFileWriter as the agent's writer thread does.
#include <benchmark/benchmark.h>
#include <cupti.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "agent/core/record_encoding.h"
#include "agent/core/string_table.h"
#include "agent/cupti/activity_buffer_pool.h"
#include "agent/cupti/activity_decoder.h"
#include "agent/cupti/api_callbacks.h"
#include "agent/cupti/cupti_api.h"
#include "agent/runtime/agent_runtime.h"
#include "agent/runtime/record_source.h"
#include "agent/runtime/writer_record_sink.h"
#include "bench/channel_bench_agent.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent::cupti {
namespace {

template <typename T>
T FakeHandle(uintptr_t value) {
  return reinterpret_cast<T>(value);  // NOLINT(performance-no-int-to-ptr): never dereferenced.
}

// ---- API callbacks ----

struct ApiCase {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const void* params;
};

const ApiCase& KernelLaunch() {
  static cudaLaunchKernel_v7000_params params = [] {
    cudaLaunchKernel_v7000_params p{};
    p.stream = FakeHandle<cudaStream_t>(0x7f00'0000'1000);
    return p;
  }();
  static const ApiCase kCase{CUPTI_CB_DOMAIN_RUNTIME_API,
                             CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &params};
  return kCase;
}

const ApiCase& DriverKernelLaunch() {
  static cuLaunchKernel_params params = [] {
    cuLaunchKernel_params p{};
    p.hStream = FakeHandle<CUstream>(0x7f00'0000'1000);
    return p;
  }();
  static const ApiCase kCase{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                             &params};
  return kCase;
}

const ApiCase& EventRecord() {
  static cudaEventRecord_v3020_params params = [] {
    cudaEventRecord_v3020_params p{};
    p.event = FakeHandle<cudaEvent_t>(0x7f00'0000'2000);
    p.stream = FakeHandle<cudaStream_t>(0x7f00'0000'1000);
    return p;
  }();
  static const ApiCase kCase{CUPTI_CB_DOMAIN_RUNTIME_API,
                             CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &params};
  return kCase;
}

const ApiCase& StreamWait() {
  static cudaStreamWaitEvent_v3020_params params = [] {
    cudaStreamWaitEvent_v3020_params p{};
    p.event = FakeHandle<cudaEvent_t>(0x7f00'0000'2000);
    p.stream = FakeHandle<cudaStream_t>(0x7f00'0000'3000);
    return p;
  }();
  static const ApiCase kCase{CUPTI_CB_DOMAIN_RUNTIME_API,
                             CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &params};
  return kCase;
}

// The callback table, built once with the agent's string table (as CuptiChannel::Start does).
const CallbackTable& Table() {
  static CallbackTable* table = [] {
    auto* built = new CallbackTable;
    built->Build(Agent::Get().strings());
    return built;
  }();
  return *table;
}

// One traced call as CUPTI makes it: ENTER, then EXIT with the same slot. One record.
void BM_CuptiApiCallback(benchmark::State& state, const ApiCase& (*api_case)()) {
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return;
  }
  Agent& agent = Agent::Get();
  CallbackContext context{&agent.enabled(), agent.rings(), &Table()};
  const ApiCase& call = api_case();
  int32_t return_code = 0;
  uint64_t slot = 0;
  CUpti_CallbackData data{};
  data.functionParams = call.params;
  data.functionReturnValue = &return_code;
  data.correlationData = &slot;
  uint32_t correlation_id = 0;
  bench::RunWithRingRoom(state, 1, [&] {
    data.correlationId = ++correlation_id;
    data.callbackSite = CUPTI_API_ENTER;
    HandleApiCallback(&context, call.domain, call.cbid, &data);
    data.callbackSite = CUPTI_API_EXIT;
    HandleApiCallback(&context, call.domain, call.cbid, &data);
  });
}
BENCHMARK_CAPTURE(BM_CuptiApiCallback, cudaLaunchKernel, &KernelLaunch);
BENCHMARK_CAPTURE(BM_CuptiApiCallback, cuLaunchKernel, &DriverKernelLaunch);
BENCHMARK_CAPTURE(BM_CuptiApiCallback, cudaEventRecord, &EventRecord);
BENCHMARK_CAPTURE(BM_CuptiApiCallback, cudaStreamWaitEvent, &StreamWait);

// The same pair while capture is off: what every traced CUDA call pays between capture windows.
void BM_CuptiApiCallbackDisabled(benchmark::State& state) {
  EnabledFlag off;
  CallbackContext context{&off, nullptr, &Table()};
  const ApiCase& call = KernelLaunch();
  int32_t return_code = 0;
  uint64_t slot = 0;
  CUpti_CallbackData data{};
  data.functionParams = call.params;
  data.functionReturnValue = &return_code;
  data.correlationData = &slot;
  for (auto _ : state) {
    data.callbackSite = CUPTI_API_ENTER;
    HandleApiCallback(&context, call.domain, call.cbid, &data);
    data.callbackSite = CUPTI_API_EXIT;
    HandleApiCallback(&context, call.domain, call.cbid, &data);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_CuptiApiCallbackDisabled);

// One MonotonicNowNs(), the clock the handlers read twice per call: the TSC mapping once the
// agent's writer calibrated it (agent/core/fast_clock.h), clock_gettime otherwise.
void BM_ClockMonotonic(benchmark::State& state) {
  if (!bench::StartChannelAgent()) {
    state.SkipWithError("the agent did not start");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(MonotonicNowNs());
  state.counters["tsc"] = FastClock::Get().running() ? 1 : 0;
}
BENCHMARK(BM_ClockMonotonic);

// One clock_gettime(CLOCK_MONOTONIC) through the vDSO: what MonotonicNowNs() cost before the
// fast clock, and what it costs with LUMOS_CLOCK=monotonic or without an invariant TSC.
void BM_ClockGettimeMonotonic(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ReadMonotonicNs());
}
BENCHMARK(BM_ClockGettimeMonotonic);

// The fast clock's error against clock_gettime while the agent's writer refines it: samples
// for about two seconds (MonotonicNowNs bracketed by two clock_gettime reads; a preempted
// sample widens the bracket, not the error). Counters: the largest and the 99.9th-percentile
// distance outside the bracket, in ns.
void BM_FastClockError(benchmark::State& state) {
  if (!bench::StartChannelAgent() || !FastClock::Get().running()) {
    state.SkipWithError("the fast clock is not running");
    return;
  }
  std::vector<int64_t> errors;
  for (auto _ : state) {
    const int64_t end = ReadMonotonicNs() + 2'000'000'000;
    while (ReadMonotonicNs() < end) {
      for (int i = 0; i < 100; ++i) {
        const int64_t before = ReadMonotonicNs();
        const int64_t fast = MonotonicNowNs();
        const int64_t after = ReadMonotonicNs();
        errors.push_back(fast < before ? before - fast : (fast > after ? fast - after : 0));
      }
      const timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
    }
  }
  std::sort(errors.begin(), errors.end());
  state.counters["max_error_ns"] = static_cast<double>(errors.back());
  state.counters["p999_error_ns"] = static_cast<double>(errors[errors.size() * 999 / 1000]);
  state.counters["samples"] = static_cast<double>(errors.size());
}
BENCHMARK(BM_FastClockError)->Iterations(1)->Unit(benchmark::kMillisecond);

// ---- activity decoding ----

constexpr int64_t kCuptiMinusMonotonicNs = 1'700'000'000'000'000'000;

// Kernel names as CUPTI hands them over (mangled; the decoder demangles each once).
constexpr const char* kKernelNames[] = {
    "_ZN7cutlass7Kernel2I71cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_"
    "align8EEvNT_6ParamsE",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIN3c108BFloat16ES4_S4_NS0_"
    "10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_",
    "_ZN2at6native43_GLOBAL__N__layer_norm_kernel_cu_layer_norm_kernelIN3c108BFloat16EfEEvlT0_PKT_"
    "S8_S8_PS6_S9_S9_",
    "_ZN5flash25flash_fwd_splitkv_kernelI23Flash_fwd_kernel_"
    "traitsILi128ELi64ELi128ELi4ELb0ELb0EN7cutlass"
    "10bfloat16_tE19Flash_kernel_traitsILi128ELi64ELi128ELi4ES3_"
    "EELb1ELb0ELb0ELb0ELb1ELb1ELb0ELb0EEEv"
    "16Flash_fwd_params",
    "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_"
    "13AUnaryFunctorIffb"
    "NS0_51_GLOBAL__N__fused_dropout_kernel_cu_maskEEEvRNS_18TensorIteratorBaseERKT_EUliE_EEviT1_",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_kernel",
};
constexpr int kKernelNameCount = sizeof(kKernelNames) / sizeof(kKernelNames[0]);

// Lays records out as CUPTI does: each at an 8-byte boundary, back to back.
class ActivityBuffer {
 public:
  explicit ActivityBuffer(size_t capacity_bytes) : bytes_(capacity_bytes) {}

  template <typename T>
  T* Add(CUpti_ActivityKind kind) {
    const size_t size = (sizeof(T) + 7) & ~size_t{7};
    if (used_ + size > bytes_.size()) return nullptr;
    auto* record = reinterpret_cast<T*>(bytes_.data() + used_);
    std::memset(static_cast<void*>(record), 0, size);
    record->kind = kind;
    used_ += size;
    ++records_;
    return record;
  }
  const uint8_t* data() const { return bytes_.data(); }
  size_t used() const { return used_; }
  uint64_t records() const { return records_; }

 private:
  std::vector<uint8_t> bytes_;  // operator new: aligned well beyond 8 bytes.
  size_t used_ = 0;
  uint64_t records_ = 0;
};

// A training step's GPU activity, repeated until the buffer is full: per cycle of 20 records,
// 12 kernels, 1 memcpy (host to device, pinned), 1 memset, 1 CUDA event record, 1 stream wait
// on that event (SYNCHRONIZATION, joined to the event) and 4 EXTERNAL_CORRELATION records (one
// per framework op of ~4 launches, as when the framework pushes external ids).
std::unique_ptr<ActivityBuffer> MixBuffer(size_t bytes) {
  auto buffer = std::make_unique<ActivityBuffer>(bytes);
  uint64_t t = static_cast<uint64_t>(kCuptiMinusMonotonicNs) + 1'000'000;
  uint32_t correlation = 1;
  uint64_t event_sync_id = 1;
  for (uint64_t cycle = 0;; ++cycle) {
    for (int op = 0; op < 4; ++op) {
      auto* x =
          buffer->Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
      if (x == nullptr) return buffer;
      x->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
      x->externalId = cycle * 4 + op + 1;
      x->correlationId = correlation + static_cast<uint32_t>(op) * 3;
    }
    for (int i = 0; i < 12; ++i) {
      auto* k = buffer->Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      if (k == nullptr) return buffer;
      k->start = t;
      k->end = t + 4000 + 700 * static_cast<uint64_t>(i);
      t = k->end + 300;
      k->deviceId = 0;
      k->contextId = 1;
      k->streamId = 7 + static_cast<uint32_t>(i % 2) * 6;
      k->gridX = 132;
      k->gridY = 1;
      k->gridZ = 1;
      k->blockX = 384;
      k->blockY = 1;
      k->blockZ = 1;
      k->registersPerThread = 168;
      k->dynamicSharedMemory = 232448;
      k->correlationId = correlation++;
      k->name = kKernelNames[(cycle * 12 + static_cast<uint64_t>(i)) % kKernelNameCount];
      k->clusterX = k->clusterY = k->clusterZ = 1;
      k->launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
    }
    auto* m = buffer->Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    if (m == nullptr) return buffer;
    m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m->srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    m->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m->bytes = 1 << 20;
    m->start = t;
    m->end = t + 40'000;
    t = m->end + 300;
    m->contextId = 1;
    m->streamId = 7;
    m->correlationId = correlation++;
    auto* s = buffer->Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    if (s == nullptr) return buffer;
    s->bytes = 4096;
    s->start = t;
    s->end = t + 1500;
    t = s->end + 300;
    s->contextId = 1;
    s->streamId = 7;
    s->correlationId = correlation++;
    s->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    auto* e = buffer->Add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
    if (e == nullptr) return buffer;
    e->contextId = 1;
    e->streamId = 7;
    e->eventId = 3;
    e->correlationId = correlation++;
    e->cudaEventSyncId = event_sync_id;
    e->deviceTimestamp = t;
    auto* w = buffer->Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    if (w == nullptr) return buffer;
    w->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
    w->start = t;
    w->end = t + 800;
    w->contextId = 1;
    w->streamId = 13;
    w->cudaEventId = 3;
    w->cudaEventSyncId = event_sync_id++;
    w->correlationId = correlation++;
  }
}

// Counts what it is handed (the decoding alone).
class CountingSink : public RecordSink {
 public:
  void Add(const Record& head, const Record* extension) override {
    events_ += 1;
    checksum_ += static_cast<uint64_t>(head.start_ns) + (extension != nullptr ? 1 : 0);
  }
  void AddLoss(schema::LossSource, uint64_t, int64_t, std::string_view) override {}
  StringTable& strings() override { return strings_; }
  uint64_t events() const { return events_; }
  uint64_t checksum() const { return checksum_; }

 private:
  StringTable strings_;
  uint64_t events_ = 0;
  uint64_t checksum_ = 0;
};

// The real libcupti's table; null (and the reason in `why`) when it cannot be loaded.
const CuptiApi* RealCupti(std::string* why) {
  static StatusOr<CuptiApi>* api = new StatusOr<CuptiApi>(LoadCuptiApi(""));
  if (!api->ok()) {
    *why = "libcupti.so.13 is needed: " + api->status().message();
    return nullptr;
  }
  return &api->value();
}

// Per iteration: one 8 MiB buffer through the decoder. Each pass moves the offset back by the
// buffer's time span, so the records' monotonic times keep going forward as in a job.
// items = events handed to the sink (kernels, copies, sets, syncs, CUDA events);
// "records/buffer" counts every activity record walked, external correlations included.
template <typename MakeSink>
void DecodeBuffers(benchmark::State& state, MakeSink make_sink) {
  std::string why;
  const CuptiApi* api = RealCupti(&why);
  if (api == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const std::unique_ptr<ActivityBuffer> buffer = MixBuffer(AgentConfig::kDefaultCuptiBufferBytes);
  auto sink = make_sink();
  ActivityDecoder decoder(api);
  int64_t offset_ns = kCuptiMinusMonotonicNs;
  for (auto _ : state) {
    decoder.Decode(buffer->data(), buffer->used(), offset_ns, *sink);
    offset_ns -= 1'000'000'000;
  }
  const DecodeStats& stats = decoder.stats();
  const uint64_t events =
      stats.kernels + stats.memcpys + stats.memsets + stats.syncs + stats.cuda_events;
  state.SetItemsProcessed(static_cast<int64_t>(events));
  state.SetBytesProcessed(static_cast<int64_t>(buffer->used() * state.iterations()));
  state.counters["records/buffer"] = static_cast<double>(buffer->records());
  state.counters["walk_errors"] = static_cast<double>(stats.walk_errors);
  state.counters["skipped"] = static_cast<double>(stats.skipped);
}

void BM_CuptiActivityDecode(benchmark::State& state) {
  DecodeBuffers(state, [] { return std::make_unique<CountingSink>(); });
}
BENCHMARK(BM_CuptiActivityDecode)->Unit(benchmark::kMillisecond);

// The writer thread's whole path for a completed buffer: decode -> RecordEncoder ->
// TraceFileWriter (zstd 3, 1 MiB frames) -> a file under $TMPDIR.
void BM_CuptiActivityDecodeEncodeWrite(benchmark::State& state) {
  const char* tmp = getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): benchmark set-up.
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/lumos_cupti_decode_" +
                           std::to_string(getpid()) + ".pb.zst";
  StringTable strings;
  schema::HeaderInfo header;
  header.producer = schema::Producer::kSynthetic;
  auto writer = schema::TraceFileWriter::Create(path, header, schema::WriterOptions{});
  if (!writer.ok()) {
    state.SkipWithError(writer.status().message().c_str());
    return;
  }
  RecordEncoder encoder(&strings, writer->get());
  DecodeBuffers(
      state, [&] { return std::make_unique<WriterRecordSink>(&encoder, writer->get(), &strings); });
  Status closed = (*writer)->Close(0);
  state.counters["bytes/event"] = static_cast<double>((*writer)->stats().bytes_written) /
                                  static_cast<double>(encoder.events() != 0 ? encoder.events() : 1);
  if (!closed.ok()) state.SkipWithError(closed.message().c_str());
  std::remove(path.c_str());
}
BENCHMARK(BM_CuptiActivityDecodeEncodeWrite)->Unit(benchmark::kMillisecond);

// ---- fixed memory ----

// The CUPTI channel's fixed memory with the default configuration, measured: the activity buffer
// pool (one MAP_NORESERVE mapping; resident pages by mincore) as created, with one buffer filled
// the way CUPTI fills it, and after that buffer went through the writer and was handed out
// again (the pool hands out the lowest free buffer, so a job that keeps k buffers in flight
// keeps k buffers resident; drained buffers are not returned to the kernel). The decoder's join
// tables (what its constructor allocates) and the callback table (its two vectors).
void BM_CuptiFootprint(benchmark::State& state) {
  for (auto _ : state) {
    auto pool = ActivityBufferPool::Create(AgentConfig::kDefaultCuptiBufferBytes,
                                           AgentConfig::kDefaultCuptiBuffers);
    if (!pool.ok()) {
      state.SkipWithError(pool.status().message().c_str());
      return;
    }
    const uint64_t mapped = (*pool)->buffer_bytes() * (*pool)->count();
    uint8_t* first = (*pool)->Acquire();  // All free: the lowest, i.e. the mapping's start.
    state.counters["pool_mapped_bytes"] = static_cast<double>(mapped);
    state.counters["pool_resident_at_start"] =
        static_cast<double>(bench::ResidentBytesOf(first, mapped));
    std::memset(first, 0xA5, (*pool)->buffer_bytes());
    (*pool)->Complete(first, (*pool)->buffer_bytes());
    state.counters["pool_resident_one_buffer_filled"] =
        static_cast<double>(bench::ResidentBytesOf(first, mapped));
    (*pool)->DrainCompleted([](const uint8_t*, size_t) {});
    uint8_t* again = (*pool)->Acquire();
    std::memset(again, 0x5A, (*pool)->buffer_bytes());
    state.counters["pool_resident_refilled"] =
        static_cast<double>(bench::ResidentBytesOf(first, mapped));
    state.counters["pool_reused_same_buffer"] = again == first ? 1 : 0;

    // The decoder's constructor value-initialises its join tables, so what it allocates is
    // written, i.e. resident.
    const uint64_t before_decoder = bench::HeapAllocatedBytes();
    auto decoder = std::make_unique<ActivityDecoder>(nullptr);
    benchmark::DoNotOptimize(decoder.get());
    state.counters["decoder_allocated_bytes"] =
        static_cast<double>(bench::HeapAllocatedBytes() - before_decoder);
    state.counters["callback_table_bytes"] = static_cast<double>(
        (size_t{CUPTI_RUNTIME_TRACE_CBID_SIZE} + size_t{CUPTI_DRIVER_TRACE_CBID_SIZE}) *
        sizeof(CallbackTable::Entry));
  }
}
BENCHMARK(BM_CuptiFootprint)->Iterations(1);

}  // namespace
}  // namespace lumos::agent::cupti
