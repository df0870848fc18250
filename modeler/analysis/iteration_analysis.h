// Design: the iterations of every rank of a job, analysed measured and replayed side by side
// (iteration_report.h); replay, estimate (on a rewritten graph), summarize and diff (measured
// only) all call these. Iterations (iteration_ranges.h: FindIterations, shared with `lumos-model
// structure`) come from host ranges (ProfilerStep#N, category STEP, by default) or NVTX/host
// ranges whose name matches --iteration REGEX, each from its start to the next one's (the last
// to the end of its work), the warm-up left out (FindJobIterations, --iterations); with none, from
// the repeating pattern of the rank's kernel stream (iteration_detection.h: from the launch of one
// kernel that starts each repetition to the next, as a range on that thread; kernels with no
// launch: between their GPU starts, replayed between their simulated starts); with no repetition
// either, the whole trace of each rank is one iteration (said in the report). A range's replayed
// boundary is the boundary's host node (first API call on the range's thread inside it, last one
// ending inside it) moved to its simulated time, plus the measured host time between the boundary
// and that node. Per iteration then: the breakdown and GPU busy series (breakdown.h), the critical
// path and what bounds the rank (critical_path.h), top lists, GPU time by class and copies
// (gpu_time.h). Threading: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "modeler/analysis/analysis_options.h"
#include "modeler/analysis/iteration_report.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

// The iterations are those FindJobIterations keeps (options.choice: by default the warm-up
// left out); `choice`, when given, receives its line saying how they were chosen.
std::vector<IterationReport> AnalyzeIterations(const Job& job, const ExecutionGraph& graph,
                                               const SimResult& sim, const AnalysisOptions& options,
                                               std::string* choice = nullptr);

// The measured side alone, without a simulation (`lumos-model summarize`): per rank and
// iteration its name, measured start and end and measured breakdown, found and computed as
// AnalyzeIterations does; the replayed side, busy series, critical path and top lists stay
// empty (zero).
std::vector<IterationReport> AnalyzeMeasured(const Job& job, const ExecutionGraph& graph,
                                             const AnalysisOptions& options,
                                             std::string* choice = nullptr);

// The same iterations analysed on a rewritten graph (modeler/whatif; estimate): ranges and
// boundary calls chosen on the measured graph and its replay, each boundary node mapped into
// `rewritten` by `map(node, last)` (its first copy, or with last its last; kNoNode: none), and
// the replayed side (replayed_* times, breakdown, busy, critical path, top kernels and
// collectives) computed on `rewritten` as simulated by `sim`; the measured side as measured.
std::vector<IterationReport> AnalyzeRewritten(const Job& job, const ExecutionGraph& measured,
                                              const SimResult& measured_sim,
                                              const ExecutionGraph& rewritten, const SimResult& sim,
                                              const AnalysisOptions& options,
                                              const std::function<uint32_t(uint32_t, bool)>& map,
                                              std::string* choice = nullptr);

// The iterations of one rank of a graph: its rank index and the indexes into an iteration
// list of its iterations (IterationsPerRank).
struct IterationsOfRank {
  uint32_t rank_index = 0;
  std::vector<size_t> iterations;
};
// Each rank of `graph` that has iterations, in global rank order (as reports list ranks); an
// iteration of a rank not in the graph is left out.
std::vector<IterationsOfRank> IterationsPerRank(const ExecutionGraph& graph,
                                                const std::vector<IterationReport>& iterations);

}  // namespace lumos::modeler
