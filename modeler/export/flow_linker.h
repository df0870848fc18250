// Design: decides the flow arrows of an export from the pass-1 indexes, before any JSON is
// written, so that every arrow written has both ends ("s" and "f" with the same id) and ids
// are unique across the whole export (one counter, assigned in file and packet order).
// Arrows:
//   launch      API call -> the kernel/memcpy/memset with its correlation id (each of them,
//               for a graph launch);
//   cuda_event  cudaEventRecord -> cudaStreamWaitEvent (the SyncEvent of type
//               STREAM_WAIT_EVENT), joined on cuda_event_sync_id (the latest record issued
//               before the wait) or, in imported traces, on event_record_correlation_id; and
//               the record (GPU time when known) -> the first GPU op queued on the waiting
//               stream after the wait;
//   collective  the last rank to start one operation (modeler/graph/collective_key.h: a
//               collective's comm_id, op and seq_number; a send and its receive) -> the same
//               operation on every other rank, at that instant: the arrow shows who waited.
// Perfetto binds a flow end to the slice open on its row at its timestamp and processes
// events in time order, so an arrow whose end would precede its start (clock skew, GPU time
// vs host time) is dropped and counted in `skipped` instead of written broken.
// The flow events themselves are written after every slice (see event_writer.h).
#pragma once

#include <cstdint>
#include <vector>

#include "modeler/export/export_index.h"

namespace lumos::modeler::internal {

enum class FlowKind : uint8_t { kLaunch, kCudaEvent, kCollective };
const char* FlowKindName(FlowKind kind);  // Category and name of its flow events.

struct FlowEnd {
  uint32_t file = 0;    // Index of the input file (its process).
  uint32_t packet = 0;  // The event whose slice this end binds to.
  int64_t ts_ns = 0;
};

struct Flow {
  uint64_t id = 0;
  FlowKind kind = FlowKind::kLaunch;
  FlowEnd from, to;  // from.ts_ns <= to.ts_ns.
};

struct FlowStats {
  uint64_t launch = 0;
  uint64_t cuda_event = 0;
  uint64_t collective = 0;
  uint64_t skipped = 0;  // Matched, but the end would come before the start.
};

// One NCCL operation's record in one file.
struct CollectiveInstance {
  size_t file = 0;
  const CollectiveRef* ref = nullptr;
};
// The collective records of all files grouped by operation (modeler/graph/collective_key.h,
// as the replay matches them), in key order; records without a key are left out.
std::vector<std::vector<CollectiveInstance>> GroupCollectives(const std::vector<FileIndex>& files);

// All arrows, in id order; `collectives`: GroupCollectives(files), which the counter tracks
// read too.
using CollectiveGroups = std::vector<std::vector<CollectiveInstance>>;
std::vector<Flow> LinkFlows(const std::vector<FileIndex>& files,
                            const CollectiveGroups& collectives, FlowStats* stats);

}  // namespace lumos::modeler::internal
