// Test support for modeler/plan's tests: GPT-3's spec, the cost model of the shared measured
// tables on a GPU and network, the setups the tests run on, a layout from its settings.
#pragma once

#include <string>

#include "modeler/plan/layout.h"
#include "modeler/plan/model_spec.h"
#include "modeler/plan/pass_work.h"
#include "modeler/synth/gpt_costs.h"

namespace lumos::modeler::plan::plan_testing {

inline constexpr const char* kGpt3 = "gpt:layers=96,hidden=12288,heads=96,seq=2048,vocab=51200";

ModelSpec Gpt3();

// The cost model of the shared measured tables (../shared/data/costs), fitted once, on each GPU
// and network asked for.
const GptCosts& SharedCosts(const PlanSetup& setup);

// A GPU of the specs on a network of them.
PlanSetup SetupOn(const char* gpu, const char* network);
// The H100 with FP8 GEMMs on ib400.
PlanSetup H100Fp8();
// Selene's: A100-SXM4-80GB, 200 Gbit/s InfiniBand a GPU (Narayanan et al., SC'21).
PlanSetup A100Ib200();

// The layout `set` gives (ApplyLayoutSettings), over the defaults.
Layout LayoutOf(const std::string& set);

}  // namespace lumos::modeler::plan::plan_testing
