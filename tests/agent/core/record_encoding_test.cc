// Records of every kind -> ThreadRings -> RecordEncoder -> TraceFileWriter -> file -> the
// modeler's reader. Each full record sets every field of its packet (checked by reflection), so a
// field the record cannot carry or the encoder forgets fails here.
#include "agent/core/record_encoding.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "agent/core/string_table.h"
#include "agent/core/thread_rings.h"
#include "modeler/trace/trace_reader.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

namespace pb = ::lumos::trace;

struct ReadEvent {
  pb::TracePacket packet;  // Names cleared (see name/domain) and start_delta_ns cleared.
  int64_t start_ns = 0;
  std::string name;
  std::string domain;
};

// The timed event packets of `path`, in time order (a frame stores events grouped by kind;
// equal starts keep file order).
std::vector<ReadEvent> ReadEvents(const std::string& path) {
  std::vector<ReadEvent> events;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return events;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (!packet.has_start_delta_ns()) return Status::Ok();
        ReadEvent event{packet, context.start_ns, "", ""};
        event.packet.clear_start_delta_ns();
        if (packet.has_kernel()) {
          event.name = context.String(packet.kernel().name_iid());
          event.packet.mutable_kernel()->clear_name_iid();
        } else if (packet.has_api_call()) {
          event.name = context.String(packet.api_call().name_iid());
          event.packet.mutable_api_call()->clear_name_iid();
        } else if (packet.has_nvtx()) {
          event.name = context.String(packet.nvtx().name_iid());
          event.domain = context.String(packet.nvtx().domain_iid());
          event.packet.mutable_nvtx()->clear_name_iid();
          event.packet.mutable_nvtx()->clear_domain_iid();
        }
        events.push_back(std::move(event));
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.damage.ok()) << result.damage.message();
  EXPECT_TRUE(result.has_trailer);
  std::stable_sort(events.begin(), events.end(),
                   [](const ReadEvent& a, const ReadEvent& b) { return a.start_ns < b.start_ns; });
  return events;
}

// `actual` equals `expected_text`; with all_fields, every field of the event is set.
void ExpectEvent(const ReadEvent& actual, const std::string& expected_text, int64_t start_ns,
                 bool all_fields = true) {
  pb::TracePacket expected;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(expected_text, &expected))
      << expected_text;
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(expected, actual.packet)) << diff;
  EXPECT_EQ(actual.start_ns, start_ns);
  if (!all_fields) return;
  const auto* oneof = pb::TracePacket::descriptor()->FindOneofByName("data");
  const auto* field = actual.packet.GetReflection()->GetOneofFieldDescriptor(actual.packet, oneof);
  ASSERT_NE(field, nullptr);
  const auto& event = actual.packet.GetReflection()->GetMessage(actual.packet, field);
  std::vector<const google::protobuf::FieldDescriptor*> set;
  event.GetReflection()->ListFields(event, &set);
  int name_fields = field->name() == "nvtx"
                        ? 2
                        : (event.GetDescriptor()->FindFieldByName("name_iid") != nullptr ? 1 : 0);
  EXPECT_EQ(static_cast<int>(set.size()) + name_fields, event.GetDescriptor()->field_count())
      << field->name() << " left fields unset";
}

Record Head(RecordKind kind, int64_t start_ns, int64_t end_ns) {
  Record record{};
  record.kind = kind;
  record.thread_id = 11;
  record.device_id = 3;
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  return record;
}

class RecordEncodingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto rings = ThreadRings::Create(1 << 20, uint64_t{64} * 64);
    ASSERT_TRUE(rings.ok());
    rings_ = std::move(rings).value();
  }

  // Drains the rings into a file and reads it back.
  std::vector<ReadEvent> WriteAndRead() {
    std::string path = dir_.File("t.pb.zst");
    auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(), {});
    EXPECT_TRUE(writer.ok());
    RecordEncoder encoder(&strings_, writer->get());
    rings_->DrainAll(
        [&](const ThreadRing&, const Record& head, const Record* ext) {
          EXPECT_TRUE(encoder.Add(head, ext)) << RecordKindName(head.kind);
        },
        SIZE_MAX);
    encoder.AddDrops(rings_->CollectDrops());
    EXPECT_TRUE((*writer)->Close(0).ok());
    return ReadEvents(path);
  }

  ::lumos::testing::TempDir dir_;
  StringTable strings_;
  std::unique_ptr<ThreadRings> rings_;
};

