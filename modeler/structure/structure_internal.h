// Design: what the stages of RecoverStructure (job_structure.h) share: per rank, its host
// threads' nodes in start order and its GPU ops, and the rule that turns a time range into a
// segment's nodes (Segment's comment): the host calls starting in [begin, end) on the chosen
// threads, the GPU ops they launched, and, when asked, the GPU ops with no launch call (a CUDA
// graph's kernels) starting in the range. Internal to modeler/structure.
// Threading: pure functions over const inputs.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/structure/job_structure.h"

namespace lumos::modeler::structure::internal {

struct RankNodes {
  std::map<uint64_t, std::vector<uint32_t>> threads;  // Host nodes per thread id, by start.
  std::vector<uint32_t> gpu;                          // GPU ops, by start.
  std::vector<uint32_t> kernels;                      // Kernels only, by start.
};

// Index of every rank's nodes (one RankNodes per rank index).
std::vector<RankNodes> IndexRanks(const ExecutionGraph& graph, size_t ranks);

// The nodes of a segment of rank `ranks[r]` over [begin, end): host calls on `threads` (all
// the rank's threads when empty), the GPU ops they launched, and unlaunched GPU ops starting
// in the range when `unlaunched` is set. Ascending node ids.
std::vector<uint32_t> CollectNodes(const ExecutionGraph& graph, const RankNodes& rank,
                                   int64_t begin_ns, int64_t end_ns,
                                   const std::vector<uint64_t>& threads, bool unlaunched);

// Lower case copy.
std::string Lower(std::string_view text);

// The phase a range name marks: "forward", "backward", "optimizer" (case-insensitive, as a
// whole name or its first word: "forward_step", "backward-compute", "optimizer.step"), or
// PyTorch's "Optimizer.step#Adam.step"; kOther when none.
Phase PhaseOfRangeName(std::string_view name);

// Whether a range name names a transformer layer (job_structure.h: layers).
bool IsLayerRangeName(std::string_view name);

// A GEMM or attention kernel that counts towards a layer: not the reduction of a split-K GEMM
// (one GEMM, two kernels).
bool IsLayerGemm(const Node& node, models::KernelClass kernel_class);
// Attention: a fused attention kernel or a softmax.
inline bool IsAttention(models::KernelClass c) {
  return c == models::KernelClass::kAttention || c == models::KernelClass::kSoftmax;
}

// The repeating block of a sequence (ids): the longest run of count >= 2 back-to-back copies of
// a block of `period` ids (ties: the smaller period, then the earlier start); period 0: none
// with period >= min_period.
struct Repetition {
  size_t start = 0;
  size_t period = 0;
  size_t count = 0;
};
Repetition LongestRepetition(const std::vector<uint32_t>& ids, size_t min_period);

}  // namespace lumos::modeler::structure::internal

namespace lumos::modeler::structure::internal {

// Per rank: the phases of each iteration (job_structure.h; phases.cc has the rules), their
// nodes filled in; `method` says how they were found, or why not. `nodes`: the kernel classes.
std::vector<Segment> FindPhases(const Job& job, const ExecutionGraph& graph, uint32_t rank_index,
                                const RankNodes& rank, const std::vector<Segment>& iterations,
                                const std::vector<NodeInfo>& nodes, std::string* method);

// Per rank: the layer instances within its forward and backward phases (layers.cc), from layer
// ranges, else from the repeating kernel stream; `method` as above.
std::vector<Segment> FindLayers(const Job& job, const ExecutionGraph& graph, uint32_t rank_index,
                                const RankNodes& rank, const std::vector<Segment>& phases,
                                const std::vector<NodeInfo>& nodes, std::string* method);

// The segment of `rank` over [begin, end) on `threads` (all when empty), nodes filled in.
Segment MakeSegment(const ExecutionGraph& graph, const RankNodes& rank, uint32_t rank_index,
                    int64_t begin_ns, int64_t end_ns, const std::vector<uint64_t>& threads);

}  // namespace lumos::modeler::structure::internal

namespace lumos::modeler::structure::internal {

// One CommGroup per communicator (groups.cc has the role rules), and each rank's coordinates.
std::vector<CommGroup> FindGroups(const Job& job, const ExecutionGraph& graph,
                                  const std::vector<NodeInfo>& nodes,
                                  const std::vector<uint8_t>& in_iteration, bool phases_known,
                                  bool layers_known);
void SetCoordinates(const Job& job, const std::vector<CommGroup>& groups,
                    std::vector<RankStructure>* ranks);

// The Setup the trace shows (setup.cc), before --base is applied: ffn, heads and vocab per TP
// rank, layers per pipeline stage; seq and mbs unknown with value = tokens per micro-batch
// when only their product is known (0: not even that).
Setup SetupFromTrace(const Job& job, const ExecutionGraph& graph, const JobStructure& structure);

// Applies the given values (an error when the trace contradicts one), then derives what
// follows from the others; lists what stays unknown.
Status MergeSetup(const Setup& given, Setup* setup, std::vector<std::string>* unknowns,
                  std::vector<std::string>* notes);

}  // namespace lumos::modeler::structure::internal
