// RankBuilder's nodes (see rank_builder.h): API calls per thread, GPU ops per stream with
// their launch edges, and the GPU op of each collective record.
#include "modeler/graph/rank_builder.h"

#include <algorithm>
#include <map>
#include <string>

#include "schema/nccl_names.h"

namespace lumos::modeler::internal {

using schema::ApiKind;

RankBuilder::RankBuilder(const RankTrace& trace, uint32_t rank_index, ExecutionGraph* graph)
    : trace_(trace),
      rank_index_(rank_index),
      g_(*graph),
      base_node_(graph->nodes.size()),
      first_sync_(graph->syncs.size()),
      first_edge_(graph->edges.size()) {
  const size_t events =
      trace.api_calls.size() + trace.kernels.size() + trace.memcpys.size() + trace.memsets.size();
  api_by_correlation_.Reserve(trace.api_calls.size());
  gpu_by_correlation_.Reserve(events - trace.api_calls.size());
}

void RankBuilder::Build(const GraphOptions& options) {
  record_sources_ = options.record_sources;
  AddHostNodes();
  AddGpuNodes();
  IndexLaunchTimes();
  AddEventWaits();
  AddSyncs();
  AddThreadHandoffs();
  AddCollectiveMembers();
  SetGpuDelays(options);
  NumberInTimeOrder();
}

uint32_t RankBuilder::ProcessorFor(bool gpu, uint64_t id) {
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

// schema::IsNcclKernelName, once per distinct name of this rank (ViewCache): matching the
// name's prefixes for every kernel was ~4% of a 512-rank replay (perf).
bool RankBuilder::IsNcclKernel(std::string_view name) {
  return nccl_names_.Get(name,
                         [](std::string_view text) { return schema::IsNcclKernelName(text); });
}

uint32_t RankBuilder::AddNode(Node node, uint32_t source) {
  g_.nodes.push_back(node);
  if (record_sources_) g_.node_source.push_back(source);
  return static_cast<uint32_t>(g_.nodes.size() - 1);
}

void RankBuilder::AddEdge(uint32_t from, uint32_t to, EdgeKind kind, int64_t delay, bool inferred) {
  g_.edges.push_back(Edge{from, to, delay, kind, inferred});
  ++g_.stats.edges_by_kind[static_cast<int>(kind)];
}

void RankBuilder::Diagnose(int64_t time_ns, std::string what, std::string_view name) {
  if (g_.diagnostics.size() >= kMaxDiagnostics) return;
  g_.diagnostics.push_back({static_cast<uint32_t>(trace_.rank), time_ns, std::move(what), name});
}

// API calls, per thread in start order. A call inside the previous one on its thread (a
// driver call under a runtime call) is not a node of its own: its correlation id maps to the
// enclosing call, so launches through either resolve.
void RankBuilder::AddHostNodes() {
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
    const schema::ApiCallEvent& call = calls[i];
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
    const uint32_t id = AddNode(node, i);
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
void RankBuilder::AddGpuNodes() {
  for (const schema::CollectiveEvent& c : trace_.collectives) {
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
        const schema::KernelEvent& k = trace_.kernels[op.source];
        node.start_ns = k.start_ns;
        node.duration_ns = static_cast<int64_t>(k.duration_ns);
        node.name = k.name;
        correlation = k.correlation_id;
        const bool nccl =
            collective_correlations_.Find(correlation) != IdMap::kMissing || IsNcclKernel(k.name);
        node.work = nccl ? WorkClass::kCommunication : WorkClass::kCompute;
      } else if (op.kind == NodeKind::kMemcpy) {
        const schema::MemcpyEvent& m = trace_.memcpys[op.source];
        node.start_ns = m.start_ns;
        node.duration_ns = static_cast<int64_t>(m.duration_ns);
        node.name = "memcpy";
        correlation = m.correlation_id;
        node.work = WorkClass::kMemory;
        node.copy = static_cast<uint32_t>(g_.copies.size());
        g_.copies.push_back({m.bytes, m.copy_kind});
      } else {
        const schema::MemsetEvent& m = trace_.memsets[op.source];
        node.start_ns = m.start_ns;
        node.duration_ns = static_cast<int64_t>(m.duration_ns);
        node.name = "memset";
        correlation = m.correlation_id;
        node.work = WorkClass::kMemory;
        node.copy = static_cast<uint32_t>(g_.copies.size());
        g_.copies.push_back({m.bytes, schema::CopyKind::kUnspecified});
      }
      node.launch = FindApi(correlation);
      const uint32_t id = AddNode(node, op.source);
      gpu_by_correlation_.Add(correlation, id);
      Processor& p = g_.processors[processor];
      if (!p.nodes.empty()) AddEdge(p.nodes.back(), id, EdgeKind::kStreamOrder, 0);
      p.nodes.push_back(id);
      if (node.launch != kNoNode) {
        if (const schema::ApiCallEvent* call = ApiEvent(node.launch); call && call->stream_id) {
          stream_of_handle_.emplace(call->stream_id, processor);
        }
        AddEdge(node.launch, id, EdgeKind::kLaunch, 0);
        uint32_t& first = Local(&first_launched_, node.launch, kNoNode);
        if (first == kNoNode) first = id;
        Local(&last_launched_, node.launch, kNoNode) = id;
      } else {
        ++g_.stats.unlaunched_gpu_ops;
        if (unlaunched_reported_++ == 0) {
          Diagnose(node.start_ns,
                   "GPU op '" + std::string(node.name) +
                       "' has no launching API call (correlation " + std::to_string(correlation) +
                       "); further ones counted",
                   node.name);
        }
      }
    }
  }
}

// The GPU op of each collective record, and its key.
void RankBuilder::AddCollectiveMembers() {
  const std::vector<std::optional<CollectiveKey>> keys = CollectiveKeys(trace_);
  for (size_t i = 0; i < trace_.collectives.size(); ++i) {
    const schema::CollectiveEvent& c = trace_.collectives[i];
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

}  // namespace lumos::modeler::internal