TEST_F(RecordEncodingTest, HostRecordsRoundTrip) {
  Record api = Head(RecordKind::kApiCall, 1000, 1100);
  ApiCallPayload& a = api.payload.api_call;
  a = {.stream_id = 21,
       .event_id = 15,
       .graph_id = 17,
       .correlation_id = 12,
       .name_id = strings_.Intern("cudaLaunchKernel"),
       .return_code = 700,
       .cbid = 211,
       .api_kind = static_cast<uint8_t>(schema::ApiKind::kLaunchKernel),
       .domain = static_cast<uint8_t>(schema::ApiDomain::kRuntime)};
  Record api_ext{};
  api_ext.payload.api_call_ext.external_id = 16;
  ASSERT_TRUE(rings_->Push(api, api_ext));

  Record sync = Head(RecordKind::kSync, 4000, 4500);
  sync.payload.sync = {.stream_id = 23,
                       .event_id = 61,
                       .cuda_event_sync_id = 62,
                       .correlation_id = 63,
                       .context_id = 1,
                       .event_record_correlation_id = 64,
                       .sync_type = static_cast<uint8_t>(schema::SyncType::kStreamWaitEvent)};
  Record sync_ext{};
  sync_ext.payload.sync_ext = {.wait_on_stream_id = 21, .external_id = 65};
  ASSERT_TRUE(rings_->Push(sync, sync_ext));

  Record nvtx = Head(RecordKind::kNvtxRange, 5000, 9000);
  SetNvtxInlineName(&nvtx, "forward");
  nvtx.payload.nvtx.domain_id = strings_.Intern("PyTorch");
  nvtx.payload.nvtx.color_argb = 0xff00ff00;
  nvtx.payload.nvtx.category = 7;
  nvtx.payload.nvtx.depth = 2;
  nvtx.payload.nvtx.nvtx_kind = static_cast<uint8_t>(schema::NvtxKind::kPushPop);
  Record nvtx_ext{};
  nvtx_ext.payload.nvtx_ext = {.range_id = 71, .end_thread_id = 12};
  ASSERT_TRUE(rings_->Push(nvtx, nvtx_ext));

  Record collective = Head(RecordKind::kCollective, 6000, 6100);
  collective.flags = kRecordFlagHasHostTime;
  collective.payload.collective = {.comm_id = 0xabcdef,
                                   .seq_number = 81,
                                   .count = 1000,
                                   .stream_id = 24,
                                   .op = static_cast<uint8_t>(schema::CollectiveOp::kAllReduce),
                                   .data_type = static_cast<uint8_t>(schema::DataType::kBfloat16),
                                   .reduce_op = static_cast<uint8_t>(schema::ReduceOp::kSum),
                                   .algorithm = static_cast<uint8_t>(schema::NcclAlgorithm::kRing),
                                   .protocol = static_cast<uint8_t>(schema::NcclProtocol::kSimple),
                                   .channels = 32};
  Record collective_ext{};
  collective_ext.payload.collective_ext = {.bytes = 2000,
                                           .gpu_start_offset_ns = 50,
                                           .gpu_duration_ns = 900,
                                           .root_rank = 0,
                                           .peer_rank = 1,
                                           .correlation_id = 82,
                                           .comm_size = 8};
  ASSERT_TRUE(rings_->Push(collective, collective_ext));

  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 4u);
  ExpectEvent(events[0],
              "api_call { duration_ns: 100 thread_id: 11 correlation_id: 12 "
              "kind: API_KIND_LAUNCH_KERNEL cbid: 211 stream_id: 21 event_id: 15 "
              "domain: API_DOMAIN_RUNTIME external_id: 16 graph_id: 17 return_code: 700 }",
              1000);
  EXPECT_EQ(events[0].name, "cudaLaunchKernel");
  ExpectEvent(events[1],
              "sync { duration_ns: 500 sync_type: SYNC_TYPE_STREAM_WAIT_EVENT correlation_id: 63 "
              "stream_id: 23 event_id: 61 cuda_event_sync_id: 62 wait_on_stream_id: 21 "
              "event_record_correlation_id: 64 device_id: 3 context_id: 1 thread_id: 11 "
              "external_id: 65 }",
              4000);
  ExpectEvent(events[2],
              "nvtx { duration_ns: 4000 thread_id: 11 kind: NVTX_KIND_PUSH_POP depth: 2 "
              "color_argb: 4278255360 category: 7 range_id: 71 end_thread_id: 12 }",
              5000);
  EXPECT_EQ(events[2].name, "forward");
  EXPECT_EQ(events[2].domain, "PyTorch");
  ExpectEvent(events[3],
              "collective { duration_ns: 100 comm_id: 11259375 seq_number: 81 "
              "op: COLLECTIVE_OP_ALL_REDUCE count: 1000 data_type: DATA_TYPE_BFLOAT16 bytes: 2000 "
              "root_rank: 0 peer_rank: 1 stream_id: 24 gpu_start_offset_ns: 50 "
              "gpu_duration_ns: 900 algorithm: NCCL_ALGORITHM_RING protocol: NCCL_PROTOCOL_SIMPLE "
              "channels: 32 device_id: 3 reduce_op: REDUCE_OP_SUM correlation_id: 82 "
              "thread_id: 11 comm_size: 8 has_host_time: true }",
              6000);
}

