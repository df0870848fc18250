// How iterations are analysed; see analysis_options.h.
#include "modeler/analysis/analysis_options.h"

namespace lumos::modeler {
namespace {

bool IsStepName(std::string_view name) { return name.rfind("ProfilerStep#", 0) == 0; }

}  // namespace

bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options) {
  if (options.iteration) return std::regex_search(name.begin(), name.end(), *options.iteration);
  return step || IsStepName(name);
}

Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options) {
  try {
    options->iteration = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::Error("--iteration '" + pattern + "': " + e.what());
  }
  options->iteration_pattern = pattern;
  return Status::Ok();
}

}  // namespace lumos::modeler
