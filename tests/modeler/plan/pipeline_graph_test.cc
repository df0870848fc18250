// modeler/plan's slow path: Megatron-LM's schedules, the graph of a step and its simulation.
// Mechanics, whatever the costs: the cost models answer from their defaults (rooflines, NCCL's
// constants); what the slow path scores against published step times is in plan_test.cc and
// scripts/validate-plan-mlperf.sh.
#include "modeler/plan/pipeline_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/plan/search.h"
#include "modeler/plan/step_model.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler::plan {
namespace {

constexpr const char* kSmall = "gpt:layers=16,hidden=2048,heads=16,seq=2048,vocab=512";

struct Fixture {
  ModelSpec spec;
  PlanSetup setup;
  std::unique_ptr<GptCosts> costs;
};

const Fixture& Small() {
  static const Fixture* const f = [] {
    auto* out = new Fixture;
    StatusOr<ModelSpec> spec = ParseModelSpec(kSmall);
    EXPECT_TRUE(spec.ok());
    out->spec = *spec;
    const models::SpecTable& specs = models::SpecTable::Builtin();
    out->setup.gpu = specs.FindGpu("H100-SXM5-80GB");
    StatusOr<models::NetworkSpec> net = specs.ResolveNetwork("ib400");
    EXPECT_TRUE(net.ok());
    if (net.ok()) out->setup.net = *net;
    StatusOr<std::unique_ptr<GptCosts>> costs = GptCosts::Make(*out->setup.gpu, specs, {});
    EXPECT_TRUE(costs.ok());
    if (costs.ok()) out->costs = std::move(*costs);
    return out;
  }();
  return *f;
}

Layout LayoutOf(const std::string& set) {
  Layout l;
  EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
  return l;
}

struct Both {
  StepEstimate fast;
  SimulatedStep slow;
  LayoutWork work;
};

Both RunBoth(const std::string& set) {
  const Fixture& f = Small();
  const Layout l = LayoutOf(set);
  Both out;
  StatusOr<StepEstimate> fast = EstimateStep(f.spec, l, *f.costs, f.setup);
  StatusOr<SimulatedStep> slow = SimulateStep(f.spec, l, *f.costs, f.setup);
  StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, f.setup);
  EXPECT_TRUE(fast.ok() && slow.ok() && work.ok())
      << set << ": " << (slow.ok() ? fast.status().message() : slow.status().message());
  if (fast.ok()) out.fast = *fast;
  if (slow.ok()) out.slow = *slow;
  if (work.ok()) out.work = *work;
  return out;
}

// Every layout of the small model on 32 GPUs, 64 sequences a step, on the fast path.
SearchResult SearchOf32() {
  const Fixture& f = Small();
  SearchSpace space;
  space.gpus = 32;
  space.gbs = 64;
  return Search(f.spec, space, *f.costs, f.setup);
}

// The same, every layout that fits simulated (once: two tests read it).
const SearchResult& AllSimulated() {
  static const SearchResult* const all = [] {
    const Fixture& f = Small();
    auto* out = new SearchResult(SearchOf32());
    SimulateTop(f.spec, *f.costs, f.setup, out->fitting, out);
    return out;
  }();
  return *all;
}

std::string Text(const std::vector<PipelinePass>& passes) {
  std::string out;
  for (const PipelinePass& p : passes) {
    out += (p.backward ? "B" : "F") + std::to_string(p.chunk) + "." + std::to_string(p.micro) + " ";
  }
  return out;
}

// Every pass once, each backward after its forward; 1F1B's warm-up is pp - s - 1 forwards; the
// interleaved order is Megatron-LM's (pp 2, vp 2, 4 micro-batches, stage 0, written out).
TEST(StageScheduleTest, EveryPassOnceInMegatronsOrder) {
  for (int64_t pp : {1, 2, 4}) {
    for (int64_t vp : {1, 2, 3}) {
      if (vp > 1 && pp == 1) continue;
      for (int64_t m : {pp, 2 * pp, 3 * pp, pp == 1 ? 5 : 2 * pp}) {
        for (int64_t s = 0; s < pp; ++s) {
          const std::vector<PipelinePass> passes = StageSchedule(pp, vp, m, s);
          ASSERT_EQ(passes.size(), static_cast<size_t>(2 * m * vp));
          std::set<std::tuple<bool, int64_t, int64_t>> seen;
          for (const PipelinePass& p : passes) {
            EXPECT_TRUE(seen.insert({p.backward, p.chunk, p.micro}).second) << Text(passes);
            if (p.backward) {
              EXPECT_TRUE(seen.count({false, p.chunk, p.micro})) << Text(passes);
            }
          }
          if (vp == 1) {
            size_t leading = 0;
            while (leading < passes.size() && !passes[leading].backward) ++leading;
            EXPECT_EQ(leading, static_cast<size_t>(std::min(pp - s, m))) << Text(passes);
          }
        }
      }
    }
  }
  // SimulatedStepLowerBound's chain: every stage starts with chunk 0's forward of the first
  // micro-batch and ends with chunk 0's backward of the last.
  for (int64_t pp : {1, 2, 4, 8}) {
    for (int64_t vp : {1, 2, 3, 12}) {
      if (vp > 1 && pp == 1) continue;
      for (int64_t m : {pp, 2 * pp, 16 * pp}) {
        for (int64_t s = 0; s < pp; ++s) {
          const std::vector<PipelinePass> passes = StageSchedule(pp, vp, m, s);
          EXPECT_FALSE(passes.front().backward);
          EXPECT_EQ(passes.front().chunk, 0);
          EXPECT_EQ(passes.front().micro, 0);
          EXPECT_TRUE(passes.back().backward);
          EXPECT_EQ(passes.back().chunk, 0);
          EXPECT_EQ(passes.back().micro, m - 1);
        }
      }
    }
  }
  EXPECT_EQ(Text(StageSchedule(2, 2, 4, 0)),
            "F0.0 F0.1 F1.0 F1.1 F0.2 B1.0 F0.3 B1.1 F1.2 B0.0 F1.3 B0.1 B1.2 B1.3 B0.2 B0.3 ");
}

