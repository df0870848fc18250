#include "agent/writer/packet_encoder.h"

#include <cstring>

#include "schema/format.h"

namespace lumos::agent {
namespace {

namespace pf = schema::packet_field;

// Bound on the bytes of any event packet without its strings: ~22 scalar fields plus two
// nesting levels of slack (see WireBuffer::EndNested).
constexpr size_t kEventBound = 32 * kMaxScalarFieldBytes;

// Incremental ids (schema/lumos/trace.proto): the wire value is the zigzag delta from the
// previous value of the same field in a packet of the same kind in this frame.
uint64_t Delta(uint64_t* last, uint64_t value) {
  auto delta = static_cast<int64_t>(value - *last);
  *last = value;
  return (static_cast<uint64_t>(delta) << 1) ^ static_cast<uint64_t>(delta >> 63);
}

template <typename E>
uint64_t U(E value) {
  return static_cast<uint64_t>(value);
}

}  // namespace

uint64_t PacketEncoder::Intern(std::string_view value) {
  if (value.empty()) return 0;
  // Names mostly come from stable storage (CUPTI's kernel names, literals), so the same
  // pointer recurs: a direct-mapped cache keyed by (pointer, length) skips hashing the whole
  // name. The memcmp keeps it correct when a buffer is reused for other text.
  auto address = reinterpret_cast<uintptr_t>(value.data());
  CacheEntry& entry = cache_[((address >> 4) ^ value.size()) % kCacheEntries];
  if (entry.data == value.data() && entry.stored != nullptr &&
      entry.stored->size() == value.size() &&
      std::memcmp(entry.stored->data(), value.data(), value.size()) == 0) {
    return entry.iid;
  }
  auto it = interned_ids_.find(value);
  if (it == interned_ids_.end()) it = AddInterned(value);
  entry = CacheEntry{value.data(), &it->first, it->second};
  return it->second;
}

PacketEncoder::InternMap::iterator PacketEncoder::AddInterned(std::string_view value) {
  uint64_t iid = next_iid_++;
  auto it = interned_ids_.emplace(std::string(value), iid).first;
  // TracePacket { interned { iid, value } }
  interned_.EnsureRoom(value.size() + 6 * kMaxScalarFieldBytes);
  size_t packet = interned_.BeginNested(1);
  size_t body = interned_.BeginNested(pf::kInterned);
  interned_.PutUint(1, iid);
  interned_.PutString(2, value);
  interned_.EndNested(body);
  interned_.EndNested(packet);
  ++packets_;
  return it;
}

PacketEncoder::Slots PacketEncoder::BeginPacket(uint32_t field, int64_t start_ns, size_t bound) {
  events_.EnsureRoom(bound);
  Slots slots;
  slots.packet = events_.BeginNested(1);
  if (!frame_has_time_) {
    frame_has_time_ = true;
    base_time_ns_ = start_ns;
    last_time_ns_ = start_ns;
  }
  // Unsigned subtraction: wraps instead of overflowing for times far apart.
  int64_t delta =
      static_cast<int64_t>(static_cast<uint64_t>(start_ns) - static_cast<uint64_t>(last_time_ns_));
  last_time_ns_ = start_ns;
  events_.PutSintAlways(pf::kStartDeltaNs, delta);
  slots.body = events_.BeginNested(field);
  return slots;
}

PacketEncoder::Slots PacketEncoder::BeginUntimedPacket(uint32_t field, size_t bound) {
  events_.EnsureRoom(bound);
  Slots slots;
  slots.packet = events_.BeginNested(1);
  slots.body = events_.BeginNested(field);
  return slots;
}

void PacketEncoder::EndPacket(Slots slots) {
  events_.EndNested(slots.body);
  events_.EndNested(slots.packet);
  ++packets_;
}

void PacketEncoder::Add(const KernelEvent& e) {
  uint64_t name = Intern(e.name);
  Slots s = BeginPacket(pf::kKernel, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, Delta(&ids_[pf::kKernel].correlation, e.correlation_id));
  b.PutUint(3, e.stream_id);
  b.PutUint(4, name);
  b.PutUint(5, e.device_id);
  b.PutUint(6, e.grid.x);
  b.PutUint(7, e.grid.y);
  b.PutUint(8, e.grid.z);
  b.PutUint(9, e.block.x);
  b.PutUint(10, e.block.y);
  b.PutUint(11, e.block.z);
  b.PutUint(12, e.registers_per_thread);
  b.PutUint(13, e.static_shared_memory_bytes);
  b.PutUint(14, e.dynamic_shared_memory_bytes);
  b.PutUint(15, e.context_id);
  b.PutUint(16, e.graph_id);
  b.PutUint(17, e.graph_node_id);
  b.PutUint(18, U(e.launch_type));
  b.PutUint(19, Delta(&ids_[pf::kKernel].external, e.external_id));
  b.PutUint(20, e.cluster.x);
  b.PutUint(21, e.cluster.y);
  b.PutUint(22, e.cluster.z);
  EndPacket(s);
}

void PacketEncoder::Add(const ApiCallEvent& e) {
  uint64_t name = Intern(e.name);
  Slots s = BeginPacket(pf::kApiCall, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, e.thread_id);
  b.PutUint(3, Delta(&ids_[pf::kApiCall].correlation, e.correlation_id));
  b.PutUint(4, U(e.kind));
  b.PutUint(5, e.cbid);
  b.PutUint(6, name);
  b.PutUint(7, e.stream_id);
  b.PutUint(8, e.event_id);
  b.PutUint(9, U(e.domain));
  b.PutUint(10, Delta(&ids_[pf::kApiCall].external, e.external_id));
  b.PutUint(11, e.graph_id);
  b.PutInt(12, e.return_code);
  EndPacket(s);
}

void PacketEncoder::Add(const MemcpyEvent& e) {
  Slots s = BeginPacket(pf::kMemcpy, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, Delta(&ids_[pf::kMemcpy].correlation, e.correlation_id));
  b.PutUint(3, e.stream_id);
  b.PutUint(4, e.bytes);
  b.PutUint(5, U(e.copy_kind));
  b.PutUint(6, e.device_id);
  b.PutUint(7, U(e.src_kind));
  b.PutUint(8, U(e.dst_kind));
  b.PutUint(9, e.src_device_id);
  b.PutUint(10, e.dst_device_id);
  b.PutUint(11, e.context_id);
  b.PutUint(12, e.graph_node_id);
  b.PutUint(13, Delta(&ids_[pf::kMemcpy].external, e.external_id));
  EndPacket(s);
}

void PacketEncoder::Add(const MemsetEvent& e) {
  Slots s = BeginPacket(pf::kMemset, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, Delta(&ids_[pf::kMemset].correlation, e.correlation_id));
  b.PutUint(3, e.stream_id);
  b.PutUint(4, e.bytes);
  b.PutUint(5, e.value);
  b.PutUint(6, e.device_id);
  b.PutUint(7, U(e.memory_kind));
  b.PutUint(8, e.context_id);
  b.PutUint(9, e.graph_node_id);
  b.PutUint(10, Delta(&ids_[pf::kMemset].external, e.external_id));
  EndPacket(s);
}

void PacketEncoder::Add(const SyncEvent& e) {
  Slots s = BeginPacket(pf::kSync, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, U(e.sync_type));
  b.PutUint(3, Delta(&ids_[pf::kSync].correlation, e.correlation_id));
  b.PutUint(4, e.stream_id);
  b.PutUint(5, e.event_id);
  b.PutUint(6, e.cuda_event_sync_id);
  b.PutUint(7, e.wait_on_stream_id);
  b.PutUint(8, e.event_record_correlation_id);
  b.PutUint(9, e.device_id);
  b.PutUint(10, e.context_id);
  b.PutUint(11, e.thread_id);
  b.PutUint(12, Delta(&ids_[pf::kSync].external, e.external_id));
  EndPacket(s);
}

void PacketEncoder::Add(const CudaEventRecordEvent& e) {
  Slots s = BeginPacket(pf::kCudaEvent, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, Delta(&ids_[pf::kCudaEvent].correlation, e.correlation_id));
  b.PutUint(2, e.event_id);
  b.PutUint(3, e.stream_id);
  b.PutUint(4, e.cuda_event_sync_id);
  b.PutUint(5, e.device_id);
  b.PutUint(6, e.context_id);
  b.PutBool(7, e.has_device_timestamp);
  EndPacket(s);
}

void PacketEncoder::Add(const NvtxEvent& e) {
  uint64_t name = Intern(e.name);
  uint64_t domain = Intern(e.domain);
  Slots s = BeginPacket(pf::kNvtx, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, e.thread_id);
  b.PutUint(3, name);
  b.PutUint(4, domain);
  b.PutUint(5, U(e.kind));
  b.PutUint(6, e.depth);
  b.PutUint(7, e.color_argb);
  b.PutUint(8, e.category);
  b.PutUint(9, e.range_id);
  b.PutUint(10, e.end_thread_id);
  EndPacket(s);
}

void PacketEncoder::Add(const HostRangeEvent& e) {
  uint64_t name = Intern(e.name);
  Slots s = BeginPacket(pf::kHostRange, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, e.thread_id);
  b.PutUint(3, name);
  b.PutUint(4, U(e.category));
  b.PutUint(5, Delta(&ids_[pf::kHostRange].external, e.external_id));
  b.PutUint(6, Delta(&ids_[pf::kHostRange].sequence, e.sequence_number));
  b.PutUint(7, e.forward_thread_id);
  b.PutUint(8, e.stream_id);
  b.PutUint(9, e.device_id);
  if (e.has_step_number) b.PutIntAlways(10, e.step_number);
  EndPacket(s);
}

void PacketEncoder::Add(const CollectiveEvent& e) {
  Slots s = BeginPacket(pf::kCollective, e.start_ns, kEventBound);
  WireBuffer& b = events_;
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, e.comm_id);
  b.PutUint(3, e.seq_number);
  b.PutUint(4, U(e.op));
  b.PutUint(5, e.count);
  b.PutUint(6, U(e.data_type));
  b.PutUint(7, e.bytes);
  if (e.root_rank >= 0) b.PutIntAlways(8, e.root_rank);
  if (e.peer_rank >= 0) b.PutIntAlways(9, e.peer_rank);
  b.PutUint(10, e.stream_id);
  b.PutSint(11, e.gpu_start_offset_ns);
  b.PutUint(12, e.gpu_duration_ns);
  b.PutUint(13, U(e.algorithm));
  b.PutUint(14, U(e.protocol));
  b.PutUint(15, e.channels);
  b.PutUint(16, e.device_id);
  b.PutUint(17, U(e.reduce_op));
  b.PutUint(18, Delta(&ids_[pf::kCollective].correlation, e.correlation_id));
  b.PutUint(19, e.thread_id);
  b.PutUint(20, e.comm_size);
  b.PutBool(21, e.has_host_time);
  EndPacket(s);
}

