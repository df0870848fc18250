// BuildGraph: nodes, processors and fixed edges of a job; see execution_graph.h.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "modeler/graph/collective_key.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/id_map.h"
#include "modeler/graph/median.h"
#include "modeler/graph/view_cache.h"
#include "modeler/import/nccl_names.h"

namespace lumos::modeler {
namespace {

using schema::ApiKind;
using schema::SyncType;

constexpr int64_t kDefaultLaunchLatencyNs = 5'000;
constexpr int64_t kDefaultSyncOverheadNs = 1'000;

// Builds one rank's part of the graph.
class RankBuilder {
 public:
  // Times stay in the rank's own clock here; GraphBuilder::Finish applies the offsets.
  RankBuilder(const RankTrace& trace, uint32_t rank_index, ExecutionGraph* graph)
      : trace_(trace),
        rank_index_(rank_index),
        g_(*graph),
        base_node_(graph->nodes.size()),
        first_sync_(graph->syncs.size()) {
    const size_t events =
        trace.api_calls.size() + trace.kernels.size() + trace.memcpys.size() + trace.memsets.size();
    api_by_correlation_.Reserve(trace.api_calls.size());
    gpu_by_correlation_.Reserve(events - trace.api_calls.size());
  }

  // The slot of `node` (this rank's) in a per-node vector, grown with `fill` as needed.
  template <typename T>
  T& Local(std::vector<T>* v, uint32_t node, T fill = T()) {
    const size_t local = node - base_node_;
    if (v->size() <= local) v->resize(local + 1, fill);
    return (*v)[local];
  }

  void Build(const GraphOptions& options) {
    AddHostNodes();
    AddGpuNodes();
    IndexLaunchTimes();
    AddEventWaits();
    AddSyncs();
    AddCollectiveMembers();
    SetGpuDelays(options);
    NumberInTimeOrder();
  }

  // Renumbers this rank's nodes by measured start: the simulator and the analysis visit nodes
  // roughly in time order, so time-ordered ids turn their random accesses to the per-node
  // arrays into nearly sequential ones (3x faster replay on a 512-rank job, perf).
  void NumberInTimeOrder() {
    const size_t count = g_.nodes.size() - base_node_;
    std::vector<uint32_t> order(count);
    for (uint32_t i = 0; i < count; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return g_.nodes[base_node_ + a].start_ns < g_.nodes[base_node_ + b].start_ns;
    });
    std::vector<uint32_t> new_id(count);
    for (uint32_t i = 0; i < count; ++i) new_id[order[i]] = static_cast<uint32_t>(base_node_ + i);
    auto remap = [&](uint32_t& id) {
      if (id != kNoNode && id >= base_node_) id = new_id[id - base_node_];
    };
    std::vector<Node> nodes;
    nodes.reserve(count);
    for (uint32_t i = 0; i < count; ++i) nodes.push_back(g_.nodes[base_node_ + order[i]]);
    std::copy(nodes.begin(), nodes.end(), g_.nodes.begin() + static_cast<ptrdiff_t>(base_node_));
    for (size_t i = base_node_; i < g_.nodes.size(); ++i) remap(g_.nodes[i].launch);
    for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
      remap(g_.edges[e].from);
      remap(g_.edges[e].to);
    }
    for (const auto& [id, processor] : threads_) {
      for (uint32_t& node : g_.processors[processor].nodes) remap(node);
    }
    for (const auto& [id, processor] : streams_) {
      for (uint32_t& node : g_.processors[processor].nodes) remap(node);
    }
    for (size_t i = first_sync_; i < g_.syncs.size(); ++i) {
      remap(g_.syncs[i].node);
      remap(g_.syncs[i].record_node);
    }
    for (Member& m : members) remap(m.node);
    GroupEdgesBySource();
  }

