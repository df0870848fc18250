// Design: the execution graph of a job (../../../shared/DESIGN.md, "The execution graph").
//
// Nodes run on processors, each strictly serial: host threads run API calls, GPU streams run
// kernels, copies and memsets. Per rank, processors are (rank, thread id) and (rank, stream id).
// Fixed edges, each with a delay (ns) added to its source's end (or start, for launches):
//   thread order   previous API call on the thread -> next; delay = the measured host gap
//                  (Python, framework work), which stays unless a what-if drops it;
//   stream order   previous GPU op on the stream -> next (FIFO);
//   launch         API call -> the GPU op with its correlation id (start -> start: a GPU op
//                  never starts before its launch);
//   event wait     the last GPU op enqueued on stream A before cudaEventRecord -> the first op
//                  enqueued on stream B after cudaStreamWaitEvent. Exact from the recorded
//                  identities (agent: cudaEventSyncId; Kineto: cuda_sync records carrying the
//                  record's correlation id); without them, inferred (see BuildGraph);
//   thread handoff one host thread waited for another (PyTorch's main thread across the
//                  autograd thread's backward): the waiter's call before its wait -> the other
//                  thread's first call (fork), the other's last call -> the waiter's next
//                  (join); delay = the measured time between them. Always inferred, from the
//                  calls' times (thread_handoffs.cc); the thread-order delays they explain are 0.
// Runtime dependencies, resolved by the simulator as it runs: a host sync (stream, device,
// event synchronize, blocking copy) ends when the GPU work it waits for at that moment is done.
// Collectives: the records of one operation (one CollectiveKey, collective_key.h: a
// collective's comm id, op and seq; a send and its receive) on all ranks end together; records
// fused into one GPU op (a group of NCCL calls run as one kernel) join their operations into one
// group. Each member's measured time splits into waiting-for-peers (emerges in the simulation)
// and transfer (a duration: the common end minus the latest start).
//
// Delays reproduce the measured timeline: for each GPU op the in-edge whose measured ready time
// is latest is *binding* and carries the residual (start - ready); launch edges that are not
// binding carry the rank's typical launch latency (capped by what was measured); other
// non-binding edges carry 0. So replay with measured durations reproduces the measurement where
// the graph is complete; a large residual on a stream-order edge means the op waited for
// something not recorded, and is reported (GraphStats::unexplained_gpu_wait_ns).
// Validation (Validate): acyclic, no negative slack, every GPU op launched, every wait matched;
// each violation is one diagnostic naming rank, node and time.
// Lifetime: node names view the Job's NamePool; the Job must outlive the graph.
// Threading: built once, then read-only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "modeler/graph/collective_key.h"
#include "modeler/graph/job.h"
#include "schema/enums.h"

namespace lumos::modeler {

enum class NodeKind : uint8_t { kApiCall, kKernel, kMemcpy, kMemset };
// What a node's time counts as in the breakdown.
enum class WorkClass : uint8_t { kHost, kCompute, kCommunication, kMemory };
enum class EdgeKind : uint8_t { kThreadOrder, kStreamOrder, kLaunch, kEventWait, kThreadHandoff };
inline constexpr int kEdgeKindCount = 5;
const char* EdgeKindName(EdgeKind kind);

inline constexpr uint32_t kNoNode = UINT32_MAX;

struct Node {
  int64_t start_ns = 0;     // Measured, on the job's aligned timeline.
  int64_t duration_ns = 0;  // Measured.
  std::string_view name;
  uint32_t processor = 0;
  uint32_t rank_index = 0;        // Index into Job::ranks.
  uint32_t launch = kNoNode;      // GPU ops: the API call that launched it.
  uint32_t collective = kNoNode;  // GPU ops: index into ExecutionGraph::collectives.
  uint32_t sync = kNoNode;        // API calls: index into ExecutionGraph::syncs.
  uint32_t copy = kNoNode;        // Copies, memsets: index into ExecutionGraph::copies.
  NodeKind kind = NodeKind::kApiCall;
  WorkClass work = WorkClass::kHost;
  schema::ApiKind api_kind = schema::ApiKind::kUnspecified;