void PacketEncoder::Add(const CommunicatorEvent& e) {
  Slots s = BeginPacket(pf::kCommunicator, e.start_ns,
                        kEventBound + e.name.size() + e.global_ranks.size() * 10);
  WireBuffer& b = events_;
  b.PutUint(1, e.comm_id);
  b.PutInt(2, e.rank);
  b.PutUint(3, e.comm_size);
  b.PutUint(4, e.device_id);
  b.PutString(5, e.name);
  if (!e.global_ranks.empty()) {
    // Packed repeated int32: length-delimited run of varints.
    size_t slot = b.BeginNested(6);
    for (int32_t r : e.global_ranks) b.PutVarint(static_cast<uint64_t>(static_cast<int64_t>(r)));
    b.EndNested(slot);
  }
  b.PutUint(7, e.parent_comm_id);
  EndPacket(s);
}

void PacketEncoder::Add(const CaptureWindowEvent& e) {
  Slots s = BeginPacket(pf::kCaptureWindow, e.start_ns, kEventBound);
  events_.PutUint(1, e.duration_ns);
  events_.PutUint(2, e.window_index);
  events_.PutUint(3, U(e.trigger));
  EndPacket(s);
}

void PacketEncoder::Add(const LossEvent& e) {
  Slots s = BeginPacket(pf::kLoss, e.start_ns, kEventBound + e.detail.size());
  events_.PutUint(1, e.duration_ns);
  events_.PutUint(2, U(e.source));
  events_.PutUint(3, e.count);
  events_.PutUint(4, e.thread_id);
  events_.PutString(5, e.detail);
  EndPacket(s);
}

