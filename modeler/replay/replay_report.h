// Design: everything `lumos-model replay` prints, as one ReplayReport, written as text (for
// people: iterations, error, breakdown, GPU busy summary, critical path, top kernels and
// collectives) or JSON (the same content, plus per-iteration detail and the full 1 ms busy
// series). Both are pure functions of the report, so the output is deterministic.
// Threading: pure functions.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/replay/idle_breakdown.h"
#include "modeler/replay/launch_stats.h"
#include "modeler/replay/stragglers.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

struct ReplayReport {
  std::string job_id;
  std::vector<int32_t> ranks;
  // Per rank (as `ranks`): the trace header's CUDA device name (the copies' link peaks).
  std::vector<std::string> devices;
  uint64_t events = 0;
  std::vector<std::string> warnings;  // Loading (missing ranks, damaged tails, ...).
  const ExecutionGraph* graph = nullptr;
  uint64_t validation_issues = 0;
  // graph->diagnostics before this index are the graph builder's notes (the first of each
  // kind); from it on, Validate's (one per issue, bounded).
  size_t first_validation_diagnostic = 0;
  ClockAlignment alignment;
  std::vector<std::string> what_ifs;  // As given.
  bool dependencies_only = false;     // Replayed from recorded dependencies alone.
  uint64_t not_run = 0;
  std::vector<GraphDiagnostic> sim_diagnostics;
  std::string iteration_rule;  // How iterations were found.
  std::vector<IterationReport> iterations;
  Stragglers stragglers;  // Who the others waited for at collectives (stragglers.h).
  IdleReport idle;        // Empty: not analysed (idle_breakdown.h).
  LaunchReport launch;    // Empty: not analysed (launch_stats.h).

  // Mean and max |error| over iterations, percent.
  double mean_abs_error() const;
  double max_abs_error() const;
};

// "rank 3", "ranks 0-7", "ranks 0,2,4-6": in order, runs collapsed.
std::string RankListText(std::vector<int32_t> ranks);

void WriteTextReport(const ReplayReport& report, std::FILE* out);
Status WriteJsonReport(const ReplayReport& report, std::FILE* out);

}  // namespace lumos::modeler
