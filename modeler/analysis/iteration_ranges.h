// Design: where a rank's iterations are, the rule `lumos-model replay` reports by and
// `lumos-model structure` recovers from (iteration_analysis.h's Design):
//   ranges    host ranges of category STEP / named ProfilerStep#N, or, with --iteration REGEX,
//             host and NVTX ranges (of positive length) whose name matches it; an iteration
//             lasts as users time a step, from its range's start to the next one's (so the
//             step's trailing synchronize and GPU tail are inside: a PyTorch loop's `step`
//             range closes when the host has launched the step, long before its GPU work
//             ends), the last one to the end of its work where the host saw it end (the call on
//             its thread that was blocked until the GPU ops launched inside it were done: a
//             synchronize; with none, the range's own end); a range
//             that the next one starts inside (nested or overlapping ranges) keeps its end;
//   detected  else the repeating kernel stream (iteration_detection.h): from the launch of
//             the kernel starting each repetition to the next (a range on that thread), or
//             between the anchors' GPU starts when they have no launch call;
//   whole     else one range from the rank's first node start to its last node end.
// Times are on the graph's aligned timeline.
// The job's figures then leave the warm-up out (FindJobIterations, --iterations): by default
// the leading iterations of a rank longer than 1.5 times the median of its iterations (CUDA
// context, cuBLAS handles, allocator growth and autotuning make the first steps of a job many
// times longer than the rest), at most half of them, the same count on every rank (the most
// any rank shows) so that iteration k means one step across ranks. 1.5 is a judgement, not a
// fit: steady iterations of the real H200 loops vary by well under 20 %, start-up ones by 10x
// and more. Iterations in which a rank's trace lost events (its LossRecords' spans: the agent's
// rings were full) replay without those events: from the first such one after the warm-up on,
// they are left out too and the choice says how many events were lost (unless that would leave
// nothing). Threading: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"

namespace lumos::modeler {

struct AnalysisOptions;

struct IterationRange {
  std::string name;  // "ProfilerStep#10", "iteration 3 (detected, period 245 kernels)", ...
  int64_t start_ns = 0, end_ns = 0;
  uint32_t thread_id = 0;  // The host thread of the range (0: none, e.g. the whole trace).
  // Detected iterations with GPU boundaries: the kernels starting this repetition and the
  // next; kNoNode otherwise.
  uint32_t anchor_begin = kNoNode, anchor_end = kNoNode;
};

enum class IterationSource : uint8_t { kRanges, kDetected, kWholeTrace, kNone };

struct RankIterations {
  std::vector<IterationRange> ranges;               // In time order.
  IterationSource source = IterationSource::kNone;  // kNone: the rank has no node at all.
  uint32_t period_kernels = 0;                      // kDetected: the period found.
};

// Every iteration of one rank, in time order (no choice applied).
RankIterations FindIterations(const Job& job, const ExecutionGraph& graph, uint32_t rank_index,
                              const AnalysisOptions& options);

// How many leading iterations of `lengths_ns` (in time order) are warm-up by the rule above.
size_t LeadingWarmup(const std::vector<int64_t>& lengths_ns);

// The iterations that make the job's figures, per rank index: FindIterations' ranges cut to
// options.choice (the same ordinals on every rank), and in `choice` how they were chosen, for
// the report ("iterations 2-40 of 40: iteration 1 left out as warm-up (524.017 ms, longer than
// 1.5 x the median 15.392 ms; --iterations all keeps them)").
struct JobIterations {
  std::vector<RankIterations> ranks;
  size_t found = 0;    // Iterations found on the rank with the most.
  size_t first = 0;    // 0-based ordinal of the first one kept.
  size_t kept = 0;     // Iterations kept on the rank with the most.
  std::string choice;  // One line.
};
JobIterations FindJobIterations(const Job& job, const ExecutionGraph& graph,
                                const AnalysisOptions& options);

}  // namespace lumos::modeler