// One stage, no data parallelism: nothing overlaps, so the simulated step is the fast path's
// sum (each op rounded to a nanosecond).
TEST(PipelineGraphTest, WithoutAPipelineOrReplicasTheSlowPathIsTheSum) {
  for (const std::string set : {"tp=1,pp=1,dp=1,mbs=1,gbs=4", "tp=2,pp=1,dp=1,mbs=2,gbs=8",
                                "tp=2,pp=1,dp=1,mbs=1,gbs=3,recompute=full"}) {
    const Both b = RunBoth(set);
    EXPECT_NEAR(b.slow.step_ns, b.fast.step_ns, static_cast<double>(b.slow.nodes)) << set;
    EXPECT_NEAR(b.slow.idle_ns, 0, static_cast<double>(b.slow.nodes)) << set;
  }
}

// The host time a step (PlanSetup::host_step_ns) is serial: both paths add it once, whatever
// the layout, and it is reported apart. The library's default is none (a traced job keeps its
// own); the commands default to the calibrated kHostStepNs.
TEST(PipelineGraphTest, TheHostTimeAStepIsAddedOnceToBothPaths) {
  const Fixture& f = Small();
  PlanSetup host = f.setup;
  host.host_step_ns = 25e6;
  EXPECT_EQ(f.setup.host_step_ns, 0);
  EXPECT_GT(kHostStepNs, 0);
  for (const std::string set : {"tp=1,pp=1,dp=1,mbs=1,gbs=4",
                                "tp=2,pp=4,vp=2,dp=4,mbs=1,gbs=64,sequence_parallel=1,zero=1"}) {
    const Layout l = LayoutOf(set);
    StatusOr<StepEstimate> fast0 = EstimateStep(f.spec, l, *f.costs, f.setup);
    StatusOr<StepEstimate> fast1 = EstimateStep(f.spec, l, *f.costs, host);
    StatusOr<SimulatedStep> slow0 = SimulateStep(f.spec, l, *f.costs, f.setup);
    StatusOr<SimulatedStep> slow1 = SimulateStep(f.spec, l, *f.costs, host);
    ASSERT_TRUE(fast0.ok() && fast1.ok() && slow0.ok() && slow1.ok()) << set;
    EXPECT_NEAR(fast1->step_ns - fast0->step_ns, 25e6, 1) << set;
    EXPECT_NEAR(slow1->step_ns - slow0->step_ns, 25e6, 1) << set;
    EXPECT_EQ(fast1->host_ns, 25e6);
    EXPECT_EQ(slow1->host_ns, 25e6);
    EXPECT_EQ(slow0->host_ns, 0);
    EXPECT_EQ(slow1->stage, slow0->stage);
  }
}

