// How iterations are analysed; see analysis_options.h.
#include "modeler/analysis/analysis_options.h"

namespace lumos::modeler {
namespace {

bool IsStepName(std::string_view name) { return name.rfind("ProfilerStep#", 0) == 0; }

// A positive decimal ordinal, all of `text`; nullopt otherwise (no sign, no blanks, no overflow).
std::optional<size_t> Ordinal(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<size_t>(c - '0');
  }
  if (value == 0) return std::nullopt;
  return value;
}

}  // namespace

bool MayMarkIteration(std::string_view name, bool step, const AnalysisOptions& options) {
  if (options.iteration) return options.iteration->Search(name);
  return step || IsStepName(name);
}

Status SetIterationPattern(const std::string& pattern, AnalysisOptions* options) {
  StatusOr<NamePattern> regex = NamePattern::Compile(pattern);
  if (!regex.ok())
    return Status::Error("--iteration '" + pattern + "': " + regex.status().message());
  options->iteration = std::move(regex).value();
  options->iteration_pattern = pattern;
  return Status::Ok();
}

Status SetIterationChoice(const std::string& text, AnalysisOptions* options) {
  IterationChoice choice;
  if (text == "warmup") {
    choice.kind = IterationChoice::Kind::kWarmupRule;
  } else if (text == "all") {
    choice.kind = IterationChoice::Kind::kAll;
  } else {
    choice.kind = IterationChoice::Kind::kOrdinals;
    const size_t dash = text.find('-');
    const std::string_view whole(text);
    const std::optional<size_t> first = Ordinal(whole.substr(0, dash));
    std::optional<size_t> last = first;
    if (dash != std::string::npos) {
      last = dash + 1 == text.size() ? std::optional<size_t>(0) : Ordinal(whole.substr(dash + 1));
    }
    if (!first || !last || (*last != 0 && *last < *first)) {
      return Status::Error("--iterations '" + text +
                           "': expected warmup, all, N, N-M or N- (numbered from 1, N <= M)");
    }
    choice.first = *first;
    choice.last = *last;
  }
  options->choice = choice;
  return Status::Ok();
}

}  // namespace lumos::modeler
