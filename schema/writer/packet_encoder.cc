#include "schema/writer/packet_encoder.h"

#include <cstring>

#include "schema/format.h"

namespace lumos::schema {
namespace {

namespace pf = schema::packet_field;

// Bound on the bytes of any event packet without its strings: ~22 scalar fields plus two
// nesting levels of slack (see WireBuffer::EndNested).
constexpr size_t kEventBound = 32 * kMaxScalarFieldBytes;

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
  NoteTime(start_ns);
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

// The frequent kinds go to the column encoder; only the frame's time base is noted here.
void PacketEncoder::NoteTime(int64_t start_ns) {
  if (frame_has_time_) return;
  frame_has_time_ = true;
  base_time_ns_ = start_ns;
  last_time_ns_ = start_ns;
  columns_.SetFrameBase(start_ns);
}

void PacketEncoder::Add(const KernelEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e, Intern(e.name));
}

void PacketEncoder::Add(const ApiCallEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e, Intern(e.name));
}

void PacketEncoder::Add(const MemcpyEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e);
}

void PacketEncoder::Add(const MemsetEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e);
}

void PacketEncoder::Add(const SyncEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e);
}

void PacketEncoder::Add(const CudaEventRecordEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e);
}

void PacketEncoder::Add(const NvtxEvent& e) {
  NoteTime(e.start_ns);
  uint64_t name = Intern(e.name);
  columns_.Add(e, name, Intern(e.domain));
}

void PacketEncoder::Add(const HostRangeEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e, Intern(e.name));
}

void PacketEncoder::Add(const CollectiveEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e);
}

void PacketEncoder::Add(const GemmCallEvent& e) {
  NoteTime(e.start_ns);
  columns_.Add(e, Intern(e.name));
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

namespace {

size_t CaptureWindowBound(const CaptureWindowEvent& e) {
  return e.iteration_marker.size() + e.requested_by.size() + e.target.size() +
         e.missed_target.size() + 14 * 11;
}

// A Device message as field `field` of the message being written (TraceHeader 11, Trailer 8).
void PutDevice(WireBuffer& b, uint32_t field, const DeviceInfo& d) {
  size_t slot = b.BeginNested(field);
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

// The fields of CaptureWindow, into `b` (a packet or a nested header field).
void PutCaptureWindowFields(WireBuffer& b, const CaptureWindowEvent& e) {
  b.PutUint(1, e.duration_ns);
  b.PutUint(2, e.window_index);
  b.PutUint(3, U(e.trigger));
  b.PutUint(4, e.first_iteration);
  b.PutUint(5, e.iteration_count);
  b.PutString(6, e.iteration_marker);
  b.PutString(7, e.requested_by);
  b.PutUint(8, e.request_id);
  b.PutString(9, e.target);
  b.PutString(10, e.missed_target);
  b.PutUint(11, e.start_realtime_ns);
  b.PutUint(12, e.requested_iterations);
  b.PutUint(13, e.requested_duration_ns);
}

}  // namespace

void PacketEncoder::Add(const CaptureWindowEvent& e) {
  Slots s = BeginPacket(pf::kCaptureWindow, e.start_ns, kEventBound + CaptureWindowBound(e));
  PutCaptureWindowFields(events_, e);
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
  if (h.has_capture_window) bound += kEventBound + CaptureWindowBound(h.capture_window);
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
  for (const DeviceInfo& d : h.devices) PutDevice(b, 11, d);
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
  if (h.has_capture_window) {
    size_t slot = b.BeginNested(22);
    PutCaptureWindowFields(b, h.capture_window);
    b.EndNested(slot);
  }
  EndPacket(s);
  header_.Clear();
  header_.EnsureRoom(events_.size() - begin);
  header_.PutRaw(events_.data() + begin, events_.size() - begin);
  events_.Truncate(begin);
}

void PacketEncoder::AddTrailer(uint64_t packets_written, uint64_t frames_written,
                               uint64_t events_dropped, uint64_t end_time_ns,
                               uint64_t events_written, const TrailerInfo& extra) {
  size_t bound = kEventBound + extra.nccl_version.size();
  for (const DeviceInfo& d : extra.devices) {
    bound += kEventBound + d.name.size() + d.pci_bus_id.size() + d.uuid.size();
  }
  Slots s = BeginUntimedPacket(pf::kTrailer, bound);
  events_.PutUint(1, packets_written);
  events_.PutUint(2, frames_written);
  events_.PutUint(3, events_dropped);
  events_.PutUint(4, end_time_ns);
  events_.PutUint(5, events_written);
  if (extra.has_rank) events_.PutIntAlways(6, extra.rank);
  if (extra.has_world_size) events_.PutIntAlways(7, extra.world_size);
  for (const DeviceInfo& d : extra.devices) PutDevice(events_, 8, d);
  events_.PutUint(9, extra.cuda_runtime_version);
  events_.PutUint(10, extra.cuda_driver_version);
  events_.PutString(11, extra.nccl_version);
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
  uint64_t packets = packets_ + 1 + columns_.EncodeAndClear(base_time_ns_, out);
  out->EnsureRoom(events_.size());
  out->PutRaw(events_.data(), events_.size());

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
  return packets;
}

}  // namespace lumos::schema
