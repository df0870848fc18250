// Design: the first of the exporter's two passes over a trace file. It streams every packet
// once and keeps only what the second pass cannot know locally: which track each event lands
// on and its [start, end) (to lay out properly nested tracks), and the join keys of flow arrows
// (correlation ids, CUDA event sync ids, collective (comm, seq)): some tens of bytes per event
// (about 100 in all with the layout and flows: 230 MB for 2 M events), never the packets; the
// second pass re-reads the file and writes JSON as it goes.
// Placement rules (a "track" is one Chrome-trace thread row before overflow lanes are added):
//   host thread  <- ApiCall, SyncEvent, NvtxRange, HostRange (all but GPU_ANNOTATION)
//   GPU stream   <- KernelEvent, MemcpyEvent, MemsetEvent, GPU_ANNOTATION HostRanges, and
//                   CudaEventRecords with a GPU timestamp (or whose record call is missing)
//   "NCCL"       <- NcclCollective (GPU time when known, else host time), Communicator
//   "lumos"      <- LossRecord, CaptureWindow
// Threading: one index per thread; an index is read-only once built.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "modeler/trace/trace_reader.h"
#include "schema/enums.h"

namespace lumos::modeler::internal {

// Track kinds, in the order their rows are shown.
enum class TrackKind : uint8_t { kThread = 0, kStream = 1, kNccl = 2, kLumos = 3 };

struct TrackKey {
  TrackKind kind = TrackKind::kThread;
  uint64_t a = 0;  // Thread: OS thread id (0 = unknown). Stream: device id.
  uint64_t b = 0;  // Stream: stream id.
  auto operator<=>(const TrackKey&) const = default;
};

// One event's extent on its track; `packet` is its index in the file (0-based, all packets).
struct SliceKey {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint32_t packet = 0;
};

inline constexpr uint32_t kNoTrack = UINT32_MAX;

// Where a timed packet's event lies in time. Shared by both passes so they cannot disagree.
struct EventSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};
EventSpan SpanOf(const pb::TracePacket& packet, int64_t start_ns);

// Join keys for flow arrows.
struct ApiRef {
  uint32_t packet = 0;
  int64_t start_ns = 0;
  uint32_t thread_id = 0;
  int score = 0;  // Several calls may share a correlation id; the best launch-like one wins.
};
struct GpuOpRef {
  uint32_t packet = 0;
  int64_t start_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t device_id = 0;
  uint64_t stream_id = 0;
  int64_t end_ns = 0;  // The counter tracks' busy time and queue depth.
};
struct EventRecordRef {
  uint32_t packet = 0;
  int64_t ts_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t sync_id = 0;
  uint64_t device_id = 0;
  uint64_t stream_id = 0;  // The recording stream.
  bool device_time = false;
  bool has_slice = false;  // Shown on its stream (else only its record call is).
};
struct StreamWaitRef {
  uint32_t packet = 0;
  int64_t start_ns = 0;
  uint64_t sync_id = 0;
  uint64_t record_correlation_id = 0;
  uint64_t device_id = 0;
  uint64_t stream_id = 0;  // The waiting stream.
};
struct CollectiveRef {
  uint32_t packet = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  uint64_t comm_id = 0;
  uint64_t seq_number = 0;
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  int32_t peer_rank = -1;  // -1: none.
};

struct FileIndex {
  std::string path;
  pb::TraceHeader header;
  ReadResult read;       // Pass-1 read: frames, packets, trailer, damage.
  uint32_t packets = 0;  // Packets delivered (pass 2 stops after as many).

  // Logical tracks in first-seen order, their slices, and each packet's track (kNoTrack for
  // packets that are not drawn). After layout, packet_track holds output-track indices.
  std::map<TrackKey, uint32_t> track_ids;
  std::vector<TrackKey> tracks;
  std::vector<std::vector<SliceKey>> slices;
  std::vector<uint32_t> packet_track;
  std::map<uint32_t, std::string> thread_names;  // From ThreadInfo packets.

  std::unordered_map<uint64_t, ApiRef> api_by_correlation;  // Lookups only, never iterated.
  std::vector<GpuOpRef> gpu_ops;
  std::vector<EventRecordRef> records;
  std::vector<StreamWaitRef> waits;
  std::vector<CollectiveRef> collectives;
  std::vector<std::pair<uint64_t, int32_t>> communicator_ranks;  // (comm id, this rank's rank).

  bool has_events = false;
  int64_t min_start_ns = 0;  // Over all drawn events.
};

// Pass 1: reads the whole file. A damaged tail is recorded in index->read.damage and is not an
// error; errors are I/O failures and limits (more than 2^32 - 2 packets).
Status BuildFileIndex(TraceReader* reader, FileIndex* index);

}  // namespace lumos::modeler::internal