  // Every edge of this rank leaves one of its nodes, and ranks' nodes come in increasing
  // ranges, so grouping each rank's edges by source (a counting sort, stable: each source's
  // edges stay in build order) leaves the whole edge list grouped: Finish only counts.
  void GroupEdgesBySource() {
    const size_t count = g_.nodes.size() - base_node_;
    std::vector<uint32_t> next(count + 1, 0);
    for (size_t e = first_edge_; e < g_.edges.size(); ++e)
      ++next[g_.edges[e].from - base_node_ + 1];
    for (size_t i = 1; i <= count; ++i) next[i] += next[i - 1];
    std::vector<Edge> sorted(g_.edges.size() - first_edge_);
    for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
      sorted[next[g_.edges[e].from - base_node_]++] = g_.edges[e];
    }
    std::copy(sorted.begin(), sorted.end(), g_.edges.begin() + static_cast<ptrdiff_t>(first_edge_));
  }

  // Collective instances of this rank: key (collective_key.h) -> node, with the event.
  struct Member {
    CollectiveKey key;
    uint32_t node;
    const agent::CollectiveEvent* event;
  };
  std::vector<Member> members;

 private:
  uint32_t ProcessorFor(bool gpu, uint64_t id) {
    auto& map = gpu ? streams_ : threads_;
    auto it = map.find(id);
    if (it != map.end()) return it->second;
    Processor p;
    p.rank_index = rank_index_;
    p.gpu = gpu;
    p.id = id;
    g_.processors.push_back(std::move(p));
    const uint32_t index = static_cast<uint32_t>(g_.processors.size() - 1);
    map.emplace(id, index);
    return index;
  }

  // kineto::IsNcclKernelName, once per distinct name of this rank (ViewCache): matching the
  // name's prefixes for every kernel was ~4% of a 512-rank replay (perf).
  bool IsNcclKernel(std::string_view name) {
    return nccl_names_.Get(name,
                           [](std::string_view text) { return kineto::IsNcclKernelName(text); });
  }

  uint32_t AddNode(Node node) {
    g_.nodes.push_back(node);
    return static_cast<uint32_t>(g_.nodes.size() - 1);
  }

  void AddEdge(uint32_t from, uint32_t to, EdgeKind kind, int64_t delay, bool inferred = false) {
    g_.edges.push_back(Edge{from, to, delay, kind, inferred});
    ++g_.stats.edges_by_kind[static_cast<int>(kind)];
  }

  void Diagnose(int64_t time_ns, std::string what) {
    if (g_.diagnostics.size() >= kMaxDiagnostics) return;
    g_.diagnostics.push_back({static_cast<uint32_t>(trace_.rank), time_ns, std::move(what)});
  }

  // API calls, per thread in start order. A call inside the previous one on its thread (a
  // driver call under a runtime call) is not a node of its own: its correlation id maps to the
  // enclosing call, so launches through either resolve.
  void AddHostNodes() {
    std::vector<uint32_t> order(trace_.api_calls.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto& calls = trace_.api_calls;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      if (calls[a].thread_id != calls[b].thread_id) return calls[a].thread_id < calls[b].thread_id;
      return calls[a].start_ns < calls[b].start_ns;
    });
    uint32_t previous = kNoNode;
    uint32_t previous_thread = 0;
    // Host nodes come first, so every per-node vector indexed by an API node fits this size.
    api_of_.reserve(calls.size());
    thread_position_.reserve(calls.size());
    first_launched_.assign(calls.size(), kNoNode);
    last_launched_.assign(calls.size(), kNoNode);
    uint32_t thread_processor = kNoNode;  // Calls come thread by thread: one look-up each.
    for (uint32_t i : order) {
      const agent::ApiCallEvent& call = calls[i];
      const int64_t start = call.start_ns;
      const int64_t end = start + static_cast<int64_t>(call.duration_ns);
      if (previous != kNoNode && previous_thread == call.thread_id &&
          end <= g_.nodes[previous].end_ns() && start >= g_.nodes[previous].start_ns) {
        api_by_correlation_.Add(call.correlation_id, previous);
        // A nested call can say more about the outer one (the runtime call's kind is OTHER
        // when only its driver call is classified).
        Node& outer = g_.nodes[previous];
        if (outer.api_kind == ApiKind::kOther || outer.api_kind == ApiKind::kUnspecified) {
          outer.api_kind = call.kind;
        }
        continue;
      }
      Node node;
      node.start_ns = start;
      node.duration_ns = static_cast<int64_t>(call.duration_ns);
      node.name = call.name;
      if (thread_processor == kNoNode || previous_thread != call.thread_id) {
        thread_processor = ProcessorFor(false, call.thread_id);
      }
      node.processor = thread_processor;
      node.rank_index = rank_index_;
      node.kind = NodeKind::kApiCall;
      node.work = WorkClass::kHost;
      node.api_kind = call.kind;
      const uint32_t id = AddNode(node);
      api_event_.emplace_back(id, &call);
      Local(&api_of_, id) = &call;
      if (call.kind == ApiKind::kEventRecord && call.event_id != 0) {
        records_by_event_[call.event_id].push_back(id);
      }
      api_by_correlation_.Set(call.correlation_id, id);
      Processor& p = g_.processors[node.processor];
      if (!p.nodes.empty()) {
        const Node& before = g_.nodes[p.nodes.back()];
        // Overlapping calls that are not nested (clock jitter): no gap.
        AddEdge(p.nodes.back(), id, EdgeKind::kThreadOrder,
                std::max<int64_t>(0, start - before.end_ns()));
      }
      Local(&thread_position_, id) = static_cast<uint32_t>(p.nodes.size());
      p.nodes.push_back(id);
      previous = id;
      previous_thread = call.thread_id;
    }
  }

  // Kernels, copies and memsets, per stream in start order; launch edges by correlation id.
  void AddGpuNodes() {
    for (const agent::CollectiveEvent& c : trace_.collectives) {
      collective_correlations_.Add(c.correlation_id, 0);
    }
    struct Op {
      int64_t start;
      uint32_t source;  // Index into the kind's vector.
      NodeKind kind;
    };
    std::map<uint64_t, std::vector<Op>> by_stream;
    for (uint32_t i = 0; i < trace_.kernels.size(); ++i) {
      by_stream[trace_.kernels[i].stream_id].push_back(
          {trace_.kernels[i].start_ns, i, NodeKind::kKernel});
    }
    for (uint32_t i = 0; i < trace_.memcpys.size(); ++i) {
      by_stream[trace_.memcpys[i].stream_id].push_back(
          {trace_.memcpys[i].start_ns, i, NodeKind::kMemcpy});
    }
    for (uint32_t i = 0; i < trace_.memsets.size(); ++i) {
      by_stream[trace_.memsets[i].stream_id].push_back(
          {trace_.memsets[i].start_ns, i, NodeKind::kMemset});
    }
    for (auto& [stream, ops] : by_stream) {
      std::stable_sort(ops.begin(), ops.end(),
                       [](const Op& a, const Op& b) { return a.start < b.start; });
      const uint32_t processor = ProcessorFor(true, stream);
      for (const Op& op : ops) {
        Node node;
        uint64_t correlation = 0;
        node.kind = op.kind;
        node.processor = processor;
        node.rank_index = rank_index_;
        if (op.kind == NodeKind::kKernel) {
          const agent::KernelEvent& k = trace_.kernels[op.source];
          node.start_ns = k.start_ns;
          node.duration_ns = static_cast<int64_t>(k.duration_ns);
          node.name = k.name;
          correlation = k.correlation_id;
          const bool nccl =
              collective_correlations_.Find(correlation) != IdMap::kMissing || IsNcclKernel(k.name);
          node.work = nccl ? WorkClass::kCommunication : WorkClass::kCompute;
        } else if (op.kind == NodeKind::kMemcpy) {
          const agent::MemcpyEvent& m = trace_.memcpys[op.source];
          node.start_ns = m.start_ns;
          node.duration_ns = static_cast<int64_t>(m.duration_ns);
          node.name = "memcpy";
          correlation = m.correlation_id;
          node.work = WorkClass::kMemory;
        } else {
          const agent::MemsetEvent& m = trace_.memsets[op.source];
          node.start_ns = m.start_ns;
          node.duration_ns = static_cast<int64_t>(m.duration_ns);
          node.name = "memset";
          correlation = m.correlation_id;
          node.work = WorkClass::kMemory;
        }
        node.launch = FindApi(correlation);
        const uint32_t id = AddNode(node);
        gpu_by_correlation_.Add(correlation, id);
        Processor& p = g_.processors[processor];
        if (!p.nodes.empty()) AddEdge(p.nodes.back(), id, EdgeKind::kStreamOrder, 0);
        p.nodes.push_back(id);
        if (node.launch != kNoNode) {
          if (const agent::ApiCallEvent* call = ApiEvent(node.launch); call && call->stream_id) {
            stream_of_handle_.emplace(call->stream_id, processor);
          }
          AddEdge(node.launch, id, EdgeKind::kLaunch, 0);
          uint32_t& first = Local(&first_launched_, node.launch, kNoNode);
          if (first == kNoNode) first = id;
          Local(&last_launched_, node.launch, kNoNode) = id;
        } else {
          ++g_.stats.unlaunched_gpu_ops;
          if (unlaunched_reported_++ == 0) {
            Diagnose(node.start_ns, "GPU op '" + std::string(node.name) +
                                        "' has no launching API call (correlation " +
                                        std::to_string(correlation) + "); further ones counted");
          }
        }
      }
    }
  }

  // The launch time of a GPU op: its API call's start, else its own start.
  int64_t LaunchTime(uint32_t op) const {
    const Node& n = g_.nodes[op];
    return n.launch != kNoNode ? g_.nodes[n.launch].start_ns : n.start_ns;
  }

  // Launch-time indexes of each stream, for the two searches below: suffix minima and prefix
  // maxima of the launch times in FIFO order (both sorted, so binary search works even when
  // launches are not in FIFO order, e.g. from several threads).
  void IndexLaunchTimes() {
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
  uint32_t LastLaunchedBy(uint32_t processor, int64_t time) const {
    const StreamIndex& index = stream_index_.at(processor);
    // The largest i with suffix_min[i] <= time.
    auto it = std::upper_bound(index.suffix_min.begin(), index.suffix_min.end(), time);
    if (it == index.suffix_min.begin()) return kNoNode;
    return g_.processors[processor].nodes[static_cast<size_t>(it - index.suffix_min.begin()) - 1];
  }

  // The first op on `processor` launched at or after `time`.
  uint32_t FirstLaunchedAfter(uint32_t processor, int64_t time) const {
    const StreamIndex& index = stream_index_.at(processor);
    auto it = std::lower_bound(index.prefix_max.begin(), index.prefix_max.end(), time);
    if (it == index.prefix_max.end()) return kNoNode;
    return g_.processors[processor].nodes[static_cast<size_t>(it - index.prefix_max.begin())];
  }

  const agent::ApiCallEvent* ApiEvent(uint32_t node) const {
    const size_t local = node - base_node_;
    return local < api_of_.size() ? api_of_[local] : nullptr;
  }

  // The stream processor of a handle an API call carries. The agent records the application's
  // cudaStream_t there, while GPU ops carry CUPTI's stream ids: a launch joins the two (its
  // handle, its op's stream); imported traces use one id space, found directly.
  uint32_t StreamOfHandle(uint64_t handle) const {
    auto it = stream_of_handle_.find(handle);
    return it != stream_of_handle_.end() ? it->second : StreamProcessor(handle);
  }

  uint32_t StreamProcessor(uint64_t stream) const {
    auto it = streams_.find(stream);
    return it == streams_.end() ? kNoNode : it->second;
  }

  // The record call of an event waited for at `time`: the latest cudaEventRecord of the same
  // event on this rank that started before it.
  uint32_t RecordBefore(uint64_t event_id, int64_t time) const {
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
  uint32_t RecordStream(uint32_t record, uint64_t hint_stream) const {
    if (const agent::ApiCallEvent* call = ApiEvent(record); call && call->stream_id != 0) {
      return StreamOfHandle(call->stream_id);
    }
    return hint_stream != 0 ? StreamProcessor(hint_stream) : kNoNode;
  }

  void AddWaitEdge(uint32_t record_stream, int64_t record_time, uint32_t wait_stream,
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
  void AddEventWaits() {
    std::unordered_map<uint64_t, const agent::CudaEventRecordEvent*> records_by_sync_id;
    for (const auto& r : trace_.cuda_events) {
      if (r.cuda_event_sync_id != 0) records_by_sync_id[r.cuda_event_sync_id] = &r;
    }
    std::unordered_map<uint32_t, bool> paired;  // Wait API node -> handled.
    for (const agent::SyncEvent& s : trace_.syncs) {
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

  uint32_t FindApi(uint64_t correlation) const {
    static_assert(IdMap::kMissing == kNoNode);
    return api_by_correlation_.Find(correlation);
  }

  // The first GPU op launched by a call after `api` on the same thread.
  uint32_t NextLaunchOnThread(uint32_t api) const {
    const Processor& thread = g_.processors[g_.nodes[api].processor];
    for (size_t i = thread_position_[api - base_node_]; i < thread.nodes.size(); ++i) {
      const size_t local = thread.nodes[i] - base_node_;
      if (local < first_launched_.size() && first_launched_[local] != kNoNode) {
        return first_launched_[local];
      }
    }
    return kNoNode;
  }

  // End of the GPU work a sync waits for, as measured (the simulator resolves it again).
  int64_t MeasuredTargetEnd(const SyncSpec& spec, int64_t time) const {
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
  // a sync record with its correlation id, else (inferred) the whole device.
  void AddSyncs() {
    std::unordered_map<uint64_t, const agent::SyncEvent*> sync_by_correlation;
    for (const auto& s : trace_.syncs) {
      if (s.correlation_id != 0) sync_by_correlation[s.correlation_id] = &s;
    }
    std::vector<std::pair<uint32_t, SyncSpec>> pending;
    for (const auto& [node, call] : api_event_) {
      SyncSpec spec;
      spec.node = node;
      const agent::SyncEvent* record = nullptr;
      if (auto it = sync_by_correlation.find(call->correlation_id);
          it != sync_by_correlation.end()) {
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
          spec.target = spec.stream_processor != kNoNode ? SyncSpec::Target::kStream
                                                         : SyncSpec::Target::kDevice;
          spec.inferred = spec.stream_processor == kNoNode;
          break;
        }
        case ApiKind::kEventSynchronize: {
          uint64_t event = call->event_id;
          if (event == 0 && record != nullptr) event = record->event_id;
          spec.record_node =
              record != nullptr ? FindApi(record->event_record_correlation_id) : kNoNode;
          if (spec.record_node == kNoNode) spec.record_node = RecordBefore(event, time);
          if (spec.record_node != kNoNode) spec.record_stream = RecordStream(spec.record_node, 0);
          spec.target =
              spec.record_stream != kNoNode ? SyncSpec::Target::kEvent : SyncSpec::Target::kDevice;
          spec.inferred = spec.record_stream == kNoNode;
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

  void AddCollectiveMembers() {
    const std::vector<std::optional<CollectiveKey>> keys = CollectiveKeys(trace_);
    for (size_t i = 0; i < trace_.collectives.size(); ++i) {
      const agent::CollectiveEvent& c = trace_.collectives[i];
      uint32_t node = gpu_by_correlation_.Find(c.correlation_id);
      if (node == kNoNode) {
        // No correlation: the NCCL kernel on the collective's stream that overlaps it most.
        const uint32_t stream = StreamProcessor(c.stream_id);
        if (stream == kNoNode) continue;
        const int64_t start = c.start_ns;
        int64_t best_distance = INT64_MAX;
        for (uint32_t op : g_.processors[stream].nodes) {
          const int64_t distance = std::abs(g_.nodes[op].start_ns - start);
          if (g_.nodes[op].work == WorkClass::kCommunication && distance < best_distance) {
            best_distance = distance;
            node = op;
          }
        }
        if (node == kNoNode) continue;
      }
      g_.nodes[node].work = WorkClass::kCommunication;
      if (!keys[i]) {
        if (unkeyed_reported_++ == 0) {
          Diagnose(c.start_ns, "send/recv on comm " + std::to_string(c.comm_id) +
                                   " not paired: the trace has no single rank of its own for "
                                   "that communicator; replayed alone (further ones not reported)");
        }
        continue;
      }
      members.push_back({*keys[i], node, &c});
    }
  }

  // Delays of GPU in-edges (see execution_graph.h): the binding edge carries the residual.
  void SetGpuDelays(const GraphOptions& options) {
    // In-edges of this rank's GPU ops (edges were appended for this rank only so far), grouped
    // by target (counting sort: no allocation per node, node order kept).
    const size_t count = g_.nodes.size() - base_node_;
    std::vector<uint32_t> begin(count + 1, 0);
    for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
      if (g_.nodes[g_.edges[e].to].gpu()) ++begin[g_.edges[e].to - base_node_ + 1];
    }
    for (size_t i = 1; i <= count; ++i) begin[i] += begin[i - 1];
    std::vector<size_t> in_edges(begin[count]);
    {
      std::vector<uint32_t> next(begin.begin(), begin.end() - 1);
      for (size_t e = first_edge_; e < g_.edges.size(); ++e) {
        if (g_.nodes[g_.edges[e].to].gpu()) in_edges[next[g_.edges[e].to - base_node_]++] = e;
      }
    }
    auto ready = [&](const Edge& e) {
      const Node& from = g_.nodes[e.from];
      return e.from_start() ? from.start_ns : from.end_ns();
    };
    std::vector<int64_t> launch_latencies;
    std::vector<size_t> binding(count, SIZE_MAX);
    for (size_t local = 0; local < count; ++local) {
      if (begin[local] == begin[local + 1]) continue;
      size_t best = in_edges[begin[local]];
      for (uint32_t i = begin[local]; i < begin[local + 1]; ++i) {
        if (ready(g_.edges[in_edges[i]]) > ready(g_.edges[best])) best = in_edges[i];
      }
      binding[local] = best;
      if (g_.edges[best].kind == EdgeKind::kLaunch) {
        launch_latencies.push_back(g_.nodes[base_node_ + local].start_ns - ready(g_.edges[best]));
      }
    }
    const int64_t typical_launch = MedianOf(launch_latencies, kDefaultLaunchLatencyNs);
    g_.typical_launch_ns[rank_index_] = typical_launch;
    for (size_t local = 0; local < count; ++local) {
      const uint32_t node = static_cast<uint32_t>(base_node_ + local);
      const int64_t start = g_.nodes[node].start_ns;
      for (uint32_t i = begin[local]; i < begin[local + 1]; ++i) {
        const size_t e = in_edges[i];
        Edge& edge = g_.edges[e];
        const int64_t slack = start - ready(edge);
        if (slack < 0) {
          ++g_.stats.negative_slack_edges;
          g_.stats.max_negative_slack_ns = std::max(g_.stats.max_negative_slack_ns, -slack);
          if (negative_reported_++ == 0) {
            Diagnose(start, std::string(EdgeKindName(edge.kind)) + " edge into '" +
                                std::string(g_.nodes[node].name) + "' has negative slack (" +
                                std::to_string(-slack) +
                                " ns: it started before its predecessor allows; clock skew "
                                "between host and GPU?); further ones counted");
          }
        }
        if (e == binding[local]) {
          edge.delay_ns = slack;
          edge.binding = true;
          if (edge.kind == EdgeKind::kStreamOrder && slack > options.unexplained_wait_ns) {
            g_.stats.unexplained_gpu_wait_ns += slack;
            ++g_.stats.unexplained_gpu_waits;
          }
        } else if (edge.kind == EdgeKind::kLaunch) {
          edge.delay_ns = std::min(typical_launch, slack);
        } else {
          edge.delay_ns = std::min<int64_t>(0, slack);
        }
      }
    }
  }

 public:
  size_t first_edge_ = 0;

 private:
  const RankTrace& trace_;
  uint32_t rank_index_;
  ExecutionGraph& g_;
  std::map<uint64_t, uint32_t> threads_, streams_;           // Ordered: deterministic iteration.
  std::unordered_map<uint64_t, uint32_t> stream_of_handle_;  // API stream handle -> processor.
  IdMap api_by_correlation_;
  IdMap gpu_by_correlation_;
  // API nodes of this rank in node order, and node -> index into it.
  std::vector<std::pair<uint32_t, const agent::ApiCallEvent*>> api_event_;
  // Per node of this rank (index: node - base_node_), grown on demand.
  std::vector<const agent::ApiCallEvent*> api_of_;
  std::vector<uint32_t> thread_position_;                 // API node -> index on its thread.
  std::vector<uint32_t> first_launched_, last_launched_;  // API node -> GPU ops it launched.
  size_t base_node_ = 0;
  size_t first_sync_ = SIZE_MAX;
  std::unordered_map<uint64_t, std::vector<uint32_t>> records_by_event_;
  struct StreamIndex {
    std::vector<int64_t> suffix_min, prefix_max;
  };
  std::unordered_map<uint32_t, StreamIndex> stream_index_;
  IdMap collective_correlations_;  // Correlation ids of the NCCL kernels of collectives.
  int unlaunched_reported_ = 0;
  int negative_reported_ = 0;
  int unkeyed_reported_ = 0;
  ViewCache<bool> nccl_names_;  // See IsNcclKernel.
};

// Drops the later copies of repeated nodes (records fused into one GPU op), keeping the order.
void RemoveRepeats(std::vector<uint32_t>* nodes) {
  std::vector<uint32_t> distinct = *nodes;
  std::sort(distinct.begin(), distinct.end());
  if (std::adjacent_find(distinct.begin(), distinct.end()) == distinct.end()) return;  // Usual.
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::vector<bool> kept_already(distinct.size(), false);
  std::vector<uint32_t> kept;
  for (uint32_t node : *nodes) {
    const auto at = static_cast<size_t>(std::lower_bound(distinct.begin(), distinct.end(), node) -
                                        distinct.begin());
    if (kept_already[at]) continue;
    kept_already[at] = true;
    kept.push_back(node);
  }
  *nodes = std::move(kept);
}

}  // namespace

const char* EdgeKindName(EdgeKind kind) {
  switch (kind) {
    case EdgeKind::kThreadOrder:
      return "thread-order";
    case EdgeKind::kStreamOrder:
      return "stream-order";
    case EdgeKind::kLaunch:
      return "launch";
    case EdgeKind::kEventWait:
      return "event-wait";
  }
  return "?";
}

GraphBuilder::GraphBuilder(GraphOptions options) : options_(options) {}

void GraphBuilder::AddRank(const RankTrace& rank, uint32_t rank_index) {
  if (g_.ranks.size() <= rank_index) {
    g_.ranks.resize(rank_index + 1, 0);
    g_.typical_launch_ns.resize(rank_index + 1, kDefaultLaunchLatencyNs);
  }
  g_.ranks[rank_index] = rank.rank;
  // Offsets are applied in Finish (clock alignment needs every rank's collectives first).
  RankBuilder builder(rank, rank_index, &g_);
  builder.first_edge_ = g_.edges.size();
  builder.Build(options_);
  if (++ranks_added_ == 1 && expected_ranks_ > 1) {
    // The other ranks of a job are about the size of the first: reserve for them all, with
    // some room (pages that are never touched cost no memory).
    const size_t ranks = expected_ranks_ + expected_ranks_ / 8;
    g_.nodes.reserve(g_.nodes.size() * ranks);
    g_.edges.reserve(g_.edges.size() * ranks);
  }
  for (const auto& m : builder.members) {
    members_[m.key].nodes.push_back(m.node);
    if (m.event->comm_size != 0) {
      comm_sizes_[m.key.comm_id] = m.event->comm_size;
      known_sizes_.insert(m.key.comm_id);
    }
  }
  // Operations whose records share a GPU op (NCCL ran a group of calls as one kernel) are to
  // be one group: a member cannot wait for two groups.
  std::vector<const RankBuilder::Member*> by_node;
  by_node.reserve(builder.members.size());
  for (const auto& m : builder.members) by_node.push_back(&m);
  std::stable_sort(by_node.begin(), by_node.end(),
                   [](const auto* a, const auto* b) { return a->node < b->node; });
  for (size_t i = 1; i < by_node.size(); ++i) {
    if (by_node[i]->node == by_node[i - 1]->node && by_node[i]->key != by_node[i - 1]->key) {
      fused_.emplace_back(by_node[i - 1]->key, by_node[i]->key);
    }
  }
  for (const CommunicatorInfo& c : rank.communicators) {
    if (c.comm_size != 0 && comm_sizes_.emplace(c.comm_id, c.comm_size).second) {
      known_sizes_.insert(c.comm_id);
    }
  }
}

ExecutionGraph GraphBuilder::Finish(const std::vector<int64_t>& rank_offset_ns) {
  ExecutionGraph g = std::move(g_);
  g_ = ExecutionGraph();
  g.rank_offset_ns = rank_offset_ns;
  g.rank_offset_ns.resize(g.ranks.size(), 0);
  for (Node& n : g.nodes) n.start_ns += g.rank_offset_ns[n.rank_index];
  std::unordered_map<int32_t, uint32_t> index_of_rank;
  for (uint32_t r = 0; r < g.ranks.size(); ++r) index_of_rank[g.ranks[r]] = r;
  for (GraphDiagnostic& d : g.diagnostics) {
    auto it = index_of_rank.find(static_cast<int32_t>(d.rank));
    if (d.rank != kWholeJob && it != index_of_rank.end()) {
      d.time_ns += g.rank_offset_ns[it->second];
    }
  }
  // A communicator whose size no record gives is as large as its largest collective.
  for (const auto& [key, operation] : members_) {
    if (key.kind == CollectiveKey::Kind::kPointToPoint) continue;  // A pair says nothing.
    const auto records = static_cast<uint32_t>(operation.nodes.size());
    auto [it, added] = comm_sizes_.try_emplace(key.comm_id, records);
    if (!added && !known_sizes_.count(key.comm_id)) it->second = std::max(it->second, records);
  }
  // Groups: operations in key order, joined where they share a GPU op (union-find; a group is
  // represented by its first operation, so groups come out in the order of their first).
  std::vector<std::pair<const CollectiveKey*, const Operation*>> operations;
  operations.reserve(members_.size());
  for (auto& [key, operation] : members_) {
    operation.index = static_cast<uint32_t>(operations.size());
    operations.emplace_back(&key, &operation);
  }
  std::vector<uint32_t> parent(operations.size());
  for (uint32_t i = 0; i < parent.size(); ++i) parent[i] = i;
  auto root = [&parent](uint32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  for (const auto& [a, b] : fused_) {
    const uint32_t ra = root(members_.at(a).index), rb = root(members_.at(b).index);
    parent[std::max(ra, rb)] = std::min(ra, rb);
  }
  std::vector<std::vector<uint32_t>> parts;  // Operation indices of each group.
  std::vector<uint32_t> part_of_root(operations.size(), UINT32_MAX);
  for (uint32_t i = 0; i < operations.size(); ++i) {
    uint32_t& part = part_of_root[root(i)];
    if (part == UINT32_MAX) {
      part = static_cast<uint32_t>(parts.size());
      parts.emplace_back();
    }
    parts[part].push_back(i);
  }
  auto rank_of = [&g](uint32_t node) {
    return static_cast<uint32_t>(g.ranks[g.nodes[node].rank_index]);
  };
  auto diagnose = [&g](uint32_t rank, int64_t time, std::string what) {
    if (g.diagnostics.size() < kMaxDiagnostics) {
      g.diagnostics.push_back({rank, time, std::move(what)});
    }
  };
  // Collective groups: transfer = earliest end - latest start over the members (aligned).
  for (const std::vector<uint32_t>& part : parts) {
    const CollectiveKey& first = *operations[part.front()].first;
    CollectiveGroup group;
    group.comm_id = first.comm_id;
    group.seq_number = first.ordinal;
    std::vector<uint32_t>& members = group.nodes;
    for (uint32_t i : part) {
      const std::vector<uint32_t>& nodes = operations[i].second->nodes;
      members.insert(members.end(), nodes.begin(), nodes.end());
    }
    RemoveRepeats(&members);
    int64_t latest_start = INT64_MIN, earliest_end = INT64_MAX;
    for (uint32_t node : members) {
      latest_start = std::max(latest_start, g.nodes[node].start_ns);
      earliest_end = std::min(earliest_end, g.nodes[node].end_ns());
    }
    group.transfer_ns = earliest_end - latest_start;
    std::string name = first.Describe();
    if (part.size() > 1) {
      name += " and " + std::to_string(part.size() - 1) + " operation(s) run in the same kernels";
    }
    if (group.transfer_ns < 0) {
      // A member ended before another started: the clocks disagree (or the pairing is wrong).
      ++g.stats.negative_slack_edges;
      g.stats.max_negative_slack_ns = std::max(g.stats.max_negative_slack_ns, -group.transfer_ns);
      if (g.stats.collectives_inconsistent++ == 0) {
        uint32_t first_end = members.front(), last_start = members.front();
        for (uint32_t node : members) {
          if (g.nodes[node].end_ns() < g.nodes[first_end].end_ns()) first_end = node;
          if (g.nodes[node].start_ns > g.nodes[last_start].start_ns) last_start = node;
        }
        diagnose(rank_of(first_end), g.nodes[first_end].end_ns(),
                 name + " ended on rank " + std::to_string(rank_of(first_end)) + " " +
                     std::to_string(-group.transfer_ns) + " ns before it started on rank " +
                     std::to_string(rank_of(last_start)) +
                     ": their clocks disagree or their seq numbers do not line up; replayed "
                     "with no transfer time (further ones counted)");
      }
      group.transfer_ns = 0;
      earliest_end = latest_start;
    }
    for (uint32_t node : members) {
      group.tail_ns.push_back(std::max<int64_t>(0, g.nodes[node].end_ns() - earliest_end));
    }
    // Complete when each operation has all its records (unknown communicator size: assumed).
    const CollectiveKey* short_key = nullptr;
    const Operation* short_operation = nullptr;
    uint32_t expected = 0;
    for (uint32_t i : part) {
      const auto& [key, operation] = operations[i];
      auto size = comm_sizes_.find(key->comm_id);
      if (key->kind != CollectiveKey::Kind::kPointToPoint && size == comm_sizes_.end()) continue;
      expected = key->ExpectedRecords(size != comm_sizes_.end() ? size->second : 0);
      if (operation->nodes.size() < expected) {
        short_key = key;
        short_operation = operation;
        break;
      }
    }
    group.complete = short_key == nullptr;
    if (!group.complete && g.stats.collectives_incomplete++ == 0) {
      const std::vector<uint32_t>& present = short_operation->nodes;
      std::string ranks;
      for (uint32_t node : present) {
        ranks += (ranks.empty() ? "" : ",") + std::to_string(rank_of(node));
      }
      std::string what = short_key->Describe();
      what += ": only rank(s) " + ranks;
      what += " of " + std::to_string(expected);
      what +=
          " took part (ranks missing, cut short, or seq numbers that do not line up); the "
          "present ones are coupled among themselves (further ones counted)";
      diagnose(rank_of(present.front()), g.nodes[present.front()].start_ns, std::move(what));
    }
    const uint32_t index = static_cast<uint32_t>(g.collectives.size());
    for (uint32_t node : group.nodes) g.nodes[node].collective = index;
    g.collectives.push_back(std::move(group));
  }
  members_.clear();
  fused_.clear();
  comm_sizes_.clear();
  known_sizes_.clear();
  g.origin_ns = INT64_MAX;
  for (const Node& n : g.nodes) g.origin_ns = std::min(g.origin_ns, n.start_ns);
  if (g.nodes.empty()) g.origin_ns = 0;
  // CSR by source; the edges are already grouped (RankBuilder::GroupEdgesBySource).
  g.out_begin.assign(g.nodes.size() + 1, 0);
  for (const Edge& e : g.edges) ++g.out_begin[e.from + 1];
  for (size_t i = 1; i < g.out_begin.size(); ++i) g.out_begin[i] += g.out_begin[i - 1];
  return g;
}

ExecutionGraph BuildGraph(const Job& job, const std::vector<int64_t>& rank_offset_ns,
                          const GraphOptions& options) {
  GraphBuilder builder(options);
  for (uint32_t r = 0; r < job.ranks.size(); ++r) builder.AddRank(job.ranks[r], r);
  return builder.Finish(rank_offset_ns);
}

}  // namespace lumos::modeler
