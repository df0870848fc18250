#include "modeler/trace/event_packets.h"

#include <gtest/gtest.h>

#include <string>

namespace lumos::modeler {
namespace {

constexpr int64_t kStartNs = 1'700'000'000'123'456'789;
constexpr int64_t kDeltaNs = -4321;  // Negative on purpose: start_delta_ns is a sint64.

// Compares one field of `a` and `b` (string_views compare by content).
#define EXPECT_FIELD_EQ(field) EXPECT_EQ(a.field, b.field) << #field

void ExpectEqual(const schema::KernelEvent& a, const schema::KernelEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(name);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(grid.x);
  EXPECT_FIELD_EQ(grid.y);
  EXPECT_FIELD_EQ(grid.z);
  EXPECT_FIELD_EQ(block.x);
  EXPECT_FIELD_EQ(block.y);
  EXPECT_FIELD_EQ(block.z);
  EXPECT_FIELD_EQ(cluster.x);
  EXPECT_FIELD_EQ(cluster.y);
  EXPECT_FIELD_EQ(cluster.z);
  EXPECT_FIELD_EQ(registers_per_thread);
  EXPECT_FIELD_EQ(static_shared_memory_bytes);
  EXPECT_FIELD_EQ(dynamic_shared_memory_bytes);
  EXPECT_FIELD_EQ(context_id);
  EXPECT_FIELD_EQ(graph_id);
  EXPECT_FIELD_EQ(graph_node_id);
  EXPECT_FIELD_EQ(launch_type);
  EXPECT_FIELD_EQ(external_id);
}

void ExpectEqual(const schema::ApiCallEvent& a, const schema::ApiCallEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(thread_id);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(kind);
  EXPECT_FIELD_EQ(cbid);
  EXPECT_FIELD_EQ(name);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(event_id);
  EXPECT_FIELD_EQ(domain);
  EXPECT_FIELD_EQ(external_id);
  EXPECT_FIELD_EQ(graph_id);
  EXPECT_FIELD_EQ(return_code);
}

void ExpectEqual(const schema::MemcpyEvent& a, const schema::MemcpyEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(bytes);
  EXPECT_FIELD_EQ(copy_kind);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(src_kind);
  EXPECT_FIELD_EQ(dst_kind);
  EXPECT_FIELD_EQ(src_device_id);
  EXPECT_FIELD_EQ(dst_device_id);
  EXPECT_FIELD_EQ(context_id);
  EXPECT_FIELD_EQ(graph_node_id);
  EXPECT_FIELD_EQ(external_id);
}

void ExpectEqual(const schema::MemsetEvent& a, const schema::MemsetEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(bytes);
  EXPECT_FIELD_EQ(value);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(memory_kind);
  EXPECT_FIELD_EQ(context_id);
  EXPECT_FIELD_EQ(graph_node_id);
  EXPECT_FIELD_EQ(external_id);
}

void ExpectEqual(const schema::SyncEvent& a, const schema::SyncEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(sync_type);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(event_id);
  EXPECT_FIELD_EQ(cuda_event_sync_id);
  EXPECT_FIELD_EQ(wait_on_stream_id);
  EXPECT_FIELD_EQ(event_record_correlation_id);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(context_id);
  EXPECT_FIELD_EQ(thread_id);
  EXPECT_FIELD_EQ(external_id);
}

void ExpectEqual(const schema::CudaEventRecordEvent& a, const schema::CudaEventRecordEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(event_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(cuda_event_sync_id);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(context_id);
  EXPECT_FIELD_EQ(has_device_timestamp);
}

void ExpectEqual(const schema::NvtxEvent& a, const schema::NvtxEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(thread_id);
  EXPECT_FIELD_EQ(name);
  EXPECT_FIELD_EQ(domain);
  EXPECT_FIELD_EQ(kind);
  EXPECT_FIELD_EQ(depth);
  EXPECT_FIELD_EQ(color_argb);
  EXPECT_FIELD_EQ(category);
  EXPECT_FIELD_EQ(range_id);
  EXPECT_FIELD_EQ(end_thread_id);
}

void ExpectEqual(const schema::HostRangeEvent& a, const schema::HostRangeEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(thread_id);
  EXPECT_FIELD_EQ(name);
  EXPECT_FIELD_EQ(category);
  EXPECT_FIELD_EQ(external_id);
  EXPECT_FIELD_EQ(sequence_number);
  EXPECT_FIELD_EQ(forward_thread_id);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(has_step_number);
  EXPECT_FIELD_EQ(step_number);
}

void ExpectEqual(const schema::CollectiveEvent& a, const schema::CollectiveEvent& b) {
  EXPECT_FIELD_EQ(start_ns);
  EXPECT_FIELD_EQ(duration_ns);
  EXPECT_FIELD_EQ(comm_id);
  EXPECT_FIELD_EQ(seq_number);
  EXPECT_FIELD_EQ(op);
  EXPECT_FIELD_EQ(count);
  EXPECT_FIELD_EQ(data_type);
  EXPECT_FIELD_EQ(bytes);
  EXPECT_FIELD_EQ(root_rank);
  EXPECT_FIELD_EQ(peer_rank);
  EXPECT_FIELD_EQ(stream_id);
  EXPECT_FIELD_EQ(gpu_start_offset_ns);
  EXPECT_FIELD_EQ(gpu_duration_ns);
  EXPECT_FIELD_EQ(algorithm);
  EXPECT_FIELD_EQ(protocol);
  EXPECT_FIELD_EQ(channels);
  EXPECT_FIELD_EQ(device_id);
  EXPECT_FIELD_EQ(reduce_op);
  EXPECT_FIELD_EQ(correlation_id);
  EXPECT_FIELD_EQ(thread_id);
  EXPECT_FIELD_EQ(comm_size);
  EXPECT_FIELD_EQ(has_host_time);
}

#undef EXPECT_FIELD_EQ

class EventPacketsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(table_.Set(3, "gemm_kernel").ok());
    ASSERT_TRUE(table_.Set(5, "cudaLaunchKernel").ok());
    ASSERT_TRUE(table_.Set(7, "forward").ok());
    ASSERT_TRUE(table_.Set(8, "my_domain").ok());
    ASSERT_TRUE(table_.Set(11, "aten::mm").ok());
  }

