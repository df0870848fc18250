// Synthesized CUPTI 13.0 activity buffers walked by the REAL cuptiActivityGetNextRecord (loaded
// through the channel's own table): every field mapped, the external-correlation join, the
// CUDA event -> stream-wait join and the clock conversion.
#include "agent/cupti/activity_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "agent/cupti/cupti_clock.h"
#include "agent/runtime/agent_runtime.h"
#include "tests/agent/cupti/cupti_test_support.h"

namespace lumos::agent::cupti {
namespace {

using testing::VectorSink;

constexpr int64_t kOffsetNs = 1'700'000'000'000'000'000;  // CUPTI minus monotonic.
constexpr uint64_t kT0 = kOffsetNs + 5'000'000;           // A CUPTI time: monotonic 5 ms.

// Builds a buffer the way CUPTI lays records out: each at an 8-byte boundary, back to back.
class BufferBuilder {
 public:
  template <typename T>
  T& Add(CUpti_ActivityKind kind) {
    const size_t offset = bytes_.size();
    bytes_.resize(offset + ((sizeof(T) + 7) & ~size_t{7}), 0);
    auto* record = reinterpret_cast<T*>(bytes_.data() + offset);
    record->kind = kind;
    offsets_.push_back(offset);
    return *record;
  }
  uint8_t* data() { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  void Reserve(size_t bytes) { bytes_.reserve(bytes); }  // Keeps references valid.

 private:
  alignas(8) std::vector<uint8_t> bytes_;
  std::vector<size_t> offsets_;
};

class ActivityDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<CuptiApi> api = testing::LoadRealCupti();
    ASSERT_TRUE(api.ok()) << "the real libcupti.so.13 is needed: " << api.status().message();
    api_ = api.value();
    buffer_.Reserve(1 << 16);
  }
  std::vector<testing::Event> Decode() {
    ActivityDecoder decoder(&api_);
    decoder.Decode(buffer_.data(), buffer_.size(), kOffsetNs, sink_);
    stats_ = decoder.stats();
    return sink_.events;
  }

