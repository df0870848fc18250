#include "modeler/estimate/optimizer_launches.h"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace lumos::modeler::estimate {
namespace {

// The one GPU op an API call launched, or kNoNode (none, or several).
uint32_t OnlyLaunched(const ExecutionGraph& g, uint32_t call) {
  uint32_t op = kNoNode;
  for (uint32_t e = g.out_begin[call]; e < g.out_begin[call + 1]; ++e) {
    if (g.edges[e].kind != EdgeKind::kLaunch) continue;
    if (op != kNoNode) return kNoNode;
    op = g.edges[e].to;
  }
  return op;
}

}  // namespace

OptimizerLaunches PlanOptimizerLaunches(const Job& job, const ExecutionGraph& g,
                                        const structure::JobStructure& structure,
                                        double parameters) {
  OptimizerLaunches out;
  if (!(parameters > 0) || parameters == 1 || g.node_source.empty()) return out;
  struct Launch {
    uint32_t call, kernel;
    uint32_t blocks;
  };
  std::vector<std::vector<Launch>> runs;
  std::vector<Launch> run;
  auto finish = [&]() {
    if (!run.empty()) runs.push_back(std::move(run));
    run.clear();
  };
  for (const Processor& p : g.processors) {
    if (p.gpu) continue;
    for (uint32_t call : p.nodes) {
      const uint32_t kernel = OnlyLaunched(g, call);
      const bool multi_tensor =
          kernel != kNoNode && g.nodes[kernel].kind == NodeKind::kKernel &&
          call < structure.nodes.size() &&
          structure.nodes[call].phase == structure::Phase::kOptimizer &&
          g.nodes[kernel].name.find("multi_tensor_apply_kernel") != std::string_view::npos;
      if (!multi_tensor) {
        finish();
        continue;
      }
      if (!run.empty() && g.nodes[run.back().kernel].name != g.nodes[kernel].name) finish();
      const RankTrace& rank = job.ranks[g.nodes[kernel].rank_index];
      const uint32_t source = g.node_source[kernel];
      const uint32_t blocks = source < rank.kernels.size() ? rank.kernels[source].grid.x : 0;
      run.push_back({call, kernel, std::max<uint32_t>(1, blocks)});
    }
    finish();
  }
  // The most blocks one launch takes: the largest grid of any of them (an op of one launch
  // alone does not show it).
  uint32_t largest = 1;
  for (const auto& r : runs) {
    for (const Launch& l : r) largest = std::max(largest, l.blocks);
  }
  for (const std::vector<Launch>& run : runs) {
    uint64_t blocks = 0;
    for (const Launch& l : run) blocks += l.blocks;
    const double wanted = static_cast<double>(blocks) * parameters;
    const auto n = static_cast<uint32_t>(run.size());
    const uint32_t after = std::max<uint32_t>(
        1, static_cast<uint32_t>(std::ceil(wanted / static_cast<double>(largest) - 1e-9)));
    uint64_t blocks_after = blocks;
    if (after > n) {
      // The copy: a launch after the run's first, whose gap before it is the launch's own
      // (the first's is the framework's work for the whole op), of a full grid if any.
      const Launch* model = &run.front();
      for (size_t i = 1; i < run.size(); ++i) {
        if (model == &run.front() || run[i].blocks > model->blocks) model = &run[i];
      }
      out.steps.push_back({{model->call, model->kernel}, after - n + 1});
      blocks_after += static_cast<uint64_t>(after - n) * model->blocks;
    } else {
      for (uint32_t i = after; i < n; ++i) {
        out.steps.push_back({{run[i].call, run[i].kernel}, 0});
        blocks_after -= run[i].blocks;
      }
    }
    const double factor =
        blocks_after > 0 ? wanted / static_cast<double>(blocks_after) : parameters;
    for (uint32_t i = 0; i < std::min(n, after); ++i) out.kernel_work[run[i].kernel] = factor;
    ++out.runs;
    out.launches_before += n;
    out.launches_after += after;
  }
  return out;
}

}  // namespace lumos::modeler::estimate