  // Converts `e` to a packet and back; expects exactly one event, of the kind in `vector_of`.
  template <typename Event, typename Vector>
  const Event& RoundTrip(const Event& e, Vector FrameEvents::*vector_of) {
    EventToPacket(e, table_, kDeltaNs, &packet_);
    EXPECT_TRUE(packet_.has_start_delta_ns());
    EXPECT_EQ(packet_.start_delta_ns(), kDeltaNs);
    EXPECT_TRUE(AppendEventFromPacket(packet_, kStartNs, table_, &frame_));
    EXPECT_EQ(frame_.column_events(), 1u);
    const Vector& events = frame_.*vector_of;
    EXPECT_EQ(events.size(), 1u);
    return events.back();
  }

  InternTable table_;
  pb::TracePacket packet_;
  FrameEvents frame_;
};

TEST_F(EventPacketsTest, KernelRoundTrips) {
  schema::KernelEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 101;
  e.correlation_id = 102;
  e.stream_id = 103;
  e.name = table_.Get(3);
  e.device_id = 104;
  e.grid = {105, 106, 107};
  e.block = {108, 109, 110};
  e.cluster = {111, 112, 113};
  e.registers_per_thread = 114;
  e.static_shared_memory_bytes = 115;
  e.dynamic_shared_memory_bytes = 116;
  e.context_id = 117;
  e.graph_id = 118;
  e.graph_node_id = 119;
  e.launch_type = schema::LaunchType::kCluster;
  e.external_id = 120;

  const schema::KernelEvent& back = RoundTrip(e, &FrameEvents::kernels);
  ASSERT_TRUE(packet_.has_kernel());
  EXPECT_EQ(packet_.kernel().name_iid(), 3u);
  EXPECT_EQ(packet_.kernel().grid_y(), 106u);
  EXPECT_EQ(packet_.kernel().cluster_z(), 113u);
  EXPECT_EQ(packet_.kernel().launch_type(), pb::LAUNCH_TYPE_CLUSTER);
  EXPECT_EQ(packet_.kernel().external_id(), 120u);
  ExpectEqual(back, e);
  EXPECT_EQ(back.name.data(), table_.Get(3).data());  // A view into the table, not a copy.
}

TEST_F(EventPacketsTest, ApiCallRoundTrips) {
  schema::ApiCallEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 201;
  e.thread_id = 202;
  e.correlation_id = 203;
  e.kind = schema::ApiKind::kLaunchKernel;
  e.cbid = 204;
  e.name = table_.Get(5);
  e.stream_id = 205;
  e.event_id = 206;
  e.domain = schema::ApiDomain::kDriver;
  e.external_id = 207;
  e.graph_id = 208;
  e.return_code = -209;

  const schema::ApiCallEvent& back = RoundTrip(e, &FrameEvents::api_calls);
  ASSERT_TRUE(packet_.has_api_call());
  EXPECT_EQ(packet_.api_call().name_iid(), 5u);
  EXPECT_EQ(packet_.api_call().kind(), pb::API_KIND_LAUNCH_KERNEL);
  EXPECT_EQ(packet_.api_call().domain(), pb::API_DOMAIN_DRIVER);
  EXPECT_EQ(packet_.api_call().return_code(), -209);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, MemcpyRoundTrips) {
  schema::MemcpyEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 301;
  e.correlation_id = 302;
  e.stream_id = 303;
  e.bytes = 304;
  e.copy_kind = schema::CopyKind::kPtop;
  e.device_id = 305;
  e.src_kind = schema::MemoryKind::kPinned;
  e.dst_kind = schema::MemoryKind::kDevice;
  e.src_device_id = 306;
  e.dst_device_id = 307;
  e.context_id = 308;
  e.graph_node_id = 309;
  e.external_id = 310;

  const schema::MemcpyEvent& back = RoundTrip(e, &FrameEvents::memcpys);
  ASSERT_TRUE(packet_.has_memcpy());
  EXPECT_EQ(packet_.memcpy().bytes(), 304u);
  EXPECT_EQ(packet_.memcpy().copy_kind(), pb::COPY_KIND_PTOP);
  EXPECT_EQ(packet_.memcpy().dst_kind(), pb::MEMORY_KIND_DEVICE);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, MemsetRoundTrips) {
  schema::MemsetEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 401;
  e.correlation_id = 402;
  e.stream_id = 403;
  e.bytes = 404;
  e.value = 405;
  e.device_id = 406;
  e.memory_kind = schema::MemoryKind::kManaged;
  e.context_id = 407;
  e.graph_node_id = 408;
  e.external_id = 409;

  const schema::MemsetEvent& back = RoundTrip(e, &FrameEvents::memsets);
  ASSERT_TRUE(packet_.has_memset());
  EXPECT_EQ(packet_.memset().value(), 405u);
  EXPECT_EQ(packet_.memset().memory_kind(), pb::MEMORY_KIND_MANAGED);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, SyncRoundTrips) {
  schema::SyncEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 501;
  e.sync_type = schema::SyncType::kStreamWaitEvent;
  e.correlation_id = 502;
  e.stream_id = 503;
  e.event_id = 504;
  e.cuda_event_sync_id = 505;
  e.wait_on_stream_id = 506;
  e.event_record_correlation_id = 507;
  e.device_id = 508;
  e.context_id = 509;
  e.thread_id = 510;
  e.external_id = 511;

  const schema::SyncEvent& back = RoundTrip(e, &FrameEvents::syncs);
  ASSERT_TRUE(packet_.has_sync());
  EXPECT_EQ(packet_.sync().sync_type(), pb::SYNC_TYPE_STREAM_WAIT_EVENT);
  EXPECT_EQ(packet_.sync().event_record_correlation_id(), 507u);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, CudaEventRecordRoundTrips) {
  schema::CudaEventRecordEvent e;
  e.start_ns = kStartNs;
  e.correlation_id = 601;
  e.event_id = 602;
  e.stream_id = 603;
  e.cuda_event_sync_id = 604;
  e.device_id = 605;
  e.context_id = 606;
  e.has_device_timestamp = true;

  const schema::CudaEventRecordEvent& back = RoundTrip(e, &FrameEvents::cuda_events);
  ASSERT_TRUE(packet_.has_cuda_event());
  EXPECT_EQ(packet_.cuda_event().cuda_event_sync_id(), 604u);
  EXPECT_TRUE(packet_.cuda_event().has_device_timestamp());
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, NvtxRoundTrips) {
  schema::NvtxEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 701;
  e.thread_id = 702;
  e.name = table_.Get(7);
  e.domain = table_.Get(8);
  e.kind = schema::NvtxKind::kStartEnd;
  e.depth = 703;
  e.color_argb = 0xFF00FF00u;
  e.category = 704;
  e.range_id = 705;
  e.end_thread_id = 706;

  const schema::NvtxEvent& back = RoundTrip(e, &FrameEvents::nvtx);
  ASSERT_TRUE(packet_.has_nvtx());
  EXPECT_EQ(packet_.nvtx().name_iid(), 7u);
  EXPECT_EQ(packet_.nvtx().domain_iid(), 8u);
  EXPECT_EQ(packet_.nvtx().kind(), pb::NVTX_KIND_START_END);
  EXPECT_EQ(packet_.nvtx().color_argb(), 0xFF00FF00u);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, HostRangeRoundTrips) {
  schema::HostRangeEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 801;
  e.thread_id = 802;
  e.name = table_.Get(11);
  e.category = schema::HostRangeCategory::kStep;
  e.external_id = 803;
  e.sequence_number = 804;
  e.forward_thread_id = 805;
  e.stream_id = 806;
  e.device_id = 807;
  e.has_step_number = true;
  e.step_number = 808;

  const schema::HostRangeEvent& back = RoundTrip(e, &FrameEvents::host_ranges);
  ASSERT_TRUE(packet_.has_host_range());
  EXPECT_EQ(packet_.host_range().name_iid(), 11u);
  EXPECT_EQ(packet_.host_range().category(), pb::HOST_RANGE_CATEGORY_STEP);
  EXPECT_TRUE(packet_.host_range().has_step_number());
  EXPECT_EQ(packet_.host_range().step_number(), 808);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, HostRangeWithoutStepNumberLeavesItAbsent) {
  schema::HostRangeEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 5;
  e.name = table_.Get(11);
  e.category = schema::HostRangeCategory::kCpuOp;

  const schema::HostRangeEvent& back = RoundTrip(e, &FrameEvents::host_ranges);
  ASSERT_TRUE(packet_.has_host_range());
  EXPECT_FALSE(packet_.host_range().has_step_number());
  EXPECT_FALSE(back.has_step_number);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, CollectiveRoundTrips) {
  schema::CollectiveEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 901;
  e.comm_id = 902;
  e.seq_number = 903;
  e.op = schema::CollectiveOp::kReduce;
  e.count = 904;
  e.data_type = schema::DataType::kBfloat16;
  e.bytes = 905;
  e.root_rank = 3;
  e.peer_rank = 4;
  e.stream_id = 906;
  e.gpu_start_offset_ns = -907;
  e.gpu_duration_ns = 908;
  e.algorithm = schema::NcclAlgorithm::kRing;
  e.protocol = schema::NcclProtocol::kLl128;
  e.channels = 909;
  e.device_id = 910;
  e.reduce_op = schema::ReduceOp::kMax;
  e.correlation_id = 911;
  e.thread_id = 912;
  e.comm_size = 913;
  e.has_host_time = true;

  const schema::CollectiveEvent& back = RoundTrip(e, &FrameEvents::collectives);
  ASSERT_TRUE(packet_.has_collective());
  const pb::NcclCollective& r = packet_.collective();
  EXPECT_EQ(r.op(), pb::COLLECTIVE_OP_REDUCE);
  EXPECT_EQ(r.count(), 904u);
  EXPECT_TRUE(r.has_root_rank());
  EXPECT_EQ(r.root_rank(), 3);
  EXPECT_TRUE(r.has_peer_rank());
  EXPECT_EQ(r.peer_rank(), 4);
  EXPECT_EQ(r.gpu_start_offset_ns(), -907);
  EXPECT_EQ(r.reduce_op(), pb::REDUCE_OP_MAX);
  EXPECT_TRUE(r.has_host_time());
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, CollectiveWithoutRanksLeavesThemAbsent) {
  schema::CollectiveEvent e;
  e.start_ns = kStartNs;
  e.duration_ns = 10;
  e.comm_id = 20;
  e.op = schema::CollectiveOp::kAllReduce;
  e.root_rank = -1;
  e.peer_rank = -1;

  const schema::CollectiveEvent& back = RoundTrip(e, &FrameEvents::collectives);
  ASSERT_TRUE(packet_.has_collective());
  EXPECT_FALSE(packet_.collective().has_root_rank());
  EXPECT_FALSE(packet_.collective().has_peer_rank());
  EXPECT_EQ(back.root_rank, -1);
  EXPECT_EQ(back.peer_rank, -1);
  ExpectEqual(back, e);
}

TEST_F(EventPacketsTest, RootRankZeroIsPresent) {
  schema::CollectiveEvent e;
  e.op = schema::CollectiveOp::kBroadcast;
  e.root_rank = 0;

  const schema::CollectiveEvent& back = RoundTrip(e, &FrameEvents::collectives);
  EXPECT_TRUE(packet_.collective().has_root_rank());
  EXPECT_FALSE(packet_.collective().has_peer_rank());
  EXPECT_EQ(back.root_rank, 0);
  EXPECT_EQ(back.peer_rank, -1);
}

TEST_F(EventPacketsTest, OtherPacketKindsAreNotAppended) {
  pb::TracePacket packet;
  packet.set_start_delta_ns(7);
  packet.mutable_loss()->set_count(3);
  EXPECT_FALSE(AppendEventFromPacket(packet, kStartNs, table_, &frame_));
  EXPECT_EQ(frame_.column_events(), 0u);
  EXPECT_TRUE(frame_.rows.empty());

  pb::TracePacket empty;
  EXPECT_FALSE(AppendEventFromPacket(empty, kStartNs, table_, &frame_));
  EXPECT_EQ(frame_.column_events(), 0u);
}

TEST_F(EventPacketsTest, NameNotFromTableGivesIidZero) {
  std::string copy(table_.Get(3));  // Same text, different storage.
  schema::KernelEvent e;
  e.name = copy;
  EventToPacket(e, table_, 0, &packet_);
  ASSERT_TRUE(packet_.has_kernel());
  EXPECT_EQ(packet_.kernel().name_iid(), 0u);
  EXPECT_TRUE(packet_.has_start_delta_ns());  // Set even when 0.
  EXPECT_EQ(packet_.start_delta_ns(), 0);

  schema::NvtxEvent n;
  n.name = "literal";
  EventToPacket(n, table_, 0, &packet_);
  ASSERT_TRUE(packet_.has_nvtx());
  EXPECT_EQ(packet_.nvtx().name_iid(), 0u);
  EXPECT_EQ(packet_.nvtx().domain_iid(), 0u);  // Empty domain: the default one.

  ASSERT_TRUE(AppendEventFromPacket(packet_, kStartNs, table_, &frame_));
  ASSERT_EQ(frame_.nvtx.size(), 1u);
  EXPECT_TRUE(frame_.nvtx[0].name.empty());
  EXPECT_TRUE(frame_.nvtx[0].domain.empty());
}

TEST_F(EventPacketsTest, EventToPacketClearsThePacket) {
  schema::MemsetEvent memset;
  memset.bytes = 64;
  EventToPacket(memset, table_, 1, &packet_);
  schema::SyncEvent sync;
  sync.sync_type = schema::SyncType::kContextSynchronize;
  EventToPacket(sync, table_, 2, &packet_);
  EXPECT_FALSE(packet_.has_memset());
  ASSERT_TRUE(packet_.has_sync());
  EXPECT_EQ(packet_.start_delta_ns(), 2);
}

TEST_F(EventPacketsTest, AppendKeepsOrderWithinAKind) {
  schema::KernelEvent first;
  first.correlation_id = 1;
  schema::KernelEvent second;
  second.correlation_id = 2;
  EventToPacket(first, table_, 0, &packet_);
  ASSERT_TRUE(AppendEventFromPacket(packet_, 10, table_, &frame_));
  EventToPacket(second, table_, 5, &packet_);
  ASSERT_TRUE(AppendEventFromPacket(packet_, 15, table_, &frame_));
  ASSERT_EQ(frame_.kernels.size(), 2u);
  EXPECT_EQ(frame_.kernels[0].correlation_id, 1u);
  EXPECT_EQ(frame_.kernels[0].start_ns, 10);
  EXPECT_EQ(frame_.kernels[1].correlation_id, 2u);
  EXPECT_EQ(frame_.kernels[1].start_ns, 15);
}

}  // namespace
}  // namespace lumos::modeler
