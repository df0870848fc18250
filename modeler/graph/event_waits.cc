// RankBuilder's event waits (see rank_builder.h): per-stream launch-time indexes, and the
// event record -> stream wait edges, exact from recorded identities or by the fallback rule.
#include <algorithm>
#include <unordered_map>

#include "modeler/graph/rank_builder.h"

namespace lumos::modeler::internal {

using schema::ApiKind;
using schema::SyncType;

// Launch-time indexes of each stream, for the two searches below: suffix minima and prefix
// maxima of the launch times in FIFO order (both sorted, so binary search works even when
// launches are not in FIFO order, e.g. from several threads).
void RankBuilder::IndexLaunchTimes() {
  for (const auto& [stream, processor] : streams_) {
    const std::vector<uint32_t>& ops = g_.processors[processor].nodes;
    StreamIndex& index = stream_index_[processor];
    index.suffix_min.resize(ops.size());
    index.prefix_max.resize(ops.size());
    int64_t low = INT64_MAX, high = INT64_MIN;
    for (size_t i = ops.size(); i-- > 0;) {
      low = std::min(low, LaunchTime(ops[i]));
      index.suffix_min[i] = low;
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      high = std::max(high, LaunchTime(ops[i]));
      index.prefix_max[i] = high;
    }
  }
}

// The last op on `processor` launched at or before `time`; kNoNode when none.
uint32_t RankBuilder::LastLaunchedBy(uint32_t processor, int64_t time) const {
  const StreamIndex& index = stream_index_.at(processor);
  // The largest i with suffix_min[i] <= time.
  auto it = std::upper_bound(index.suffix_min.begin(), index.suffix_min.end(), time);
  if (it == index.suffix_min.begin()) return kNoNode;
  return g_.processors[processor].nodes[static_cast<size_t>(it - index.suffix_min.begin()) - 1];
}

// The first op on `processor` launched at or after `time`.
uint32_t RankBuilder::FirstLaunchedAfter(uint32_t processor, int64_t time) const {
  const StreamIndex& index = stream_index_.at(processor);
  auto it = std::lower_bound(index.prefix_max.begin(), index.prefix_max.end(), time);
  if (it == index.prefix_max.end()) return kNoNode;
  return g_.processors[processor].nodes[static_cast<size_t>(it - index.prefix_max.begin())];
}

// The stream processor of a handle an API call carries. The agent records the application's
// cudaStream_t there, while GPU ops carry CUPTI's stream ids: a launch joins the two (its
// handle, its op's stream); imported traces use one id space, found directly.
uint32_t RankBuilder::StreamOfHandle(uint64_t handle) const {
  auto it = stream_of_handle_.find(handle);
  return it != stream_of_handle_.end() ? it->second : StreamProcessor(handle);
}

uint32_t RankBuilder::StreamProcessor(uint64_t stream) const {
  auto it = streams_.find(stream);
  return it == streams_.end() ? kNoNode : it->second;
}

// The record call of an event waited for at `time`: the latest cudaEventRecord of the same
// event on this rank that started before it.
uint32_t RankBuilder::RecordBefore(uint64_t event_id, int64_t time) const {
  auto it = records_by_event_.find(event_id);
  if (event_id == 0 || it == records_by_event_.end()) return kNoNode;
  uint32_t best = kNoNode;
  for (uint32_t node : it->second) {  // Per thread in start order; few per event.
    const int64_t start = g_.nodes[node].start_ns;
    if (start <= time && (best == kNoNode || start > g_.nodes[best].start_ns)) best = node;
  }
  return best;
}

// The recording stream of a record call.
uint32_t RankBuilder::RecordStream(uint32_t record, uint64_t hint_stream) const {
  if (const schema::ApiCallEvent* call = ApiEvent(record); call && call->stream_id != 0) {
    return StreamOfHandle(call->stream_id);
  }
  return hint_stream != 0 ? StreamProcessor(hint_stream) : kNoNode;
}

// The first GPU op launched by a call after `api` on the same thread.
uint32_t RankBuilder::NextLaunchOnThread(uint32_t api) const {
  const Processor& thread = g_.processors[g_.nodes[api].processor];
  for (size_t i = thread_position_[api - base_node_]; i < thread.nodes.size(); ++i) {
    const size_t local = thread.nodes[i] - base_node_;
    if (local < first_launched_.size() && first_launched_[local] != kNoNode) {
      return first_launched_[local];
    }
  }
  return kNoNode;
}

void RankBuilder::AddWaitEdge(uint32_t record_stream, int64_t record_time, uint32_t wait_stream,
                              int64_t wait_time, bool inferred) {
  if (record_stream == kNoNode || wait_stream == kNoNode) return;
  const uint32_t source = LastLaunchedBy(record_stream, record_time);
  const uint32_t target = FirstLaunchedAfter(wait_stream, wait_time);
  if (source == kNoNode || target == kNoNode || source == target) return;  // Nothing to wait for.
  AddEdge(source, target, EdgeKind::kEventWait, 0, inferred);
  if (inferred) ++g_.stats.inferred_event_waits;
}

// Event record -> stream wait. Rules, in order (each wait API call is paired once):
//  1. a STREAM_WAIT_EVENT sync record naming the record (event_record_correlation_id, or
//     cuda_event_sync_id joined with a CudaEventRecord) and the waiting stream: exact;
//  2. a cudaStreamWaitEvent call with stream and event handles: the latest cudaEventRecord
//     of that event before it (CUDA's own rule): exact;
//  3. fallback (imported traces without either, e.g. Kineto before sync records): the
//     waiting stream is the stream of the first op the thread launches after the wait; the
//     source is, among the other streams of the rank whose last op launched before the wait
//     had ended when that op started (anything else contradicts the measurement), the one
//     launched last. Inferred and counted; a wait with no such stream is unmatched.
void RankBuilder::AddEventWaits() {
  std::unordered_map<uint64_t, const schema::CudaEventRecordEvent*> records_by_sync_id;
  for (const auto& r : trace_.cuda_events) {
    if (r.cuda_event_sync_id != 0) records_by_sync_id[r.cuda_event_sync_id] = &r;
  }
  std::unordered_map<uint32_t, bool> paired;  // Wait API node -> handled.
  for (const schema::SyncEvent& s : trace_.syncs) {
    if (s.sync_type != SyncType::kStreamWaitEvent) continue;
    uint32_t wait_api = FindApi(s.correlation_id);
    const int64_t wait_time = wait_api != kNoNode ? g_.nodes[wait_api].start_ns : s.start_ns;
    uint32_t record = FindApi(s.event_record_correlation_id);
    uint64_t record_stream_hint = s.wait_on_stream_id;
    int64_t record_time = 0;
    if (record == kNoNode && s.cuda_event_sync_id != 0) {
      auto it = records_by_sync_id.find(s.cuda_event_sync_id);
      if (it != records_by_sync_id.end()) {
        record = FindApi(it->second->correlation_id);
        record_stream_hint = it->second->stream_id;
        if (record == kNoNode) record_time = it->second->start_ns;
      }
    }
    if (record != kNoNode) record_time = g_.nodes[record].start_ns;
    const uint32_t record_stream = record != kNoNode ? RecordStream(record, record_stream_hint)
                                                     : StreamProcessor(record_stream_hint);
    if (record_stream == kNoNode || (record == kNoNode && record_time == 0)) continue;
    AddWaitEdge(record_stream, record_time, StreamProcessor(s.stream_id), wait_time, false);
    if (wait_api != kNoNode) paired[wait_api] = true;
  }
  for (const auto& [node, call] : api_event_) {
    if (call->kind != ApiKind::kStreamWaitEvent || paired.count(node)) continue;
    const int64_t wait_time = g_.nodes[node].start_ns;
    if (call->stream_id != 0 && call->event_id != 0) {
      const uint32_t record = RecordBefore(call->event_id, wait_time);
      if (record != kNoNode) {
        AddWaitEdge(RecordStream(record, 0), g_.nodes[record].start_ns,
                    StreamOfHandle(call->stream_id), wait_time, false);
        continue;
      }
    }
    // Rule 3.
    const uint32_t target = NextLaunchOnThread(node);
    if (target == kNoNode) {
      ++g_.stats.unmatched_waits;
      continue;
    }
    const uint32_t wait_stream = g_.nodes[target].processor;
    uint32_t best = kNoNode;
    for (const auto& [stream, processor] : streams_) {
      if (processor == wait_stream) continue;
      const uint32_t source = LastLaunchedBy(processor, wait_time);
      // A source that ended after the target started cannot be what it waited for.
      if (source == kNoNode || g_.nodes[source].end_ns() > g_.nodes[target].start_ns) continue;
      if (best == kNoNode || LaunchTime(source) > LaunchTime(best)) best = source;
    }
    if (best == kNoNode) {
      ++g_.stats.unmatched_waits;
      continue;
    }
    AddEdge(best, target, EdgeKind::kEventWait, 0, true);
    ++g_.stats.inferred_event_waits;
  }
}

}  // namespace lumos::modeler::internal
