// `lumos-model estimate` against real runs (issue 24): the PyTorch loop of
// ../shared/data/traces/h200-pytorch traced on an H200 at a base size and measured at four
// variants (steps.csv). The estimate reads only the base trace (and the shared tables its cost
// models carry); steps.csv is what it is scored on, never an input. The targets (mean
// |error| <= 3 %, each <= 6 %) are not met yet: the bounds below are today's measured errors
// (scripts/validate-estimate-real.sh, docs/validation.md) held as a floor that work on the
// estimator may only lower.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "modeler/graph/job.h"
#include "tests/testing/run_command.h"

namespace lumos::modeler::estimate {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;

std::string Data() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch"; }

constexpr const char* kBase =
    "layers=4,hidden=1024,ffn=4096,heads=16,seq=1024,mbs=4,micro_batches=1,world=1,dp=1,tp=1,pp=1";

// The loop's first 10 steps are its warm-up, launched without a synchronize between them;
// steps.csv times steps 11-40, and so do the figures here.
constexpr const char* kMeasuredSteps = "--iteration '^step$' --iterations 11-";

// The four variants of the set, each as --set of the base.
const std::map<std::string, std::string>& Variants() {
  static const auto* const variants =
      new std::map<std::string, std::string>{{"layers", "layers=8"},
                                             {"width", "hidden=2048,ffn=8192"},
                                             {"seq", "seq=2048"},
                                             {"batch", "mbs=8"}};
  return *variants;
}

// steps.csv: run name -> the loop's median step (ms).
std::map<std::string, double> Steps() {
  std::ifstream in(Data() + "/steps.csv");
  std::map<std::string, double> steps;
  std::string line;
  std::getline(in, line);  // Header: run,median_ms,...
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string run, median;
    std::getline(row, run, ',');
    std::getline(row, median, ',');
    steps[run] = std::stod(median);
  }
  return steps;
}

struct Estimated {
  double base_ms = 0, estimate_ms = 0;
  double base_optimizer_ns = 0, estimate_optimizer_ns = 0;
  double estimate_attention_ns = 0;
  double estimate_elementwise_ns = 0;
};

// `file` (a trace of the set) estimated at `set`, its own setup given as `base`.
Estimated EstimateFrom(const std::string& file, const std::string& base, const std::string& set) {
  const auto run = RunCommand(LumosModelBinary() + " estimate " + Data() + "/" + file +
                              " --gpu H200-SXM-141GB " + kMeasuredSteps + " --base " + base +
                              " --set " + set + " --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  Estimated out;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(run.out).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << run.out;
    return out;
  }
  const auto e = doc["estimate"];
  out.base_ms = static_cast<double>(int64_t(e["base"]["iteration_ns"])) / 1e6;
  out.estimate_ms = static_cast<double>(int64_t(e["estimate"]["iteration_ns"])) / 1e6;
  out.base_optimizer_ns = static_cast<double>(int64_t(e["base"]["kernel_classes_ns"]["optimizer"]));
  out.estimate_optimizer_ns =
      static_cast<double>(int64_t(e["estimate"]["kernel_classes_ns"]["optimizer"]));
  out.estimate_attention_ns =
      static_cast<double>(int64_t(e["estimate"]["kernel_classes_ns"]["attention"]));
  out.estimate_elementwise_ns =
      static_cast<double>(int64_t(e["estimate"]["kernel_classes_ns"]["elementwise"]));
  return out;
}

Estimated EstimateFromBase(const std::string& set) {
  return EstimateFrom("est-base.pb.zst", kBase, set);
}

// The base replayed, iterations as the loop timed them (to the next step, the warm-up left out),
// is the loop's own step under the agent (steps.csv est-base: 15.321 ms).
TEST(EstimateRealH200Test, TheBaseIterationIsTheLoopsMeasuredStep) {
  const Estimated e = EstimateFromBase("layers=4");
  EXPECT_NEAR(e.base_ms, Steps().at("est-base"), 0.03 * Steps().at("est-base"));
  EXPECT_NEAR(e.estimate_ms, e.base_ms, 0.005 * e.base_ms);  // --set of its own value.
}

