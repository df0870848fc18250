#include "modeler/estimate/estimate_run.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "modeler/estimate/optimizer_launches.h"
#include "modeler/estimate/tensor_work.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/collectives/collective_model.h"
#include "modeler/models/costs/cost_queries.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/models/kernels/kernel_trace.h"
#include "modeler/sim/replay_scales.h"

namespace lumos::modeler::estimate {
namespace {

using whatif::RewrittenGraph;

// r2 rewrote r1.graph; the result maps r2's nodes to the measured graph's.
RewrittenGraph Compose(const RewrittenGraph& r1, RewrittenGraph r2, size_t measured_nodes) {
  RewrittenGraph out;
  out.graph = std::move(r2.graph);
  out.scenario = std::move(r2.scenario);
  out.collectives_left_out = r1.collectives_left_out + r2.collectives_left_out;
  const size_t n = out.graph.nodes.size();
  out.origin.resize(n);
  out.copy.resize(n);
  std::vector<uint32_t> count(measured_nodes + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t mid = r2.origin[i];
    out.origin[i] = r1.origin[mid];
    // Copy numbers: the first rewrite's copy k, repeated by the second, counts as later copies.
    out.copy[i] = r1.copy[mid] + r2.copy[i] * std::max<uint32_t>(1, r1.Instances(r1.origin[mid]));
    ++count[out.origin[i] + 1];
  }
  out.instance_begin.assign(measured_nodes + 1, 0);
  for (size_t i = 0; i < measured_nodes; ++i) {
    out.instance_begin[i + 1] = out.instance_begin[i] + count[i + 1];
  }
  out.instance_ids.assign(n, kNoNode);
  std::vector<uint32_t> fill(out.instance_begin.begin(), out.instance_begin.end() - 1);
  // Instances in order of (first rewrite's copy, second's): node ids in order of copy number.
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&out](uint32_t a, uint32_t b) { return out.copy[a] < out.copy[b]; });
  for (uint32_t i : order) out.instance_ids[fill[out.origin[i]]++] = i;
  return out;
}

// The micro-batch steps of the plan on the graph of `r` (the measured nodes' instances).
std::vector<whatif::StepCopies> MicroBatchSteps(const EstimateContext& ctx, const Plan& plan,
                                                const RewrittenGraph& r) {
  std::vector<whatif::StepCopies> steps;
  for (const Plan::MicroBatchStep& step : plan.micro_batch_steps) {
    whatif::StepCopies copies;
    copies.copies = step.copies;
    for (const structure::RankStructure& rank : ctx.structure->ranks) {
      for (const structure::Segment& seg : rank.phases) {
        if (seg.iteration != step.iteration || seg.micro_batch != step.micro_batch) continue;
        if (seg.phase != structure::Phase::kForward && seg.phase != structure::Phase::kBackward) {
          continue;
        }
        for (uint32_t n : seg.nodes) {
          for (uint32_t k = 0; k < r.Instances(n); ++k) copies.nodes.push_back(r.Instance(n, k));
        }
      }
    }
    if (!copies.nodes.empty()) steps.push_back(std::move(copies));
  }
  return steps;
}

// A measured boundary node's instance: its first (last) copy, else the nearest surviving node
// after (before) it on its processor.
uint32_t MapBoundary(const ExecutionGraph& g, const RewrittenGraph& r, uint32_t node, bool last) {
  if (r.Instances(node) > 0) return r.Instance(node, last ? r.Instances(node) - 1 : 0);
  const std::vector<uint32_t>& order = g.processors[g.nodes[node].processor].nodes;
  auto at = std::find(order.begin(), order.end(), node);
  if (at == order.end()) return kNoNode;
  if (last) {
    for (auto it = std::make_reverse_iterator(at); it != order.rend(); ++it) {
      if (r.Instances(*it) > 0) return r.Instance(*it, r.Instances(*it) - 1);
    }
  } else {
    for (auto it = at; it != order.end(); ++it) {
      if (r.Instances(*it) > 0) return r.Instance(*it, 0);
    }
  }
  return kNoNode;
}

