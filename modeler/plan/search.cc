#include "modeler/plan/search.h"

#include <algorithm>
#include <map>
#include <set>

namespace lumos::modeler::plan {

SearchResult Search(const ModelSpec& spec, const SearchSpace& space, const GptCosts& costs,
                    const PlanSetup& setup, const std::function<void(size_t, size_t)>& progress) {
  SearchResult out;
  out.gpus = space.gpus;
  const std::vector<Layout> layouts = EnumerateLayouts(spec, space);
  out.ranked.reserve(layouts.size());
  for (size_t i = 0; i < layouts.size(); ++i) {
    StatusOr<StepEstimate> e = EstimateStep(spec, layouts[i], costs, setup);
    if (e.ok()) {
      out.ranked.push_back(std::move(*e));
    } else {
      if (out.failed++ == 0) out.first_failure = e.status();
    }
    if (progress) progress(i + 1, layouts.size());
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(),
                   [](const StepEstimate& a, const StepEstimate& b) {
                     if (a.memory.fits != b.memory.fits) return a.memory.fits;
                     if (a.memory.fits) return a.step_ns < b.step_ns;
                     return a.memory.shortfall_bytes < b.memory.shortfall_bytes;
                   });
  out.fitting = static_cast<size_t>(std::count_if(
      out.ranked.begin(), out.ranked.end(), [](const StepEstimate& e) { return e.memory.fits; }));
  return out;
}

namespace {

// What decides a layout's step graph: the layout, but ZeRO 1 and 2 build the same one (the
// reduce-scatter, the weights' gather); they differ in memory only.
Layout GraphKey(Layout l) {
  if (l.zero == 2) l.zero = 1;
  return l;
}

}  // namespace

void SimulateTop(const ModelSpec& spec, const GptCosts& costs, const PlanSetup& setup, size_t k,
                 SearchResult* result, const std::function<void(size_t, size_t)>& progress) {
  // How many graphs there are to simulate, so that the progress ends at its total.
  std::set<Layout> graphs;
  for (size_t i = 0; i < result->fitting && graphs.size() < k; ++i) {
    graphs.insert(GraphKey(result->ranked[i].layout));
  }
  const size_t total = graphs.size();
  std::map<Layout, StatusOr<SimulatedStep>> done;
  size_t n = 0;
  for (; n < result->fitting; ++n) {
    StepEstimate& e = result->ranked[n];
    const Layout key = GraphKey(e.layout);
    auto twin = done.find(key);
    if (twin == done.end() && done.size() == total) break;  // All simulated; twins still follow.
    if (twin == done.end()) {
      twin = done.emplace(key, SimulateStep(spec, e.layout, costs, setup)).first;
      if (progress) progress(done.size(), total);
    }
    StatusOr<SimulatedStep>& simulated = twin->second;
    if (simulated.ok()) {
      e.simulated = *simulated;
      const double tokens =
          static_cast<double>(e.layout.global_batch()) * static_cast<double>(spec.seq);
      e.tokens_per_s_per_gpu =
          tokens / (simulated->step_ns / 1e9) / static_cast<double>(e.layout.gpus());
    } else if (result->simulated_failures++ == 0) {
      result->first_simulation_failure = simulated.status();
    }
  }
  result->simulated = n;
  std::stable_sort(result->ranked.begin(), result->ranked.begin() + static_cast<ptrdiff_t>(n),
                   [](const StepEstimate& a, const StepEstimate& b) {
                     return a.best_step_ns() < b.best_step_ns();
                   });
}

}  // namespace lumos::modeler::plan
