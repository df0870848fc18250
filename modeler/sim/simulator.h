// Design: the discrete-event replay of an ExecutionGraph (DESIGN.md, "The execution graph").
// Processors are host threads and GPU streams; their order is the graph's thread- and
// stream-order edges. A node is ready when its fixed in-edges are done; ready nodes run in
// order of earliest start, ties broken by node index, so the same input gives the same output
// bit for bit. Runtime dependencies are resolved as the simulation runs:
//   * a host sync waits for the GPU work on its stream (device, event) *at the moment it is
//     issued*: the last op of the stream's launched prefix by then (it and every op before it
//     launched; each stream keeps that history in simulated time). In a measurement launches
//     come in stream order, so that is the last op launched; when a what-if lets one thread
//     launch later ops of a shared stream before another launches an earlier one, the sync
//     does not wait for ops queued behind one not yet launched (CUDA would not have either);
//   * a collective's instances on all ranks end together, at the latest member's start plus
//     the transfer time (plus each member's measured tail), so waiting for peers emerges.
// Launch edges are released when their API call starts (a call may wait for what it launched,
// like a blocking cudaMemcpy); other edges when their source ends.
// A Scenario holds every duration and delay; MeasuredScenario() takes them from the graph and
// what-ifs (whatif.h) change them. Nodes that can never run (a dependency cycle through a
// sync or collective, a collective member that never starts) are reported, never waited for.
// Threading: single-threaded; Simulate is reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "modeler/graph/execution_graph.h"

namespace lumos::modeler {

struct Scenario {
  std::vector<int64_t> duration_ns;  // Per node.
  std::vector<int64_t> delay_ns;     // Per edge.
  std::vector<int64_t> transfer_ns;  // Per collective group.
  std::vector<int64_t> sync_min_ns;  // Per sync.
  std::vector<int64_t> sync_wake_ns;
};

Scenario MeasuredScenario(const ExecutionGraph& graph);
// Recorded dependencies only: every GPU op starts as soon as its dependencies allow, after at
// most the rank's typical launch latency; the measured residuals (queueing the trace does not
// explain) are dropped. Its error against the measurement is how much the graph explains.
Scenario DependenciesOnlyScenario(const ExecutionGraph& graph);

// What decided when a node ended (its start: SimResult::start_cause_edge).
enum class Cause : uint8_t {
  kOwnDuration,  // start + duration.
  kSyncTarget,   // The GPU op a sync waited for (end_cause_node).
  kCollective,   // The last member of the collective to start (end_cause_node).
};

struct SimResult {
  std::vector<int64_t> start_ns;  // Per node; kNotRun when it never ran.
  std::vector<int64_t> end_ns;
  std::vector<uint32_t> start_cause_edge;  // Index of the binding edge (its source: what
                                           // decided the start), or kNoNode for a root.
  std::vector<Cause> end_cause;
  std::vector<uint32_t> end_cause_node;
  uint64_t not_run = 0;
  std::vector<GraphDiagnostic> diagnostics;

  static constexpr int64_t kNotRun = INT64_MIN;
  bool ran(uint32_t node) const { return end_ns[node] != kNotRun; }
};

// `progress`, when given, is called now and then with the share of nodes run so far.
SimResult Simulate(const ExecutionGraph& graph, const Scenario& scenario,
                   const std::function<void(double)>& progress = nullptr);

}  // namespace lumos::modeler