// FP8 with delayed scaling: every chunk's pass of every micro-batch ends in one amax
// all-reduce on the compute stream (2 m pp vp nodes), which the node count and the search's
// bound both know of: the bound plus the host time stays under the simulated step, and with
// one stage and no replica to overlap with the two are equal (bound exact).
TEST(PipelineGraphTest, DelayedScalingsAmaxAllReducesAreInTheGraphTheCountAndTheBound) {
  const Fixture& f = Small();
  PlanSetup setup = f.setup;
  setup.gemm_dtype = models::DType::kFp8;
  setup.host_step_ns = 7e6;
  for (const std::string set :
       {"tp=2,pp=1,dp=1,mbs=1,gbs=4", "tp=1,pp=1,dp=4,mbs=1,gbs=8,zero=1",
        "tp=2,pp=4,vp=2,dp=4,mbs=1,gbs=64,sequence_parallel=1,zero=1",
        "tp=2,pp=2,vp=3,cp=2,dp=2,mbs=1,gbs=8,sequence_parallel=1,ends_in_split=1",
        "tp=1,pp=3,vp=2,dp=2,mbs=1,gbs=12,ends_in_split=1", "tp=1,pp=2,cp=4,dp=2,gbs=8,zero=3",
        "tp=4,pp=2,dp=4,mbs=1,gbs=16,sequence_parallel=1,tp_only_amax_red=1"}) {
    const Layout l = LayoutOf(set);
    StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, setup);
    ASSERT_TRUE(work.ok()) << set << ": " << work.status().message();
    ASSERT_EQ(work->chunk_forward.ops.size(), 1u) << set;
    ASSERT_EQ(work->chunk_backward.ops.size(), 1u) << set;
    StatusOr<SimulatedStep> slow = SimulateStep(f.spec, l, *f.costs, setup);
    StatusOr<double> bound = SimulatedStepLowerBound(f.spec, l, *work, *f.costs);
    StatusOr<PipelineGraph> g = BuildPipelineGraph(f.spec, l, *work, *f.costs);
    ASSERT_TRUE(slow.ok() && bound.ok() && g.ok()) << set;
    int64_t amax = 0;
    for (const Node& n : g->graph.nodes)
      amax += std::string_view(n.name).starts_with("fp8_amax_all_reduce") ? 1 : 0;
    EXPECT_EQ(amax, 2 * l.micro_batches() * l.pp * l.vp) << set;
    EXPECT_LE(static_cast<int64_t>(g->graph.nodes.size()), PipelineNodeCount(f.spec, l, *work))
        << set;
    EXPECT_LE(*bound + setup.host_step_ns, slow->step_ns) << set;
    if (l.pp == 1 && l.gradient_ranks() == 1) {
      EXPECT_NEAR(*bound + setup.host_step_ns, slow->step_ns, 1) << set;
    }
  }
}

// 1F1B on pp stages: m + pp - 1 slots of a stage's forward and backward, the sends between; the
// bubble (pp - 1 slots) emerges from the dependencies. Interleaving divides it by about vp.
TEST(PipelineGraphTest, TheBubbleEmergesAndInterleavingShrinksIt) {
  const int64_t pp = 4, m = 8;
  const Both one = RunBoth("tp=1,pp=4,dp=1,mbs=1,gbs=8");
  const int64_t layers_per_stage = Small().spec.layers / pp;
  const double slot = (one.work.layer_forward.ns() + one.work.layer_backward.ns()) *
                      static_cast<double>(layers_per_stage);
  const double sends = 2 * one.work.p2p_ns;
  ASSERT_GT(one.work.p2p_ns, 0);
  const double lower = static_cast<double>(m + pp - 1) * slot;
  EXPECT_GE(one.slow.step_ns, lower);
  EXPECT_LE(one.slow.step_ns, lower + static_cast<double>(m + pp - 1) * (sends + 0.02 * slot) +
                                  one.slow.optimizer_ns);
  EXPECT_NEAR(one.slow.idle_ns, static_cast<double>(pp - 1) * slot,
              0.1 * slot * (pp - 1) + 2 * m * sends);
  const Both two = RunBoth("tp=1,pp=4,vp=2,dp=1,mbs=1,gbs=8");
  EXPECT_LT(two.slow.idle_ns, 0.7 * one.slow.idle_ns);
  EXPECT_GT(two.slow.idle_ns, 0.4 * one.slow.idle_ns);
  EXPECT_LT(two.slow.step_ns, one.slow.step_ns);
}