  CuptiApi api_;
  BufferBuilder buffer_;
  VectorSink sink_;
  DecodeStats stats_;
};

TEST_F(ActivityDecoderTest, KernelEveryField) {
  auto& k = buffer_.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = kT0;
  k.end = kT0 + 1500;
  k.deviceId = 3;
  k.contextId = 7;
  k.streamId = 13;
  k.gridX = 1024;
  k.gridY = 2;
  k.gridZ = 3;
  k.blockX = 256;
  k.blockY = 4;
  k.blockZ = 1;
  k.registersPerThread = 96;
  k.staticSharedMemory = 4096;
  k.dynamicSharedMemory = 49152;
  k.correlationId = 4242;
  k.name = "_Z10vector_addPfS_S_i";
  k.graphId = 17;
  k.graphNodeId = 0x100000002;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  auto& x = buffer_.Add<CUpti_ActivityExternalCorrelation>(
      CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);  // After the kernel: the join still works.
  x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  x.externalId = 99001;
  x.correlationId = 4242;

  std::vector<testing::Event> events = Decode();
  ASSERT_EQ(events.size(), 1u);
  const Record& head = events[0].head;
  EXPECT_EQ(head.kind, RecordKind::kKernel);
  EXPECT_EQ(head.device_id, 3);
  EXPECT_EQ(head.thread_id, 0u);
  EXPECT_EQ(head.start_ns, 5'000'000);
  EXPECT_EQ(head.end_ns, 5'001'500);
  const KernelPayload& p = head.payload.kernel;
  EXPECT_EQ(p.stream_id, 13u);
  EXPECT_EQ(p.correlation_id, 4242u);
  EXPECT_EQ(sink_.table.Lookup(p.name_id), "vector_add(float*, float*, float*, int)");
  EXPECT_EQ(p.grid_x, 1024u);
  EXPECT_EQ(p.grid_y, 2);
  EXPECT_EQ(p.grid_z, 3);
  EXPECT_EQ(p.block_x, 256);
  EXPECT_EQ(p.block_y, 4);
  EXPECT_EQ(p.block_z, 1);
  EXPECT_EQ(p.registers_per_thread, 96);
  EXPECT_EQ(p.static_shared_memory_bytes, 4096u);
  EXPECT_EQ(p.dynamic_shared_memory_bytes, 49152u);
  ASSERT_TRUE(events[0].has_extension);
  EXPECT_EQ(events[0].extension.kind, RecordKind::kExtension);
  const KernelExtension& e = events[0].extension.payload.kernel_ext;
  EXPECT_EQ(e.graph_id, 17u);
  EXPECT_EQ(e.graph_node_id, 0x100000002u);
  EXPECT_EQ(e.external_id, 99001u);
  EXPECT_EQ(e.context_id, 7u);
  EXPECT_EQ(e.cluster_x, 2);
  EXPECT_EQ(e.cluster_y, 1);
  EXPECT_EQ(e.cluster_z, 1);
  EXPECT_EQ(e.launch_type, static_cast<uint8_t>(schema::LaunchType::kCluster));
  EXPECT_EQ(stats_.kernels, 1u);
  EXPECT_EQ(stats_.external_correlations, 1u);
  EXPECT_EQ(stats_.walk_errors, 0u);
}

TEST_F(ActivityDecoderTest, CooperativeKernelAndUnmangledName) {
  auto& k = buffer_.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.start = kT0;
  k.end = kT0 + 10;
  k.name = "gemm_kernel";  // C linkage: not demangled, kept as is.
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  k.clusterX = k.clusterY = k.clusterZ = 1;
  std::vector<testing::Event> events = Decode();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(sink_.table.Lookup(events[0].head.payload.kernel.name_id), "gemm_kernel");
  EXPECT_EQ(events[0].extension.payload.kernel_ext.launch_type,
            static_cast<uint8_t>(schema::LaunchType::kCooperative));
  EXPECT_EQ(events[0].extension.payload.kernel_ext.external_id, 0u);  // None joined.
}

TEST_F(ActivityDecoderTest, MemcpyMemsetAndPeerCopy) {
  auto& x =
      buffer_.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  x.externalId = 777;
  x.correlationId = 11;
  auto& m = buffer_.Add<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = kT0 + 100;
  m.end = kT0 + 900;
  m.deviceId = 1;
  m.contextId = 5;
  m.streamId = 21;
  m.correlationId = 11;
  m.graphNodeId = 8;
  auto& p2p = buffer_.Add<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  p2p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p2p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p2p.bytes = 4096;
  p2p.start = kT0 + 1000;
  p2p.end = kT0 + 2000;
  p2p.deviceId = 0;
  p2p.contextId = 6;
  p2p.streamId = 22;
  p2p.srcDeviceId = 0;
  p2p.dstDeviceId = 2;
  p2p.correlationId = 12;
  p2p.graphNodeId = 9;
  auto& s = buffer_.Add<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
  s.value = 0xAB;
  s.bytes = 256;
  s.start = kT0 + 3000;
  s.end = kT0 + 3100;
  s.deviceId = 1;
  s.contextId = 5;
  s.streamId = 23;
  s.correlationId = 13;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  s.graphNodeId = 10;

  std::vector<testing::Event> events = Decode();
  ASSERT_EQ(events.size(), 3u);
  const Record& copy = events[0].head;
  EXPECT_EQ(copy.kind, RecordKind::kMemcpy);
  EXPECT_EQ(copy.device_id, 1);
  EXPECT_EQ(copy.start_ns, 5'000'100);
  EXPECT_EQ(copy.end_ns, 5'000'900);
  EXPECT_EQ(copy.payload.memcpy.stream_id, 21u);
  EXPECT_EQ(copy.payload.memcpy.bytes, uint64_t{1} << 20);
  EXPECT_EQ(copy.payload.memcpy.graph_node_id, 8u);
  EXPECT_EQ(copy.payload.memcpy.correlation_id, 11u);
  EXPECT_EQ(copy.payload.memcpy.context_id, 5u);
  EXPECT_EQ(copy.payload.memcpy.src_device_id, 1);
  EXPECT_EQ(copy.payload.memcpy.dst_device_id, 1);
  EXPECT_EQ(copy.payload.memcpy.copy_kind, static_cast<uint8_t>(schema::CopyKind::kHtod));
  EXPECT_EQ(copy.payload.memcpy.src_kind, static_cast<uint8_t>(schema::MemoryKind::kPinned));
  EXPECT_EQ(copy.payload.memcpy.dst_kind, static_cast<uint8_t>(schema::MemoryKind::kDevice));
  ASSERT_TRUE(events[0].has_extension);
  EXPECT_EQ(events[0].extension.payload.external_ext.external_id, 777u);

  const Record& peer = events[1].head;
  EXPECT_EQ(peer.kind, RecordKind::kMemcpy);
  EXPECT_EQ(peer.device_id, 0);
  EXPECT_EQ(peer.start_ns, 5'001'000);
  EXPECT_EQ(peer.end_ns, 5'002'000);
  EXPECT_EQ(peer.payload.memcpy.copy_kind, static_cast<uint8_t>(schema::CopyKind::kPtop));
  EXPECT_EQ(peer.payload.memcpy.src_device_id, 0);
  EXPECT_EQ(peer.payload.memcpy.dst_device_id, 2);
  EXPECT_EQ(peer.payload.memcpy.bytes, 4096u);
  EXPECT_EQ(peer.payload.memcpy.stream_id, 22u);
  EXPECT_EQ(peer.payload.memcpy.context_id, 6u);
  EXPECT_EQ(peer.payload.memcpy.correlation_id, 12u);
  EXPECT_EQ(peer.payload.memcpy.graph_node_id, 9u);
  EXPECT_FALSE(events[1].has_extension);  // No external id for correlation 12.

  const Record& set = events[2].head;
  EXPECT_EQ(set.kind, RecordKind::kMemset);
  EXPECT_EQ(set.device_id, 1);
  EXPECT_EQ(set.start_ns, 5'003'000);
  EXPECT_EQ(set.end_ns, 5'003'100);
  EXPECT_EQ(set.payload.memset.value, 0xABu);
  EXPECT_EQ(set.payload.memset.bytes, 256u);
  EXPECT_EQ(set.payload.memset.stream_id, 23u);
  EXPECT_EQ(set.payload.memset.context_id, 5u);
  EXPECT_EQ(set.payload.memset.correlation_id, 13u);
  EXPECT_EQ(set.payload.memset.graph_node_id, 10u);
  EXPECT_EQ(set.payload.memset.memory_kind, static_cast<uint8_t>(schema::MemoryKind::kManaged));
  EXPECT_EQ(stats_.memcpys, 2u);
  EXPECT_EQ(stats_.memsets, 1u);
}

TEST_F(ActivityDecoderTest, CudaEventJoinsStreamWaitBySyncId) {
  auto& kernel = buffer_.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  kernel.deviceId = 2;  // Teaches the decoder context 9 -> device 2 (sync records lack it).
  kernel.contextId = 9;
  kernel.start = kT0;
  kernel.end = kT0 + 1;
  auto& e = buffer_.Add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  e.correlationId = 30;
  e.contextId = 9;
  e.streamId = 31;  // The recording stream.
  e.eventId = 32;
  e.deviceId = 2;
  e.deviceTimestamp = kT0 + 4000;
  e.cudaEventSyncId = 555;
  auto& wait = buffer_.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  wait.start = kT0 + 5000;
  wait.end = kT0 + 5200;
  wait.correlationId = 40;
  wait.contextId = 9;
  wait.streamId = 41;  // The waiting stream.
  wait.cudaEventId = 32;
  wait.cudaEventSyncId = 555;
  auto& device_sync =
      buffer_.Add<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  device_sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  device_sync.start = kT0 + 6000;
  device_sync.end = kT0 + 9000;
  device_sync.correlationId = 50;
  device_sync.contextId = 9;
  device_sync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  device_sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  auto& no_timestamp = buffer_.Add<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT);
  no_timestamp.correlationId = 60;
  no_timestamp.eventId = 61;
  no_timestamp.cudaEventSyncId = 556;

