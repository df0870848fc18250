#include "tests/modeler/plan/plan_support.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::plan::plan_testing {

using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

ModelSpec Gpt3() {
  StatusOr<ModelSpec> spec = ParseModelSpec(kGpt3);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  return spec.ok() ? *spec : ModelSpec{};
}

const GptCosts& SharedCosts(const PlanSetup& setup) {
  static auto* const model = [] {
    TempDir dir;
    const auto fit = RunCommand(LumosModelBinary() + " costs fit " + LUMOS_SOURCE_DIR +
                                "/../shared/data/costs -o " + dir.File("costs.json"));
    EXPECT_EQ(fit.exit_code, 0) << fit.err;
    StatusOr<models::CostModel> read = models::ReadCostModel(dir.File("costs.json"));
    EXPECT_TRUE(read.ok()) << read.status().message();
    return new models::CostModel(read.ok() ? std::move(*read) : models::CostModel{});
  }();
  static auto* const by_gpu = new std::map<std::string, std::unique_ptr<GptCosts>>;
  std::unique_ptr<GptCosts>& costs = (*by_gpu)[setup.gpu->name + " " + setup.net.name];
  if (costs == nullptr) {
    StatusOr<std::unique_ptr<GptCosts>> made =
        GptCosts::Make(*setup.gpu, models::SpecTable::Builtin(), *model, &setup.net);
    EXPECT_TRUE(made.ok());
    if (made.ok()) costs = std::move(*made);
  }
  return *costs;
}

PlanSetup SetupOn(const char* gpu, const char* network) {
  PlanSetup setup;
  setup.gpu = models::SpecTable::Builtin().FindGpu(gpu);
  StatusOr<models::NetworkSpec> net = models::SpecTable::Builtin().ResolveNetwork(network);
  EXPECT_TRUE(net.ok()) << network;
  if (net.ok()) setup.net = *net;
  return setup;
}

PlanSetup H100Fp8() {
  PlanSetup setup = SetupOn("H100-SXM5-80GB", "ib400");
  setup.gemm_dtype = models::DType::kFp8;
  return setup;
}

PlanSetup A100Ib200() { return SetupOn("A100-SXM4-80GB", "ib200"); }

Layout LayoutOf(const std::string& set) {
  Layout l;
  EXPECT_TRUE(ApplyLayoutSettings(set, &l).ok()) << set;
  return l;
}

}  // namespace lumos::modeler::plan::plan_testing