// --set host=F: the host's own work x F. The loop is launch-bound at this size: half the host
// time makes the step well under two thirds as long; the same host keeps it.
TEST(EstimateRealH200Test, AFasterHostShortensALaunchBoundStep) {
  const Estimated same = EstimateFromBase("host=1");
  EXPECT_NEAR(same.estimate_ms, same.base_ms, 0.005 * same.base_ms);
  const Estimated faster = EstimateFromBase("host=0.5");
  EXPECT_LT(faster.estimate_ms, 0.65 * faster.base_ms);
  EXPECT_GT(faster.estimate_ms, 0.45 * faster.base_ms);
}

// Width x2 quadruples the parameters (4 h^2 + 2 h ffn per layer); the loop has no embedding, so
// the vocabulary is unknown and the layers' own weights are the count. The optimizer's kernels
// (AdamW over every parameter) follow: the traced width x2 run spent 3.83 times the base's
// optimizer GPU time (4.29 against 1.12 ms per step).
TEST(EstimateRealH200Test, TheOptimizerScalesWithTheParameters) {
  const Estimated e = EstimateFromBase("hidden=2048,ffn=8192");
  ASSERT_GT(e.base_optimizer_ns, 0);
  EXPECT_NEAR(e.estimate_optimizer_ns / e.base_optimizer_ns, 4.0, 0.4);
}

// Each variant from the base alone against the plain runs' ratio (steps.csv `*-plain`).
TEST(EstimateRealH200Test, VariantsFromTheBaseAloneAgainstThePlainRuns) {
  const std::map<std::string, double> steps = Steps();
  const double base = steps.at("est-base-plain");
  double sum = 0, max = 0;
  int count = 0;
  for (const auto& [variant, set] : Variants()) {
    const Estimated e = EstimateFromBase(set);
    const double measured = steps.at("est-" + variant + "-plain") / base;
    const double error = 100 * std::fabs(e.estimate_ms / e.base_ms / measured - 1);
    std::printf("estimate %s: estimated ratio %.3f, plain runs %.3f, |error| %.1f %%\n",
                variant.c_str(), e.estimate_ms / e.base_ms, measured, error);
    sum += error;
    max = std::max(max, error);
    ++count;
  }
  // Measured 2026-12-05 (scripts/validate-estimate-real.sh): mean 18.4 %, max 42.9 % (layers:
  // the estimate doubles every layer's host work, backward's four included, at the base run's
  // host pace: 1.864, and 1.788 at the layers run's own pace against the traced runs' 1.751; the
  // plain runs' ratio, 1.304, mixes the agent's per-call overhead with a host that ran at
  // another pace that day: the same program's plain runs differ by up to 46 % from one run to
  // the next, small-plain-r1..r3). A floor, not a target: these plain runs have no trace to
  // measure their host's pace by.
  EXPECT_LE(sum / count, 19.0);
  EXPECT_LE(max, 44.0);
}

// TO's host time over FROM's for the calls both runs make in the same order (`diff`'s host
// pace): the host's own speed that day, from the traces, not from their step times.
double HostPace(const std::string& from, const std::string& to) {
  const auto run = RunCommand(LumosModelBinary() + " diff " + Data() + "/" + from + ".pb.zst " +
                              Data() + "/" + to + ".pb.zst " + kMeasuredSteps + " --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(run.out).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << run.out;
    return 1;
  }
  return double(doc["host_pace"]["ratio"]);
}

// Each variant from the base alone, with the host's pace of the variant's run (every variant
// ran on a host 5-23 % faster per call than the base's), against the traced runs: the same
// agent, the same conditions. This is the target (mean <= 3 %, each <= 6 %), met in
// this direction; the reverse (from each variant's trace) is in docs/validation.md.
TEST(EstimateRealH200Test, VariantsAtTheirHostPaceAgainstTheTracedRuns) {
  const std::map<std::string, double> steps = Steps();
  double sum = 0, max = 0;
  int count = 0;
  for (const auto& [variant, set] : Variants()) {
    const double pace = HostPace("est-base", "est-" + variant);
    EXPECT_GT(pace, 0.5);
    EXPECT_LT(pace, 1.2);
    const Estimated e = EstimateFromBase(set + ",host=" + std::to_string(pace));
    const double measured = steps.at("est-" + variant) / steps.at("est-base");
    const double error = 100 * std::fabs(e.estimate_ms / e.base_ms / measured - 1);
    std::printf(
        "estimate %s at host pace %.3f: estimated ratio %.3f, traced runs %.3f, "
        "|error| %.1f %%\n",
        variant.c_str(), pace, e.estimate_ms / e.base_ms, measured, error);
    sum += error;
    max = std::max(max, error);
    ++count;
  }
  // Measured 2026-12-05: layers +2.1 %, width +0.2 %, seq -4.0 %, batch +0.7 %.
  EXPECT_LE(sum / count, 3.0);
  EXPECT_LE(max, 6.0);
}

