// Design: the replay report's "what bounds this iteration" verdict per rank, from each
// iteration's IterationBound (replay_analysis.h: the rank's own critical path by kind, which
// adds up to the replayed iteration). Per rank the kinds are summed over its iterations and the
// largest names the verdict:
//   host            "host": framework work between CUDA calls, non-launch API calls
//   launch          "launch": CUDA launch and copy calls, launch latency
//   compute         "compute": kernels, copies, memsets
//   communication   "communication": collective transfers
//   peers           "straggler rank R" when one rank R accounts for at least half of the wait
//                   for peers; else "peers (no single rank)"
//   unexplained     "a dependency the trace does not show": GPU queue gaps, residuals
// Ties go to the earlier kind in that order. The text groups ranks by verdict (a 512-rank job
// stays on one screen) with the mean share of each kind; the JSON has every rank and, per
// iteration, its bound (replay_report.cc).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "modeler/report/replay_analysis.h"

namespace lumos::modeler {

struct ReplayReport;
namespace internal {
class JsonWriter;
}

struct RankBound {
  int32_t rank = 0;
  size_t iterations = 0;
  IterationBound bound;  // Summed over the rank's iterations; waited_for largest first.
  BoundKind kind = BoundKind::kCompute;
  int32_t straggler = -1;  // kind == kPeers and one rank was waited for most: that rank.
  std::string verdict;     // "compute", "straggler rank 5", ...
};

// Per rank, in rank order.
std::vector<RankBound> SumBoundsPerRank(const std::vector<IterationReport>& iterations);

// The verdict of one bound (as SumBoundsPerRank gives it).
void DecideVerdict(RankBound* rank);

void WriteBoundText(const ReplayReport& report, std::FILE* out);
// The JSON report's "bound" member: {"kinds": [...], "per_rank": [{rank, verdict, kind,
// straggler_rank (or -1), iterations, <kind>_ns..., waited_for: [{rank, ns}]}]}.
void WriteBoundJson(const ReplayReport& report, internal::JsonWriter* w);
// One iteration's bound as the JSON member "bound" of its object.
void WriteIterationBoundJson(const IterationBound& bound, internal::JsonWriter* w);

}  // namespace lumos::modeler
