// Every packet kind round-trips: our hand-written encoder -> libprotobuf parse -> column packets
// expanded to rows by the reflection oracle (tests/testing/column_oracle.h) -> equal to the
// expected message. Each expected message sets every field of its event type (checked by
// reflection), so a field the encoder forgets or numbers wrongly fails here.
#include "schema/writer/packet_encoder.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstring>

#include "schema/lumos/trace.pb.h"
#include "tests/testing/column_oracle.h"

namespace lumos::schema {
namespace {

namespace pb = ::lumos::trace;

pb::Trace Decode(PacketEncoder& encoder) {
  WireBuffer frame;
  encoder.TakeFrame(&frame);
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
  return ::lumos::testing::ExpandColumns(trace);
}

pb::TracePacket FromText(const std::string& text) {
  pb::TracePacket packet;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &packet)) << text;
  return packet;
}

// Asserts every field of the packet's event message is set, so the test covers them all.
void ExpectAllFieldsSet(const pb::TracePacket& packet) {
  const auto* reflection = packet.GetReflection();
  const auto* oneof = pb::TracePacket::descriptor()->FindOneofByName("data");
  const auto* field = reflection->GetOneofFieldDescriptor(packet, oneof);
  ASSERT_NE(field, nullptr);
  const auto& event = reflection->GetMessage(packet, field);
  std::vector<const google::protobuf::FieldDescriptor*> set;
  event.GetReflection()->ListFields(event, &set);
  EXPECT_EQ(static_cast<int>(set.size()), event.GetDescriptor()->field_count())
      << field->name() << " expected message leaves fields unset";
}

void ExpectPacket(const pb::TracePacket& actual, const std::string& expected_text,
                  bool all_fields = true) {
  pb::TracePacket expected = FromText(expected_text);
  if (all_fields) ExpectAllFieldsSet(expected);
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(expected, actual)) << diff;
}

TEST(PacketEncoderTest, KernelRoundTrips) {
  PacketEncoder encoder;
  KernelEvent e;
  e.start_ns = 1'700'000'000'000'000'000;
  e.duration_ns = 11;
  e.correlation_id = 12;
  e.stream_id = 13;
  e.name = "ampere_sgemm_128x64_nn";
  e.device_id = 5;
  e.grid = {6, 7, 8};
  e.block = {9, 10, 11};
  e.registers_per_thread = 12;
  e.static_shared_memory_bytes = 13;
  e.dynamic_shared_memory_bytes = 14;
  e.context_id = 15;
  e.graph_id = 16;
  e.graph_node_id = 17;
  e.launch_type = LaunchType::kCooperative;
  e.external_id = 19;
  e.cluster = {20, 21, 22};
  encoder.Add(e);
  e.start_ns += 250;
  encoder.Add(e);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 4);  // frame, interned name, two kernels
  EXPECT_EQ(trace.packet(0).frame().base_time_ns(), 1'700'000'000'000'000'000u);
  ExpectPacket(trace.packet(1), "interned { iid: 1 value: 'ampere_sgemm_128x64_nn' }");
  const char* kernel =
      "kernel { duration_ns: 11 correlation_id: 12 stream_id: 13 name_iid: 1 device_id: 5 "
      "grid_x: 6 grid_y: 7 grid_z: 8 block_x: 9 block_y: 10 block_z: 11 "
      "registers_per_thread: 12 static_shared_memory_bytes: 13 dynamic_shared_memory_bytes: 14 "
      "context_id: 15 graph_id: 16 graph_node_id: 17 launch_type: LAUNCH_TYPE_COOPERATIVE "
      "external_id: 19 cluster_x: 20 cluster_y: 21 cluster_z: 22 }";
  ExpectPacket(trace.packet(2), std::string("start_delta_ns: 0 ") + kernel);
  ExpectPacket(trace.packet(3), std::string("start_delta_ns: 250 ") + kernel);
}

