// Design: `lumos-model synth` builds a large, consistent job from a real one, to measure the
// modeler at scale (docs/performance.md) without a cluster. With T input ranks and N output
// ranks (a multiple of T), there are G = N / T groups; output rank R is in group R mod G and
// copies input rank R / G, so consecutive ranks (one host) sit in different groups and each
// group spans hosts, like data-parallel groups. The input repeats `iterations` times back to
// back (each copy shifted by the input's time span plus 1 ms). Consistency is kept where the
// modeler relies on it:
//   * ids (correlation, external, event sync ids) are offset per repetition, so they stay
//     unique within a rank and launches still pair with their GPU ops;
//   * each group gets its own communicators (comm ids hashed with the group), and collective
//     seq numbers continue across repetitions, so the instances of a collective on the T ranks
//     of a group still match;
//   * durations are jittered by a factor in [1 - jitter, 1] (deterministic in the seed): only
//     shrinking, so no op grows into the next one on its stream or thread;
//   * ranks sit on hosts of `ranks_per_host`; host h's clock is shifted by h * host_skew_ns, so
//     the replay's clock alignment has something to undo;
//   * loss is carried: each copy of an input rank gets the input's LossRecords, and a copy of a
//     damaged input (RankTrace::cut_short) a LossRecord (IMPORT_SKIPPED, count 0: how many
//     events the damaged tail held is unknown) naming the input and the damage.
// Files are written with the agent's trace writer, one per rank, header producer SYNTHETIC,
// all or none (io::OutputSet): each to a temporary file in out_dir, all renamed at the end; a
// failure (full disk) leaves out_dir as it was and returns one error naming the file and the
// reason. An output that would replace an input is refused.
// Threading: single-threaded; writes one file at a time (memory: one rank's events).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"
#include "modeler/graph/job.h"
#include "modeler/io/output_file.h"

namespace lumos::modeler {

struct SynthOptions {
  int32_t ranks = 8;
  int32_t iterations = 1;
  double jitter = 0.05;
  uint64_t seed = 1;
  int32_t ranks_per_host = 8;
  int64_t host_skew_ns = 1'000'000;
  int zstd_level = 1;
  uint64_t frame_bytes = 1 << 20;  // The writer's frame size (small: many frames, for tests).
  bool force = false;  // Replace outputs lumos-model did not write (its own synth traces anyway).
};

// What synth's outputs may replace: synthetic traces (its own earlier outputs), anything with
// `force` (io::ReplacePolicy).
io::ReplacePolicy SynthReplacePolicy(bool force);

struct SynthResult {
  uint64_t files = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;
};

// Writes `options.ranks` files "<job>.rank<R>.pb.zst" into out_dir (created if missing; an
// existing file of that name is replaced only once every rank is written).
StatusOr<SynthResult> SynthesizeJob(const Job& base, const SynthOptions& options,
                                    const std::string& out_dir);

}  // namespace lumos::modeler
