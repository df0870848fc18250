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
  if (layouts.empty()) {
    out.no_layout = WhyNoLayout(spec, space);
    if (out.no_layout.ok()) {  // The plainest one can; the virtual stages or mbs asked for not.
      out.no_layout = ErrorStatus(
          "no layout of %lld GPUs can exist with the virtual stages and micro-batch sizes "
          "asked for",
          static_cast<long long>(space.gpus));
    }
  }
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

void CheckTheRest(const ModelSpec& spec, const GptCosts& costs, const PlanSetup& setup,
                  size_t budget, SearchResult* result,
                  const std::function<void(size_t, size_t)>& progress) {
  std::vector<StepEstimate>& ranked = result->ranked;
  double best = 0;
  std::map<Layout, const SimulatedStep*> done;
  for (size_t i = 0; i < result->simulated; ++i) {
    const StepEstimate& e = ranked[i];
    if (!e.simulated) continue;
    if (done.empty() || e.simulated->step_ns < best) best = e.simulated->step_ns;
    done.emplace(GraphKey(e.layout), &*e.simulated);
  }
  if (done.empty()) return;  // Nothing simulated to compare with: no claim either way.
  result->checked = true;
  // The rest that fit, by their bound; one whose bound the cost models cannot answer cannot be
  // ruled out, and its simulation would fail the same way: unsettled.
  std::vector<std::pair<double, size_t>> rest;
  for (size_t i = result->simulated; i < result->fitting; ++i) {
    const Layout& l = ranked[i].layout;
    StatusOr<LayoutWork> work = LayoutWorkOf(spec, l, costs, setup);
    StatusOr<double> bound = work.ok() ? SimulatedStepLowerBound(spec, l, *work, costs)
                                       : StatusOr<double>(work.status());
    if (bound.ok()) {
      rest.push_back({*bound + setup.host_step_ns, i});
    } else {
      ++result->unsettled;
    }
  }
  std::stable_sort(rest.begin(), rest.end());
  // The progress's total: the graphs under the fastest step so far, at most the budget (fewer
  // may be simulated as the fastest step comes down).
  std::set<Layout> candidates;
  for (const auto& [bound, i] : rest) {
    if (bound < best && !done.count(GraphKey(ranked[i].layout))) {
      candidates.insert(GraphKey(ranked[i].layout));
    }
  }
  const size_t total = std::min(budget, candidates.size());
  size_t graphs = 0;
  std::set<Layout> failed;  // Graphs the slow path could not take (a twin is not retried).
  std::vector<char> simulated(result->fitting, 0);
  for (const auto& [bound, i] : rest) {
    if (bound >= best) {
      ++result->ruled_out;
      continue;
    }
    StepEstimate& e = ranked[i];
    const Layout key = GraphKey(e.layout);
    auto twin = done.find(key);
    if (twin == done.end()) {
      if (graphs == budget || failed.count(key)) {
        ++result->unsettled;
        continue;
      }
      ++graphs;
      StatusOr<SimulatedStep> s = SimulateStep(spec, e.layout, costs, setup);
      if (progress) progress(std::min(graphs, total), total);
      if (!s.ok()) {
        if (result->check_failures++ == 0) result->first_check_failure = s.status();
        failed.insert(key);
        ++result->unsettled;
        continue;
      }
      e.simulated = *s;
      twin = done.emplace(key, &*e.simulated).first;
    } else {
      e.simulated = *twin->second;
    }
    best = std::min(best, e.simulated->step_ns);
    simulated[i] = 1;
    const double tokens =
        static_cast<double>(e.layout.global_batch()) * static_cast<double>(spec.seq);
    e.tokens_per_s_per_gpu =
        tokens / (e.simulated->step_ns / 1e9) / static_cast<double>(e.layout.gpus());
  }
  if (progress && graphs > 0 && graphs < total) progress(total, total);  // Ends the line.
  // Those simulated here join the front, and the front is ranked again.
  std::vector<StepEstimate> moved;
  moved.reserve(result->fitting - result->simulated);
  for (const char want : {1, 0}) {
    for (size_t i = result->simulated; i < result->fitting; ++i) {
      if (simulated[i] == want) moved.push_back(std::move(ranked[i]));
    }
  }
  std::move(moved.begin(), moved.end(), ranked.begin() + static_cast<ptrdiff_t>(result->simulated));
  result->simulated += static_cast<size_t>(std::count(simulated.begin(), simulated.end(), 1));
  std::stable_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(result->simulated),
                   [](const StepEstimate& a, const StepEstimate& b) {
                     return a.best_step_ns() < b.best_step_ns();
                   });
}

}  // namespace lumos::modeler::plan
