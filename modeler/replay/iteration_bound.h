// Design: the replay report's "what bounds this iteration" verdict per rank, from each
// iteration's IterationBound (modeler/analysis/critical_path.h: the rank's own critical path by
// kind, which adds up to the replayed iteration). Per rank the kinds are summed over its
// iterations. The verdict:
//   a straggler     when the rank waited for one peer X for at least kStragglerShare of its
//                   time, or "peers" is its largest kind and X is at least half of that:
//                   "straggler rank R", where R is the root: from X on, while the rank waited
//                   for has itself waited for one peer for at least kStragglerShare of its
//                   time, that peer (no rank twice); "straggler rank 3 (through rank 2)" when
//                   R is not X. A 30 % slower rank 3 makes its tensor-parallel partner 2 late
//                   at every data-parallel all-reduce: 2 is the one the others wait for, 3 the
//                   cause. The share is a fixed rule, not fitted: a balanced job's waits for
//                   any one rank are a few per cent of the iteration (a synth job: <= 1.1 %),
//                   a straggler's tens of per cent (docs/validation.md);
//   else the largest kind: "host" (framework work between CUDA calls, non-launch API calls),
//                   "launch" (CUDA launch and copy calls, launch latency), "compute",
//                   "communication" (collective transfers), "peers (no single rank)",
//                   "a dependency the trace does not show" (GPU queue gaps, residuals).
// Ties go to the earlier kind in BoundKind's order. The text groups ranks by verdict (a
// 512-rank job stays on one screen) with the mean share of each kind; the JSON has every rank
// and, per iteration, its bound (replay_report.cc).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"

namespace lumos::modeler {

struct ReplayReport;
namespace io {
class JsonWriter;
}

inline constexpr double kStragglerShare = 0.10;

struct RankBound {
  int32_t rank = 0;
  size_t iterations = 0;
  IterationBound bound;  // Summed over the rank's iterations; waited_for largest first.
  BoundKind kind = BoundKind::kCompute;  // The largest kind.
  int32_t waited_for = -1;               // A straggler verdict: the peer it waited for.
  int32_t straggler = -1;                // A straggler verdict: the root (Design); else -1.
  std::string verdict;                   // "compute", "straggler rank 5", ...
};

// Per rank, in rank order, each with its verdict.
std::vector<RankBound> SumBoundsPerRank(const std::vector<IterationReport>& iterations);

// The verdicts of `ranks` (their bounds summed), each against the others.
void DecideVerdicts(std::vector<RankBound>* ranks);

void WriteBoundText(const ReplayReport& report, std::FILE* out);
// The JSON report's "bound" member: {"kinds": [...], "per_rank": [{rank, verdict, kind,
// waited_for_rank, straggler_rank (-1: none), iterations, <kind>_ns..., waited_for: [{rank,
// ns}]}]}.
void WriteBoundJson(const ReplayReport& report, io::JsonWriter* w);
// One iteration's bound as the JSON member "bound" of its object.
void WriteIterationBoundJson(const IterationBound& bound, io::JsonWriter* w);

}  // namespace lumos::modeler