TEST_F(RecordEncodingTest, GpuRecordsRoundTrip) {
  Record kernel = Head(RecordKind::kKernel, 2000, 2500);
  kernel.thread_id = 0;
  kernel.payload.kernel = {.stream_id = 21,
                           .correlation_id = 12,
                           .name_id = strings_.Intern("sm90_xmma_gemm_bf16"),
                           .grid_x = 132,
                           .grid_y = 2,
                           .grid_z = 3,
                           .block_x = 384,
                           .block_y = 1,
                           .block_z = 2,
                           .registers_per_thread = 168,
                           .static_shared_memory_bytes = 1024,
                           .dynamic_shared_memory_bytes = 232448};
  Record kernel_ext{};
  kernel_ext.payload.kernel_ext = {
      .graph_id = 31,
      .graph_node_id = 32,
      .external_id = 16,
      .context_id = 1,
      .cluster_x = 2,
      .cluster_y = 1,
      .cluster_z = 1,
      .launch_type = static_cast<uint8_t>(schema::LaunchType::kCluster)};
  ASSERT_TRUE(rings_->Push(kernel, kernel_ext));

  Record copy = Head(RecordKind::kMemcpy, 3000, 3300);
  copy.payload.memcpy = {.stream_id = 22,
                         .bytes = 262144,
                         .graph_node_id = 41,
                         .correlation_id = 42,
                         .context_id = 1,
                         .src_device_id = 3,
                         .dst_device_id = 4,
                         .copy_kind = static_cast<uint8_t>(schema::CopyKind::kPtop),
                         .src_kind = static_cast<uint8_t>(schema::MemoryKind::kDevice),
                         .dst_kind = static_cast<uint8_t>(schema::MemoryKind::kDevice)};
  Record external{};
  external.payload.external_ext.external_id = 43;
  ASSERT_TRUE(rings_->Push(copy, external));

  Record fill = Head(RecordKind::kMemset, 3500, 3510);
  fill.payload.memset = {.stream_id = 22,
                         .bytes = 4096,
                         .graph_node_id = 51,
                         .correlation_id = 52,
                         .context_id = 1,
                         .value = 255,
                         .memory_kind = static_cast<uint8_t>(schema::MemoryKind::kDevice)};
  external.payload.external_ext.external_id = 53;
  ASSERT_TRUE(rings_->Push(fill, external));

  Record event = Head(RecordKind::kCudaEventRecord, 4600, 4600);
  event.flags = kRecordFlagDeviceTimestamp;
  event.payload.cuda_event = {.event_id = 61,
                              .stream_id = 21,
                              .cuda_event_sync_id = 62,
                              .correlation_id = 64,
                              .context_id = 1};
  ASSERT_TRUE(rings_->Push(event));

  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 4u);
  ExpectEvent(events[0],
              "kernel { duration_ns: 500 correlation_id: 12 stream_id: 21 device_id: 3 "
              "grid_x: 132 grid_y: 2 grid_z: 3 block_x: 384 block_y: 1 block_z: 2 "
              "registers_per_thread: 168 static_shared_memory_bytes: 1024 "
              "dynamic_shared_memory_bytes: 232448 context_id: 1 graph_id: 31 graph_node_id: 32 "
              "launch_type: LAUNCH_TYPE_CLUSTER external_id: 16 cluster_x: 2 cluster_y: 1 "
              "cluster_z: 1 }",
              2000);
  EXPECT_EQ(events[0].name, "sm90_xmma_gemm_bf16");
  ExpectEvent(events[1],
              "memcpy { duration_ns: 300 correlation_id: 42 stream_id: 22 bytes: 262144 "
              "copy_kind: COPY_KIND_PTOP device_id: 3 src_kind: MEMORY_KIND_DEVICE "
              "dst_kind: MEMORY_KIND_DEVICE src_device_id: 3 dst_device_id: 4 context_id: 1 "
              "graph_node_id: 41 external_id: 43 }",
              3000);
  ExpectEvent(events[2],
              "memset { duration_ns: 10 correlation_id: 52 stream_id: 22 bytes: 4096 value: 255 "
              "device_id: 3 memory_kind: MEMORY_KIND_DEVICE context_id: 1 graph_node_id: 51 "
              "external_id: 53 }",
              3500);
  ExpectEvent(events[3],
              "cuda_event { correlation_id: 64 event_id: 61 stream_id: 21 cuda_event_sync_id: 62 "
              "device_id: 3 context_id: 1 has_device_timestamp: true }",
              4600);
}