TEST(PacketEncoderTest, ApiCallRoundTrips) {
  PacketEncoder encoder;
  ApiCallEvent e{
      1000, 1,  2,  3, ApiKind::kEventRecord, 5, "cudaEventRecord", 7, 8, ApiDomain::kRuntime,
      10,   11, -12};
  encoder.Add(e);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 3);
  ExpectPacket(trace.packet(2),
               "start_delta_ns: 0 api_call { duration_ns: 1 thread_id: 2 correlation_id: 3 "
               "kind: API_KIND_EVENT_RECORD cbid: 5 name_iid: 1 stream_id: 7 event_id: 8 "
               "domain: API_DOMAIN_RUNTIME external_id: 10 graph_id: 11 return_code: -12 }");
}

TEST(PacketEncoderTest, GpuCopiesAndSyncsRoundTrip) {
  PacketEncoder encoder;
  encoder.Add(MemcpyEvent{100, 1, 2, 3, 4, CopyKind::kPtop, 6, MemoryKind::kDevice,
                          MemoryKind::kPinned, 9, 10, 11, 12, 13});
  encoder.Add(MemsetEvent{90, 1, 2, 3, 4, 5, 6, MemoryKind::kManaged, 8, 9, 10});
  encoder.Add(SyncEvent{95, 1, SyncType::kStreamWaitEvent, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  encoder.Add(CudaEventRecordEvent{120, 1, 2, 3, 4, 5, 6, true});
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 5);
  ExpectPacket(trace.packet(1),
               "start_delta_ns: 0 memcpy { duration_ns: 1 correlation_id: 2 stream_id: 3 "
               "bytes: 4 copy_kind: COPY_KIND_PTOP device_id: 6 src_kind: MEMORY_KIND_DEVICE "
               "dst_kind: MEMORY_KIND_PINNED src_device_id: 9 dst_device_id: 10 context_id: 11 "
               "graph_node_id: 12 external_id: 13 }");
  ExpectPacket(trace.packet(2),
               "start_delta_ns: -10 memset { duration_ns: 1 correlation_id: 2 stream_id: 3 "
               "bytes: 4 value: 5 device_id: 6 memory_kind: MEMORY_KIND_MANAGED context_id: 8 "
               "graph_node_id: 9 external_id: 10 }");
  ExpectPacket(trace.packet(3),
               "start_delta_ns: -5 sync { duration_ns: 1 sync_type: SYNC_TYPE_STREAM_WAIT_EVENT "
               "correlation_id: 3 stream_id: 4 event_id: 5 cuda_event_sync_id: 6 "
               "wait_on_stream_id: 7 event_record_correlation_id: 8 device_id: 9 context_id: 10 "
               "thread_id: 11 external_id: 12 }");
  ExpectPacket(trace.packet(4),
               "start_delta_ns: 20 cuda_event { correlation_id: 1 event_id: 2 stream_id: 3 "
               "cuda_event_sync_id: 4 device_id: 5 context_id: 6 has_device_timestamp: true }");
}

TEST(PacketEncoderTest, HostSideEventsRoundTrip) {
  PacketEncoder encoder;
  encoder.Add(NvtxEvent{10, 1, 2, "forward", "megatron", NvtxKind::kStartEnd, 6, 7, 8, 9, 10});
  HostRangeEvent range{20, 1, 2, "ProfilerStep#10", HostRangeCategory::kStep, 5, 6, 7, 8, 9};
  range.has_step_number = true;
  range.step_number = 10;
  encoder.Add(range);
  encoder.Add(ThreadEvent{7, "pt_autograd_0", 1234});
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 7);  // frame, 3 interned strings, nvtx, range, thread
  ExpectPacket(trace.packet(4),
               "start_delta_ns: 0 nvtx { duration_ns: 1 thread_id: 2 name_iid: 1 domain_iid: 2 "
               "kind: NVTX_KIND_START_END depth: 6 color_argb: 7 category: 8 range_id: 9 "
               "end_thread_id: 10 }");
  ExpectPacket(trace.packet(5),
               "start_delta_ns: 10 host_range { duration_ns: 1 thread_id: 2 name_iid: 3 "
               "category: HOST_RANGE_CATEGORY_STEP external_id: 5 sequence_number: 6 "
               "forward_thread_id: 7 stream_id: 8 device_id: 9 step_number: 10 }");
  ExpectPacket(trace.packet(6), "thread { thread_id: 7 name: 'pt_autograd_0' pid: 1234 }");
}

