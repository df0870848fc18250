// Design: `lumos-model search` (issue 25 item 3): every layout of N GPUs (layout.h's
// EnumerateLayouts) estimated on the fast path (step_model.h), those that fit in memory ranked
// by step time, those that do not listed after them with their shortfall, never dropped.
// Threading: pure function over a const GptCosts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/status.h"
#include "modeler/plan/step_model.h"

namespace lumos::modeler::plan {

struct SearchResult {
  int64_t gpus = 0;
  std::vector<StepEstimate> ranked;  // Fitting layouts fastest first, then the others.
  size_t fitting = 0;                // ranked[0, fitting) fit in memory.
  size_t failed = 0;                 // Layouts the cost models could not answer (left out).
  Status first_failure = Status::Ok();
  Status no_layout = Status::Ok();  // With no layout at all: why (WhyNoLayout).
  size_t simulated = 0;             // ranked[0, simulated) went through the slow path.
  size_t simulated_failures = 0;    // Of those, the ones it could not take.
  Status first_simulation_failure = Status::Ok();
  // After CheckTheRest: fitting layouts not simulated whose lower bound is above the fastest
  // simulated step (they cannot beat it), and those it could not rule out within its budget.
  size_t ruled_out = 0;
  size_t unsettled = 0;
  bool checked = false;       // CheckTheRest ran, with a simulated step to compare with.
  size_t check_failures = 0;  // Graphs it could not simulate (their layouts are unsettled).
  Status first_check_failure = Status::Ok();
};

// `progress` (may be empty) is called after each layout with (done, total).
SearchResult Search(const ModelSpec& spec, const SearchSpace& space, const GptCosts& costs,
                    const PlanSetup& setup,
                    const std::function<void(size_t, size_t)>& progress = {});

// The slow path for the first layouts that fit (pipeline_graph.h), until `k` step graphs are
// simulated: a layout whose graph one before it had (ZeRO 1 and 2 alike) takes that answer and
// does not count; those simulated are ranked again by their simulated step (still ahead of the
// rest). A layout the slow path cannot
// take (its graph beyond the bound) keeps its fast-path figure; `simulated_failures` counts them
// and `first_simulation_failure` says why. `progress` as for Search.
void SimulateTop(const ModelSpec& spec, const GptCosts& costs, const PlanSetup& setup, size_t k,
                 SearchResult* result, const std::function<void(size_t, size_t)>& progress = {});

// The shortlist above comes from the fast path, which overlaps less than the simulation does, so a
// layout it ranks low may simulate faster. This goes on from where SimulateTop stopped: the other
// layouts that fit, in order of SimulatedStepLowerBound, are simulated while their bound is under
// the fastest simulated step and fewer than `budget` more graphs have been simulated; the rest
// are ruled out (their bound is above it: no simulation could rank them first) or, past the
// budget, counted as unsettled. The simulated layouts are ranked again, ahead of the rest.
// Where `unsettled` is 0, the first layout is the slow path's fastest of all that fit.
void CheckTheRest(const ModelSpec& spec, const GptCosts& costs, const PlanSetup& setup,
                  size_t budget, SearchResult* result,
                  const std::function<void(size_t, size_t)>& progress = {});

}  // namespace lumos::modeler::plan