// Data parallel: buckets reduced while the last micro-batch's backward runs; only what is left
// when it ends is exposed, never more than the whole reduction.
TEST(PipelineGraphTest, GradientReductionHidesBehindTheBackward) {
  const Both b = RunBoth("tp=1,pp=1,dp=64,mbs=1,gbs=256");
  const Both alone = RunBoth("tp=1,pp=1,dp=1,mbs=1,gbs=4");
  EXPECT_GT(b.fast.dp_comm_ns, 0);
  EXPECT_GE(b.slow.dp_exposed_ns, 0);
  EXPECT_LT(b.slow.dp_exposed_ns, b.fast.dp_comm_ns);
  // Bucket by bucket it costs at least the one collective of the fast path (each bucket pays the
  // latency); what is not exposed ran beside the backward.
  EXPECT_GE(b.slow.dp_comm_ns, 0.99 * b.fast.dp_comm_ns);
  EXPECT_LT(b.slow.dp_comm_ns, 2 * b.fast.dp_comm_ns);
  EXPECT_LE(b.slow.dp_exposed_ns, b.slow.dp_comm_ns);
  // The same work, stretched only where the reduction runs beside it (PlanSetup::
  // overlap_slowdown): by s / (1 + s) of the time it overlaps, here about all the hidden part.
  EXPECT_NEAR(b.slow.busy_ns - b.slow.overlap_cost_ns, alone.slow.busy_ns,
              1e-6 * alone.slow.busy_ns + 100);
  const double s = kOverlapComputeSlowdown, hidden = b.slow.dp_comm_ns - b.slow.dp_exposed_ns;
  EXPECT_GT(b.slow.overlap_cost_ns, 0.7 * hidden * s / (1 + s));
  EXPECT_LT(b.slow.overlap_cost_ns, 1.01 * hidden * s / (1 + s));
  EXPECT_EQ(alone.slow.overlap_cost_ns, 0);
  // The fast path charges the part it hides the same way.
  EXPECT_NEAR(b.fast.overlap_cost_ns, (b.fast.dp_comm_ns - b.fast.dp_exposed_ns) * s / (1 + s), 1);
  // Overlap free: the old simulation, no kernel stretched.
  PlanSetup free_overlap = Small().setup;
  free_overlap.overlap_slowdown = 0;
  StatusOr<SimulatedStep> free_step = SimulateStep(
      Small().spec, LayoutOf("tp=1,pp=1,dp=64,mbs=1,gbs=256"), *Small().costs, free_overlap);
  ASSERT_TRUE(free_step.ok());
  EXPECT_EQ(free_step->overlap_cost_ns, 0);
  EXPECT_NEAR(free_step->busy_ns, alone.slow.busy_ns, 1e-6 * alone.slow.busy_ns + 100);
  // Here the reduction, not the compute, ends the step; where the compute does, it moves.
  EXPECT_LE(free_step->step_ns, b.slow.step_ns);
  // ZeRO 3's gathers hide behind every pass: both paths charge the compute beside them.
  const Both zero3 = RunBoth("tp=1,pp=1,dp=64,mbs=1,gbs=256,zero=3");
  EXPECT_GT(zero3.fast.overlap_cost_ns, 0);
  EXPECT_GT(zero3.slow.overlap_cost_ns, 0);
  const std::string node = "tp=1,pp=1,dp=8,mbs=1,gbs=64";
  StatusOr<SimulatedStep> free_node =
      SimulateStep(Small().spec, LayoutOf(node), *Small().costs, free_overlap);
  const Both slowed = RunBoth(node);
  ASSERT_TRUE(free_node.ok());
  EXPECT_GT(slowed.slow.overlap_cost_ns, 0);
  EXPECT_NEAR(slowed.slow.step_ns - free_node->step_ns, slowed.slow.overlap_cost_ns,
              0.01 * slowed.slow.overlap_cost_ns + 100);
  // Without the overlap (Megatron-LM before 2023) all of it waits, bucket by bucket; with ZeRO 1
  // the weights' gather after the optimizer too.
  const Both late = RunBoth("tp=1,pp=1,dp=64,mbs=1,gbs=256,dp_overlap=0");
  EXPECT_GT(late.slow.dp_exposed_ns, 0.9 * late.fast.dp_comm_ns);
  EXPECT_GT(late.slow.step_ns, b.slow.step_ns);
  const Both late_zero = RunBoth("tp=1,pp=1,dp=64,mbs=1,gbs=256,dp_overlap=0,zero=1");
  EXPECT_GT(late_zero.slow.dp_exposed_ns, 0.9 * late_zero.fast.dp_comm_ns);
}

// Every layout a search finds for 32 GPUs simulates to the end: no schedule deadlocks, whatever
// pp, vp, micro-batches or ZeRO stage.
TEST(PipelineGraphTest, EveryLayoutOfASearchRunsToTheEnd) {
  const SearchResult& r = AllSimulated();
  ASSERT_GT(r.fitting, 100u);
  EXPECT_EQ(r.simulated, r.fitting);
  EXPECT_EQ(r.simulated_failures, 0u) << r.first_simulation_failure.message();
  std::set<std::tuple<int64_t, int64_t, int>> kinds;  // pp, vp, zero.
  for (size_t i = 0; i < r.simulated; ++i) {
    const StepEstimate& e = r.ranked[i];
    ASSERT_TRUE(e.simulated.has_value());
    EXPECT_GT(e.simulated->step_ns, 0);
    if (i > 0) {
      EXPECT_LE(r.ranked[i - 1].best_step_ns(), e.best_step_ns());
    }
    kinds.insert({e.layout.pp, e.layout.vp, e.layout.zero});
  }
  EXPECT_GT(kinds.size(), 20u);
}