std::string ClassOfNode(const EstimateContext& ctx, const ExecutionGraph& g, uint32_t node,
                        uint32_t origin) {
  if (g.nodes[node].work == WorkClass::kCommunication) {
    const uint32_t c = g.nodes[node].collective;
    if (c != kNoNode) {
      if (auto cls = models::ClassOf(g.collectives[c].op)) return models::ClassName(*cls);
    }
    return "communication";
  }
  return models::KernelClassName(ctx.structure->nodes[origin].kernel_class);
}

// Per-iteration, per-rank means of GPU time by class and by collective op; time by basis.
void AddClassTimes(const EstimateContext& ctx, const ExecutionGraph& g, const SimResult& sim,
                   const std::vector<uint32_t>& origin, const std::vector<IterationReport>& its,
                   const std::vector<whatif::Basis>* basis, Summary* out) {
  // Each rank's iteration windows (replayed), by rank number.
  std::unordered_map<int32_t, std::vector<std::pair<int64_t, int64_t>>> windows;
  for (const IterationReport& it : its) {
    windows[it.rank].push_back({it.replayed_start_ns, it.replayed_end_ns});
  }
  std::map<std::string, int64_t> classes, collectives;
  std::array<int64_t, whatif::kBasisCount> by_basis{};
  size_t windows_total = 0;
  for (const auto& [rank, w] : windows) windows_total += w.size();
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node& x = g.nodes[n];
    if (!x.gpu() || !sim.ran(n)) continue;
    const auto& w = windows[g.ranks[x.rank_index]];
    const int64_t start = sim.start_ns[n];
    const bool inside = std::any_of(w.begin(), w.end(), [start](const auto& span) {
      return start >= span.first && start < span.second;
    });
    if (!inside) continue;
    const int64_t ns = sim.end_ns[n] - sim.start_ns[n];
    const uint32_t o = origin.empty() ? n : origin[n];
    (x.work == WorkClass::kCommunication ? collectives : classes)[ClassOfNode(ctx, g, n, o)] += ns;
    by_basis[static_cast<int>(basis != nullptr ? (*basis)[n] : whatif::Basis::kMeasured)] += ns;
  }
  const auto divisor = static_cast<int64_t>(std::max<size_t>(1, windows_total));
  for (auto& [name, ns] : classes) out->kernel_classes[name] = ns / divisor;
  for (auto& [name, ns] : collectives) out->collectives[name] = ns / divisor;
  for (int b = 0; b < whatif::kBasisCount; ++b) out->basis_ns[b] = by_basis[b] / divisor;
}

// Iteration time, breakdown and critical path of the slowest rank.
void Summarize(const std::vector<IterationReport>& its, Summary* out) {
  std::map<int32_t, std::vector<const IterationReport*>> by_rank;
  for (const IterationReport& it : its) by_rank[it.rank].push_back(&it);
  if (by_rank.empty()) return;
  size_t iterations = SIZE_MAX;
  for (const auto& [rank, list] : by_rank) iterations = std::min(iterations, list.size());
  double total = 0;
  std::map<int32_t, int64_t> rank_total;
  for (size_t k = 0; k < iterations; ++k) {
    int64_t slowest = 0;
    for (const auto& [rank, list] : by_rank) {
      slowest = std::max(slowest, list[k]->replayed_ns());
      rank_total[rank] += list[k]->replayed_ns();
    }
    total += static_cast<double>(slowest);
  }
  out->iteration_ns = iterations > 0 ? std::llround(total / static_cast<double>(iterations)) : 0;
  int32_t slowest_rank = by_rank.begin()->first;
  for (const auto& [rank, ns] : rank_total) {
    if (ns > rank_total[slowest_rank]) slowest_rank = rank;
  }
  out->slowest_rank = static_cast<uint32_t>(slowest_rank);
  std::map<std::string, int64_t> critical;
  Breakdown b;
  const auto& list = by_rank[slowest_rank];
  for (size_t k = 0; k < iterations; ++k) {
    const IterationReport& it = *list[k];
    b.exposed_compute_ns += it.replayed.exposed_compute_ns;
    b.overlapped_ns += it.replayed.overlapped_ns;
    b.exposed_comm_ns += it.replayed.exposed_comm_ns;
    b.other_ns += it.replayed.other_ns;
    for (const CriticalItem& c : it.critical_by_class) critical[c.what] += c.ns;
  }
  const auto n = static_cast<int64_t>(std::max<size_t>(1, iterations));
  out->breakdown = {b.exposed_compute_ns / n, b.overlapped_ns / n, b.exposed_comm_ns / n,
                    b.other_ns / n};
  for (const auto& [what, ns] : critical) out->critical_by_class.push_back({what, ns / n});
  std::sort(out->critical_by_class.begin(), out->critical_by_class.end(),
            [](const CriticalItem& a, const CriticalItem& b) {
              return a.ns != b.ns ? a.ns > b.ns : a.what < b.what;
            });
}

