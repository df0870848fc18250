// `lumos-model estimate` (modeler/estimate): identity on every shared real trace, the bundled
// example and synthetic GPT jobs (--set with the trace's own values reproduces the replay within
// 0.5 %); the consistency checks of issue 14 (doubling layers doubles the layer part and nothing
// else; dp changes only the gradient collectives; a faster network is never slower); the command
// as a user runs it (text, JSON, sweep, timeline, bad input). The GPT jobs are `synth gpt`'s, a
// test double for a GPU run (durations from the cost models), used for what no real trace we
// hold has: transformer layers, tensor and data parallelism.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <set>

#include "modeler/estimate/estimate_run.h"
#include "modeler/import/kineto_import.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/trace/trace_set.h"
#include "tests/testing/gpt_job.h"
#include "tests/testing/param_names.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::estimate {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }
std::string SharedTraces() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces"; }

std::unique_ptr<PreparedJob> Prepare(const std::string& input) {
  auto paths = ExpandTracePaths({input});
  EXPECT_TRUE(paths.ok()) << paths.status().message();
  if (!paths.ok()) return nullptr;
  PrepareOptions options;
  options.net = *models::SpecTable::Builtin().FindNetwork(models::kDefaultNetwork);
  std::vector<std::string> problems;
  bool usage = false;
  auto p = PrepareJob(*paths, options, &problems, &usage);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? std::move(*p) : nullptr;
}

whatif::SettingList Parse(const std::string& text) {
  auto s = whatif::ParseSettings(text, whatif::SettingScope::kSet, models::SpecTable::Builtin());
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : whatif::SettingList{};
}

EstimateResult Estimated(const PreparedJob& job, const std::string& settings) {
  auto r = RunEstimate(job.ctx, Parse(settings));
  EXPECT_TRUE(r.ok()) << settings << ": " << r.status().message();
  return r.ok() ? std::move(*r) : EstimateResult{};
}

// Every setup value the trace shows, and its own GPU: "as measured".
std::string OwnValues(const PreparedJob& job) {
  std::string text = "gpu=" + job.ctx.source_gpu->name;
  for (std::string_view key : structure::SetupKeys()) {
    const structure::Value* v = structure::SetupField(job.structure.setup, key);
    if (v->known()) text += "," + std::string(key) + "=" + std::to_string(v->value);
  }
  return text;
}

// Per iteration and rank, the estimate against replay's analysis of the measured run.
void ExpectIdentity(const PreparedJob& job) {
  const EstimateResult r = Estimated(job, OwnValues(job));
  ASSERT_EQ(r.iterations.size(), job.ctx.base_iterations.size());
  ASSERT_FALSE(r.iterations.empty());
  for (size_t i = 0; i < r.iterations.size(); ++i) {
    const double base = static_cast<double>(job.ctx.base_iterations[i].replayed_ns());
    const double estimate = static_cast<double>(r.iterations[i].replayed_ns());
    EXPECT_LE(std::fabs(estimate - base), 0.005 * base)
        << r.iterations[i].name << " rank " << r.iterations[i].rank;
  }
  EXPECT_EQ(r.not_run, 0u);
  EXPECT_EQ(r.estimate.iteration_ns, r.base.iteration_ns);
}

class RealTraceEstimateTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RealTraceEstimateTest, TheTracesOwnValuesReproduceTheReplay) {
  TempDir dir;
  auto imported =
      kineto::ImportKineto({{SharedTraces() + "/" + GetParam()}, dir.File("out"), "", 1});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  auto job = Prepare(imported->size() == 1 ? imported->front().output_path : dir.File("out"));
  ASSERT_NE(job, nullptr);
  ExpectIdentity(*job);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, RealTraceEstimateTest,
                         ::testing::ValuesIn(::lumos::testing::kSharedTraces),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return ::lumos::testing::TraceParamName(info.param);
                         });

TEST(EstimateIdentityTest, TheBundledExampleAndGptJobs) {
  auto example = Prepare(Example());
  ASSERT_NE(example, nullptr);
  ExpectIdentity(*example);
  for (bool nvtx : {true, false}) {
    TempDir dir;
    ASSERT_FALSE(lumos::testing::WriteGptJob(dir.path(), {"", 1, nvtx}).empty());
    auto gpt = Prepare(dir.path());
    ASSERT_NE(gpt, nullptr);
    ExpectIdentity(*gpt);
  }
}

// The compute kernels of a rewritten graph in layers and outside them: their durations (the
// scenario's) and counts.
struct Parts {
  int64_t layer_ns = 0, other_ns = 0;
  size_t layer_kernels = 0, other_kernels = 0;
};