// The bound the search prunes with holds for every layout of a search, with its exchanges and
// reductions overlapped or not and with or without the stretch of contention, and is the step
// itself where nothing can overlap (one stage, one replica). The bound adds the nodes' whole
// nanoseconds as the simulation does, so it holds exactly.
TEST(PipelineGraphTest, NoSimulatedStepBeatsItsLowerBound) {
  const Fixture& f = Small();
  SearchResult r = SearchOf32();
  ASSERT_GT(r.fitting, 100u);
  double tightest = 0, loosest = 1;
  for (const double slowdown : {0.0, kOverlapComputeSlowdown}) {
    PlanSetup setup = f.setup;
    setup.overlap_slowdown = slowdown;
    for (size_t i = 0; i<r.ranked.size(); i += slowdown> 0 ? 5 : 11) {
      for (const std::string extra : {"", "dp_overlap=0,p2p_overlap=0"}) {
        Layout l = r.ranked[i].layout;
        if (!extra.empty()) {
          ASSERT_TRUE(ApplyLayoutSettings(extra, &l).ok());
        }
        const std::string name = LayoutText(l) + " " + extra;
        StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, setup);
        StatusOr<SimulatedStep> slow = SimulateStep(f.spec, l, *f.costs, setup);
        ASSERT_TRUE(work.ok() && slow.ok()) << name;
        StatusOr<double> bound = SimulatedStepLowerBound(f.spec, l, *work, *f.costs);
        ASSERT_TRUE(bound.ok()) << name << ": " << bound.status().message();
        EXPECT_LE(*bound, slow->step_ns) << name;
        const double ratio = *bound / slow->step_ns;
        tightest = std::max(tightest, ratio);
        loosest = std::min(loosest, ratio);
      }
    }
  }
  // Context parallelism and the ends counted in the split, which no search of the small model
  // enumerates (search --set fixes them).
  for (const std::string set :
       {"tp=1,pp=3,vp=2,dp=2,mbs=1,gbs=12,ends_in_split=1",
        "tp=2,pp=2,vp=3,cp=2,dp=2,mbs=1,gbs=8,sequence_parallel=1,ends_in_split=1",
        "tp=1,pp=6,dp=1,mbs=1,gbs=12,cp=2,ends_in_split=1", "tp=2,pp=9,dp=1,gbs=18,ends_in_split=1",
        "tp=1,pp=2,cp=4,dp=2,gbs=8,zero=3"}) {
    const Layout l = LayoutOf(set);
    StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, f.setup);
    StatusOr<SimulatedStep> slow = SimulateStep(f.spec, l, *f.costs, f.setup);
    ASSERT_TRUE(work.ok() && slow.ok()) << set;
    StatusOr<double> bound = SimulatedStepLowerBound(f.spec, l, *work, *f.costs);
    ASSERT_TRUE(bound.ok()) << set;
    EXPECT_LE(*bound, slow->step_ns) << set;
  }
  EXPECT_GT(tightest, 0.99);  // Where little overlaps, the bound is about the step,
  EXPECT_GT(loosest, 0.3);    // and it is never vacuous.
  std::printf("bound / simulated step: %.3f to %.3f\n", loosest, tightest);
  for (const std::string set : {"tp=1,pp=1,dp=1,mbs=1,gbs=4", "tp=2,pp=1,dp=1,mbs=2,gbs=8"}) {
    const Both b = RunBoth(set);
    StatusOr<double> bound = SimulatedStepLowerBound(f.spec, LayoutOf(set), b.work, *f.costs);
    ASSERT_TRUE(bound.ok());
    EXPECT_EQ(*bound, b.slow.step_ns) << set;
  }
}

// Tied embeddings (gpt) with pp > 1: the first and the last stage all-reduce the word
// embedding's gradient (Megatron's finalize_model_grads) after their own data-parallel
// reduction and before their optimizers, both starting once both are ready; the fast path adds
// the same time, serially. Untied (llama) or one stage: none.
TEST(PipelineGraphTest, TiedEmbeddingsGradientsAreAllReducedBetweenTheEndStagesOnBothPaths) {
  const Fixture& f = Small();
  StatusOr<ModelSpec> llama =
      ParseModelSpec("llama:layers=16,hidden=2048,heads=16,seq=2048,vocab=512");
  ASSERT_TRUE(llama.ok());
  for (const std::string set :
       {"tp=1,pp=4,dp=1,mbs=1,gbs=8", "tp=2,pp=4,vp=2,dp=4,mbs=1,gbs=64,sequence_parallel=1,zero=1",
        "tp=1,pp=2,vp=4,dp=2,mbs=1,gbs=12,p2p_overlap=0", "tp=1,pp=2,dp=2,gbs=8,dp_overlap=0"}) {
    const Layout l = LayoutOf(set);
    StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, f.setup);
    StatusOr<LayoutWork> untied = LayoutWorkOf(*llama, l, *f.costs, f.setup);
    ASSERT_TRUE(work.ok() && untied.ok()) << set;
    EXPECT_GT(work->embedding_grad_ns, 0) << set;
    EXPECT_EQ(untied->embedding_grad_ns, 0) << set;

    StatusOr<PipelineGraph> built = BuildPipelineGraph(f.spec, l, *work, *f.costs);
    ASSERT_TRUE(built.ok()) << set << ": " << built.status().message();
    const ExecutionGraph& g = built->graph;
    const SimResult r = Simulate(g, MeasuredScenario(g));
    ASSERT_EQ(r.not_run, 0u) << set;
    std::map<uint32_t, uint32_t> reduce;  // Rank index -> its all-reduce node.
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      if (std::string_view(g.nodes[n].name) == "embedding_grad_all_reduce")
        reduce[g.nodes[n].rank_index] = n;
    }
    ASSERT_EQ(reduce.size(), 2u) << set;
    ASSERT_TRUE(reduce.count(0) && reduce.count(static_cast<uint32_t>(l.pp - 1))) << set;
    const uint32_t first = reduce[0], last = reduce[static_cast<uint32_t>(l.pp - 1)];
    EXPECT_EQ(r.start_ns[first], r.start_ns[last]) << set;  // Together.
    for (const uint32_t s : {uint32_t{0}, static_cast<uint32_t>(l.pp - 1)}) {
      // After the stage's last backward and its last gradient reduction, before its optimizer.
      EXPECT_GE(r.start_ns[reduce[s]], r.end_ns[built->last_backward[s]]) << set;
      for (uint32_t n = 0; n < g.nodes.size(); ++n) {
        if (g.nodes[n].rank_index == s &&
            std::string_view(g.nodes[n].name) == "dp_gradient_reduce") {
          EXPECT_GE(r.start_ns[reduce[s]], r.end_ns[n]) << set;
        }
      }
      EXPECT_GE(r.start_ns[built->optimizer_node[s]], r.end_ns[reduce[s]]) << set;
    }

    // Both paths carry it, and the step moves by at least it against the untied work's
    // graph of the same model (the same ops otherwise).
    StatusOr<SimulatedStep> slow = SimulateStep(f.spec, l, *f.costs, f.setup);
    StatusOr<StepEstimate> fast = EstimateStep(f.spec, l, *f.costs, f.setup);
    ASSERT_TRUE(slow.ok() && fast.ok()) << set;
    EXPECT_EQ(slow->embedding_grad_ns, static_cast<double>(g.nodes[first].duration_ns)) << set;
    EXPECT_EQ(fast->embedding_grad_ns, work->embedding_grad_ns) << set;
    LayoutWork without = *work;
    without.embedding_grad_ns = 0;
    StatusOr<PipelineGraph> plain = BuildPipelineGraph(f.spec, l, without, *f.costs);
    ASSERT_TRUE(plain.ok()) << set;
    const SimResult p = Simulate(plain->graph, MeasuredScenario(plain->graph));
    ASSERT_EQ(p.not_run, 0u) << set;
    const auto step = [](const SimResult& sim) {
      return *std::max_element(sim.end_ns.begin(), sim.end_ns.end());
    };
    EXPECT_GE(step(r) - step(p), g.nodes[first].duration_ns) << set;
    StatusOr<double> bound = SimulatedStepLowerBound(f.spec, l, *work, *f.costs);
    ASSERT_TRUE(bound.ok()) << set;
    EXPECT_LE(*bound, slow->step_ns) << set;
  }
  for (const std::string set : {"tp=2,pp=1,dp=4,mbs=1,gbs=8,zero=1"}) {
    StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, LayoutOf(set), *f.costs, f.setup);
    ASSERT_TRUE(work.ok()) << set;
    EXPECT_EQ(work->embedding_grad_ns, 0) << set;
  }
}