// Tokens per second and MFU of a transformer setup.
void Throughput(const whatif::SetupValues& v, const models::GpuSpec& gpu, Summary* out) {
  if (out->iteration_ns <= 0 || v.layers <= 0 || v.hidden <= 0 || v.seq <= 0 || v.mbs <= 0 ||
      v.micro_batches <= 0 || v.dp <= 0 || v.world <= 0) {
    return;
  }
  const double seconds = static_cast<double>(out->iteration_ns) / 1e9;
  const double tokens = static_cast<double>(v.mbs) * static_cast<double>(v.seq) *
                        static_cast<double>(v.micro_batches) * static_cast<double>(v.dp);
  out->tokens_per_s = tokens / seconds;
  const double h = static_cast<double>(v.hidden), f = static_cast<double>(v.ffn);
  const double matrices =
      static_cast<double>(v.layers) * (4 * h * h + 2 * h * f) + h * static_cast<double>(v.vocab);
  const double flops_per_token =
      6 * matrices + 12 * static_cast<double>(v.layers) * static_cast<double>(v.seq) * h;
  const double peak = gpu.PeakFlops(models::DType::kBf16) * static_cast<double>(v.world);
  if (peak > 0) out->mfu = flops_per_token * tokens / seconds / peak;
}

// The trace's own calibrations, with the --costs model's for what the trace does not measure.
models::CostModel Merge(models::CostModel traced, const models::CostModel& given) {
  for (const models::GemmCalibration& c : given.gemm.calibrations()) traced.gemm.Add(c);
  for (const models::KernelCalibration& c : given.kernels.calibrations()) {
    if (traced.kernels.Find(c.gpu(), c.key()) < 0) traced.kernels.Add(c);
  }
  for (const models::CollectiveCalibration& c : given.collectives) {
    bool have = false;
    for (const models::CollectiveCalibration& t : traced.collectives) have |= t.gpu == c.gpu;
    if (!have) traced.collectives.push_back(c);
  }
  traced.inputs.insert(traced.inputs.end(), given.inputs.begin(), given.inputs.end());
  return traced;
}

}  // namespace

