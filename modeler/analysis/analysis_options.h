// Design: how iterations are analysed, shared by every command with --iteration: the pattern
// of range names that mark iterations (ProfilerStep#N ranges, category STEP, by default), which
// of the iterations found make the job's figures (--iterations: by default all but the warm-up
// ones, iteration_ranges.h's rule), the bin of the GPU busy series, the length of top lists,
// and whether only times and breakdowns are wanted. Threading: plain values; a set
// AnalysisOptions is read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/io/name_pattern.h"

namespace lumos::modeler {

// Which of a rank's iterations (in time order, numbered from 1) make the job's figures.
struct IterationChoice {
  enum class Kind : uint8_t {
    kWarmupRule,  // All but the leading warm-up ones (iteration_ranges.h: LeadingWarmup).
    kAll,
    kOrdinals,  // first..last, as given.
  };
  Kind kind = Kind::kWarmupRule;
  size_t first = 1;  // kOrdinals: 1-based, inclusive.
  size_t last = 0;   // kOrdinals: 0 means to the last one.
};

struct AnalysisOptions {
  std::optional<NamePattern> iteration;  // Range names that mark iterations.
  std::string iteration_pattern;         // Its text, for the report.
  IterationChoice choice;                // --iterations.
  int64_t bin_ns = 1'000'000;
  size_t top = 10;
  // Times and breakdowns only: no busy series, critical path or top lists (an estimate sweep's
  // lines need none of them).
  bool summary_only = false;
};

// Sets `options`' iteration pattern from --iteration's text (RE2); an invalid regex is an
// error naming it. Every command with --iteration reads it this way.
Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options);

// Sets `options`' iteration choice from --iterations' text: "warmup" (the default: leave the
// leading warm-up iterations out), "all", "N" (the N-th alone), "N-M" or "N-" (1-based, both
// ends included); anything else is an error naming it.
Status SetIterationChoice(const std::string& text, AnalysisOptions* options);

// The --iterations option's help text, the same in every command that has it.
inline constexpr const char* kIterationsHelp =
    "which iterations make the figures: warmup (default: all but the leading ones longer than "
    "1.5 x the median), all, N, N-M or N- (numbered from 1 in time order)";

// Whether a host range (step: category STEP) or NVTX range named `name` may mark an iteration
// under these options; the loader keeps only those.
bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options);

}  // namespace lumos::modeler
