// Design: one estimated configuration, end to end: the plan (estimate_plan.h), the structural
// rewrites (layers on the measured graph, then micro-batches on that result, their node maps
// composed), the costs (whatif/recost.h), the simulation, and the same analysis as replay's
// (modeler/replay: iterations, breakdown, critical path) on the rewritten graph, whose
// iterations are the measured ones with their boundary calls mapped to their copies.
// The job-level figures (Summary): the iteration time is, per iteration, the slowest rank's,
// averaged over iterations; the breakdown and critical path are that rank's; kernel-class and
// collective times are GPU time per iteration averaged over ranks; tokens/s count mbs x seq x
// micro_batches x dp tokens per iteration; MFU divides the model's FLOPs (Megatron's count:
// 3 x 2 x tokens x (parameters in the layers' matrices + LM head) + attention's
// 3 x 4 x tokens x seq x hidden x layers, no causal halving) by the iteration time and the
// world's dense bf16 peak. Figures the trace cannot give (tokens without a model setup) are
// negative (unknown).
// Threading: RunEstimate is reentrant: a sweep may run configurations on several threads over
// one const EstimateContext.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/estimate/estimate_plan.h"
#include "modeler/sim/simulator.h"
#include "modeler/whatif/recost.h"

namespace lumos::modeler::estimate {

struct Summary {
  int64_t iteration_ns = 0;
  double tokens_per_s = -1;
  double mfu = -1;  // 0..1.
  Breakdown breakdown;
  std::vector<CriticalItem> critical_by_class;
  std::map<std::string, int64_t> kernel_classes;  // GPU ns per iteration per rank, by class.
  std::map<std::string, int64_t> collectives;     // Transfer ns per iteration per rank, by op.
  std::array<int64_t, whatif::kBasisCount> basis_ns{};  // GPU time by what it rests on.
  uint32_t slowest_rank = 0;
};

// What every configuration of one invocation shares (built once).
struct EstimateContext {
  const Job* job = nullptr;               // With its events.
  const ExecutionGraph* graph = nullptr;  // With record_sources.
  const structure::JobStructure* structure = nullptr;
  const models::SpecTable* specs = nullptr;
  const models::CostModel* model = nullptr;
  const models::GpuSpec* source_gpu = nullptr;
  models::NetworkSpec source_net;
  AnalysisOptions analysis;
  Scenario measured;
  SimResult base_sim;
  std::vector<IterationReport> base_iterations;  // Replay's analysis of the measured run.
  std::string iteration_choice;  // Which iterations make the figures (FindJobIterations).
  // Once per invocation: models::ClassifyRank of every rank, and the base's figures without
  // throughput (which depends on the plan's setup).
  std::vector<std::vector<models::TraceGpuWork>> classified;
  Summary base_summary;
};

struct EstimateResult {
  Plan plan;
  std::string settings_text;  // FormatSettings of what was asked; empty: as measured.
  Summary base, estimate;
  std::optional<models::MemoryEstimate> memory;  // The estimated setup's, when it is known.
  whatif::CostReport cost;
  uint64_t collectives_left_out = 0;
  uint64_t nodes_before = 0, nodes_after = 0;
  // Why nodes changed: GPU ops re-costed per reason (a node may count under several), and the
  // nodes that are copies made by the layer / micro-batch rewrite.
  std::array<uint64_t, whatif::kChangeReasonCount> recosted_by_reason{};
  uint64_t recosted = 0;
  uint64_t copied_nodes = 0;
  uint64_t not_run = 0;  // Nodes of the rewritten graph the simulation never ran (a bug).
  std::vector<IterationReport> iterations;  // The estimate's, per rank and iteration.
  // The rewritten graph and its simulation, for --timeline (kept only when asked).
  std::optional<whatif::RewrittenGraph> rewritten;
  std::optional<SimResult> sim;
};

// A loaded job and everything an EstimateContext views, owned together (the context points
// into it: keep it where it is).
struct PreparedJob {
  Job job;
  ExecutionGraph graph;
  structure::JobStructure structure;
  models::CostModel model;
  EstimateContext ctx;
};

struct PrepareOptions {
  std::optional<std::string> job_id;
  std::optional<std::string> window;      // LoadOptions::window.
  structure::StructureOptions structure;  // --base, --iteration.
  AnalysisOptions analysis;
  models::NetworkSpec net;  // The measured job's (default ib400).
  // The measured job's GPU (a spec name) when its headers name none the specs know; empty: the
  // headers'.
  std::string gpu;
  std::string costs_file;  // --costs; empty: none.
};

// Loads the job with its events, builds the graph (record_sources), recovers the structure,
// fits the trace's own cost calibrations (then --costs for the rest) and replays the measured
// run. Input problems (skipped, damaged, unclosed files) go to `problems`; an error is input
// that cannot be used (exit 1), or, with *usage set, a --base value the trace contradicts
// (exit 2).
StatusOr<std::unique_ptr<PreparedJob>> PrepareJob(const std::vector<std::string>& paths,
                                                  const PrepareOptions& options,
                                                  std::vector<std::string>* problems, bool* usage);

// Builds the context's base figures (replay of the measured run).
Summary BaseSummary(const EstimateContext& ctx, const Plan& plan);

// keep_graph: keep the rewritten graph and its simulation (--timeline, tests); summary_only:
// iteration times and breakdowns, no critical path or top lists (a sweep's lines).
struct RunOptions {
  bool keep_graph = false;
  bool summary_only = false;
};
StatusOr<EstimateResult> RunEstimate(const EstimateContext& ctx,
                                     const whatif::SettingList& settings,
                                     const RunOptions& options = {});

// The nodes the rewritten graph of `plan` will have, known before anything is allocated: the
// layer copies exactly, each micro-batch copy as its measured forward and backward segments
// grown by the layer rewrite's factor (a double: layers=2147483647 must not wrap).
double ProjectedNodes(const EstimateContext& ctx, const Plan& plan);

// Peak bytes a configuration needs per node of its rewritten graph while it is estimated
// (graph, scenario, rewrite maps, simulation, analysis): est-base.pb.zst at layers=8..32 grew by
// 224 B a node (peak RSS, /usr/bin/time); twice that covers a sweep's summaries and a timeline.
inline constexpr double kBytesPerEstimatedNode = 512;

}  // namespace lumos::modeler::estimate