  int64_t end_ns() const { return start_ns + duration_ns; }
  bool gpu() const { return kind != NodeKind::kApiCall; }
};

struct Processor {
  uint32_t rank_index = 0;
  bool gpu = false;
  uint64_t id = 0;              // Thread id or stream id.
  std::vector<uint32_t> nodes;  // In measured order.
};

struct Edge {
  uint32_t from = 0;
  uint32_t to = 0;
  int64_t delay_ns = 0;
  EdgeKind kind = EdgeKind::kThreadOrder;
  bool inferred = false;  // Not from a recorded identity (see BuildGraph's fallback rules).
  bool binding = false;   // Into a GPU op: the latest-ready in-edge, carrying the residual.
  bool from_start() const { return kind == EdgeKind::kLaunch; }
  // Its delay is a host thread's own work (Python, framework), what host what-ifs scale.
  bool host_gap() const {
    return kind == EdgeKind::kThreadOrder || kind == EdgeKind::kThreadHandoff;
  }
};

// A host call that blocks until GPU work is done.
struct SyncSpec {
  enum class Target : uint8_t { kStream, kDevice, kEvent };
  uint32_t node = 0;
  Target target = Target::kDevice;
  uint32_t stream_processor = kNoNode;  // kStream.
  uint32_t record_node = kNoNode;       // kEvent: the cudaEventRecord call.
  uint32_t record_stream = kNoNode;     // kEvent: the stream processor it recorded on.
  // end = max(start + min_duration, waited-for GPU end + wake): both from the measurement.
  int64_t min_duration_ns = 0;
  int64_t wake_ns = 0;
  // The target is not recorded: a stream sync naming no stream, an event sync whose record is
  // unknown. Then kStream, the stream the measurement allows (host_syncs.cc).
  bool inferred = false;
};

// A copy's or memset's size and direction as recorded (the replay report's bandwidths).
struct CopyInfo {
  uint64_t bytes = 0;
  schema::CopyKind kind = schema::CopyKind::kUnspecified;  // kUnspecified for a memset.
};

struct CollectiveGroup {
  uint64_t comm_id = 0;
  uint64_t seq_number = 0;  // Of its first operation (CollectiveKey::ordinal).
  // What the first record of its first operation says (NcclCollective: bytes per rank, as
  // recorded; 0 = not known), for the collective cost model's calibration (modeler/models).
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  uint64_t bytes = 0;
  schema::DataType data_type = schema::DataType::kUnspecified;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
  uint32_t channels = 0;
  uint32_t operations = 1;       // Operations joined into it (NCCL ran them in the same kernels).
  std::vector<uint32_t> nodes;   // One GPU op per rank that took part.
  std::vector<int64_t> tail_ns;  // Per member: its measured end minus the earliest end (>= 0).
  int64_t transfer_ns = 0;       // Earliest measured end minus latest measured start.
  bool complete = true;  // Every operation has all its records (every rank; a send/recv: both).
};

struct GraphStats {
  uint64_t edges_by_kind[kEdgeKindCount] = {};
  uint64_t inferred_event_waits = 0;  // Event-wait edges from the fallback rule.
  uint64_t unmatched_waits = 0;       // Waits no rule could pair.
  uint64_t inferred_syncs = 0;        // Syncs whose target is a fallback.
  uint64_t untargeted_syncs = 0;      // Sync calls no target fits: replayed as plain calls.
  uint64_t unlaunched_gpu_ops = 0;    // GPU ops whose correlation id matches no API call.
  uint64_t negative_slack_edges = 0;  // Edges the measurement violates (clock skew).
  int64_t max_negative_slack_ns = 0;
  int64_t unexplained_gpu_wait_ns = 0;  // Stream-order residuals beyond kUnexplainedWaitNs.
  uint64_t unexplained_gpu_waits = 0;
  uint64_t collectives_incomplete = 0;    // Groups missing members (ranks not loaded).
  uint64_t collectives_inconsistent = 0;  // A member ended before another started.
};

inline constexpr uint32_t kWholeJob = UINT32_MAX;

struct GraphDiagnostic {
  uint32_t rank = kWholeJob;  // kWholeJob: a count over the whole job.
  int64_t time_ns = 0;        // On the job's timeline; see ExecutionGraph::origin_ns.
  std::string what;           // Names in full.
  // The node name `what` quotes, if any (it views the Job's names, as Node::name does): the
  // text report shortens a long one (kernel names run to hundreds of characters).
  std::string_view name;
};

struct ExecutionGraph {
  std::vector<Node> nodes;
  std::vector<Processor> processors;
  std::vector<Edge> edges;  // Grouped by source (CSR order), each source's in build order.
  std::vector<uint32_t>
      out_begin;  // CSR over edges: out-edges of n are [out_begin[n], out_begin[n+1]).
  std::vector<SyncSpec> syncs;
  std::vector<CollectiveGroup> collectives;
  std::vector<CopyInfo> copies;            // Per copy and memset node (Node::copy).
  std::vector<int64_t> rank_offset_ns;     // Added to each rank's times (clock alignment).
  std::vector<int32_t> ranks;              // Global rank of each rank index.
  std::vector<int64_t> typical_launch_ns;  // Per rank: median launch latency where it binds.
  int64_t origin_ns = 0;                   // Earliest measured node start: reports count from it.
  GraphStats stats;
  std::vector<GraphDiagnostic> diagnostics;  // Bounded; see kMaxDiagnostics.
  // With GraphOptions::record_sources, per node: the index of the event it was built from in
  // its rank's RankTrace vector of its kind (api_calls, kernels, memcpys, memsets; an API node
  // is its outermost call), so estimation finds a kernel's shape (RankTrace::GemmOf). Empty
  // otherwise: replay does not pay 4 bytes a node for it.
  std::vector<uint32_t> node_source;
};

struct GraphOptions {
  // Stream-order residuals longer than this are reported as unexplained waits.
  int64_t unexplained_wait_ns = 50'000;
  // Fill ExecutionGraph::node_source.
  bool record_sources = false;
};

inline constexpr size_t kMaxDiagnostics = 100;

// Builds the graph rank by rank (LoadOptions::on_rank feeds it while a job loads, so a rank's
// events can be dropped once its part is built), then Finish() applies the clock offsets (one
// per rank index; missing ones are 0), groups the collectives and sorts the edges.
class GraphBuilder {
 public:
  explicit GraphBuilder(GraphOptions options = {});
  // How many ranks will be added (a hint): after the first, the node and edge vectors are
  // reserved for all of them, so a large job's graph is not copied at every doubling.
  void ExpectRanks(size_t ranks) { expected_ranks_ = ranks; }
  void AddRank(const RankTrace& rank, uint32_t rank_index);
  ExecutionGraph Finish(const std::vector<int64_t>& rank_offset_ns);

