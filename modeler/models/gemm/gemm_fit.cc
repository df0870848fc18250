// Fitting the GEMM model to measured tables; see gemm_fit.h.
#include "modeler/models/gemm/gemm_fit.h"

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace lumos::modeler::models {

StatusOr<GemmModel> FitGemmTables(const std::vector<GemmTable>& tables, const SpecTable& specs,
                                  const std::vector<TracedGemms>& traced,
                                  std::vector<std::string>* skipped) {
  GemmModel model;
  struct Group {
    const GpuSpec* gpu = nullptr;
    DType dtype = DType::kBf16;
    std::vector<GemmPoint> points;
    std::vector<GemmPoint> traced;  // Of traced jobs: they replace a table's row of their shape.
    std::string first;              // Where the group's first row is, for errors of the fit.
    std::string origins;            // The traced jobs.
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
  for (const TracedGemms& job : traced) {
    if (job.points.empty()) continue;
    Group& group = groups[{job.gpu->name, static_cast<int>(job.dtype)}];
    if (group.gpu == nullptr) group.first = job.origin;
    group.gpu = job.gpu;
    group.dtype = job.dtype;
    group.traced.insert(group.traced.end(), job.points.begin(), job.points.end());
    group.origins += (group.origins.empty() ? "" : ", ") + job.origin;
  }
  for (auto& [key, group] : groups) {
    if (group.points.empty()) {  // Traced only.
      std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
      for (const GemmPoint& p : group.traced) shapes.emplace(p.shape.m, p.shape.n, p.shape.k);
      if (shapes.size() < static_cast<size_t>(kSurfaceTerms)) {
        if (skipped != nullptr) {
          skipped->push_back("GEMM " + group.gpu->name + " " + std::string(DTypeName(group.dtype)) +
                             ": " + std::to_string(shapes.size()) + " traced shape(s) (" +
                             group.origins + "), fewer than the " + std::to_string(kSurfaceTerms) +
                             " the surface needs: not fitted");
        }
        continue;
      }
    }
    if (!group.traced.empty()) {
      std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
      for (const GemmPoint& p : group.traced) shapes.emplace(p.shape.m, p.shape.n, p.shape.k);
      std::erase_if(group.points, [&shapes](const GemmPoint& p) {
        return shapes.count({p.shape.m, p.shape.n, p.shape.k}) > 0;
      });
      group.points.insert(group.points.end(), group.traced.begin(), group.traced.end());
    }
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
