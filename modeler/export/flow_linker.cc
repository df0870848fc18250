#include "modeler/export/flow_linker.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "modeler/graph/collective_key.h"

namespace lumos::modeler::internal {
namespace {

struct End {
  uint32_t packet = 0;
  int64_t ts_ns = 0;
};

class Linker {
 public:
  explicit Linker(FlowStats* stats) : stats_(stats) {}

  // Adds the arrow from -> to when it points forward in time.
  bool Add(FlowKind kind, size_t from_file, End from, size_t to_file, End to) {
    if (to.ts_ns < from.ts_ns) {
      ++stats_->skipped;
      return false;
    }
    uint64_t id = flows_.size() + 1;
    flows_.push_back(Flow{id, kind,
                          FlowEnd{static_cast<uint32_t>(from_file), from.packet, from.ts_ns},
                          FlowEnd{static_cast<uint32_t>(to_file), to.packet, to.ts_ns}});
    uint64_t* count = kind == FlowKind::kLaunch      ? &stats_->launch
                      : kind == FlowKind::kCudaEvent ? &stats_->cuda_event
                                                     : &stats_->collective;
    ++*count;
    return true;
  }

  void Skip() { ++stats_->skipped; }

  std::vector<Flow> Take() { return std::move(flows_); }

 private:
  FlowStats* stats_;
  std::vector<Flow> flows_;
};

const ApiRef* FindCall(const FileIndex& file, uint64_t correlation_id) {
  if (correlation_id == 0) return nullptr;
  auto it = file.api_by_correlation.find(correlation_id);
  return it == file.api_by_correlation.end() ? nullptr : &it->second;
}

void LinkLaunches(const FileIndex& file, size_t f, Linker* linker) {
  for (const GpuOpRef& op : file.gpu_ops) {
    const ApiRef* call = FindCall(file, op.correlation_id);
    if (call == nullptr) continue;
    linker->Add(FlowKind::kLaunch, f, End{call->packet, call->start_ns}, f,
                End{op.packet, op.start_ns});
  }
}

// GPU ops of one stream in the order they were queued: by launch call time when the call is
// in the trace, else by GPU start (stream order makes the two agree).
struct QueuedOp {
  int64_t order_ns = 0;
  int64_t start_ns = 0;
  uint32_t packet = 0;
  bool operator<(const QueuedOp& o) const {
    return std::tie(order_ns, start_ns, packet) < std::tie(o.order_ns, o.start_ns, o.packet);
  }
};

void LinkEvents(const FileIndex& file, size_t f, Linker* linker) {
  if (file.waits.empty()) return;
  // When a record was issued on the host, which is what orders it before a wait.
  auto issued_ns = [&](const EventRecordRef& r) {
    const ApiRef* call = FindCall(file, r.correlation_id);
    return call != nullptr ? call->start_ns : r.ts_ns;
  };
  // Per sync id: (issued, index) sorted, so a wait finds the latest earlier record in log time
  // even when one CUDA event is recorded thousands of times.
  std::unordered_map<uint64_t, std::vector<std::pair<int64_t, size_t>>> records_by_sync;
  std::unordered_map<uint64_t, size_t> record_by_correlation;  // Lookups only, never iterated.
  for (size_t i = 0; i < file.records.size(); ++i) {
    const EventRecordRef& r = file.records[i];
    if (r.sync_id != 0) records_by_sync[r.sync_id].push_back({issued_ns(r), i});
    if (r.correlation_id != 0) record_by_correlation.try_emplace(r.correlation_id, i);
  }
  for (auto& entry : records_by_sync) std::sort(entry.second.begin(), entry.second.end());
  std::map<std::pair<uint64_t, uint64_t>, std::vector<QueuedOp>> queues;
  for (const GpuOpRef& op : file.gpu_ops) {
    const ApiRef* call = FindCall(file, op.correlation_id);
    queues[{op.device_id, op.stream_id}].push_back(
        QueuedOp{call != nullptr ? call->start_ns : op.start_ns, op.start_ns, op.packet});
  }
  for (auto& [stream, ops] : queues) std::sort(ops.begin(), ops.end());

  for (const StreamWaitRef& wait : file.waits) {
    const EventRecordRef* record = nullptr;
    const ApiRef* record_call = nullptr;
    auto by_sync = wait.sync_id != 0 ? records_by_sync.find(wait.sync_id) : records_by_sync.end();
    if (by_sync != records_by_sync.end()) {
      // The last record issued at or before the wait (the later one in the file on a tie).
      const auto& issued = by_sync->second;
      auto after =
          std::upper_bound(issued.begin(), issued.end(), std::make_pair(wait.start_ns, SIZE_MAX));
      if (after != issued.begin()) record = &file.records[std::prev(after)->second];
    } else if (wait.record_correlation_id != 0) {
      auto it = record_by_correlation.find(wait.record_correlation_id);
      if (it != record_by_correlation.end()) record = &file.records[it->second];
      record_call = FindCall(file, wait.record_correlation_id);
    }
    if (record != nullptr && record->correlation_id != 0) {
      record_call = FindCall(file, record->correlation_id);
    }
    std::optional<End> host_source, gpu_source;
    if (record_call != nullptr) {
      host_source = End{record_call->packet, record_call->start_ns};
    } else if (record != nullptr && record->has_slice) {
      host_source = End{record->packet, record->ts_ns};
    }
    if (record != nullptr && record->has_slice && record->device_time) {
      gpu_source = End{record->packet, record->ts_ns};
    } else {
      gpu_source = host_source;
    }
    if (!host_source) continue;
    linker->Add(FlowKind::kCudaEvent, f, *host_source, f, End{wait.packet, wait.start_ns});

    auto queue = queues.find({wait.device_id, wait.stream_id});
    if (queue == queues.end()) continue;
    const std::vector<QueuedOp>& ops = queue->second;
    auto next = std::lower_bound(ops.begin(), ops.end(), QueuedOp{wait.start_ns, INT64_MIN, 0});
    if (next == ops.end()) continue;
    linker->Add(FlowKind::kCudaEvent, f, *gpu_source, f, End{next->packet, next->start_ns});
  }
}

void LinkCollectives(const CollectiveGroups& collectives, Linker* linker) {
  for (const std::vector<CollectiveInstance>& instances : collectives) {
    if (instances.size() < 2) continue;
    const CollectiveInstance* last = &instances[0];  // Latest start; the first file wins ties.
    for (const CollectiveInstance& i : instances) {
      if (i.ref->start_ns > last->ref->start_ns) last = &i;
    }
    int64_t at = last->ref->start_ns;
    for (const CollectiveInstance& i : instances) {
      if (i.file == last->file) continue;  // Same rank twice: nothing to show.
      // The arrow ends inside the waiting instance, at the moment the last rank arrived; an
      // instance already over by then (clocks of different hosts disagree) gets none.
      if (i.ref->end_ns <= at && !(i.ref->start_ns == at)) {
        linker->Skip();
        continue;
      }
      linker->Add(FlowKind::kCollective, last->file, End{last->ref->packet, at}, i.file,
                  End{i.ref->packet, at});
    }
  }
}

}  // namespace

std::vector<std::vector<CollectiveInstance>> GroupCollectives(const std::vector<FileIndex>& files) {
  // One operation per key (collective_key.h: the graph's matching).
  std::map<CollectiveKey, std::vector<CollectiveInstance>> groups;
  for (size_t f = 0; f < files.size(); ++f) {
    const std::vector<CollectiveRef>& refs = files[f].collectives;
    std::vector<schema::CollectiveEvent> events(refs.size());
    for (size_t i = 0; i < refs.size(); ++i) {
      events[i].comm_id = refs[i].comm_id;
      events[i].seq_number = refs[i].seq_number;
      events[i].op = refs[i].op;
      events[i].peer_rank = refs[i].peer_rank;
    }
    std::vector<CommunicatorInfo> communicators;
    for (const auto& [comm_id, rank] : files[f].communicator_ranks) {
      communicators.push_back({comm_id, rank, 0, {}});
    }
    const std::vector<std::optional<CollectiveKey>> keys = CollectiveKeys(events, communicators);
    for (size_t i = 0; i < refs.size(); ++i) {
      if (refs[i].comm_id != 0 && keys[i]) {
        groups[*keys[i]].push_back(CollectiveInstance{f, &refs[i]});
      }
    }
  }
  std::vector<std::vector<CollectiveInstance>> out;
  out.reserve(groups.size());
  for (auto& [key, instances] : groups) out.push_back(std::move(instances));
  return out;
}

const char* FlowKindName(FlowKind kind) {
  switch (kind) {
    case FlowKind::kLaunch:
      return "launch";
    case FlowKind::kCudaEvent:
      return "cuda_event";
    case FlowKind::kCollective:
      return "collective";
  }
  return "flow";
}

std::vector<Flow> LinkFlows(const std::vector<FileIndex>& files,
                            const CollectiveGroups& collectives, FlowStats* stats) {
  *stats = FlowStats();
  Linker linker(stats);
  for (size_t f = 0; f < files.size(); ++f) {
    LinkLaunches(files[f], f, &linker);
    LinkEvents(files[f], f, &linker);
  }
  LinkCollectives(collectives, &linker);
  return linker.Take();
}

}  // namespace lumos::modeler::internal
