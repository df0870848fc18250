// Design: RankBuilder builds one rank's part of the execution graph (execution_graph.h) for
// GraphBuilder::AddRank: its nodes, fixed edges, syncs and collective records, with times in
// the rank's own clock (GraphBuilder::Finish applies the offsets and couples the collectives).
// Build runs its steps in order, one file each:
//   rank_builder.cc  nodes: API calls per thread, GPU ops per stream with their launch edges
//                    (correlation ids), the GPU op of each collective record;
//   event_waits.cc   the streams' launch-time indexes, event record -> stream wait edges;
//   host_syncs.cc    host calls that block on the GPU: their targets, overheads, wake-ups;
//   thread_handoffs.cc  where one host thread waited for another: fork and join edges;
//   rank_finish.cc   delays of the GPU ops' in-edges, nodes renumbered in time order, edges
//                    grouped by source.
// Where the trace does not record a dependency, each step's fallback rule is documented at it.
// Threading: one builder per rank, used once, single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "modeler/graph/collective_key.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/id_map.h"
#include "modeler/graph/job.h"
#include "modeler/graph/view_cache.h"

namespace lumos::modeler::internal {

// A rank's launch latency when none binds (also the default of ExecutionGraph's per rank).
inline constexpr int64_t kDefaultLaunchLatencyNs = 5'000;

class RankBuilder {
 public:
  // Appends to `graph`; the trace must outlive the builder.
  RankBuilder(const RankTrace& trace, uint32_t rank_index, ExecutionGraph* graph);

  void Build(const GraphOptions& options);

  // Collective instances of this rank: key (collective_key.h) -> node, with the event.
  struct Member {
    CollectiveKey key;
    uint32_t node;
    const schema::CollectiveEvent* event;
  };
  std::vector<Member> members;

 private:
  // The slot of `node` (this rank's) in a per-node vector, grown with `fill` as needed.
  template <typename T>
  T& Local(std::vector<T>* v, uint32_t node, T fill = T()) {
    const size_t local = node - base_node_;
    if (v->size() <= local) v->resize(local + 1, fill);
    return (*v)[local];
  }

  uint32_t FindApi(uint64_t correlation) const {
    static_assert(IdMap::kMissing == kNoNode);
    return api_by_correlation_.Find(correlation);
  }

  const schema::ApiCallEvent* ApiEvent(uint32_t node) const {
    const size_t local = node - base_node_;
    return local < api_of_.size() ? api_of_[local] : nullptr;
  }

  // The launch time of a GPU op: its API call's start, else its own start.
  int64_t LaunchTime(uint32_t op) const {
    const Node& n = g_.nodes[op];
    return n.launch != kNoNode ? g_.nodes[n.launch].start_ns : n.start_ns;
  }

  // rank_builder.cc: nodes and launch edges.
  uint32_t ProcessorFor(bool gpu, uint64_t id);
  bool IsNcclKernel(std::string_view name);
  uint32_t AddNode(Node node, uint32_t source);  // source: ExecutionGraph::node_source.
  void AddEdge(uint32_t from, uint32_t to, EdgeKind kind, int64_t delay, bool inferred = false);
  void Diagnose(int64_t time_ns, std::string what, std::string_view name = {});
  void AddHostNodes();
  void AddGpuNodes();
  void AddCollectiveMembers();

  // event_waits.cc: stream look-ups and event waits.
  void IndexLaunchTimes();
  uint32_t LastLaunchedBy(uint32_t processor, int64_t time) const;
  uint32_t FirstLaunchedAfter(uint32_t processor, int64_t time) const;
  uint32_t StreamOfHandle(uint64_t handle) const;
  uint32_t StreamProcessor(uint64_t stream) const;
  uint32_t RecordBefore(uint64_t event_id, int64_t time) const;
  uint32_t RecordStream(uint32_t record, uint64_t hint_stream) const;
  uint32_t NextLaunchOnThread(uint32_t api) const;
  void AddWaitEdge(uint32_t record_stream, int64_t record_time, uint32_t wait_stream,
                   int64_t wait_time, bool inferred);
  void AddEventWaits();

  // host_syncs.cc: host calls that block on the GPU.
  uint32_t InferredSyncStream(uint32_t node, bool* launched) const;
  int64_t MeasuredTargetEnd(const SyncSpec& spec, int64_t time) const;
  void AddSyncs();

  // thread_handoffs.cc: one thread waiting for another.
  void AddThreadHandoffs();

  // rank_finish.cc: delays, numbering, edge order.
  void SetGpuDelays(const GraphOptions& options);
  void NumberInTimeOrder();
  void GroupEdgesBySource();

  const RankTrace& trace_;
  uint32_t rank_index_;
  ExecutionGraph& g_;
  std::map<uint64_t, uint32_t> threads_, streams_;           // Ordered: deterministic iteration.
  std::unordered_map<uint64_t, uint32_t> stream_of_handle_;  // API stream handle -> processor.
  IdMap api_by_correlation_;
  IdMap gpu_by_correlation_;
  // API nodes of this rank in node order, and node -> index into it.
  std::vector<std::pair<uint32_t, const schema::ApiCallEvent*>> api_event_;
  // Per node of this rank (index: node - base_node_), grown on demand.
  std::vector<const schema::ApiCallEvent*> api_of_;
  std::vector<uint32_t> thread_position_;                 // API node -> index on its thread.
  std::vector<uint32_t> first_launched_, last_launched_;  // API node -> GPU ops it launched.
  size_t base_node_ = 0;
  size_t first_sync_ = SIZE_MAX;
  size_t first_edge_ = 0;  // This rank's edges are [first_edge_, edges.size()).
  std::unordered_map<uint64_t, std::vector<uint32_t>> records_by_event_;
  struct StreamIndex {
    std::vector<int64_t> suffix_min, prefix_max;
  };
  std::unordered_map<uint32_t, StreamIndex> stream_index_;
  IdMap collective_correlations_;  // Correlation ids of the NCCL kernels of collectives.
  bool record_sources_ = false;    // GraphOptions::record_sources.
  int unlaunched_reported_ = 0;
  int negative_reported_ = 0;
  int unkeyed_reported_ = 0;
  ViewCache<bool> nccl_names_;  // See IsNcclKernel.
};

}  // namespace lumos::modeler::internal