  std::vector<testing::Event> events = Decode();
  ASSERT_EQ(events.size(), 5u);
  const Record& record = events[1].head;
  EXPECT_EQ(record.kind, RecordKind::kCudaEventRecord);
  EXPECT_EQ(record.device_id, 2);
  EXPECT_EQ(record.start_ns, 5'004'000);
  EXPECT_EQ(record.end_ns, 5'004'000);
  EXPECT_TRUE(record.flags & kRecordFlagDeviceTimestamp);
  EXPECT_EQ(record.payload.cuda_event.event_id, 32u);
  EXPECT_EQ(record.payload.cuda_event.stream_id, 31u);
  EXPECT_EQ(record.payload.cuda_event.cuda_event_sync_id, 555u);
  EXPECT_EQ(record.payload.cuda_event.correlation_id, 30u);
  EXPECT_EQ(record.payload.cuda_event.context_id, 9u);

  const Record& sync = events[2].head;
  EXPECT_EQ(sync.kind, RecordKind::kSync);
  EXPECT_EQ(sync.device_id, 2);
  EXPECT_EQ(sync.start_ns, 5'005'000);
  EXPECT_EQ(sync.end_ns, 5'005'200);
  EXPECT_EQ(sync.payload.sync.sync_type, static_cast<uint8_t>(schema::SyncType::kStreamWaitEvent));
  EXPECT_EQ(sync.payload.sync.stream_id, 41u);
  EXPECT_EQ(sync.payload.sync.event_id, 32u);
  EXPECT_EQ(sync.payload.sync.cuda_event_sync_id, 555u);
  EXPECT_EQ(sync.payload.sync.correlation_id, 40u);
  EXPECT_EQ(sync.payload.sync.context_id, 9u);
  EXPECT_EQ(sync.payload.sync.event_record_correlation_id, 30u);
  ASSERT_TRUE(events[2].has_extension);
  EXPECT_EQ(events[2].extension.payload.sync_ext.wait_on_stream_id, 31u);