 private:
  GraphOptions options_;
  size_t expected_ranks_ = 0;
  size_t ranks_added_ = 0;
  ExecutionGraph g_;
  struct Operation {
    std::vector<uint32_t> nodes;  // The GPU op of each record (repeats: records fused in one).
    uint32_t index = 0;           // In key order; set by Finish.
    // Its first record's description (CollectiveGroup::op ...): the records themselves are
    // dropped after each rank when the job streams (LoadOptions::keep_events = false).
    schema::CollectiveEvent first;
  };
  std::map<CollectiveKey, Operation> members_;
  std::vector<std::pair<CollectiveKey, CollectiveKey>> fused_;  // Operations sharing a GPU op.
  std::unordered_map<uint64_t, uint32_t> comm_sizes_;
  std::unordered_set<uint64_t> known_sizes_;  // Sizes from records, not from member counts.
};

// The whole graph of a job already in memory.
ExecutionGraph BuildGraph(const Job& job, const std::vector<int64_t>& rank_offset_ns,
                          const GraphOptions& options = {});

// Checks the graph's invariants; appends one diagnostic per violation (bounded) and returns
// how many there were. Acyclicity is checked by a topological sort of the fixed edges, unless
// a replay already ran every node (a node on a cycle never becomes ready, so that proves it).
uint64_t Validate(ExecutionGraph* graph, bool replay_ran_every_node = false);

}  // namespace lumos::modeler