Parts ComputeParts(const PreparedJob& job, const whatif::RewrittenGraph& r) {
  Parts p;
  for (uint32_t n = 0; n < r.graph.nodes.size(); ++n) {
    if (r.graph.nodes[n].work != WorkClass::kCompute) continue;
    const bool layer = job.structure.nodes[r.origin[n]].layer != structure::kNoLayer;
    (layer ? p.layer_ns : p.other_ns) += r.scenario.duration_ns[n];
    (layer ? p.layer_kernels : p.other_kernels) += 1;
  }
  return p;
}

// layers x2: the layers' kernels are there twice with their measured durations; outside the
// layers the same kernels, only the optimizer's work grown with the parameters (in more
// launches); every node of the layers (host calls, kernels, collectives) copied once; the iteration
// longer by no more than the GPU work added per rank.
TEST(EstimateConsistencyTest, DoublingLayersDoublesTheLayerPartAndNothingElse) {
  TempDir dir;
  ASSERT_FALSE(lumos::testing::WriteGptJob(dir.path(), {"layers=4", 1, true}).empty());
  auto job = Prepare(dir.path());
  ASSERT_NE(job, nullptr);
  auto base = RunEstimate(job->ctx, Parse("layers=4"), {true});
  auto twice = RunEstimate(job->ctx, Parse("layers=8"), {true});
  ASSERT_TRUE(base.ok() && twice.ok());
  const Parts b = ComputeParts(*job, *base->rewritten);
  const Parts t = ComputeParts(*job, *twice->rewritten);
  EXPECT_EQ(t.layer_kernels, 2 * b.layer_kernels);
  EXPECT_EQ(t.layer_ns, 2 * b.layer_ns);
  // Outside the layers, only the optimizer's multi-tensor launches are copied (their count
  // follows the parameters: optimizer_launches.h), each with its launching call.
  size_t optimizer_copies = 0;
  const whatif::RewrittenGraph& r = *twice->rewritten;
  for (uint32_t n = 0; n < r.graph.nodes.size(); ++n) {
    if (r.copy[n] == 0 || job->structure.nodes[r.origin[n]].layer != structure::kNoLayer) continue;
    if (r.graph.nodes[n].kind != NodeKind::kKernel) continue;
    EXPECT_NE(r.graph.nodes[n].name.find("multi_tensor_apply_kernel"), std::string_view::npos)
        << r.graph.nodes[n].name;
    ++optimizer_copies;
  }
  EXPECT_GT(optimizer_copies, 0u);
  EXPECT_EQ(t.other_kernels, b.other_kernels + optimizer_copies);
  EXPECT_GE(t.other_ns, b.other_ns);  // The optimizer's kernels, over twice the layer weights.
  EXPECT_LT(t.other_ns - b.other_ns, t.layer_ns - b.layer_ns);
  size_t in_layers = 0;
  for (const structure::NodeInfo& info : job->structure.nodes) {
    in_layers += info.layer != structure::kNoLayer ? 1 : 0;
  }
  EXPECT_EQ(twice->nodes_after - twice->nodes_before, in_layers + 2 * optimizer_copies);
  EXPECT_EQ(twice->copied_nodes, in_layers + 2 * optimizer_copies);
  // What was re-costed outside the copies: the optimizer (work) and the gradients (bytes).
  EXPECT_EQ(twice->recosted_by_reason[0], 0u);  // gpu
  EXPECT_EQ(twice->recosted_by_reason[2], 0u);  // ranks
  EXPECT_EQ(twice->not_run, 0u);
  // The iteration grows by at most what the copies hold, per rank and iteration: their host
  // calls and the gaps before them, their kernels, their collectives' transfers (the layers'
  // work overlaps itself and the rest; it never adds more than its sum), and by at least half
  // their compute kernels (the job is not idle).
  const whatif::RewrittenGraph& g = *twice->rewritten;
  int64_t copied = 0;
  for (uint32_t n = 0; n < g.graph.nodes.size(); ++n) {
    if (g.copy[n] == 0) continue;
    const Node& x = g.graph.nodes[n];
    copied +=
        x.collective != kNoNode ? g.scenario.transfer_ns[x.collective] : g.scenario.duration_ns[n];
  }
  for (size_t e = 0; e < g.graph.edges.size(); ++e) {
    const Edge& edge = g.graph.edges[e];
    if (edge.kind == EdgeKind::kThreadOrder && g.copy[edge.to] > 0) {
      copied += g.scenario.delay_ns[e];
    }
  }
  const auto windows = static_cast<int64_t>(job->ctx.base_iterations.size());
  const int64_t growth = twice->estimate.iteration_ns - base->estimate.iteration_ns;
  EXPECT_LE(growth, copied / windows);
  EXPECT_GE(growth, (t.layer_ns - b.layer_ns) / windows / 2);
  // Halving is the mirror image: fewer kernels, a shorter iteration.
  auto half = RunEstimate(job->ctx, Parse("layers=2"), {true});
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(2 * ComputeParts(*job, *half->rewritten).layer_kernels, b.layer_kernels);
  EXPECT_LT(half->estimate.iteration_ns, base->estimate.iteration_ns);
}

