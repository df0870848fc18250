#include "tests/fuzz/fuzz_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "modeler/trace/trace_reader.h"

namespace lumos::fuzz {
namespace {

namespace pb = modeler::pb;

// Stops the stream in the early-stop pass; must come back unchanged from ReadPackets.
constexpr const char* kStop = "fuzz: stop";
// A few bytes of zstd stand for millions of events (RLE blocks; TraceReader::kMaxFramePackets
// per frame): reading them is right but outlasts libFuzzer's timeout under the sanitizers
// (4M events: ~20 s). Each way of reading stops after this many packets (events), and the two
// are compared only when neither stopped.
constexpr uint64_t kMaxPackets = 1 << 18;
constexpr const char* kEnough = "fuzz: enough";

// What one way of reading delivered. ReadPackets and ReadFrames walk the same frames with the
// same decoder, so on any input (damaged or not) both must see the same events: the nine
// frequent kinds (column entries, or schema-1 rows), the other packets except FramePacket and
// InternedString ("rows"), their start times and the lengths of their names.
struct Tally {
  uint64_t by_kind[9] = {};  // FrameEvents order: kernels .. collectives (TracePacket 2..10).
  uint64_t rows = 0;
  uint64_t start_sum = 0;   // Wrapping sum of the start times.
  uint64_t name_bytes = 0;  // Kernel, API call, NVTX (name and domain), host range names.
  bool operator==(const Tally&) const = default;
};

template <typename List>
void AddStarts(const List& list, Tally* tally) {
  for (const auto& e : list) tally->start_sum += static_cast<uint64_t>(e.start_ns);
}

template <typename List>
void AddNames(const List& list, Tally* tally) {
  for (const auto& e : list) tally->name_bytes += e.name.size();
}

bool SameResult(const modeler::ReadResult& a, const modeler::ReadResult& b) {
  return a.frames == b.frames && a.packets == b.packets && a.stored_packets == b.stored_packets &&
         a.events == b.events && a.bytes_read == b.bytes_read && a.file_bytes == b.file_bytes &&
         a.has_trailer == b.has_trailer &&
         a.trailer.SerializeAsString() == b.trailer.SerializeAsString() &&
         a.damage.ok() == b.damage.ok() && a.damage.message() == b.damage.message();
}

// The invariants every ReadResult keeps.
void CheckResult(const modeler::ReadResult& result) {
  if (result.bytes_read > result.file_bytes) __builtin_trap();
  if (result.damage.ok() && result.bytes_read != result.file_bytes) __builtin_trap();
  // Every timed event is a packet too (a column entry counts in both).
  if (result.events > result.packets) __builtin_trap();
}

}  // namespace

FuzzFile::FuzzFile() {
  fd_ = static_cast<int>(::memfd_create("lumos_fuzz_trace", MFD_CLOEXEC));
  if (fd_ >= 0) {
    path_ = "/proc/self/fd/" + std::to_string(fd_);
    return;
  }
  const char* dir = std::getenv("TMPDIR");
  path_ = std::string(dir != nullptr && dir[0] != '\0' ? dir : "/tmp") + "/lumos_fuzz_" +
          std::to_string(::getpid()) + ".pb.zst";
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  unlink_ = true;
}

FuzzFile::~FuzzFile() {
  if (fd_ >= 0) ::close(fd_);
  if (unlink_) ::unlink(path_.c_str());
}

bool FuzzFile::Write(const uint8_t* data, size_t size) {
  if (fd_ < 0 || ::ftruncate(fd_, 0) != 0) return false;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void ReadWholeTrace(const std::string& path) {
  StatusOr<std::unique_ptr<modeler::TraceReader>> reader = modeler::TraceReader::Open(path);
  if (!reader.ok()) return;

  // 1. ReadPackets: one packet per row and per column entry.
  modeler::ReadResult packets_result;
  Tally packets_tally;
  uint64_t delivered = 0;
  uint64_t timed = 0;
  uint64_t last_frame = 0;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (delivered == kMaxPackets) return Status::Error(kEnough);
        ++delivered;
        timed += packet.has_start_delta_ns();
        if (context.strings == nullptr || context.frame_index < last_frame) __builtin_trap();
        last_frame = context.frame_index;
        if (packet.has_frame() || packet.has_interned()) return Status::Ok();
        packets_tally.start_sum += static_cast<uint64_t>(context.start_ns);
        int kind = packet.data_case();
        if (kind >= pb::TracePacket::kKernel && kind <= pb::TracePacket::kCollective) {
          ++packets_tally.by_kind[kind - pb::TracePacket::kKernel];
        } else {
          ++packets_tally.rows;
        }
        uint64_t& names = packets_tally.name_bytes;
        if (packet.has_kernel()) names += context.String(packet.kernel().name_iid()).size();
        if (packet.has_api_call()) names += context.String(packet.api_call().name_iid()).size();
        if (packet.has_nvtx()) {
          names += context.String(packet.nvtx().name_iid()).size();
          names += context.String(packet.nvtx().domain_iid()).size();
        }
        if (packet.has_host_range()) names += context.String(packet.host_range().name_iid()).size();
        return Status::Ok();
      },
      &packets_result);
  // The callback fails only at kMaxPackets, so neither may ReadPackets otherwise; damage goes to
  // result.damage.
  bool enough = !status.ok();
  if (enough && status.message() != kEnough) __builtin_trap();
  if (enough) {
    // The packets counted include the rest of a column packet cut short.
    if (packets_result.packets < delivered) __builtin_trap();
    return;
  }
  CheckResult(packets_result);
  // ReadPackets counts what it delivers: rows, and each column entry as one packet.
  if (packets_result.packets != delivered) __builtin_trap();
  if (packets_result.events != timed) __builtin_trap();