  const Record& context_sync = events[3].head;
  EXPECT_EQ(context_sync.payload.sync.sync_type,
            static_cast<uint8_t>(schema::SyncType::kContextSynchronize));
  EXPECT_EQ(context_sync.payload.sync.stream_id, 0u);  // CUPTI's "invalid" becomes "none".
  EXPECT_EQ(context_sync.payload.sync.event_id, 0u);
  EXPECT_EQ(context_sync.end_ns - context_sync.start_ns, 3000);
  EXPECT_FALSE(events[3].has_extension);

  EXPECT_EQ(events[4].head.start_ns, 0);  // No device timestamp: time unknown, not invented.
  EXPECT_FALSE(events[4].head.flags & kRecordFlagDeviceTimestamp);
  EXPECT_EQ(stats_.syncs, 2u);
  EXPECT_EQ(stats_.cuda_events, 2u);
}

TEST_F(ActivityDecoderTest, ExternalIdsJoinAcrossBuffers) {
  auto& x =
      buffer_.Add<CUpti_ActivityExternalCorrelation>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  x.externalId = 31337;
  x.correlationId = 77;
  ActivityDecoder decoder(&api_);
  decoder.Decode(buffer_.data(), buffer_.size(), kOffsetNs, sink_);
  EXPECT_TRUE(sink_.events.empty());

  BufferBuilder second;
  auto& k = second.Add<CUpti_ActivityKernel10>(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  k.correlationId = 77;
  k.start = kT0;
  k.end = kT0 + 1;
  decoder.Decode(second.data(), second.size(), kOffsetNs, sink_);
  ASSERT_EQ(sink_.events.size(), 1u);
  EXPECT_EQ(sink_.events[0].extension.payload.kernel_ext.external_id, 31337u);
}

TEST_F(ActivityDecoderTest, SkipsOtherKindsAndEmptyBuffers) {
  auto& marker = buffer_.Add<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
  marker.start = kT0;
  std::vector<testing::Event> events = Decode();
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(stats_.skipped, 1u);
  ActivityDecoder decoder(&api_);
  decoder.Decode(nullptr, 0, kOffsetNs, sink_);
  EXPECT_EQ(decoder.stats().kernels + decoder.stats().skipped, 0u);
}

// The offset: CUPTI minus monotonic, bracketed. The real CUPTI clock reads about realtime.
TEST(CuptiClockTest, RealCuptiClockIsNearRealtime) {
  StatusOr<CuptiApi> api = testing::LoadRealCupti();
  ASSERT_TRUE(api.ok()) << api.status().message();
  CuptiClock clock(api.value().get_timestamp);
  ASSERT_TRUE(clock.Measure());
  timespec realtime{};
  clock_gettime(CLOCK_REALTIME, &realtime);
  const int64_t realtime_minus_monotonic =
      (int64_t{realtime.tv_sec} * 1'000'000'000 + realtime.tv_nsec) - MonotonicNowNs();
  EXPECT_NEAR(static_cast<double>(clock.offset_ns()), static_cast<double>(realtime_minus_monotonic),
              50e6);
  EXPECT_GE(clock.uncertainty_ns(), 0);
  EXPECT_LT(clock.uncertainty_ns(), 1'000'000);
}

constexpr int64_t kFakeOffsetNs = 123'456'789'000;
CUptiResult FakeTimestamp(uint64_t* timestamp) {
  *timestamp = static_cast<uint64_t>(MonotonicNowNs() + kFakeOffsetNs);
  return CUPTI_SUCCESS;
}
CUptiResult FailingTimestamp(uint64_t*) { return CUPTI_ERROR_UNKNOWN; }

TEST(CuptiClockTest, OffsetIsExactWithinTheBracket) {
  CuptiClock clock(&FakeTimestamp);
  ASSERT_TRUE(clock.Measure());
  EXPECT_LE(std::abs(clock.offset_ns() - kFakeOffsetNs), clock.uncertainty_ns() + 1);
  EXPECT_EQ(CuptiClock::ToMonotonic(1'000 + kFakeOffsetNs, kFakeOffsetNs), 1'000);
  EXPECT_EQ(CuptiClock::ToMonotonic(0, kFakeOffsetNs), 0);  // "Not recorded" stays 0.
}

TEST(CuptiClockTest, FailureKeepsTheClockUnmeasured) {
  CuptiClock clock(&FailingTimestamp);
  EXPECT_FALSE(clock.Measure());
  EXPECT_FALSE(clock.measured());
  clock.MaybeRefresh(MonotonicNowNs());
  EXPECT_FALSE(clock.measured());
}

}  // namespace
}  // namespace lumos::agent::cupti
