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

#include "tests/testing/run_command.h"

namespace lumos::modeler::estimate {
namespace {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;

std::string Data() { return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/h200-pytorch"; }

constexpr const char* kBase =
    "layers=4,hidden=1024,ffn=4096,heads=16,seq=1024,mbs=4,micro_batches=1,world=1,dp=1,tp=1,pp=1";

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
};

Estimated EstimateFromBase(const std::string& set) {
  const auto run = RunCommand(LumosModelBinary() + " estimate " + Data() +
                              "/est-base.pb.zst --gpu H200-SXM-141GB --iteration '^step$' --base " +
                              kBase + " --set " + set + " --json");
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
  return out;
}

// The base replayed, iterations as the loop timed them (to the next step, the warm-up left out),
// is the loop's own step under the agent (steps.csv est-base: 15.321 ms).
TEST(EstimateRealH200Test, TheBaseIterationIsTheLoopsMeasuredStep) {
  const Estimated e = EstimateFromBase("layers=4");
  EXPECT_NEAR(e.base_ms, Steps().at("est-base"), 0.03 * Steps().at("est-base"));
  EXPECT_NEAR(e.estimate_ms, e.base_ms, 0.005 * e.base_ms);  // --set of its own value.
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
  for (const auto& [variant, set] :
       std::map<std::string, std::string>{{"layers", "layers=8"},
                                          {"width", "hidden=2048,ffn=8192"},
                                          {"seq", "seq=2048"},
                                          {"batch", "mbs=8"}}) {
    const Estimated e = EstimateFromBase(set);
    const double measured = steps.at("est-" + variant + "-plain") / base;
    const double error = 100 * std::fabs(e.estimate_ms / e.base_ms / measured - 1);
    std::printf("estimate %s: estimated ratio %.3f, plain runs %.3f, |error| %.1f %%\n",
                variant.c_str(), e.estimate_ms / e.base_ms, measured, error);
    sum += error;
    max = std::max(max, error);
    ++count;
  }
  // Measured 2026-12-05 (a469497 + parameters by layer weights): mean 10.2 %, max 21.7 % (width:
  // the base trace's host time carries the old agent's overhead, +40 % on this launch-bound
  // loop, which the plain runs do not have).
  EXPECT_LE(sum / count, 11.0);
  EXPECT_LE(max, 23.0);
}

}  // namespace
}  // namespace lumos::modeler::estimate