StatusOr<std::unique_ptr<PreparedJob>> PrepareJob(const std::vector<std::string>& paths,
                                                  const PrepareOptions& options,
                                                  std::vector<std::string>* problems, bool* usage) {
  *usage = false;
  auto p = std::make_unique<PreparedJob>();
  LoadOptions load;
  load.job_id = options.job_id;
  load.window = options.window;
  LUMOS_ASSIGN_OR_RETURN(p->job, LoadJob(paths, load));
  problems->insert(problems->end(), p->job.input_problems.begin(), p->job.input_problems.end());
  GraphOptions graph_options;
  graph_options.record_sources = true;
  p->graph = BuildGraph(p->job, AlignClocks(p->job).rank_offset_ns, graph_options);
  if (p->graph.nodes.empty()) return Status::Error("no API calls or GPU ops in the input");
  StatusOr<structure::JobStructure> recovered =
      structure::RecoverStructure(p->job, p->graph, options.structure);
  if (!recovered.ok()) {
    *usage = true;
    return recovered.status();
  }
  p->structure = std::move(*recovered);
  const models::SpecTable& specs = models::SpecTable::Builtin();
  const std::string device = p->job.ranks.empty() ? "" : p->job.ranks.front().device;
  const models::GpuSpec* source_gpu = specs.FindGpu(options.gpu.empty() ? device : options.gpu);
  if (source_gpu == nullptr) {
    return Status::Error((device.empty() ? std::string("the trace headers name no GPU")
                                         : "the trace's GPU '" + device + "' is not in the specs") +
                         "; name the measured one with --gpu NAME (" + specs.GpuNames() + ")");
  }
  // The trace's own measurements (collectives with sizes, GEMMs with shapes, copies), then
  // --costs for the rest. A trace that calibrates nothing leaves the models' defaults
  // (roofline, NCCL's constants), which the report's "rests on" says.
  {
    models::FitLog log;
    models::CostInputs inputs;
    inputs.traces = paths;
    // The job in memory, calibrated as `costs fit` would read it (not read a second time).
    StatusOr<models::TraceCalibration> own = models::CalibrateJob(p->job, specs);
    if (own.ok()) {
      std::vector<models::TraceCalibration> calibrated;
      calibrated.push_back(std::move(*own));
      StatusOr<models::CostModel> fitted =
          models::FitCostInputs(inputs, specs, options.net, &log, &calibrated);
      if (fitted.ok()) p->model = std::move(*fitted);
    }
  }
  if (!options.costs_file.empty()) {
    LUMOS_ASSIGN_OR_RETURN(models::CostModel given, models::ReadCostModel(options.costs_file));
    p->model = Merge(std::move(p->model), given);
  }
  EstimateContext& ctx = p->ctx;
  ctx.job = &p->job;
  ctx.graph = &p->graph;
  ctx.structure = &p->structure;
  ctx.specs = &specs;
  ctx.model = &p->model;
  ctx.source_gpu = source_gpu;
  ctx.source_net = options.net;
  ctx.analysis = options.analysis;
  ctx.measured = MeasuredScenario(p->graph);
  ctx.base_sim = Simulate(p->graph, ctx.measured);
  ctx.base_iterations =
      AnalyzeIterations(p->job, p->graph, ctx.base_sim, ctx.analysis, &ctx.iteration_choice);
  ctx.classified.reserve(p->job.ranks.size());
  for (const RankTrace& rank : p->job.ranks) ctx.classified.push_back(models::ClassifyRank(rank));
  Summarize(ctx.base_iterations, &ctx.base_summary);
  AddClassTimes(ctx, p->graph, ctx.base_sim, {}, ctx.base_iterations, nullptr, &ctx.base_summary);
  return p;
}

Summary BaseSummary(const EstimateContext& ctx, const Plan& plan) {
  Summary s = ctx.base_summary;
  if (plan.transformer) Throughput(plan.before, *ctx.source_gpu, &s);
  return s;
}

double ProjectedNodes(const EstimateContext& ctx, const Plan& plan) {
  const auto measured = static_cast<double>(ctx.graph->nodes.size());
  double nodes = measured;
  for (const whatif::StepCopies& step : plan.layer_steps) {
    nodes += (static_cast<double>(step.copies) - 1) * static_cast<double>(step.nodes.size());
  }
  const double growth = measured > 0 ? nodes / measured : 1;
  for (const Plan::MicroBatchStep& step : plan.micro_batch_steps) {
    double segment = 0;
    for (const structure::RankStructure& rank : ctx.structure->ranks) {
      for (const structure::Segment& seg : rank.phases) {
        if (seg.iteration != step.iteration || seg.micro_batch != step.micro_batch) continue;
        if (seg.phase != structure::Phase::kForward && seg.phase != structure::Phase::kBackward) {
          continue;
        }
        segment += static_cast<double>(seg.nodes.size());
      }
    }
    nodes += (static_cast<double>(step.copies) - 1) * segment * growth;
  }
  return std::max(nodes, 0.0);
}

