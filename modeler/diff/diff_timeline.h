// Design: `diff --timeline OUT.json`: both runs in one Chrome/Perfetto trace, one above the
// other. Each rank of run A is a process "A/rank R", of run B "B/rank R" (A's first, by rank),
// with a track per host thread and GPU stream (every node one complete "X" event named after
// its kernel or API call, measured times) and an "iterations" track with the rank's iterations.
// B is shifted so that its first matched iteration starts where A's does: the lowest rank in
// both runs, its first iteration whose name A has too (ProfilerStep#N of the same N), else
// each run's first; the shift is metadata.lumos_diff.b_shift_ns and the aligned iteration's
// name metadata.lumos_diff.aligned_iteration. Times are µs from the earliest event of either
// run after the shift. Written through io::OutputFile (a temporary file renamed when
// complete; a failed write leaves an older file whole and says why).
// Threading: pure function of its inputs.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "modeler/diff/run_profile.h"

namespace lumos::modeler::diff {

struct Alignment {
  int32_t rank = 0;
  std::string iteration;  // A's name of the aligned iteration.
  int64_t a_start_ns = 0, b_start_ns = 0;
  int64_t b_shift_ns() const { return a_start_ns - b_start_ns; }
};

// Both profiles with keep_graph. Error: no iteration in one of them.
StatusOr<Alignment> AlignRuns(const RunProfile& a, const RunProfile& b);

// `force`: replace a file at `path` that lumos-model did not write (io::ReplacePolicy).
Status WriteDiffTimeline(const RunProfile& a, const RunProfile& b, const Alignment& alignment,
                         const std::string& path, bool force = false);

}  // namespace lumos::modeler::diff