TEST(PacketEncoderTest, NcclEventsRoundTrip) {
  PacketEncoder encoder;
  CollectiveEvent c{1000,
                    1,
                    2,
                    3,
                    CollectiveOp::kBroadcast,
                    5,
                    DataType::kBfloat16,
                    7,
                    0,
                    9,
                    10,
                    -11,
                    12,
                    NcclAlgorithm::kNvlsTree,
                    NcclProtocol::kLl128,
                    15,
                    16,
                    ReduceOp::kAvg,
                    18,
                    19,
                    20,
                    true};
  encoder.Add(c);
  CommunicatorEvent comm{1100, 1, 0, 3, 4, "tp_group", {0, 1, 2, 3}, 7};
  encoder.Add(comm);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 3);
  ExpectPacket(trace.packet(1),
               "start_delta_ns: 0 collective { duration_ns: 1 comm_id: 2 seq_number: 3 "
               "op: COLLECTIVE_OP_BROADCAST count: 5 data_type: DATA_TYPE_BFLOAT16 bytes: 7 "
               "root_rank: 0 peer_rank: 9 stream_id: 10 gpu_start_offset_ns: -11 "
               "gpu_duration_ns: 12 algorithm: NCCL_ALGORITHM_NVLS_TREE "
               "protocol: NCCL_PROTOCOL_LL128 channels: 15 device_id: 16 reduce_op: REDUCE_OP_AVG "
               "correlation_id: 18 thread_id: 19 comm_size: 20 has_host_time: true }");
  // rank 0 is the proto3 default, so it is not on the wire: all fields but one are set.
  ExpectPacket(trace.packet(2),
               "start_delta_ns: 100 communicator { comm_id: 1 comm_size: 3 device_id: 4 "
               "name: 'tp_group' global_ranks: [0, 1, 2, 3] parent_comm_id: 7 }",
               /*all_fields=*/false);
}

TEST(PacketEncoderTest, CaptureAndLossRoundTrip) {
  PacketEncoder encoder;
  encoder.Add(CaptureWindowEvent{.start_ns = 500,
                                 .duration_ns = 1,
                                 .window_index = 2,
                                 .trigger = WindowTrigger::kPeriodic,
                                 .first_iteration = 4,
                                 .iteration_count = 5,
                                 .iteration_marker = "step",
                                 .requested_by = "uid 1 pid 2 (x)",
                                 .request_id = 8,
                                 .target = "periodic slot",
                                 .missed_target = "no marker",
                                 .start_realtime_ns = 11,
                                 .requested_iterations = 12,
                                 .requested_duration_ns = 13});
  encoder.Add(LossEvent{600, 1, LossSource::kRingFull, 3, 4, "thread ring full"});
  ClockReading readings[] = {{ClockId::kCupti, 1}, {ClockId::kMonotonic, 2}};
  encoder.AddClockSnapshot(readings, 2);
  TrailerInfo trailer{.has_rank = true, .has_world_size = true, .rank = 6, .world_size = 7};
  trailer.devices.push_back(
      {.device_id = 1, .name = "NVIDIA H200", .sm_count = 132, .compute_major = 9});
  trailer.cuda_runtime_version = 13000;
  trailer.cuda_driver_version = 13010;
  trailer.nccl_version = "2.28.9";
  encoder.AddTrailer(1, 2, 3, 4, 5, trailer);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 5);
  ExpectPacket(trace.packet(1),
               "start_delta_ns: 0 capture_window { duration_ns: 1 window_index: 2 "
               "trigger: WINDOW_TRIGGER_PERIODIC first_iteration: 4 iteration_count: 5 "
               "iteration_marker: 'step' requested_by: 'uid 1 pid 2 (x)' request_id: 8 "
               "target: 'periodic slot' missed_target: 'no marker' start_realtime_ns: 11 "
               "requested_iterations: 12 requested_duration_ns: 13 }");
  ExpectPacket(trace.packet(2),
               "start_delta_ns: 100 loss { duration_ns: 1 source: LOSS_SOURCE_RING_FULL count: 3 "
               "thread_id: 4 detail: 'thread ring full' }");
  ExpectPacket(trace.packet(3),
               "clock_snapshot { reading { clock_id: CLOCK_ID_CUPTI value_ns: 1 } "
               "reading { clock_id: CLOCK_ID_MONOTONIC value_ns: 2 } }");
  ExpectPacket(trace.packet(4),
               "trailer { packets_written: 1 frames_written: 2 events_dropped: 3 "
               "end_time_ns: 4 events_written: 5 rank: 6 world_size: 7 "
               "devices { device_id: 1 name: 'NVIDIA H200' sm_count: 132 compute_major: 9 } "
               "cuda_runtime_version: 13000 cuda_driver_version: 13010 "
               "nccl_version: '2.28.9' }");
}

