// Design: `lumos-model replay`'s what-ifs (--scale, --drop-gaps; estimation's rewrites of the
// graph are modeler/whatif/), durations scaled in a Scenario before the simulation (the graph
// itself stays as measured):
//   kernel:REGEX=F  durations of kernels whose name matches REGEX (RE2, searched) times F;
//   comm=F          collective transfer times (and NCCL kernels outside any matched
//                   collective) times F; waiting for peers is not scaled, it emerges;
//   host=F          host API call durations, host gaps (thread order and handoff) and sync
//                   overheads times F;
//   drop-gaps       host gaps (the thread-order and thread-handoff delays) set to 0.
// Factors are finite and >= 0; a bad spec is an error naming it. Durations round to the
// nearest ns. Several --scale flags compose (kernel factors multiply when regexes overlap).
// Threading: pure functions.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/io/name_pattern.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

struct ReplayScale {
  enum class Kind { kKernel, kComm, kHost };
  Kind kind = Kind::kKernel;
  std::string pattern;  // kKernel: the regex text.
  NamePattern regex;
  double factor = 1.0;
};

// Parses one --scale value: "kernel:REGEX=F", "comm=F" or "host=F".
StatusOr<ReplayScale> ParseScale(const std::string& spec);

// The scenario with the what-ifs applied to `base`.
Scenario ApplyReplayScales(const ExecutionGraph& graph, Scenario base,
                           const std::vector<ReplayScale>& scales, bool drop_gaps);

}  // namespace lumos::modeler