TEST_F(RecordEncodingTest, MissingExtensionsReadAsUnknown) {
  Record collective = Head(RecordKind::kCollective, 100, 200);
  collective.payload.collective.count = 1000;
  collective.payload.collective.data_type = static_cast<uint8_t>(schema::DataType::kFloat32);
  ASSERT_TRUE(rings_->Push(collective));
  Record kernel = Head(RecordKind::kKernel, 300, 250);  // End before start: duration 0.
  kernel.payload.kernel.correlation_id = 5;
  ASSERT_TRUE(rings_->Push(kernel));
  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 2u);
  ExpectEvent(events[0],
              "collective { duration_ns: 100 count: 1000 data_type: DATA_TYPE_FLOAT32 "
              "bytes: 4000 device_id: 3 thread_id: 11 }",
              100, /*all_fields=*/false);
  EXPECT_FALSE(events[0].packet.collective().has_root_rank());
  EXPECT_FALSE(events[0].packet.collective().has_peer_rank());
  ExpectEvent(events[1], "kernel { correlation_id: 5 device_id: 3 }", 300, false);
}

// Communicators carry every field a record can hold (global_ranks is left to importers).
TEST_F(RecordEncodingTest, CommunicatorsRoundTrip) {
  Record comm = Head(RecordKind::kCommunicator, 700, 700);
  comm.payload.communicator = {.comm_id = 0xc0ffee,
                               .parent_comm_id = 0xbeef,
                               .rank = 2,
                               .comm_size = 4,
                               .name_id = strings_.Intern("tp_group")};
  ASSERT_TRUE(rings_->Push(comm));
  Record unnamed = Head(RecordKind::kCommunicator, 800, 800);
  unnamed.payload.communicator = {.comm_id = 5, .rank = 0, .comm_size = 1};
  ASSERT_TRUE(rings_->Push(unnamed));
  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 2u);
  ExpectEvent(events[0],
              "communicator { comm_id: 12648430 rank: 2 comm_size: 4 device_id: 3 "
              "name: \"tp_group\" parent_comm_id: 48879 }",
              700, /*all_fields=*/false);
  ExpectEvent(events[1], "communicator { comm_id: 5 comm_size: 1 device_id: 3 }", 800, false);
  EXPECT_STREQ(RecordKindName(RecordKind::kCommunicator), "communicator");
}

