// Design: where a rank's iterations are, the rule `lumos-model replay` reports by and
// `lumos-model structure` recovers from (iteration_analysis.h's Design):
//   ranges    host ranges of category STEP / named ProfilerStep#N, or, with --iteration REGEX,
//             host and NVTX ranges (of positive length) whose name matches it;
//   detected  else the repeating kernel stream (iteration_detection.h): from the launch of
//             the kernel starting each repetition to the next (a range on that thread), or
//             between the anchors' GPU starts when they have no launch call;
//   whole     else one range from the rank's first node start to its last node end.
// Times are on the graph's aligned timeline. Threading: pure function.
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

RankIterations FindIterations(const Job& job, const ExecutionGraph& graph, uint32_t rank_index,
                              const AnalysisOptions& options);

}  // namespace lumos::modeler
