// Fitting the GEMM model to measured tables; see gemm_fit.h.
#include "modeler/models/gemm_fit.h"

#include <map>
#include <string>
#include <utility>

namespace lumos::modeler::models {

StatusOr<GemmModel> FitGemmTables(const std::vector<GemmTable>& tables, const SpecTable& specs) {
  GemmModel model;
  struct Group {
    const GpuSpec* gpu = nullptr;
    DType dtype = DType::kBf16;
    std::vector<GemmPoint> points;
    std::string first;  // Where the group's first row is, for errors of the fit.
  };
  // Ordered by (name, dtype): the model file does not depend on the order of the inputs.
  std::map<std::pair<std::string, int>, Group> groups;
  for (const GemmTable& table : tables) {
    for (const GemmRow& row : table.rows) {
      const GpuSpec* gpu = specs.FindGpu(row.gpu);
      if (gpu == nullptr) {
        return UnknownGpu(row.gpu, specs).WithContext(table.table->Where(row.row));
      }
      if (!(gpu->PeakFlops(row.dtype) > 0)) {
        return ErrorStatus("%s: %s has no %s peak in the specs (not supported)",
                           table.table->Where(row.row).c_str(), gpu->name.c_str(),
                           std::string(DTypeName(row.dtype)).c_str());
      }
      if (row.shape.batch != 1) {
        return ErrorStatus("%s: batch %lld: measured batched GEMMs are not fitted yet (batch 1)",
                           table.table->Where(row.row).c_str(),
                           static_cast<long long>(row.shape.batch));
      }
      Group& group = groups[{gpu->name, static_cast<int>(row.dtype)}];
      if (group.gpu == nullptr) group.first = table.table->Where(row.row);
      group.gpu = gpu;
      group.dtype = row.dtype;
      group.points.push_back(GemmPoint{row.shape, row.latency_ns});
    }
  }
  for (auto& [key, group] : groups) {
    const RooflineSpec spec{group.gpu->sms, group.gpu->PeakFlops(group.dtype),
                            group.gpu->hbm_bytes_per_s};
    StatusOr<GemmCalibration> calibration =
        GemmCalibration::Fit(group.gpu->name, group.dtype, spec, group.points);
    if (!calibration.ok()) {
      return calibration.status().WithContext(group.first + ": " + group.gpu->name + " " +
                                              std::string(DTypeName(group.dtype)));
    }
    model.Add(std::move(*calibration));
  }
  return model;
}

}  // namespace lumos::modeler::models