// dp 2 -> 4 (and 16, across nodes): every kernel keeps its duration; only the data-parallel
// communicator's collectives change, and the tensor-parallel ones stay.
TEST(EstimateConsistencyTest, DataParallelDegreeChangesOnlyTheGradientCollectives) {
  TempDir dir;
  ASSERT_FALSE(lumos::testing::WriteGptJob(dir.path()).empty());
  auto job = Prepare(dir.path());
  ASSERT_NE(job, nullptr);
  std::set<uint64_t> data_comms;
  for (const structure::CommGroup& g : job->structure.groups) {
    if (g.role == structure::GroupRole::kData) data_comms.insert(g.comm_id);
  }
  ASSERT_FALSE(data_comms.empty());
  for (const char* dp : {"dp=4", "dp=16"}) {
    auto r = RunEstimate(job->ctx, Parse(dp), {true});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const whatif::RewrittenGraph& g = *r->rewritten;
    ASSERT_EQ(g.graph.nodes.size(), job->graph.nodes.size());
    for (uint32_t n = 0; n < g.graph.nodes.size(); ++n) {
      if (g.graph.nodes[n].work == WorkClass::kCommunication) continue;
      EXPECT_EQ(g.scenario.duration_ns[n], job->ctx.measured.duration_ns[n]) << dp;
    }
    size_t changed = 0;
    for (size_t c = 0; c < g.graph.collectives.size(); ++c) {
      const bool data = data_comms.count(g.graph.collectives[c].comm_id) > 0;
      if (!data) {
        EXPECT_EQ(g.scenario.transfer_ns[c], job->ctx.measured.transfer_ns[c]) << dp;
      } else {
        changed += g.scenario.transfer_ns[c] != job->ctx.measured.transfer_ns[c] ? 1 : 0;
      }
    }
    EXPECT_GT(changed, 0u) << dp;
    // Every re-costed node says why: ranks, and nothing else; all are collective members.
    for (uint32_t n = 0; n < g.graph.nodes.size(); ++n) {
      const uint8_t why = r->cost.node_reasons[n];
      if (why == 0) continue;
      EXPECT_EQ(why, whatif::kChangedRanks) << dp;
      EXPECT_EQ(g.graph.nodes[n].work, WorkClass::kCommunication) << dp;
    }
    EXPECT_EQ(r->recosted, r->recosted_by_reason[2]) << dp;
    EXPECT_GE(r->estimate.iteration_ns, r->base.iteration_ns) << dp;
  }
}

// Across nodes (dp=16 puts the data-parallel ranks on 4 nodes), a faster network is never
// slower, and the same network is the same.
TEST(EstimateConsistencyTest, AFasterNetworkIsNeverSlower) {
  TempDir dir;
  ASSERT_FALSE(lumos::testing::WriteGptJob(dir.path()).empty());
  auto job = Prepare(dir.path());
  ASSERT_NE(job, nullptr);
  int64_t previous = INT64_MAX;
  for (const char* net : {"ib100", "ib200", "ib400", "ib800"}) {
    const EstimateResult r = Estimated(*job, std::string("dp=16,net=") + net);
    EXPECT_LE(r.estimate.iteration_ns, previous) << net;
    previous = r.estimate.iteration_ns;
  }
  for (const char* gbps : {"100", "400", "1600"}) {
    const EstimateResult r = Estimated(*job, std::string("dp=16,net_gbps=") + gbps);
    EXPECT_GT(r.estimate.iteration_ns, 0) << gbps;
  }
  EXPECT_LE(Estimated(*job, "dp=16,net_gbps=1600").estimate.iteration_ns,
            Estimated(*job, "dp=16,net_gbps=100").estimate.iteration_ns);
}

// The real example (DLRM, 8 V100s): another GPU re-costs every kernel; nothing the trace does
// not show (layers) can be asked for.
TEST(EstimateRealTraceTest, TheExampleOnAnotherGpu) {
  auto job = Prepare(Example());
  ASSERT_NE(job, nullptr);
  const EstimateResult r = Estimated(*job, "gpu=H100-SXM5-80GB");
  EXPECT_LT(r.estimate.iteration_ns, r.base.iteration_ns);
  EXPECT_EQ(r.estimate.basis_ns[static_cast<int>(whatif::Basis::kMeasured)], 0);
  auto layers = RunEstimate(job->ctx, Parse("layers=8"));
  ASSERT_FALSE(layers.ok());
  EXPECT_NE(layers.status().message().find("--set layers"), std::string::npos)
      << layers.status().message();
}

std::string Estimate(const std::string& input, const std::string& args) {
  return LumosModelBinary() + " estimate " + input + " " + args;
}

