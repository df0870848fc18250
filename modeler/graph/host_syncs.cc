// RankBuilder's host syncs (see rank_builder.h): host calls that block on the GPU, their
// targets, and the measured overheads and wake-ups the simulator replays them with.
#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modeler/graph/median.h"
#include "modeler/graph/rank_builder.h"

namespace lumos::modeler::internal {
namespace {

constexpr int64_t kDefaultSyncOverheadNs = 1'000;

// How far after a call's return an inferred target may read as ending, for clock noise. The
// imported traces' times are whole µs: an op's end (its start plus its duration) and the
// call's return each carry up to 1 µs of rounding, so a target that ended just as the call
// returned can read up to 2 µs after it (back-to-back GPU ops on HTA's rank0 overlap by
// exactly that: negative slack of 2 µs). On the shared traces no candidate ends between 0 and
// 18 µs after a return, so the choice does not hang on the value.
constexpr int64_t kSyncClockNoiseNs = 2'000;

}  // namespace

using schema::ApiKind;

// The stream a sync waited for when the trace does not say (a stream sync naming no stream,
// an event sync whose record is unknown: imported traces without cuda_sync records). Such a
// call waits for one stream, for what was launched on it when the call began; a stream whose
// last such op ended after the call returned (beyond clock noise) cannot be it. Of the others,
// the one whose op ended last: what the call waited for if it blocked (if all ended before the
// call began, it did not block). kNoNode when no stream fits; `launched`: whether any stream
// had work launched by then (if not, the call waited for nothing).
uint32_t RankBuilder::InferredSyncStream(uint32_t node, bool* launched) const {
  const Node& call = g_.nodes[node];
  uint32_t best = kNoNode;
  int64_t best_end = INT64_MIN;
  *launched = false;
  for (const auto& [stream, processor] : streams_) {  // Ordered: ties go to the lowest id.
    const uint32_t op = LastLaunchedBy(processor, call.start_ns);
    if (op == kNoNode) continue;
    *launched = true;
    const int64_t end = g_.nodes[op].end_ns();
    if (end <= call.end_ns() + kSyncClockNoiseNs && end > best_end) {
      best = processor;
      best_end = end;
    }
  }
  return best;
}

// End of the GPU work a sync waits for, as measured (the simulator resolves it again).
int64_t RankBuilder::MeasuredTargetEnd(const SyncSpec& spec, int64_t time) const {
  int64_t end = INT64_MIN;
  auto stream_end = [&](uint32_t processor) {
    const uint32_t op = LastLaunchedBy(processor, time);
    if (op != kNoNode) end = std::max(end, g_.nodes[op].end_ns());
  };
  switch (spec.target) {
    case SyncSpec::Target::kStream:
      stream_end(spec.stream_processor);
      break;
    case SyncSpec::Target::kDevice:
      for (const auto& [stream, processor] : streams_) stream_end(processor);
      break;
    case SyncSpec::Target::kEvent: {
      const uint32_t op = LastLaunchedBy(spec.record_stream, g_.nodes[spec.record_node].start_ns);
      if (op != kNoNode) end = g_.nodes[op].end_ns();
      break;
    }
  }
  return end;
}

// Host calls that block on the GPU. The target comes from the call's own handles, else from
// a sync record with its correlation id, else (inferred) from the measurement: the stream of
// InferredSyncStream. With none the call is no sync, replayed as a plain call: it waited for
// nothing (no GPU work launched yet), or no stream fits (counted: the trace contradicts it).
void RankBuilder::AddSyncs() {
  std::unordered_map<uint64_t, const schema::SyncEvent*> sync_by_correlation;
  for (const auto& s : trace_.syncs) {
    if (s.correlation_id != 0) sync_by_correlation[s.correlation_id] = &s;
  }
  std::vector<std::pair<uint32_t, SyncSpec>> pending;
  for (const auto& [node, call] : api_event_) {
    SyncSpec spec;
    spec.node = node;
    bool launched = false;  // An inferred target's: see InferredSyncStream.
    const schema::SyncEvent* record = nullptr;
    if (auto it = sync_by_correlation.find(call->correlation_id); it != sync_by_correlation.end()) {
      record = it->second;
    }
    const int64_t time = g_.nodes[node].start_ns;
    switch (call->kind) {
      case ApiKind::kStreamSynchronize: {
        // The sync record's stream (CUPTI's id) first, else the call's handle.
        if (record != nullptr && record->stream_id != 0) {
          spec.stream_processor = StreamProcessor(record->stream_id);
        }
        if (spec.stream_processor == kNoNode && call->stream_id != 0) {
          spec.stream_processor = StreamOfHandle(call->stream_id);
        }
        spec.target = SyncSpec::Target::kStream;
        if (spec.stream_processor == kNoNode) {
          spec.inferred = true;
          spec.stream_processor = InferredSyncStream(node, &launched);
        }
        break;
      }
      case ApiKind::kEventSynchronize: {
        uint64_t event = call->event_id;
        if (event == 0 && record != nullptr) event = record->event_id;
        spec.record_node =
            record != nullptr ? FindApi(record->event_record_correlation_id) : kNoNode;
        if (spec.record_node == kNoNode) spec.record_node = RecordBefore(event, time);
        if (spec.record_node != kNoNode) spec.record_stream = RecordStream(spec.record_node, 0);
        spec.target = SyncSpec::Target::kEvent;
        if (spec.record_stream == kNoNode) {
          spec.target = SyncSpec::Target::kStream;
          spec.inferred = true;
          spec.stream_processor = InferredSyncStream(node, &launched);
        }
        break;
      }
      case ApiKind::kDeviceSynchronize:
        spec.target = SyncSpec::Target::kDevice;
        break;
      case ApiKind::kMemcpy: {
        // A blocking copy returns when its own copy (launched by this call) is done, i.e.
        // after everything before it on its stream.
        const size_t local = node - base_node_;
        if (local >= last_launched_.size() || last_launched_[local] == kNoNode) continue;
        spec.target = SyncSpec::Target::kStream;
        spec.stream_processor = g_.nodes[last_launched_[local]].processor;
        break;
      }
      default:
        continue;
    }
    if (spec.target == SyncSpec::Target::kStream && spec.stream_processor == kNoNode) {
      if (launched) ++g_.stats.untargeted_syncs;
      continue;
    }
    pending.emplace_back(node, spec);
  }
  // Overheads of syncs that did not block: the typical cost of a call that returns at once.
  std::vector<int64_t> free_durations;
  std::vector<int64_t> target_ends;
  for (auto& [node, spec] : pending) {
    const Node& n = g_.nodes[node];
    const int64_t target_end = MeasuredTargetEnd(spec, n.start_ns);
    target_ends.push_back(target_end);
    if (target_end <= n.start_ns) free_durations.push_back(n.duration_ns);
  }
  const int64_t overhead = MedianOf(free_durations, kDefaultSyncOverheadNs);
  for (size_t i = 0; i < pending.size(); ++i) {
    auto& [node, spec] = pending[i];
    Node& n = g_.nodes[node];
    const int64_t target_end = target_ends[i];
    if (target_end > n.start_ns) {  // It blocked.
      spec.min_duration_ns = std::min(overhead, n.duration_ns);
      spec.wake_ns = n.end_ns() - target_end;
      if (spec.wake_ns < 0) {
        ++g_.stats.negative_slack_edges;
        g_.stats.max_negative_slack_ns = std::max(g_.stats.max_negative_slack_ns, -spec.wake_ns);
      }
    } else {
      spec.min_duration_ns = n.duration_ns;
      spec.wake_ns = 0;
    }
    if (spec.inferred) ++g_.stats.inferred_syncs;
    n.sync = static_cast<uint32_t>(g_.syncs.size());
    g_.syncs.push_back(spec);
  }
}

}  // namespace lumos::modeler::internal