void PacketEncoder::Add(const ThreadEvent& e) {
  Slots s = BeginUntimedPacket(pf::kThread, kEventBound + e.name.size());
  events_.PutUint(1, e.thread_id);
  events_.PutString(2, e.name);
  events_.PutUint(3, e.pid);
  EndPacket(s);
}

void PacketEncoder::AddClockSnapshot(const ClockReading* readings, size_t count) {
  Slots s = BeginUntimedPacket(pf::kClockSnapshot, kEventBound + count * 4 * kMaxScalarFieldBytes);
  for (size_t i = 0; i < count; ++i) {
    size_t reading = events_.BeginNested(1);
    events_.PutUint(1, U(readings[i].clock_id));
    events_.PutUint(2, readings[i].value_ns);
    events_.EndNested(reading);
  }
  EndPacket(s);
}

void PacketEncoder::AddHeader(const HeaderInfo& h) {
  size_t bound = kEventBound * 4 + h.agent_version.size() + h.host_name.size() + h.job_id.size() +
                 h.nccl_version.size() + h.source_path.size() + h.command_line.size();
  for (const DeviceInfo& d : h.devices)
    bound += kEventBound + d.name.size() + d.pci_bus_id.size() + d.uuid.size();
  for (const ClockDomainInfo& c : h.clock_domains) bound += kEventBound + c.name.size();
  bound += (h.capture_config.channels.size() + h.capture_config.channels_failed.size()) * 4;
  // Encoded into events_ as usual, then moved to header_ so it precedes interned strings.
  size_t begin = events_.size();
  Slots s = BeginUntimedPacket(pf::kHeader, bound);
  WireBuffer& b = events_;
  b.PutUint(1, schema::kSchemaMajor);
  b.PutUint(2, schema::kSchemaMinor);
  b.PutString(3, h.agent_version);
  b.PutUint(4, U(h.producer));
  b.PutString(5, h.host_name);
  b.PutUint(6, h.pid);
  b.PutString(7, h.job_id);
  if (h.has_rank) b.PutIntAlways(8, h.rank);
  if (h.has_local_rank) b.PutIntAlways(9, h.local_rank);
  if (h.has_world_size) b.PutIntAlways(10, h.world_size);
  for (const DeviceInfo& d : h.devices) {
    size_t slot = b.BeginNested(11);
    b.PutUint(1, d.device_id);
    b.PutString(2, d.name);
    b.PutUint(3, d.sm_count);
    b.PutUint(4, d.sm_clock_khz);
    b.PutUint(5, d.memory_clock_khz);
    b.PutUint(6, d.memory_bytes);
    b.PutString(7, d.pci_bus_id);
    b.PutUint(8, d.compute_major);
    b.PutUint(9, d.compute_minor);
    b.PutString(10, d.uuid);
    b.PutUint(11, d.memory_bus_width_bits);
    b.EndNested(slot);
  }
  b.PutUint(12, h.cuda_runtime_version);
  b.PutUint(13, h.cuda_driver_version);
  b.PutUint(14, h.cupti_version);
  b.PutString(15, h.nccl_version);
  for (const ClockDomainInfo& c : h.clock_domains) {
    size_t slot = b.BeginNested(16);
    b.PutUint(1, U(c.clock_id));
    b.PutString(2, c.name);
    b.PutUint(3, c.resolution_ns);
    b.EndNested(slot);
  }
  b.PutUint(17, U(h.default_clock_id));
  {
    const CaptureConfigInfo& c = h.capture_config;
    size_t slot = b.BeginNested(18);
    // Repeated enums are packed in proto3: one length-delimited run each.
    for (uint32_t field : {1u, 2u}) {
      const auto& list = field == 1 ? c.channels : c.channels_failed;
      if (list.empty()) continue;
      size_t run = b.BeginNested(field);
      for (schema::Channel ch : list) b.PutVarint(U(ch));
      b.EndNested(run);
    }
    b.PutUint(3, c.ring_bytes);
    b.PutUint(4, c.activity_buffer_bytes);
    b.PutUint(5, c.activity_buffer_count);
    b.PutUint(6, c.flush_interval_ns);
    b.PutUint(7, c.frame_bytes);
    b.PutUint(8, c.max_file_bytes);
    b.PutInt(9, c.zstd_level);
    b.EndNested(slot);
  }
  b.PutString(19, h.source_path);
  b.PutUint(20, h.start_time_ns);
  b.PutString(21, h.command_line);
  EndPacket(s);
  header_.Clear();
  header_.EnsureRoom(events_.size() - begin);
  header_.PutRaw(events_.data() + begin, events_.size() - begin);
  events_.Truncate(begin);
}