// Rank 0 is written (presence: the communicator said 0); no rank leaves both fields absent.
TEST(PacketEncoderTest, TrailerRankIsPresentEvenWhenZero) {
  PacketEncoder encoder;
  encoder.AddTrailer(1, 0, 0, 0, 0, {.has_rank = true, .has_world_size = true, .world_size = 1});
  encoder.AddTrailer(2, 0, 0, 0, 0);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 3);
  ASSERT_TRUE(trace.packet(1).has_trailer());
  EXPECT_TRUE(trace.packet(1).trailer().has_rank());
  EXPECT_EQ(trace.packet(1).trailer().rank(), 0);
  EXPECT_EQ(trace.packet(1).trailer().world_size(), 1);
  EXPECT_FALSE(trace.packet(2).trailer().has_rank());
  EXPECT_FALSE(trace.packet(2).trailer().has_world_size());
}

TEST(PacketEncoderTest, HeaderRoundTrips) {
  PacketEncoder encoder;
  HeaderInfo h;
  h.agent_version = "0.1.0";
  h.producer = schema::Producer::kAgent;
  h.host_name = "node-7";
  h.pid = 4242;
  h.job_id = "job-1";
  h.has_rank = h.has_local_rank = h.has_world_size = true;
  h.rank = 3;
  h.local_rank = 1;
  h.world_size = 16;
  h.devices.push_back({0, "NVIDIA H200", 132, 1980000, 3201000, 150ull << 30, "0000:18:00.0", 9, 0,
                       "GPU-1234", 6144});
  h.cuda_runtime_version = 13000;
  h.cuda_driver_version = 13000;
  h.cupti_version = 28;
  h.nccl_version = "2.28.3";
  h.clock_domains.push_back({ClockId::kCupti, "cupti", 1});
  h.default_clock_id = ClockId::kCupti;
  h.capture_config = {{schema::Channel::kCuptiActivity, schema::Channel::kNvtx},
                      {schema::Channel::kNcclPlugin},
                      1,
                      2,
                      3,
                      4,
                      5,
                      6,
                      7};
  h.source_path = "/tmp/x.json";
  h.start_time_ns = 99;
  h.command_line = "python train.py";
  h.has_capture_window = true;
  h.capture_window = {.window_index = 2,
                      .trigger = WindowTrigger::kOnDemand,
                      .first_iteration = 40,
                      .iteration_marker = "ProfilerStep*",
                      .requested_by = "uid 0 pid 7 (lumos-ctl)",
                      .request_id = 9,
                      .target = "next iteration",
                      .missed_target = "late",
                      .start_realtime_ns = 11,
                      .requested_iterations = 12,
                      .requested_duration_ns = 13};
  encoder.AddHeader(h);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 2);
  ExpectPacket(
      trace.packet(1),
      "header { schema_major: 2 schema_minor: 4 agent_version: '0.1.0' producer: PRODUCER_AGENT "
      "host_name: 'node-7' pid: 4242 job_id: 'job-1' rank: 3 local_rank: 1 world_size: 16 "
      "devices { device_id: 0 name: 'NVIDIA H200' sm_count: 132 sm_clock_khz: 1980000 "
      "memory_clock_khz: 3201000 memory_bytes: 161061273600 pci_bus_id: '0000:18:00.0' "
      "compute_major: 9 uuid: 'GPU-1234' memory_bus_width_bits: 6144 } "
      "cuda_runtime_version: 13000 cuda_driver_version: 13000 cupti_version: 28 "
      "nccl_version: '2.28.3' clock_domains { clock_id: CLOCK_ID_CUPTI name: 'cupti' "
      "resolution_ns: 1 } default_clock_id: CLOCK_ID_CUPTI capture_config { channels: "
      "[CHANNEL_CUPTI_ACTIVITY, CHANNEL_NVTX] channels_failed: [CHANNEL_NCCL_PLUGIN] "
      "ring_bytes: 1 activity_buffer_bytes: 2 activity_buffer_count: 3 flush_interval_ns: 4 "
      "frame_bytes: 5 max_file_bytes: 6 zstd_level: 7 } source_path: '/tmp/x.json' "
      "start_time_ns: 99 command_line: 'python train.py' capture_window { duration_ns: 0 "
      "window_index: 2 trigger: WINDOW_TRIGGER_ON_DEMAND first_iteration: 40 "
      "iteration_marker: 'ProfilerStep*' requested_by: 'uid 0 pid 7 (lumos-ctl)' request_id: 9 "
      "target: 'next iteration' missed_target: 'late' start_realtime_ns: 11 "
      "requested_iterations: 12 requested_duration_ns: 13 } }");
}

