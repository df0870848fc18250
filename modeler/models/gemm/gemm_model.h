// Design: the GEMM kernel model. A GemmCalibration is what was measured on one GPU in one
// dtype (a table's rows, later a trace's GEMMs): the points, their floor (the fastest point:
// the launch/latency floor) and the efficiency surface fitted to them (gemm_roofline.h). A
// GemmModel holds calibrations and answers queries, each from the calibration that fits it
// best: the same GPU and dtype; else the same GPU in another dtype; else another GPU in the same
// dtype (the one whose peak is nearest); else any. On that calibration the efficiency of the
// query's shape is its measurement, the surface plus the measured neighbours' residuals against
// it, interpolated (gemm_grid.h), or the surface alone; the duration is then the query GPU's
// roofline for the query's dtype at that efficiency, above the calibration's floor: the efficiency
// carried over through both GPUs' rooflines. A measured point on its own GPU and dtype is returned
// as measured, exactly. With no calibration at all the roofline is used alone, above
// kDefaultFloorNs. A batched GEMM is looked up as one of m·batch rows (the tables have no batch
// column). Errors (Status): an impossible shape (a dimension ≤ 0 or above 2^31, or a duration
// beyond 10^18 ns) and a dtype the query's GPU has no peak for. Threading: built by one thread;
// Predict() is const, allocates nothing and may be called from any number of threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/gemm/gemm_grid.h"
#include "modeler/models/gemm/gemm_roofline.h"
#include "modeler/models/hardware/dtype.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

struct GemmPoint {
  GemmShape shape;  // batch 1.
  int64_t latency_ns = 0;
};

class GemmCalibration {
 public:
  // Fits the floor and the surface to `points` (duplicates of a shape are averaged).
  static StatusOr<GemmCalibration> Fit(std::string gpu, DType dtype, RooflineSpec spec,
                                       const std::vector<GemmPoint>& points);
  // As read back from a model file: the fitted parts as they were written.
  static StatusOr<GemmCalibration> FromParts(std::string gpu, DType dtype, RooflineSpec spec,
                                             std::vector<GemmPoint> points, int64_t floor_ns,
                                             const EfficiencySurface& surface);

  const std::string& gpu() const { return gpu_; }
  DType dtype() const { return dtype_; }
  const RooflineSpec& spec() const { return spec_; }
  const std::vector<GemmPoint>& points() const { return points_; }
  int64_t floor_ns() const { return floor_ns_; }
  const EfficiencySurface& surface() const { return surface_; }

  struct Efficiency {
    GemmGrid::Hit hit = GemmGrid::Hit::kOutside;  // kOutside: from the surface.
    double log_efficiency = 0;
    int64_t latency_ns = 0;  // kMeasured: the measurement.
  };
  // `surface_only`: ignore the points (the validation's ablation).
  Efficiency EfficiencyOf(const GemmShape& shape, bool surface_only) const;

 private:
  GemmCalibration() = default;
  Status Index();

  std::string gpu_;
  DType dtype_ = DType::kBf16;
  RooflineSpec spec_;
  std::vector<GemmPoint> points_;
  int64_t floor_ns_ = 0;
  EfficiencySurface surface_;
  GemmGrid grid_;
};

class GemmModel {
 public:
  static constexpr int64_t kDefaultFloorNs = 2500;  // The floor of both measured tables, ~2.5 µs.

  void Add(GemmCalibration calibration) { calibrations_.push_back(std::move(calibration)); }
  const std::vector<GemmCalibration>& calibrations() const { return calibrations_; }

  struct Options {
    bool surface_only = false;  // Ignore measured points (validation).
  };
  StatusOr<Prediction> Predict(const KernelQuery& query) const { return Predict(query, {}); }
  StatusOr<Prediction> Predict(const KernelQuery& query, const Options& options) const;

  // The calibration a query on `gpu` in `dtype` is answered from; -1: none.
  int Select(const GpuSpec& gpu, DType dtype) const;
  // "measured", "interpolated", "scaled from A100-SXM4-80GB bf16 measured", ..., the `source`
  // column of `costs predict`.
  std::string SourceText(const Prediction& prediction) const;

 private:
  std::vector<GemmCalibration> calibrations_;
};

// Why `shape` cannot be a GEMM, or OK.
Status CheckGemmShape(const GemmShape& shape);

}  // namespace lumos::modeler::models
