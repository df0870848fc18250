// Design: `replay --timeline OUT.json`: the measured and the replayed timeline of every rank in
// one Chrome/Perfetto trace, so a user sees where the model and reality part. Each rank is two
// processes, "rank R measured" and "rank R replayed", with a track per host thread and GPU
// stream; every node is one complete ("X") event named after its kernel or API call. Times are
// µs from the earliest event of either timeline.
// Counter ("C") tracks on each rank's process, from the graph and the side's times: "GPU busy",
// "launch queue" and "arrival late by" (modeler/export/counter_tracks.h has the definitions).
// The critical path (a side's `iterations`, walked again one at a time: CriticalSegments): a
// process "critical path <label>" with one track per rank, each interval of the path one "X"
// event named by its class ("kernel gemm: <name>", "host gap", ...), args: the rank it is on.
// Streams to the file (bounded memory) through io::OutputFile: a temporary file renamed when
// complete, so a failed write (full disk) leaves an older file untouched; the error names the file
// and the reason. Threading: pure function of its inputs.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/analysis/critical_path.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler {

// `iterations` (may be null): the replay's, with critical path segments, for its track.
// `force`: replace a file at `path` that lumos-model did not write (io::ReplacePolicy).
Status WriteReplayTimeline(const ExecutionGraph& graph, const SimResult& sim,
                           const std::vector<IterationReport>* iterations, const std::string& path,
                           bool force = false);

// The same for any timelines side by side (estimate: the replayed run and the estimated one):
// each side a graph with its simulation (null: the graph's measured times) and a label; rank R
// of side k is process count * R + k, named "rank R <label>".
struct TimelineSide {
  const ExecutionGraph* graph = nullptr;
  const SimResult* sim = nullptr;
  std::string label;
  // The side's iterations (AnalyzeIterations' on this graph and sim): their critical paths are
  // drawn as a track.
  const std::vector<IterationReport>* iterations = nullptr;
};
Status WriteTimelines(const std::vector<TimelineSide>& sides, const std::string& path,
                      bool force = false);

}  // namespace lumos::modeler