TEST_F(RecordEncodingTest, GemmCallsRoundTrip) {
  Record gemm = Head(RecordKind::kGemmCall, 900, 1'400);
  gemm.payload.gemm = {.stream_id = 0x5000,
                       .m = 4096,
                       .n = 1024,
                       .k = 8192,
                       .batch_count = 2,
                       .return_code = 7,
                       .api = static_cast<uint8_t>(schema::GemmApi::kCublasGemmStridedBatchedEx),
                       .transa = static_cast<uint8_t>(schema::GemmTranspose::kT),
                       .transb = static_cast<uint8_t>(schema::GemmTranspose::kC),
                       .a_type = static_cast<uint8_t>(schema::DataType::kFloat8E4m3),
                       .b_type = static_cast<uint8_t>(schema::DataType::kFloat8E5m2),
                       .c_type = static_cast<uint8_t>(schema::DataType::kBfloat16),
                       .d_type = static_cast<uint8_t>(schema::DataType::kFloat32),
                       .compute_type = static_cast<uint8_t>(schema::GemmComputeType::kFloat32),
                       .math_mode = static_cast<uint8_t>(schema::GemmMathMode::kTf32TensorOp)};
  ASSERT_TRUE(rings_->Push(gemm));
  // Dimensions beyond 32 bits: the extension's, not the head's (which holds UINT32_MAX).
  Record wide = Head(RecordKind::kGemmCall, 2'000, 2'000);
  wide.payload.gemm = {.m = UINT32_MAX, .n = 3, .k = UINT32_MAX, .batch_count = 1};
  Record extension{};
  extension.kind = RecordKind::kExtension;
  extension.payload.gemm_ext = {.m = 5'000'000'000, .n = 3, .k = 1ull << 40, .batch_count = 1};
  ASSERT_TRUE(rings_->Push(wide, extension));
  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 2u);
  ExpectEvent(
      events[0],
      "gemm_call { duration_ns: 500 thread_id: 11 api: GEMM_API_CUBLAS_GEMM_STRIDED_BATCHED_EX "
      "m: 4096 n: 1024 k: 8192 batch_count: 2 transa: GEMM_TRANSPOSE_T "
      "transb: GEMM_TRANSPOSE_C a_type: DATA_TYPE_FLOAT8_E4M3 b_type: DATA_TYPE_FLOAT8_E5M2 "
      "c_type: DATA_TYPE_BFLOAT16 d_type: DATA_TYPE_FLOAT32 "
      "compute_type: GEMM_COMPUTE_TYPE_FLOAT32 math_mode: GEMM_MATH_MODE_TF32_TENSOR_OP "
      "stream_id: 20480 return_code: 7 }",
      900, /*all_fields=*/false);
  ExpectEvent(events[1],
              "gemm_call { thread_id: 11 m: 5000000000 n: 3 k: 1099511627776 batch_count: 1 }",
              2'000, false);
  EXPECT_STREQ(RecordKindName(RecordKind::kGemmCall), "gemm_call");
}

TEST_F(RecordEncodingTest, NvtxNamesInlineTruncatedAndInterned) {
  Record inline_name = Head(RecordKind::kNvtxRange, 10, 20);
  SetNvtxInlineName(&inline_name, "exactly_24_bytes_long_ab");
  ASSERT_TRUE(rings_->Push(inline_name));
  Record truncated = Head(RecordKind::kNvtxRange, 30, 40);
  SetNvtxInlineName(&truncated, "decoder.layers.0.self_attention.linear_qkv");
  ASSERT_TRUE(rings_->Push(truncated));
  Record interned = Head(RecordKind::kNvtxRange, 50, 60);
  SetNvtxNameId(&interned, strings_.Intern("decoder.layers.0.self_attention.linear_qkv"));
  ASSERT_TRUE(rings_->Push(interned));
  Record unnamed = Head(RecordKind::kNvtxRange, 70, 70);
  SetNvtxInlineName(&unnamed, nullptr);
  ASSERT_TRUE(rings_->Push(unnamed));
  std::vector<ReadEvent> events = WriteAndRead();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].name, "exactly_24_bytes_long_ab");
  EXPECT_EQ(events[1].name, "decoder.layers.0.self_at...");
  EXPECT_EQ(events[2].name, "decoder.layers.0.self_attention.linear_qkv");
  EXPECT_EQ(events[3].name, "");
  EXPECT_EQ(events[0].domain, "");  // Default domain.
}

