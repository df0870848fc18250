// Recost (modeler/whatif/recost.h) on the bundled real example, 8 DLRM ranks on V100s: carried
// to other GPUs and to new work. The job's structure here is a stand-in with kernel classes only
// (structure recovery has its own tests); the cost model is the trace's own calibration plus
// roofline defaults, as estimate builds it.
#include "modeler/whatif/recost.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "modeler/graph/clock_alignment.h"
#include "modeler/models/kernels/kernel_trace.h"
#include "modeler/sim/simulator.h"
#include "modeler/trace/trace_set.h"

namespace lumos::modeler::whatif {
namespace {

struct Example {
  Job job;
  ExecutionGraph graph;
  structure::JobStructure structure;
  models::CostModel model;
};

Example Load() {
  Example e;
  auto paths = ExpandTracePaths({std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"});
  EXPECT_TRUE(paths.ok());
  auto job = LoadJob(*paths);
  EXPECT_TRUE(job.ok());
  e.job = std::move(*job);
  GraphOptions options;
  options.record_sources = true;
  e.graph = BuildGraph(e.job, AlignClocks(e.job).rank_offset_ns, options);
  e.structure.nodes.resize(e.graph.nodes.size());
  std::vector<std::vector<models::TraceGpuWork>> work;
  for (const RankTrace& rank : e.job.ranks) work.push_back(models::ClassifyRank(rank));
  for (size_t n = 0; n < e.graph.nodes.size(); ++n) {
    const Node& x = e.graph.nodes[n];
    if (!x.gpu()) continue;
    size_t i = e.graph.node_source[n];
    const RankTrace& rank = e.job.ranks[x.rank_index];
    if (x.kind == NodeKind::kMemcpy) i += rank.kernels.size();
    if (x.kind == NodeKind::kMemset) i += rank.kernels.size() + rank.memcpys.size();
    e.structure.nodes[n].kernel_class = work[x.rank_index][i].key.kind;
  }
  return e;
}

CostSetup SetupFor(const Example& e, const char* from, const char* to) {
  const models::SpecTable& specs = models::SpecTable::Builtin();
  CostSetup s;
  s.job = &e.job;
  s.measured = &e.graph;
  s.structure = &e.structure;
  s.model = &e.model;
  s.source_gpu = specs.FindGpu(from);
  s.target_gpu = specs.FindGpu(to);
  s.source_net = *specs.FindNetwork("ib400");
  s.target_net = s.source_net;
  return s;
}

int64_t End(const ExecutionGraph& g, const SimResult& sim) {
  int64_t end = 0;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) end = std::max(end, sim.end_ns[n]);
  return end;
}

TEST(RecostTest, TheSameGpuAndWorkChangeNothing) {
  const Example e = Load();
  ASSERT_NE(e.job.ranks[0].device.find("V100"), std::string::npos) << e.job.ranks[0].device;
  const Scenario measured = MeasuredScenario(e.graph);
  RewrittenGraph r = Unchanged(e.graph, measured);
  CostReport report;
  const CostSetup setup = SetupFor(e, e.job.ranks[0].device.c_str(), e.job.ranks[0].device.c_str());
  ASSERT_NE(setup.source_gpu, nullptr);
  ASSERT_TRUE(Recost(setup, &r, &report).ok());
  EXPECT_EQ(r.scenario.duration_ns, measured.duration_ns);
  EXPECT_EQ(r.scenario.transfer_ns, measured.transfer_ns);
  EXPECT_EQ(report.changed_kernels, 0u);
  EXPECT_EQ(std::count(report.node_basis.begin(), report.node_basis.end(), Basis::kMeasured),
            static_cast<long>(e.graph.nodes.size()));
}

TEST(RecostTest, AFasterGpuShortensKernelsAndLeavesTheHostAlone) {
  const Example e = Load();
  const Scenario measured = MeasuredScenario(e.graph);
  const SimResult base = Simulate(e.graph, measured);
  RewrittenGraph r = Unchanged(e.graph, measured);
  CostReport report;
  const CostSetup setup = SetupFor(e, "V100-SXM2-32GB", "H100-SXM5-80GB");
  ASSERT_NE(setup.target_gpu, nullptr);
  const Status s = Recost(setup, &r, &report);
  ASSERT_TRUE(s.ok()) << s.message();
  size_t faster = 0, kernels = 0;
  double before = 0, after = 0;
  for (uint32_t n = 0; n < e.graph.nodes.size(); ++n) {
    const Node& x = e.graph.nodes[n];
    if (!x.gpu()) {
      EXPECT_EQ(r.scenario.duration_ns[n], measured.duration_ns[n]) << x.name;
      continue;
    }
    if (x.work != WorkClass::kCompute || measured.duration_ns[n] == 0) continue;
    ++kernels;
    EXPECT_LE(r.scenario.duration_ns[n], measured.duration_ns[n]) << x.name;
    faster += r.scenario.duration_ns[n] < measured.duration_ns[n] ? 1 : 0;
    before += static_cast<double>(measured.duration_ns[n]);
    after += static_cast<double>(r.scenario.duration_ns[n]);
    EXPECT_NE(report.node_basis[n], Basis::kMeasured) << x.name;
  }
  // Kernels at the launch floor stay there; the others run faster, by less than H100's HBM and
  // FP32 ratios to V100's (3.7x, 4.3x) allow.
  EXPECT_GT(faster, kernels * 3 / 4);
  EXPECT_GT(after / before, 1 / 4.3);
  EXPECT_LT(after / before, 0.8);
  EXPECT_GT(report.changed_kernels, 0u);
  // Imported collectives carry no size: scaled by NVLink's ratio (V100 300 GB/s, H100 900).
  EXPECT_GT(report.changed_collectives, 0u);
  for (size_t c = 0; c < r.scenario.transfer_ns.size(); ++c) {
    EXPECT_LE(r.scenario.transfer_ns[c], measured.transfer_ns[c]);
    EXPECT_EQ(report.collective_basis[c], Basis::kModelOnly);
  }
  const SimResult sim = Simulate(r.graph, r.scenario);
  EXPECT_EQ(sim.not_run, 0u);
  EXPECT_LT(End(r.graph, sim), End(e.graph, base));
  EXPECT_FALSE(report.notes.empty());
}

TEST(RecostTest, MoreWorkTakesLongerOnTheSameGpu) {
  const Example e = Load();
  const Scenario measured = MeasuredScenario(e.graph);
  RewrittenGraph r = Unchanged(e.graph, measured);
  CostReport report;
  CostSetup setup = SetupFor(e, "V100-SXM2-32GB", "V100-SXM2-32GB");
  setup.other_work.kernel_bytes = 4;
  setup.other_work.kernel_flops = 4;
  ASSERT_TRUE(Recost(setup, &r, &report).ok());
  size_t longer = 0, kernels = 0;
  for (uint32_t n = 0; n < e.graph.nodes.size(); ++n) {
    if (e.graph.nodes[n].work != WorkClass::kCompute || measured.duration_ns[n] == 0) continue;
    ++kernels;
    EXPECT_GE(r.scenario.duration_ns[n], measured.duration_ns[n]);
    longer += r.scenario.duration_ns[n] > measured.duration_ns[n] ? 1 : 0;
  }
  EXPECT_GT(longer, kernels / 2);
}

}  // namespace
}  // namespace lumos::modeler::whatif

namespace lumos::modeler::whatif {
namespace {

// GEMM dimensions map by value in any order (cuBLAS's m, n, k are PyTorch's transposed); the
// tokens dimension is the one whose other two are weight sizes when a weight size equals it.
TEST(WorkChangeTest, GemmDimensionsMapByValueInAnyOrder) {
  WorkChange w;
  w.tokens = {2048, 4096};                                           // seq x2.
  w.gemm = {{1536, 3072}, {2048, 4096}, {1024, 2048}, {512, 1024}};  // 3h/tp, ffn/tp, h, h/tp.
  // QKV forward, cuBLAS order (out, tokens, in): every dimension changes.
  EXPECT_EQ(w.Map({1536, 2048, 1024, 1}).m, 3072);
  EXPECT_EQ(w.Map({1536, 2048, 1024, 1}).n, 4096);
  EXPECT_EQ(w.Map({1536, 2048, 1024, 1}).k, 2048);
  // fc1 (ffn/tp = tokens = 2048): one is the tokens, the other ffn/tp; both double here.
  const models::GemmShape fc1 = w.Map({2048, 2048, 1024, 3});
  EXPECT_EQ(fc1.m * fc1.n * fc1.k, int64_t{4096} * 4096 * 2048);
  EXPECT_EQ(fc1.batch, 3);
  // Only the tokens change (mbs x2, sizes the same): exactly one 2048 becomes 4096.
  WorkChange mbs;
  mbs.tokens = {2048, 4096};
  mbs.gemm = {{2048, 2048}, {1024, 1024}};
  const models::GemmShape g = mbs.Map({2048, 2048, 1024, 1});
  EXPECT_EQ(g.m * g.n * g.k, int64_t{4096} * 2048 * 1024);
  // A dimension nothing matches stays.
  EXPECT_EQ(w.Map({7, 2048, 5, 1}).m, 7);
  EXPECT_EQ(w.Map({7, 2048, 5, 1}).n, 4096);
  EXPECT_FALSE(WorkChange{}.changes());
  EXPECT_TRUE(w.changes());
}

}  // namespace
}  // namespace lumos::modeler::whatif