// NCCL's sends are rendezvous: a transfer starts once its pass has ended and its receiver has
// posted the receive, and matches receives in order on each direction's stream; every schedule,
// blocking or overlapped, runs to the end that way.
TEST(PipelineGraphTest, ASendStartsWhenItsReceiverHasPosted) {
  const Fixture& f = Small();
  for (const std::string set :
       {"tp=1,pp=4,dp=1,mbs=1,gbs=8", "tp=1,pp=2,dp=1,mbs=1,gbs=3",
        "tp=1,pp=4,vp=2,dp=1,mbs=1,gbs=8", "tp=1,pp=4,vp=2,dp=1,mbs=1,gbs=8,p2p_overlap=0",
        "tp=1,pp=2,vp=4,dp=2,mbs=1,gbs=12", "tp=1,pp=2,vp=4,dp=2,mbs=1,gbs=12,p2p_overlap=0",
        "tp=1,pp=4,vp=2,dp=2,mbs=1,gbs=32", "tp=1,pp=3,vp=2,dp=2,mbs=1,gbs=12,ends_in_split=1",
        "tp=2,pp=2,vp=3,cp=2,dp=2,mbs=1,gbs=8,sequence_parallel=1,ends_in_split=1"}) {
    const Layout l = LayoutOf(set);
    StatusOr<LayoutWork> work = LayoutWorkOf(f.spec, l, *f.costs, f.setup);
    ASSERT_TRUE(work.ok()) << set;
    StatusOr<PipelineGraph> built = BuildPipelineGraph(f.spec, l, *work, *f.costs);
    ASSERT_TRUE(built.ok()) << set << ": " << built.status().message();
    const ExecutionGraph& g = built->graph;
    const SimResult r = Simulate(g, MeasuredScenario(g));
    ASSERT_EQ(r.not_run, 0u) << set;
    size_t sends = 0;
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const std::string_view name = g.nodes[n].name;
      if (name != "send_forward" && name != "send_backward") continue;
      ++sends;
      int posted = 0;
      for (const Edge& e : g.edges) {
        if (e.to != n || g.nodes[e.from].name != "recv_posted") continue;
        ++posted;
        EXPECT_NE(g.nodes[e.from].rank_index, g.nodes[n].rank_index) << set;
        EXPECT_GE(r.start_ns[n], r.start_ns[e.from]) << set;
      }
      EXPECT_EQ(posted, 1) << set << ": send " << n;
    }
    const int64_t passes_sent = 2 * l.micro_batches() * (l.pp * l.vp - 1);
    EXPECT_EQ(sends, static_cast<size_t>(passes_sent)) << set;
  }
}

