// Design: how iterations are analysed, shared by every command with --iteration: the pattern
// of range names that mark iterations (ProfilerStep#N ranges, category STEP, by default), the
// bin of the GPU busy series, the length of top lists, and whether only times and breakdowns
// are wanted. Threading: plain values; a set AnalysisOptions is read-only.
#pragma once

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>

#include "base/status.h"

namespace lumos::modeler {

struct AnalysisOptions {
  std::optional<std::regex> iteration;  // Range names that mark iterations.
  std::string iteration_pattern;        // Its text, for the report.
  int64_t bin_ns = 1'000'000;
  size_t top = 10;
  // Times and breakdowns only: no busy series, critical path or top lists (an estimate sweep's
  // lines need none of them).
  bool summary_only = false;
};

// Sets `options`' iteration pattern from --iteration's text (ECMAScript); an invalid regex is an
// error naming it. Every command with --iteration reads it this way.
Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options);

// Whether a host range (step: category STEP) or NVTX range named `name` may mark an iteration
// under these options; the loader keeps only those.
bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options);

}  // namespace lumos::modeler