StatusOr<EstimateResult> RunEstimate(const EstimateContext& ctx,
                                     const whatif::SettingList& settings,
                                     const RunOptions& options) {
  EstimateResult result;
  PlanInputs in{ctx.structure, ctx.specs, ctx.source_gpu, ctx.source_net};
  LUMOS_ASSIGN_OR_RETURN(result.plan, MakePlan(in, settings));
  const Plan& plan = result.plan;
  result.settings_text = whatif::FormatSettings(settings);
  result.base = BaseSummary(ctx, plan);
  // Without a structural change the measured graph is used as it is, with a new scenario.
  std::optional<RewrittenGraph> rewritten;
  Scenario scenario;
  // A multi-tensor optimizer's launches follow the parameters (optimizer_launches.h): its
  // steps go with the layers' (disjoint nodes, one rewrite).
  OptimizerLaunches launches;
  if (plan.transformer && plan.gradient_bytes != 1) {
    launches = PlanOptimizerLaunches(*ctx.job, *ctx.graph, *ctx.structure, plan.gradient_bytes);
  }
  std::vector<whatif::StepCopies> steps = plan.layer_steps;
  steps.insert(steps.end(), launches.steps.begin(), launches.steps.end());
  if (!steps.empty() || !plan.micro_batch_steps.empty()) {
    RewrittenGraph r;
    if (steps.empty()) {
      r = whatif::Unchanged(*ctx.graph, ctx.measured);
    } else {
      LUMOS_ASSIGN_OR_RETURN(r, whatif::RepeatSteps(*ctx.graph, ctx.measured, steps));
    }
    if (!plan.micro_batch_steps.empty()) {
      const std::vector<whatif::StepCopies> steps = MicroBatchSteps(ctx, plan, r);
      LUMOS_ASSIGN_OR_RETURN(RewrittenGraph r2, whatif::RepeatSteps(r.graph, r.scenario, steps));
      r = Compose(r, std::move(r2), ctx.graph->nodes.size());
    }
    result.collectives_left_out = r.collectives_left_out;
    rewritten = std::move(r);
  } else {
    scenario = ctx.measured;
  }
  const ExecutionGraph& graph = rewritten ? rewritten->graph : *ctx.graph;
  Scenario& costed = rewritten ? rewritten->scenario : scenario;
  static const std::vector<uint32_t> kIdentity;
  const std::vector<uint32_t>& origin = rewritten ? rewritten->origin : kIdentity;
  result.nodes_before = ctx.graph->nodes.size();
  result.nodes_after = graph.nodes.size();

  whatif::CostSetup costs;
  costs.job = ctx.job;
  costs.measured = ctx.graph;
  costs.structure = ctx.structure;
  costs.model = ctx.model;
  costs.source_gpu = ctx.source_gpu;
  costs.target_gpu = plan.gpu;
  costs.source_net = ctx.source_net;
  costs.target_net = plan.net;
  costs.layer_work = plan.layer_work;
  costs.other_work = plan.other_work;
  costs.optimizer_work = plan.optimizer_work;
  costs.group_sizes = plan.group_sizes;
  if (!ctx.classified.empty()) costs.classified = &ctx.classified;
  // Elementwise kernels by the tensor they touch (tensor_work.h); the optimizer's by its
  // launches (disjoint: forward and backward against the optimizer phase).
  TensorWork tensors;
  if (plan.transformer && (plan.layer_work.changes() || plan.other_work.changes())) {
    tensors =
        PlanTensorWork(*ctx.job, *ctx.graph, *ctx.structure, plan.layer_work, plan.other_work);
  }
  std::unordered_map<uint32_t, double> kernel_work = std::move(tensors.kernel_work);
  kernel_work.insert(launches.kernel_work.begin(), launches.kernel_work.end());
  if (!kernel_work.empty()) costs.kernel_work = &kernel_work;
  // Gradient collectives: as many bytes as the parameters need, however many copies of them
  // the structural rewrite made (buckets inside layers were copied with them).
  if (plan.transformer && (plan.gradient_bytes != 1 || plan.changes_structure())) {
    std::unordered_map<uint64_t, double> measured_bytes, rewritten_bytes;
    for (const structure::CommGroup& g : ctx.structure->groups) {
      if (g.role != structure::GroupRole::kData) continue;
      measured_bytes[g.comm_id] = 0;
      rewritten_bytes[g.comm_id] = 0;
    }
    auto add = [](std::unordered_map<uint64_t, double>* sums, const CollectiveGroup& c) {
      if (auto it = sums->find(c.comm_id); it != sums->end()) {
        it->second += c.bytes > 0 ? static_cast<double>(c.bytes) : 1.0;
      }
    };
    for (const CollectiveGroup& c : ctx.graph->collectives) add(&measured_bytes, c);
    for (const CollectiveGroup& c : graph.collectives) add(&rewritten_bytes, c);
    for (const auto& [comm, bytes] : measured_bytes) {
      const double now = rewritten_bytes[comm];
      if (bytes > 0 && now > 0) costs.group_bytes[comm] = plan.gradient_bytes * bytes / now;
    }
  }
  LUMOS_RETURN_IF_ERROR(whatif::Recost(costs, graph, origin, &costed, &result.cost));
  if (launches.runs > 0) {
    result.cost.notes.push_back(
        "multi-tensor optimizer launches follow the parameters: " +
        std::to_string(launches.launches_before) + " -> " +
        std::to_string(launches.launches_after) + " over " + std::to_string(launches.runs) +
        " ops (the framework's per-tensor host work between them as measured)");
  }
  if (tensors.matched > 0) {
    result.cost.notes.push_back(
        "elementwise kernels by the GEMM operand they touch (size from the launch grid): " +
        std::to_string(tensors.matched) + " matched, " + std::to_string(tensors.ambiguous) +
        " of them a weight and an activation of the same size (the geometric mean of both "
        "factors)");
  }
  for (uint8_t reasons : result.cost.node_reasons) {
    if (reasons == 0) continue;
    ++result.recosted;
    for (int bit = 0; bit < whatif::kChangeReasonCount; ++bit) {
      if (reasons & (1u << bit)) ++result.recosted_by_reason[bit];
    }
  }
  if (rewritten) {
    for (uint32_t k : rewritten->copy) result.copied_nodes += k > 0 ? 1 : 0;
  }
  if (plan.host_time != 1) {
    ReplayScale host;
    host.kind = ReplayScale::Kind::kHost;
    host.factor = plan.host_time;
    costed = ApplyReplayScales(graph, std::move(costed), {host}, /*drop_gaps=*/false);
  }
  SimResult sim = Simulate(graph, costed);
  result.not_run = sim.not_run;
  const std::function<uint32_t(uint32_t, bool)> map = [&](uint32_t node, bool last) {
    return rewritten ? MapBoundary(*ctx.graph, *rewritten, node, last) : node;
  };
  AnalysisOptions analysis = ctx.analysis;
  analysis.summary_only = options.summary_only;
  result.iterations =
      AnalyzeRewritten(*ctx.job, *ctx.graph, ctx.base_sim, graph, sim, analysis, map);
  Summarize(result.iterations, &result.estimate);
  AddClassTimes(ctx, graph, sim, origin, result.iterations, &result.cost.node_basis,
                &result.estimate);
  if (plan.transformer) {
    Throughput(plan.after, *plan.gpu, &result.estimate);
    bool flash = false;
    for (const structure::NodeInfo& info : ctx.structure->nodes) {
      flash |= info.kernel_class == models::KernelClass::kAttention;
    }
    StatusOr<models::MemoryEstimate> memory = models::EstimateMemory(
        MemoryConfigFor(plan.after, plan.zero, plan.recompute, flash), plan.gpu);
    if (memory.ok()) result.memory = std::move(*memory);
  }
  if (options.keep_graph) {
    if (!rewritten) {
      rewritten = whatif::Unchanged(*ctx.graph, ctx.measured);
      rewritten->scenario = std::move(scenario);
    }
    result.sim = std::move(sim);
    result.rewritten = std::move(rewritten);
  }
  return result;
}

}  // namespace lumos::modeler::estimate