// A variant's own GPU time per step in one kernel class (replay of its trace, steps 11-40).
double MeasuredClassNs(const std::string& run, const std::string& cls) {
  const auto replay = RunCommand(LumosModelBinary() + " replay " + Data() + "/" + run + ".pb.zst " +
                                 kMeasuredSteps + " --json");
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(replay.out).get(doc) != simdjson::SUCCESS) {
    ADD_FAILURE() << replay.out.substr(0, 500);
    return 0;
  }
  const auto iterations = static_cast<double>(simdjson::dom::array(doc["iterations"]).size());
  for (simdjson::dom::element row : simdjson::dom::array(doc["gpu_time_by_class"]["job"])) {
    if (std::string_view(row["class"]) == cls) {
      return static_cast<double>(int64_t(row["measured_ns"])) / iterations;
    }
  }
  return 0;
}

// Fused attention kernels re-costed by their work, from the measured setup's problem (4 b h
// s^2 d FLOPs forward, 2.5 x backward) on the roofline from their own efficiency, which grows
// with the problem: against each variant's own attention time (linear in the FLOPs, as before:
// width +39 %, seq +36 %, batch +14 %). Width's head dim x2 is the largest error left: the
// softmax's exponentials do not grow with the head dim, the matrix products do.
TEST(EstimateRealH200Test, AttentionFollowsItsWorkAndItsEfficiency) {
  for (const auto& [variant, bound] :
       std::map<std::string, double>{{"seq", 0.10}, {"batch", 0.08}, {"width", 0.33}}) {
    const double estimated = EstimateFromBase(Variants().at(variant)).estimate_attention_ns;
    ASSERT_GT(estimated, 0);
    const double measured = MeasuredClassNs("est-" + variant, "attention");
    ASSERT_GT(measured, 0);
    std::printf("attention %s: estimated %.3f ms, measured %.3f ms (%+.1f %%)\n", variant.c_str(),
                estimated / 1e6, measured / 1e6, 100 * (estimated / measured - 1));
    EXPECT_NEAR(estimated / measured, 1.0, bound) << variant;
  }
}

// Elementwise kernels by the tensor they touch (modeler/estimate/tensor_work.h): the weights'
// casts before their GEMMs and the weight gradients' copies after theirs follow the parameters
// (width x2: x4; seq, batch x2: x1), the rest the activations. Against each variant's own
// elementwise time; with one activations factor for all they were width -12.9 %, seq +5.6 %,
// batch +5.5 %.
TEST(EstimateRealH200Test, ElementwiseKernelsFollowTheirTensors) {
  for (const std::string variant : {"width", "seq", "batch"}) {
    const double estimated = EstimateFromBase(Variants().at(variant)).estimate_elementwise_ns;
    const double measured = MeasuredClassNs("est-" + variant, "elementwise");
    ASSERT_GT(measured, 0);
    std::printf("elementwise %s: estimated %.3f ms, measured %.3f ms (%+.1f %%)\n", variant.c_str(),
                estimated / 1e6, measured / 1e6, 100 * (estimated / measured - 1));
    EXPECT_NEAR(estimated / measured, 1.0, 0.05) << variant;
  }
}

