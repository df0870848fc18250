// Design: a fitted cost model as `costs fit` writes it and `costs predict` (later `estimate`)
// reads it back: the GEMM calibrations (one per GPU and dtype found in the inputs), the
// collective calibrations (one per GPU, collective_costs.h) and the non-GEMM kernel calibrations
// (one per GPU and key, kernel_model.h, under "kernels" as kernel_model_json.h writes them). The
// file is JSON, versioned (kCostModelVersion; a reader refuses a newer version and reads every
// older one: version 1 files hold no collectives, versions 1 and 2 no kernels), documented in
// modeler/models/README.md; the same inputs give byte-identical files. Fitting takes measured
// tables (cost_table.h); each row's GPU is looked up in the specs (hardware_specs.h), whose figures
// for that GPU (roofline, fabric) are written into the model, so a model file answers the same way
// whatever specs file predict is given later. Threading: no shared state.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/gemm/gemm_fit.h"
#include "modeler/models/gemm/gemm_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_model.h"
#include "modeler/models/query/cost_table.h"

namespace lumos::modeler::models {

// 1: GEMM calibrations; 2: collective calibrations too; 3: non-GEMM kernel calibrations too.
inline constexpr int kCostModelVersion = 3;
inline constexpr const char kCostModelFormat[] = "lumos-cost-model";

struct CostModel {
  std::vector<std::string> inputs;  // What it was fitted from: tables, then traced jobs.
  GemmModel gemm;
  std::vector<CollectiveCalibration> collectives;  // By GPU name.
  KernelModel kernels;  // By GPU name, then key (KeyName); none: every query is roofline only.
};

// The GEMM model of `tables` and traced jobs' GEMMs (gemm_fit.h), the tables named as inputs.
StatusOr<CostModel> FitCostModel(const std::vector<GemmTable>& tables, const SpecTable& specs,
                                 const std::vector<TracedGemms>& traced = {},
                                 std::vector<std::string>* skipped = nullptr);

// The model file's text.
std::string CostModelJson(const CostModel& model);
// Reads a model file; errors name the file and the element.
StatusOr<CostModel> ReadCostModel(const std::string& path);
StatusOr<CostModel> ParseCostModel(std::string_view json, const std::string& path);

}  // namespace lumos::modeler::models
