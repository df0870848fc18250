// Design: the structural rewrite under `layers=N` and `micro_batches=M`: a new graph in which
// chosen steps of the program (a step: one layer, or one micro-batch, on every rank at once:
// the nodes of the structure's segments with the same key, modeler/structure/job_structure.h)
// are repeated or removed. The measured graph stays as it is; the new one runs in the same
// simulator with the same Scenario fields.
//
// Rules (each a choice; the header says why):
//   * Copies of a step follow it directly on every processor the step uses: a stream runs the
//     original's ops, then copy 1's, then copy 2's, then what came after; a host thread the
//     same. Copy k's first node takes the original's first node's in-delay (the host gap before
//     the step, the stream-order residual), so the step's rhythm repeats; the node after the
//     last copy keeps its own (the gap after the step).
//   * Edges inside a step (launches, event waits) are copied into every copy. An edge from
//     outside into a step's node also enters each copy when its source comes before the step
//     on its own processor (the dependency is as satisfied as it was), else only the original.
//     An edge out of a step leaves its last copy when its target comes after the step on the
//     target's processor (what followed the step follows all of it), else the original: so no
//     copy ever waits for what waits for it.
//   * A removed step's nodes are gone: its processor neighbours join (the gap after it stays),
//     edges into it are dropped, and an edge out of it leaves the nearest surviving earlier
//     node on the same processor (what waited for the step waits for what it waited for).
//   * Host syncs, GPU-op launches and collective groups inside a step are copied with it (copy
//     k of a collective joins copy k of its members). A collective is repeated or removed
//     whole: one whose members are not all in the same step (a step cut differently on two
//     ranks) is left out of every step, its members kept once, and counted
//     (collectives_left_out), since half a collective would wait forever for its peers.
//     Durations, delays, transfers and sync times are the base scenario's.
//   * Copies keep the original's measured times shifted by k times the step's measured span on
//     its rank (reports of a rewritten graph only use simulated times).
// Node ids: rank by rank, in the original order, each step's copies right after the step's last
// node of that rank, so a rank's nodes stay one id range and roughly in time order.
// Errors: a node in two steps, a step id out of range. The result is validated (acyclic, every
// wait matched) by the caller's tests; a cycle would be a bug of these rules.
// Threading: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler::whatif {

// The most nodes a rewritten graph may have (ids are uint32_t, kNoNode reserved; callers check
// their memory budget long before this).
inline constexpr uint64_t kMaxRewrittenNodes = uint64_t{1} << 31;

struct StepCopies {
  std::vector<uint32_t> nodes;  // The step's nodes on every rank (graph ids, any order).
  uint32_t copies = 1;          // 0: removed; 1: kept as is; N: the original and N - 1 copies.
};

struct RewrittenGraph {
  ExecutionGraph graph;
  Scenario scenario;
  std::vector<uint32_t> origin;  // Per new node: the measured node it is (a copy of).
  std::vector<uint32_t> copy;    // Per new node: 0 for the original, k for copy k.
  // Per original node, its instances in the new graph: ids instance_ids[instance_begin[n] ..
  // instance_begin[n + 1]), copy 0 first; none when removed.
  std::vector<uint32_t> instance_begin;
  std::vector<uint32_t> instance_ids;
  uint64_t collectives_left_out = 0;  // Collectives split across steps, kept once.

  // The instance of original node `n` that is copy `k`, or kNoNode.
  uint32_t Instance(uint32_t n, uint32_t k) const;
  uint32_t Instances(uint32_t n) const { return instance_begin[n + 1] - instance_begin[n]; }
};

StatusOr<RewrittenGraph> RepeatSteps(const ExecutionGraph& graph, const Scenario& base,
                                     const std::vector<StepCopies>& steps);

// The identity rewrite (every node its own instance), for composing: a rewrite that changes
// nothing structural still gives the same shape of result.
RewrittenGraph Unchanged(const ExecutionGraph& graph, const Scenario& base);

}  // namespace lumos::modeler::whatif