TEST_F(RecordEncodingTest, RingDropsBecomeLossRecords) {
  for (int i = 0; i < 70; ++i) rings_->Push(Head(RecordKind::kApiCall, 1000 + i, 1001 + i));
  std::string path = dir_.File("loss.pb.zst");
  auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(), {});
  ASSERT_TRUE(writer.ok());
  RecordEncoder encoder(&strings_, writer->get());
  encoder.AddDrops(rings_->CollectDrops());
  ASSERT_TRUE((*writer)->Close(0).ok());
  std::vector<ReadEvent> events = ReadEvents(path);
  ASSERT_EQ(events.size(), 1u);
  const pb::LossRecord& loss = events[0].packet.loss();
  EXPECT_EQ(loss.source(), pb::LOSS_SOURCE_RING_FULL);
  EXPECT_EQ(loss.count(), 6u);
  EXPECT_EQ(loss.thread_id(), rings_->CurrentThreadRing()->thread_id());
  EXPECT_EQ(events[0].start_ns, 1064);
  EXPECT_EQ(loss.duration_ns(), 5u);
  EXPECT_EQ(loss.detail(), "per-thread ring full");
}

TEST_F(RecordEncodingTest, CountsMalformedRecords) {
  std::string path = dir_.File("bad.pb.zst");
  auto writer = schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(), {});
  ASSERT_TRUE(writer.ok());
  RecordEncoder encoder(&strings_, writer->get());
  Record invalid{};
  Record stray = Head(RecordKind::kExtension, 1, 2);
  Record bad_kind = Head(static_cast<RecordKind>(200), 1, 2);
  Record api = Head(RecordKind::kApiCall, 1, 2);
  EXPECT_FALSE(encoder.Add(invalid, nullptr));
  EXPECT_FALSE(encoder.Add(stray, nullptr));
  EXPECT_FALSE(encoder.Add(bad_kind, nullptr));
  EXPECT_FALSE(encoder.Add(api, &api));  // The "extension" is not one.
  EXPECT_TRUE(encoder.Add(api, nullptr));
  EXPECT_EQ(encoder.malformed(), 4u);
  EXPECT_EQ(encoder.events(), 1u);
  ASSERT_TRUE((*writer)->Close(0).ok());
  EXPECT_EQ(ReadEvents(path).size(), 1u);
}

TEST(RecordEncodingFunctionsTest, KindNamesAndElementSizes) {
  EXPECT_STREQ(RecordKindName(RecordKind::kCudaEventRecord), "cuda_event_record");
  EXPECT_STREQ(RecordKindName(static_cast<RecordKind>(77)), "invalid");
  EXPECT_EQ(schema::DataTypeBytes(schema::DataType::kBfloat16), 2u);
  EXPECT_EQ(schema::DataTypeBytes(schema::DataType::kFloat8E4m3), 1u);
  EXPECT_EQ(schema::DataTypeBytes(schema::DataType::kUint64), 8u);
  EXPECT_EQ(schema::DataTypeBytes(schema::DataType::kUnspecified), 0u);
}

}  // namespace
}  // namespace lumos::agent