void PacketEncoder::AddTrailer(uint64_t packets_written, uint64_t frames_written,
                               uint64_t events_dropped, uint64_t end_time_ns) {
  Slots s = BeginUntimedPacket(pf::kTrailer, kEventBound);
  events_.PutUint(1, packets_written);
  events_.PutUint(2, frames_written);
  events_.PutUint(3, events_dropped);
  events_.PutUint(4, end_time_ns);
  EndPacket(s);
}

uint64_t PacketEncoder::TakeFrame(WireBuffer* out) {
  out->Clear();
  out->EnsureRoom(8 * kMaxScalarFieldBytes + header_.size() + interned_.size() + events_.size());
  size_t packet = out->BeginNested(1);
  size_t body = out->BeginNested(pf::kFrame);
  out->PutUint(1, frame_index_);
  out->PutUint(2, static_cast<uint64_t>(base_time_ns_));
  out->EndNested(body);
  out->EndNested(packet);
  out->PutRaw(header_.data(), header_.size());
  out->PutRaw(interned_.data(), interned_.size());
  out->PutRaw(events_.data(), events_.size());
  uint64_t packets = packets_ + 1;

  ++frame_index_;
  header_.Clear();
  events_.Clear();
  interned_.Clear();
  interned_ids_.clear();
  for (CacheEntry& entry : cache_) entry = CacheEntry();
  next_iid_ = 1;
  packets_ = 0;
  frame_has_time_ = false;
  base_time_ns_ = 0;
  last_time_ns_ = 0;
  for (IdState& ids : ids_) ids = IdState();
  return packets;
}

}  // namespace lumos::agent