// Megatron-LM's blocking exchanges (its 1F1B; interleaved without overlap_p2p_comm) hold the
// compute stream until the send has reached the receiver; overlapped ones let the next pass of the
// other direction run meanwhile: never slower, and no slower than every transfer exposed.
TEST(PipelineGraphTest, BlockingExchangesAreNeverFasterThanOverlappedOnes) {
  const Both overlapped = RunBoth("tp=1,pp=4,vp=2,dp=1,mbs=1,gbs=16");
  const Both blocking = RunBoth("tp=1,pp=4,vp=2,dp=1,mbs=1,gbs=16,p2p_overlap=0");
  ASSERT_GT(overlapped.work.p2p_ns, 0);
  EXPECT_GT(blocking.slow.step_ns, overlapped.slow.step_ns);
  EXPECT_NEAR(blocking.slow.busy_ns - blocking.slow.overlap_cost_ns,
              overlapped.slow.busy_ns - overlapped.slow.overlap_cost_ns,
              1e-6 * overlapped.slow.busy_ns);
  // The stage that ends last sends each of its passes' outputs but the first virtual stage's
  // backward and the last one's forward: between m and 2 m vp sends of p2p_ns.
  const double sends = overlapped.slow.sends_ns / overlapped.work.p2p_ns;
  EXPECT_NEAR(sends, std::round(sends), 0.01);
  EXPECT_GE(sends, 16);
  EXPECT_LE(sends, 2 * 16 * 2);
  // At most every transfer exposed (8 virtual stages, 16 micro-batches, both directions).
  EXPECT_LT(blocking.slow.step_ns - overlapped.slow.step_ns, 2 * 16 * 7 * overlapped.work.p2p_ns);
}

// The shortlist counts step graphs, not layouts: ZeRO 1 and 2 of one layout build the same graph,
// so the second takes the first's answer and k distinct graphs are simulated.
TEST(PipelineGraphTest, TheShortlistCountsDistinctGraphs) {
  const Fixture& f = Small();
  SearchResult r = SearchOf32();
  // The distributed optimizer's layouts only, where ZeRO 1 and 2 come in pairs.
  std::erase_if(r.ranked,
                [](const StepEstimate& e) { return e.layout.zero == 0 || e.layout.zero == 3; });
  r.fitting = static_cast<size_t>(std::count_if(
      r.ranked.begin(), r.ranked.end(), [](const StepEstimate& e) { return e.memory.fits; }));
  ASSERT_GT(r.fitting, 10u);
  std::pair<size_t, size_t> last_progress;
  SimulateTop(f.spec, *f.costs, f.setup, 3, &r, [&](size_t done, size_t total) {
    last_progress = {done, total};
  });
  EXPECT_EQ(last_progress, std::make_pair(size_t{3}, size_t{3}));  // A terminal's line ends.
  std::set<std::string> graphs;
  std::map<std::string, double> steps;
  for (size_t i = 0; i < r.simulated; ++i) {
    Layout l = r.ranked[i].layout;
    if (l.zero == 2) l.zero = 1;
    const std::string key = LayoutText(l);
    graphs.insert(key);
    ASSERT_TRUE(r.ranked[i].simulated.has_value());
    const auto [it, first] = steps.emplace(key, r.ranked[i].simulated->step_ns);
    if (!first) {
      EXPECT_EQ(it->second, r.ranked[i].simulated->step_ns) << key;
    }
  }
  EXPECT_EQ(graphs.size(), 3u);
  EXPECT_EQ(r.simulated, 6u);
  EXPECT_FALSE(r.ranked[r.simulated].simulated.has_value());
}

// Past the fast path's shortlist, the layouts whose lower bound is under the fastest simulated
// step are simulated too: with the budget to settle them all, the first layout is the fastest of
// every layout simulated (checked against simulating them all); with a budget of one, what is
// left is counted as unsettled, never claimed.
TEST(PipelineGraphTest, CheckingTheRestFindsTheSlowPathsFastest) {
  const Fixture& f = Small();
  const SearchResult& all = AllSimulated();
  ASSERT_EQ(all.simulated, all.fitting);
  const double fastest = all.ranked.front().simulated->step_ns;

  SearchResult r = SearchOf32();
  SimulateTop(f.spec, *f.costs, f.setup, 2, &r);
  const size_t shortlist = r.simulated;
  std::pair<size_t, size_t> last_progress;
  CheckTheRest(f.spec, *f.costs, f.setup, 100000, &r, [&](size_t done, size_t total) {
    last_progress = {done, total};
  });
  EXPECT_TRUE(r.checked);
  EXPECT_EQ(r.unsettled, 0u);
  EXPECT_GT(r.ruled_out, 0u);
  EXPECT_GT(r.simulated, shortlist);
  EXPECT_LT(r.simulated, r.fitting);  // The bound spared some simulations.
  EXPECT_EQ(r.simulated + r.ruled_out, r.fitting);
  EXPECT_EQ(last_progress.first, last_progress.second);  // A terminal's line ends.
  ASSERT_TRUE(r.ranked.front().simulated.has_value());
  EXPECT_EQ(r.ranked.front().simulated->step_ns, fastest);
  for (size_t i = 0; i < r.fitting; ++i) {
    EXPECT_EQ(r.ranked[i].simulated.has_value(), i < r.simulated) << i;
    if (i > 0 && i < r.simulated) {
      EXPECT_LE(r.ranked[i - 1].best_step_ns(), r.ranked[i].best_step_ns());
    }
    EXPECT_EQ(r.ranked[i].memory.fits, true);
  }

  SearchResult tight = SearchOf32();
  SimulateTop(f.spec, *f.costs, f.setup, 1, &tight);
  const size_t before = tight.simulated;
  CheckTheRest(f.spec, *f.costs, f.setup, 1, &tight);
  EXPECT_GT(tight.unsettled, 0u);
  EXPECT_EQ(tight.simulated + tight.ruled_out + tight.unsettled, tight.fitting);
  EXPECT_LE(tight.simulated, before + 2);  // One graph more (and its ZeRO twin).

  // Nothing simulated to compare with: no claim either way.
  SearchResult none = SearchOf32();
  CheckTheRest(f.spec, *f.costs, f.setup, 100, &none);
  EXPECT_FALSE(none.checked);
  EXPECT_EQ(none.simulated, 0u);
  EXPECT_EQ(none.ruled_out + none.unsettled, 0u);
}