TEST(EstimateCommandTest, TextJsonSweepAndTimeline) {
  TempDir dir;
  ASSERT_FALSE(lumos::testing::WriteGptJob(dir.File("job")).empty());
  const auto text = RunCommand(Estimate(dir.File("job"), "--set layers=4,gpu=H200-SXM-141GB"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.err, "");
  for (const char* part :
       {"iteration time", "tokens/s", "MFU", "exposed communication", "critical path",
        "by kernel class", "rests on", "memory per GPU", "assumed:"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
  }
  const auto json = RunCommand(Estimate(dir.File("job"), "--set layers=4 --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json.out).get(doc), simdjson::SUCCESS) << json.out;
  EXPECT_EQ(int64_t(doc["estimate"]["setup"]["layers"]), 4);
  EXPECT_GT(int64_t(doc["estimate"]["estimate"]["iteration_ns"]), 0);
  const auto sweep =
      RunCommand(Estimate(dir.File("job"), "--sweep 'layers=2,4,8;mbs=1,2' --set dp=2"));
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  // A header, the base line, the column names, then 6 configurations, fastest first.
  std::vector<double> times;
  size_t pos = 0;
  while ((pos = sweep.out.find(" ms ", pos)) != std::string::npos) {
    size_t start = sweep.out.rfind(' ', pos - 1);
    times.push_back(std::stod(sweep.out.substr(start + 1, pos - start - 1)));
    ++pos;
  }
  ASSERT_EQ(times.size(), 6u) << sweep.out;
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end())) << sweep.out;
  const auto timeline =
      RunCommand(Estimate(dir.File("job"), "--set layers=8 --timeline " + dir.File("t.json")));
  ASSERT_EQ(timeline.exit_code, 0) << timeline.err;
  const std::string written = lumos::testing::ReadFileBytes(dir.File("t.json"));
  EXPECT_NE(written.find(" replayed\""), std::string::npos);
  EXPECT_NE(written.find(" estimated\""), std::string::npos);
}

// A `synth` copy of the real example keeps its GPU in the headers, so estimate needs no --gpu;
// --gpu names it for traces whose headers do not.
TEST(EstimateCommandTest, ASynthCopyKeepsItsGpu) {
  TempDir dir;
  const auto synth = RunCommand(LumosModelBinary() + " synth " + Example() + " -o " +
                                dir.File("s") + " --ranks 16");
  ASSERT_EQ(synth.exit_code, 0) << synth.err;
  const auto r = RunCommand(Estimate(dir.File("s"), "--set gpu=H100-SXM5-80GB"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("16 rank(s) on V100-SXM2-32GB"), std::string::npos) << r.out;
  const auto named = RunCommand(Estimate(dir.File("s"), "--gpu A100-SXM4-40GB --set dp=16"));
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("16 rank(s) on A100-SXM4-40GB"), std::string::npos) << named.out;
  const auto unknown = RunCommand(Estimate(dir.File("s"), "--gpu TPU --set dp=16"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
}

// Each bad setting: one line on stderr naming it, exit 2, nothing on stdout.
TEST(EstimateCommandTest, BadSettingsAreOneLineAndExitTwo) {
  TempDir dir;
  ASSERT_FALSE(lumos::testing::WriteGptJob(dir.File("job")).empty());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--set depth=3", "unknown key"},
      {"--set layers=many", "layers=many"},
      {"--set world=5", "world=5"},              // Not a multiple of tp x pp = 2.
      {"--set dp=3,world=8", "world"},           // 3 x tp 2 is not 8.
      {"--set hidden=1000,heads=16", "hidden"},  // 16 heads do not divide 1000.
      {"--set heads=7", "heads"},                // tp = 2 does not divide 7.
      {"--set gpu=TPU-v5", "gpu=TPU-v5"},
      {"--set cp=2", "re-partitioning"},  // Context parallelism: not estimated.
      {"--set tp=3", "tp (3) must divide heads (8)"},
      {"--set tp=4,host=2", "not estimated together with a re-partitioning"},
      {"--set layers=0", "layers=0"},
      {"--sweep 'layers=2,x'", "layers=x"},
  };
  for (const auto& [args, expected] : cases) {
    const auto r = RunCommand(Estimate(dir.File("job"), args));
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_NE(r.err.find(expected), std::string::npos) << args << "\n" << r.err;
    EXPECT_LE(std::count(r.err.begin(), r.err.end(), '\n'), 2) << args << "\n" << r.err;
  }
  // A change the trace gives no base for: DLRM has no transformer layers.
  const auto layers = RunCommand(Estimate(Example(), "--set layers=4"));
  EXPECT_EQ(layers.exit_code, 2) << layers.err;
  EXPECT_NE(layers.err.find("--set layers"), std::string::npos) << layers.err;
}

}  // namespace
}  // namespace lumos::modeler::estimate
