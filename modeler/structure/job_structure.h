// Design: the structure of a training job recovered from its trace, the first stage of
// estimation (DESIGN.md, "Estimation"): per rank its iterations; within each, the forward,
// backward and optimizer phases, the micro-batches, and the repeating transformer layers; the
// parallel groups (data, tensor, pipeline, context, expert) from the communicators and the
// collective pattern; the model's sizes where the trace shows them (GEMM shapes), else given
// (`--base`), else unknown, and said so. `lumos-model structure` prints it; the rewrites of
// modeler/whatif/ use its segments to clone or drop layers and micro-batches.
//
// Segments. A segment is a contiguous part of one rank's work: the host API calls whose start
// lies in [begin_ns, end_ns) on the thread(s) that issued the part, and the GPU ops those calls
// launched (with the collectives' NCCL kernels among them). Its nodes are graph node ids,
// ascending. Segments of one kind on one rank do not overlap. The same (iteration, phase,
// micro_batch, layer) on every rank of a job names the same step of the program: a rewrite
// clones or drops that step on all ranks at once, so a collective inside it keeps all its
// members.
// Origins. Every Setup value says where it came from (trace, given, derived from others) and,
// unknown, why; a given value the trace contradicts is an error naming both (RecoverStructure).
// Lifetime: Segment node ids index the graph it was recovered from; nothing views the Job.
// Threading: RecoverStructure is a pure function of its inputs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::structure {

enum class Phase : uint8_t { kForward, kBackward, kOptimizer, kOther };
const char* PhaseName(Phase phase);  // "forward", "backward", "optimizer", "other".

enum class Origin : uint8_t {
  kUnknown,  // Neither the trace nor the user says it.
  kTrace,    // Read from the trace (shapes, communicators, ranges).
  kGiven,    // --base.
  kDerived,  // Computed from other values (e.g. dp = world / (tp * pp)).
};
const char* OriginName(Origin origin);  // "unknown", "trace", "given", "derived".

struct Value {
  int64_t value = 0;
  Origin origin = Origin::kUnknown;
  // The evidence ("k of the layers' first GEMM, 32 layers"), or why it is unknown.
  std::string how;
  bool known() const { return origin != Origin::kUnknown; }
};

// The model and parallel setup, by the keys of --base and --set (SetupKeys()).
struct Setup {
  Value layers;         // Transformer layers (the whole model, all pipeline stages).
  Value hidden;         // Model width h.
  Value ffn;            // MLP inner width.
  Value heads;          // Attention heads.
  Value seq;            // Sequence length (tokens per sample).
  Value mbs;            // Micro-batch size (samples).
  Value micro_batches;  // Micro-batches per iteration per data-parallel rank.
  Value vocab;          // Vocabulary size.
  Value world, dp, tp, pp, cp, ep;
};

// "layers", "hidden", "ffn", "heads", "seq", "mbs", "micro_batches", "vocab", "world", "dp",
// "tp", "pp", "cp", "ep": Setup's fields in order.
const std::vector<std::string_view>& SetupKeys();
Value* SetupField(Setup* setup, std::string_view key);  // Null for an unknown key.
const Value* SetupField(const Setup& setup, std::string_view key);

inline constexpr uint32_t kNoLayer = UINT32_MAX;

struct Segment {
  uint32_t rank_index = 0;  // Index into Job::ranks (and ExecutionGraph::ranks).
  uint32_t iteration = 0;   // Index of the rank's iteration, from 0.
  Phase phase = Phase::kOther;
  uint32_t micro_batch = 0;   // Within its iteration, from 0 (0 when the trace has one).
  uint32_t layer = kNoLayer;  // Within its phase and micro-batch, from 0 in execution order.
  // A layer instance that repeats the phase's block only in part (layers.cc: a first or last
  // layer, a few kernels short), which the estimate keeps as it is rather than copying.
  bool partial = false;
  int64_t begin_ns = 0;  // Measured, on the graph's aligned timeline.
  int64_t end_ns = 0;
  std::vector<uint32_t> nodes;  // Graph node ids, ascending.
};

enum class GroupRole : uint8_t { kData, kTensor, kPipeline, kContext, kExpert, kWorld, kUnknown };
const char* GroupRoleName(GroupRole role);  // "data", "tensor", "pipeline", ...

struct CommGroup {
  uint64_t comm_id = 0;
  GroupRole role = GroupRole::kUnknown;
  uint32_t size = 0;           // Ranks in the communicator.
  bool size_recorded = true;   // From communicator/collective records; false: the ranks seen.
  std::vector<int32_t> ranks;  // Global ranks seen in it (loaded files), ascending.
  uint64_t operations = 0;     // Traced collectives on it (all ranks' records counted once).
  uint64_t bytes = 0;          // Their bytes per rank, summed.
  std::string evidence;        // Why this role ("all-reduces after backward, 1 per bucket").
};

struct RankStructure {
  uint32_t rank_index = 0;
  int32_t rank = 0;                 // Global rank.
  std::vector<Segment> iterations;  // phase kOther, layer kNoLayer.
  std::vector<Segment> phases;      // Forward / backward per micro-batch, optimizer per iteration.
  std::vector<Segment> layers;      // Layer instances (phase forward or backward).
  // This rank's coordinates in the parallel grid; -1 where unknown.
  int32_t dp_rank = -1, tp_rank = -1, pp_rank = -1, cp_rank = -1, ep_rank = -1;
};

struct NodeInfo {
  // GPU ops: the kernel's class (models::ClassifyKernel with the launching op where known;
  // copies and memsets: kMemcpy / kMemset; NCCL kernels: kCommunication). API calls: kOther.
  models::KernelClass kernel_class = models::KernelClass::kOther;
  Phase phase = Phase::kOther;
  uint32_t layer = kNoLayer;  // The layer instance's index in its phase, if the node is in one.
};

struct JobStructure {
  Setup setup;
  std::string iteration_method;       // "ProfilerStep ranges", "kernel repetition", "whole trace".
  std::string phase_method;           // How phases were found, or why not.
  std::string layer_method;           // "NVTX ranges 'layers.N'", "kernel repetition", or why none.
  std::vector<RankStructure> ranks;   // One per Job rank, in Job order.
  std::vector<CommGroup> groups;      // One per communicator, by comm id.
  std::vector<NodeInfo> nodes;        // Per graph node.
  std::vector<std::string> unknowns;  // What the trace could not tell, one line each.
  std::vector<std::string> notes;     // Anything else worth saying (warnings, caveats).
};

struct StructureOptions {
  Setup base;                     // Given values (origin kGiven); others kUnknown.
  std::string iteration_pattern;  // As replay's --iteration (empty: ProfilerStep / detection).
};

// `job` must still hold its events (LoadOptions::keep_events) and `graph` must have been built
// from it with GraphOptions::record_sources. Errors: a given value that contradicts the trace
// (naming both, exit 2 at the command).
StatusOr<JobStructure> RecoverStructure(const Job& job, const ExecutionGraph& graph,
                                        const StructureOptions& options);

}  // namespace lumos::modeler::structure