TEST(PacketEncoderTest, LongStringsAndNegativeDeltasSurvive) {
  PacketEncoder encoder;
  std::string long_name(5000, 'k');  // Forces multi-byte lengths at both nesting levels.
  KernelEvent late;
  late.start_ns = 5'000'000;
  late.name = long_name;
  KernelEvent early;
  early.start_ns = 1'000;
  early.name = long_name;
  encoder.Add(late);
  encoder.Add(early);
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 4);
  EXPECT_EQ(trace.packet(1).interned().value(), long_name);
  EXPECT_EQ(trace.packet(3).start_delta_ns(), 1'000 - 5'000'000);
  EXPECT_EQ(trace.packet(3).kernel().name_iid(), 1u);  // Interned once per frame.
}

TEST(PacketEncoderTest, IdsAreDeltaCodedPerKindOnTheWire) {
  PacketEncoder encoder;
  for (uint64_t correlation : {100u, 101u, 103u, 102u}) {
    encoder.Add(ApiCallEvent{.start_ns = 5, .correlation_id = correlation, .external_id = 7});
  }
  encoder.Add(KernelEvent{.start_ns = 6, .correlation_id = 100});
  WireBuffer frame;
  encoder.TakeFrame(&frame);
  pb::Trace raw;
  ASSERT_TRUE(raw.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
  ASSERT_EQ(raw.packet_size(), 3);  // frame, kernel columns, API call columns
  const pb::ApiCallColumns& api = raw.packet(2).api_call_columns();
  EXPECT_EQ(api.count(), 4u);
  EXPECT_EQ(
      std::vector<int64_t>(api.correlation_id_delta().begin(), api.correlation_id_delta().end()),
      (std::vector<int64_t>{100, 1, 2, -1}));
  EXPECT_EQ(std::vector<int64_t>(api.external_id_delta().begin(), api.external_id_delta().end()),
            (std::vector<int64_t>{7, 0, 0, 0}));
  // Kernels keep their own state: their first delta is from 0 again.
  EXPECT_EQ(raw.packet(1).kernel_columns().correlation_id_delta(0), 100);
  // Start times: per kind, from the frame's base time (the first event, 5).
  EXPECT_EQ(raw.packet(0).frame().base_time_ns(), 5u);
  EXPECT_EQ(raw.packet(1).kernel_columns().start_delta_ns(0), 1);
  std::vector<uint64_t> restored;
  pb::Trace rows = ::lumos::testing::ExpandColumns(raw);
  for (const pb::TracePacket& packet : rows.packet()) {
    if (packet.has_api_call()) restored.push_back(packet.api_call().correlation_id());
  }
  EXPECT_EQ(restored, (std::vector<uint64_t>{100, 101, 103, 102}));
}

// Columns whose values are all 0 are left out, constant ones hold one value; the start column
// always holds one value per event.
TEST(PacketEncoderTest, ZeroAndConstantColumnsAreShort) {
  PacketEncoder encoder;
  encoder.Add(MemcpyEvent{.start_ns = 7, .correlation_id = 10, .bytes = 4096, .device_id = 3});
  encoder.Add(MemcpyEvent{.start_ns = 7, .correlation_id = 11, .bytes = 4096, .device_id = 3});
  encoder.Add(MemcpyEvent{.start_ns = 9, .correlation_id = 12, .bytes = 8192, .device_id = 3});
  WireBuffer frame;
  encoder.TakeFrame(&frame);
  pb::Trace raw;
  ASSERT_TRUE(raw.ParseFromArray(frame.data(), static_cast<int>(frame.size())));
  ASSERT_EQ(raw.packet_size(), 2);
  const pb::MemcpyColumns& m = raw.packet(1).memcpy_columns();
  EXPECT_EQ(m.count(), 3u);
  EXPECT_EQ(m.start_delta_ns_size(), 3);  // 0, 0, 2: written out even where 0.
  EXPECT_EQ(m.bytes_size(), 3);
  EXPECT_EQ(m.duration_ns_size(), 0);  // All 0.
  EXPECT_EQ(m.copy_kind_size(), 0);
  ASSERT_EQ(m.device_id_size(), 1);  // Constant: one value.
  EXPECT_EQ(m.device_id(0), 3u);
  EXPECT_EQ(m.correlation_id_delta_size(), 3);  // 10, +1, +1: the first delta differs.
  pb::Trace rows = ::lumos::testing::ExpandColumns(raw);
  ASSERT_EQ(rows.packet_size(), 4);
  EXPECT_EQ(rows.packet(3).memcpy().device_id(), 3u);
  EXPECT_EQ(rows.packet(3).memcpy().correlation_id(), 12u);
  EXPECT_EQ(rows.packet(3).start_delta_ns(), 2);
}

// The intern cache is keyed by the caller's pointer: a buffer reused for other text (as a
// ring slot is) must still get the right string.
TEST(PacketEncoderTest, ReusedNameBufferInternsTheNewText) {
  PacketEncoder encoder;
  char buffer[16] = "gemm";
  encoder.Add(KernelEvent{.start_ns = 1, .name = std::string_view(buffer, 4)});
  std::memcpy(buffer, "norm", 4);
  encoder.Add(KernelEvent{.start_ns = 2, .name = std::string_view(buffer, 4)});
  std::memcpy(buffer, "gemm", 4);
  encoder.Add(KernelEvent{.start_ns = 3, .name = std::string_view(buffer, 4)});
  pb::Trace trace = Decode(encoder);
  ASSERT_EQ(trace.packet_size(), 6);  // frame, "gemm", "norm" (interned first), 3 kernels
  EXPECT_EQ(trace.packet(1).interned().value(), "gemm");
  EXPECT_EQ(trace.packet(2).interned().value(), "norm");
  EXPECT_EQ(trace.packet(3).kernel().name_iid(), 1u);
  EXPECT_EQ(trace.packet(4).kernel().name_iid(), 2u);
  EXPECT_EQ(trace.packet(5).kernel().name_iid(), 1u);
}

TEST(PacketEncoderTest, EachFrameStartsFreshState) {
  PacketEncoder encoder;
  KernelEvent k;
  k.start_ns = 1000;
  k.name = "a";
  encoder.Add(k);
  Decode(encoder);
  k.start_ns = 3000;
  encoder.Add(k);
  pb::Trace second = Decode(encoder);
  ASSERT_EQ(second.packet_size(), 3);
  EXPECT_EQ(second.packet(0).frame().frame_index(), 1u);
  EXPECT_EQ(second.packet(0).frame().base_time_ns(), 3000u);
  EXPECT_EQ(second.packet(1).interned().iid(), 1u);  // Re-interned in the new frame.
  EXPECT_EQ(second.packet(2).start_delta_ns(), 0);
}

}  // namespace
}  // namespace lumos::schema