// The set's GPU-bound size (gpt-lumos: width and batch x2 of the base, two runs 0.2 % apart)
// with est-base and est-width, both ways, raw: where the host's pace barely moves the step,
// the estimate needs no host correction (scripts/validate-estimate-real.sh's second table:
// +5.8, -3.5, -0.5, +5.1 %). Held at the per-figure bound, 6 %.
TEST(EstimateRealH200Test, TheGpuBoundRunBothWaysWithoutAHostCorrection) {
  const std::map<std::string, double> steps = Steps();
  const double gpt = (steps.at("gpt-lumos-r1") + steps.at("gpt-lumos-r2")) / 2;
  const std::string width =
      "layers=4,hidden=2048,ffn=8192,heads=16,seq=1024,mbs=4,"
      "micro_batches=1,world=1,dp=1,tp=1,pp=1";
  const std::string gpt_setup =
      "layers=4,hidden=2048,ffn=8192,heads=16,seq=1024,mbs=8,"
      "micro_batches=1,world=1,dp=1,tp=1,pp=1";
  struct Pair {
    std::string file, base, set;
    double truth;  // Traced step ratio, target over source.
  };
  const std::vector<Pair> pairs = {
      {"est-base.pb.zst", kBase, "hidden=2048,ffn=8192,mbs=8", gpt / steps.at("est-base")},
      {"gpt-lumos.pb.zst", gpt_setup, "hidden=1024,ffn=4096,mbs=4", steps.at("est-base") / gpt},
      {"est-width.pb.zst", width, "mbs=8", gpt / steps.at("est-width")},
      {"gpt-lumos.pb.zst", gpt_setup, "mbs=4", steps.at("est-width") / gpt}};
  for (const Pair& p : pairs) {
    const Estimated e = EstimateFrom(p.file, p.base, p.set);
    ASSERT_GT(e.base_ms, 0);
    const double ratio = e.estimate_ms / e.base_ms;
    std::printf("%s --set %s: estimated ratio %.3f, traced %.3f (%+.1f %%)\n", p.file.c_str(),
                p.set.c_str(), ratio, p.truth, 100 * (ratio / p.truth - 1));
    EXPECT_NEAR(ratio / p.truth, 1.0, 0.06) << p.file << " " << p.set;
  }
}

// Multi-tensor optimizer launches (AdamW's foreach ops, each in launches of at most 320 blocks)
// in a variant's own trace, per step: what the estimate's launches are checked against.
double MultiTensorLaunchesPerStep(const std::string& run) {
  StatusOr<Job> job = LoadJob({Data() + "/" + run + ".pb.zst"});
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return 0;
  size_t launches = 0;
  for (const schema::KernelEvent& k : job->ranks[0].kernels) {
    launches += k.name.find("multi_tensor_apply_kernel") != std::string_view::npos ? 1 : 0;
  }
  return static_cast<double>(launches) / 40;  // Every run of the set did 40 steps.
}

// The estimate's launches per step, from its note "multi-tensor optimizer launches follow the
// parameters: A -> B over N ops" (all 40 steps of the trace).
double EstimatedLaunchesPerStep(const std::string& set) {
  const auto run = RunCommand(LumosModelBinary() + " estimate " + Data() +
                              "/est-base.pb.zst --gpu H200-SXM-141GB " + kMeasuredSteps +
                              " --base " + kBase + " --set " + set + " --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::string marker = "multi-tensor optimizer launches follow the parameters: ";
  const size_t at = run.out.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no launch note: " << run.out.substr(0, 2000);
    return 0;
  }
  const size_t arrow = run.out.find(" -> ", at);
  return std::stod(run.out.substr(arrow + 4)) / 40;
}

// The base's 8 ops launch 3 times each (24 a step). Layers x2 doubles the parameters: the
// traced est-layers run launched 48 a step, and the estimate 48. Width x2 quadruples them: the
// traced run launched 80 (10 per op), the estimate 88 (11: 802 blocks x 4 over 320 a launch;
// the real ops' blocks grew a little less, the biases and norms only x2).
TEST(EstimateRealH200Test, OptimizerLaunchesFollowTheParameters) {
  EXPECT_DOUBLE_EQ(MultiTensorLaunchesPerStep("est-base"), 24);
  EXPECT_DOUBLE_EQ(EstimatedLaunchesPerStep("layers=8"), MultiTensorLaunchesPerStep("est-layers"));
  const double width = MultiTensorLaunchesPerStep("est-width");
  EXPECT_DOUBLE_EQ(width, 80);
  EXPECT_NEAR(EstimatedLaunchesPerStep("hidden=2048,ffn=8192"), width, 0.15 * width);
}

}  // namespace
}  // namespace lumos::modeler::estimate