TEST(PipelineGraphTest, AStepTooLargeToSimulateIsRefusedBeforeBuilding) {
  const Fixture& f = Small();
  StatusOr<SimulatedStep> s =
      SimulateStep(f.spec, LayoutOf("tp=1,pp=2,dp=1,mbs=1,gbs=1000000"), *f.costs, f.setup);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("more than the slow path simulates (4000000)"),
            std::string::npos)
      << s.status().message();
}

// The fast path's data-parallel collectives follow the slow path's schedule: bucket by bucket,
// each chunk's reduction launched as its last backward ends (interleaved: chunk by chunk, the
// last first) and the weights' gathers in the order the forwards need them, so both expose
// about the same; the fast path used to hide them only behind one chunk's backward.
TEST(PipelineGraphTest, BothPathsExposeTheSameDataParallelTail) {
  // All-reduces alone (no ZeRO): the same tail on both paths.
  const Both reduce = RunBoth("tp=1,pp=1,dp=64,mbs=1,gbs=64,zero=0");
  EXPECT_NEAR(reduce.fast.dp_comm_ns, reduce.slow.dp_comm_ns, 0.02 * reduce.slow.dp_comm_ns);
  EXPECT_NEAR(reduce.fast.dp_exposed_ns, reduce.slow.dp_exposed_ns,
              0.2 * reduce.slow.dp_exposed_ns);
  // ZeRO 1: the fast path's exposed part holds the first gathers' wait too, which the slow path
  // counts among its stage's waits; with or without interleaving most of it hides.
  for (const char* set :
       {"tp=1,pp=2,vp=4,dp=64,mbs=1,gbs=512,zero=1", "tp=1,pp=2,vp=1,dp=64,mbs=1,gbs=512,zero=1"}) {
    const Both b = RunBoth(set);
    std::printf("%s: exposed fast %.3f ms, simulated %.3f ms; collectives %.3f / %.3f ms\n", set,
                b.fast.dp_exposed_ns / 1e6, b.slow.dp_exposed_ns / 1e6, b.fast.dp_comm_ns / 1e6,
                b.slow.dp_comm_ns / 1e6);
    EXPECT_NEAR(b.fast.dp_comm_ns, b.slow.dp_comm_ns, 0.02 * b.slow.dp_comm_ns) << set;
    EXPECT_GE(b.fast.dp_exposed_ns, 0.99 * b.slow.dp_exposed_ns) << set;
    EXPECT_LT(b.fast.dp_exposed_ns, 0.4 * b.fast.dp_comm_ns) << set;
  }
  // A large vocabulary: the end stages' embedding and head weigh, and stage 0 (the embedding in
  // its last bucket, its backward the last) exposes the most. Both paths find that stage's tail.
  StatusOr<ModelSpec> wide =
      ParseModelSpec("gpt:layers=16,hidden=2048,heads=16,seq=2048,vocab=128000");
  ASSERT_TRUE(wide.ok());
  for (const char* set :
       {"tp=1,pp=2,vp=2,dp=64,mbs=1,gbs=512,zero=0", "tp=1,pp=2,vp=1,dp=64,mbs=1,gbs=512,zero=0"}) {
    const Fixture& f = Small();
    StatusOr<StepEstimate> fast = EstimateStep(*wide, LayoutOf(set), *f.costs, f.setup);
    StatusOr<SimulatedStep> slow = SimulateStep(*wide, LayoutOf(set), *f.costs, f.setup);
    ASSERT_TRUE(fast.ok() && slow.ok()) << set;
    std::printf("%s, vocab 128000: exposed fast %.3f ms, simulated %.3f ms\n", set,
                fast->dp_exposed_ns / 1e6, slow->dp_exposed_ns / 1e6);
    EXPECT_NEAR(fast->dp_exposed_ns, slow->dp_exposed_ns, 0.15 * slow->dp_exposed_ns) << set;
  }
}

}  // namespace
}  // namespace lumos::modeler::plan