  // 2. ReadFrames, the fast path: column packets decoded into structs.
  modeler::ReadResult frames_result;
  Tally frames_tally;
  uint64_t frames_delivered = 0;
  uint64_t next_index = 0;
  status = (*reader)->ReadFrames(
      [&](const modeler::FrameEvents& f) {
        // Frames come in file order; a damaged frame is delivered up to its damage, or skipped
        // when nothing of it can be decoded (its index is then not delivered).
        if (f.frame_index < next_index) __builtin_trap();
        next_index = f.frame_index + 1;
        // ReadPackets delivered all, fewer than kMaxPackets, so this never stops early.
        if (f.column_events() + f.rows.size() > kMaxPackets) __builtin_trap();
        ++frames_delivered;
        uint64_t* by_kind = frames_tally.by_kind;
        by_kind[0] += f.kernels.size();
        by_kind[1] += f.api_calls.size();
        by_kind[2] += f.memcpys.size();
        by_kind[3] += f.memsets.size();
        by_kind[4] += f.syncs.size();
        by_kind[5] += f.cuda_events.size();
        by_kind[6] += f.nvtx.size();
        by_kind[7] += f.host_ranges.size();
        by_kind[8] += f.collectives.size();
        // GEMM calls (schema 2.2) are outside TracePacket's kernel..collective range: ReadPackets'
        // side counts them with the rows.
        frames_tally.rows += f.rows.size() + f.gemm_calls.size();
        AddStarts(f.gemm_calls, &frames_tally);
        AddStarts(f.kernels, &frames_tally);
        AddStarts(f.api_calls, &frames_tally);
        AddStarts(f.memcpys, &frames_tally);
        AddStarts(f.memsets, &frames_tally);
        AddStarts(f.syncs, &frames_tally);
        AddStarts(f.cuda_events, &frames_tally);
        AddStarts(f.nvtx, &frames_tally);
        AddStarts(f.host_ranges, &frames_tally);
        AddStarts(f.collectives, &frames_tally);
        AddStarts(f.rows, &frames_tally);
        AddNames(f.kernels, &frames_tally);
        AddNames(f.api_calls, &frames_tally);
        AddNames(f.nvtx, &frames_tally);
        AddNames(f.host_ranges, &frames_tally);
        for (const auto& e : f.nvtx) frames_tally.name_bytes += e.domain.size();
        for (const auto& row : f.rows) {
          if (row.packet == nullptr || row.packet->has_frame() || row.packet->has_interned()) {
            __builtin_trap();
          }
        }
        return Status::Ok();
      },
      &frames_result);
  if (!status.ok()) __builtin_trap();
  CheckResult(frames_result);
  // Both ways count the same packets, frames, bytes and damage, and deliver the same events.
  if (!SameResult(packets_result, frames_result)) __builtin_trap();
  if (!(packets_tally == frames_tally)) __builtin_trap();
  // Every intact frame, and each damaged one whose damage came after its start (a damaged
  // place may span several frames: the indices only increase, checked above).
  if (frames_delivered < frames_result.frames) __builtin_trap();
  if (frames_result.damage.ok() != (frames_result.damaged_places == 0)) __builtin_trap();

  // 3. ReadPackets stopped by its callback halfway (possibly inside a column packet): the
  // callback's error comes back and nothing is delivered after it.
  if (delivered == 0) return;
  uint64_t stop_at = delivered / 2 + 1;
  uint64_t seen = 0;
  modeler::ReadResult stopped_result;
  status = (*reader)->ReadPackets(
      [&](const pb::TracePacket&, const modeler::PacketContext&) {
        if (++seen > stop_at) __builtin_trap();
        return seen == stop_at ? Status::Error(kStop) : Status::Ok();
      },
      &stopped_result);
  if (status.ok() || status.message() != kStop || seen != stop_at) __builtin_trap();
  if (stopped_result.packets < seen || stopped_result.packets > delivered) __builtin_trap();
}

}  // namespace lumos::fuzz
