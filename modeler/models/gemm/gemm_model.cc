#include "modeler/models/gemm/gemm_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {
namespace {

constexpr int64_t kMaxDimension = int64_t{1} << 31;
constexpr double kMaxDurationNs = 1e18;

GemmShape Folded(const GemmShape& shape) {
  return GemmShape{shape.m * shape.batch, shape.n, shape.k, 1};
}

}  // namespace

Status CheckGemmShape(const GemmShape& shape) {
  const std::pair<const char*, int64_t> dims[] = {
      {"m", shape.m}, {"n", shape.n}, {"k", shape.k}, {"batch", shape.batch}};
  for (const auto& [name, value] : dims) {
    if (value <= 0)
      return ErrorStatus("%s = %lld: must be > 0", name, static_cast<long long>(value));
    if (value > kMaxDimension) {
      return ErrorStatus("%s = %lld: larger than 2^31", name, static_cast<long long>(value));
    }
  }
  const int64_t rows = shape.m * shape.batch;  // Both ≤ 2^31: no overflow.
  if (rows > kMaxDimension) {
    return ErrorStatus("m × batch = %lld: larger than 2^31", static_cast<long long>(rows));
  }
  return Status::Ok();
}

StatusOr<GemmCalibration> GemmCalibration::Fit(std::string gpu, DType dtype, RooflineSpec spec,
                                               const std::vector<GemmPoint>& points) {
  // Duplicates of a shape (two tables, or a trace's repeated kernels): their mean.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<double, int>> merged;
  for (const GemmPoint& p : points) {
    LUMOS_RETURN_IF_ERROR(CheckGemmShape(p.shape));
    auto& [sum, count] = merged[{p.shape.m, p.shape.n, p.shape.k}];
    sum += static_cast<double>(p.latency_ns);
    ++count;
  }
  std::vector<GemmPoint> unique;
  unique.reserve(merged.size());
  int64_t floor_ns = INT64_MAX;
  for (const auto& [key, value] : merged) {
    GemmPoint p;
    p.shape = GemmShape{std::get<0>(key), std::get<1>(key), std::get<2>(key), 1};
    p.latency_ns = std::llround(value.first / value.second);
    floor_ns = std::min(floor_ns, p.latency_ns);
    unique.push_back(p);
  }
  if (unique.empty()) return ErrorStatus("no measured shapes");
  // The floor: the fastest kernel measured, a launch and latency bound no shape goes below.
  std::vector<SurfaceSample> samples;
  samples.reserve(unique.size());
  for (const GemmPoint& p : unique) {
    SurfaceSample sample;
    sample.shape = p.shape;
    sample.roofline = GemmRoofline(p.shape, dtype, spec);
    sample.log_efficiency =
        std::log(sample.roofline.time_ns / WorkNs(static_cast<double>(p.latency_ns), floor_ns));
    samples.push_back(sample);
  }
  LUMOS_ASSIGN_OR_RETURN(EfficiencySurface surface, FitSurface(samples, spec.sms));
  return FromParts(std::move(gpu), dtype, spec, std::move(unique), floor_ns, surface);
}

StatusOr<GemmCalibration> GemmCalibration::FromParts(std::string gpu, DType dtype,
                                                     RooflineSpec spec,
                                                     std::vector<GemmPoint> points,
                                                     int64_t floor_ns,
                                                     const EfficiencySurface& surface) {
  if (spec.sms <= 0 || !(spec.peak_flops_per_s > 0) || !(spec.hbm_bytes_per_s > 0)) {
    return ErrorStatus("calibration %s %s: sms, peak and HBM bandwidth must be > 0", gpu.c_str(),
                       std::string(DTypeName(dtype)).c_str());
  }
  if (floor_ns <= 0) return ErrorStatus("calibration %s: floor must be > 0", gpu.c_str());
  GemmCalibration c;
  c.gpu_ = std::move(gpu);
  c.dtype_ = dtype;
  c.spec_ = spec;
  c.points_ = std::move(points);
  c.floor_ns_ = floor_ns;
  c.surface_ = surface;
  LUMOS_RETURN_IF_ERROR(c.Index());
  return c;
}

Status GemmCalibration::Index() {
  std::vector<GemmGrid::Cell> cells;
  cells.reserve(points_.size());
  for (const GemmPoint& p : points_) {
    LUMOS_RETURN_IF_ERROR(CheckGemmShape(p.shape));
    if (p.latency_ns <= 0) return ErrorStatus("a latency must be > 0");
    const Roofline r = GemmRoofline(p.shape, dtype_, spec_);
    cells.push_back(
        GemmGrid::Cell{p.shape,
                       std::log(r.time_ns / WorkNs(static_cast<double>(p.latency_ns), floor_ns_)) -
                           surface_.LogEfficiency(p.shape, r, spec_.sms),
                       p.latency_ns});
  }
  LUMOS_ASSIGN_OR_RETURN(grid_, GemmGrid::Build(cells));
  return Status::Ok();
}

GemmCalibration::Efficiency GemmCalibration::EfficiencyOf(const GemmShape& shape,
                                                          bool surface_only) const {
  Efficiency e;
  if (!surface_only) {
    const GemmGrid::Lookup found = grid_.Find(shape.m, shape.n, shape.k);
    if (found.hit != GemmGrid::Hit::kOutside) {
      e.hit = found.hit;
      e.log_efficiency =
          found.log_efficiency +
          surface_.LogEfficiency(shape, GemmRoofline(shape, dtype_, spec_), spec_.sms);
      e.latency_ns = found.latency_ns;
      return e;
    }
  }
  e.log_efficiency = surface_.LogEfficiency(shape, GemmRoofline(shape, dtype_, spec_), spec_.sms);
  return e;
}

int GemmModel::Select(const GpuSpec& gpu, DType dtype) const {
  int best = -1;
  std::pair<int, double> best_score{4, 0};
  for (size_t i = 0; i < calibrations_.size(); ++i) {
    const GemmCalibration& c = calibrations_[i];
    const bool same_gpu = c.gpu() == gpu.name;
    const bool same_dtype = c.dtype() == dtype;
    const int rank = same_gpu ? (same_dtype ? 0 : 1) : (same_dtype ? 2 : 3);
    // Among equals: the nearest peak (in ratio) to the query's.
    const double peak = gpu.PeakFlops(dtype);
    const double distance = peak > 0 ? std::fabs(std::log(c.spec().peak_flops_per_s / peak)) : 0.0;
    const std::pair<int, double> score{rank, distance};
    if (score < best_score) {
      best_score = score;
      best = static_cast<int>(i);
    }
  }
  return best;
}

StatusOr<Prediction> GemmModel::Predict(const KernelQuery& query, const Options& options) const {
  LUMOS_RETURN_IF_ERROR(CheckGemmShape(query.gemm));
  const GpuSpec& gpu = *query.gpu;
  Prediction prediction;
  prediction.batch_folded = query.gemm.batch > 1;
  prediction.calibration = Select(gpu, query.dtype);
  const GemmCalibration* c =
      prediction.calibration >= 0 ? &calibrations_[prediction.calibration] : nullptr;
  const bool own = c != nullptr && c->gpu() == gpu.name && c->dtype() == query.dtype;
  // The query GPU's roofline; the calibration's own figures when it is that GPU and dtype.
  RooflineSpec target{gpu.sms, gpu.PeakFlops(query.dtype), gpu.hbm_bytes_per_s};
  if (own) target = c->spec();
  if (!(target.peak_flops_per_s > 0)) {
    return ErrorStatus("%s has no %s peak in the specs (not supported)", gpu.name.c_str(),
                       std::string(DTypeName(query.dtype)).c_str());
  }
  const Roofline roofline = GemmRoofline(query.gemm, query.dtype, target);
  double ns = 0;
  if (c == nullptr) {
    prediction.source = SourceKind::kRoofline;
    ns = LatencyNs(roofline.time_ns, kDefaultFloorNs);
  } else {
    const GemmCalibration::Efficiency e = c->EfficiencyOf(Folded(query.gemm), options.surface_only);
    switch (e.hit) {
      case GemmGrid::Hit::kMeasured:
        // A batch folded into m rests on the measurement of another shape: carried over.
        prediction.source =
            own && !prediction.batch_folded ? SourceKind::kMeasured : SourceKind::kScaledMeasured;
        break;
      case GemmGrid::Hit::kInterpolated:
        prediction.source = own ? SourceKind::kInterpolated : SourceKind::kScaledInterpolated;
        break;
      case GemmGrid::Hit::kOutside:
        prediction.source = SourceKind::kSurface;
        break;
    }
    if (prediction.source == SourceKind::kMeasured) {
      prediction.duration_ns = e.latency_ns;
      return prediction;
    }
    ns = LatencyNs(roofline.time_ns * std::exp(-e.log_efficiency),
                   static_cast<double>(c->floor_ns()));
  }
  if (!(ns < kMaxDurationNs)) {
    return ErrorStatus("%lld×%lld×%lld×%lld: a duration beyond 10^18 ns",
                       static_cast<long long>(query.gemm.m), static_cast<long long>(query.gemm.n),
                       static_cast<long long>(query.gemm.k),
                       static_cast<long long>(query.gemm.batch));
  }
  prediction.duration_ns = std::max<int64_t>(std::llround(ns), 1);
  return prediction;
}

std::string GemmModel::SourceText(const Prediction& prediction) const {
  std::string text;
  const GemmCalibration* c =
      prediction.calibration >= 0 && prediction.calibration < static_cast<int>(calibrations_.size())
          ? &calibrations_[prediction.calibration]
          : nullptr;
  const std::string from =
      c != nullptr ? c->gpu() + " " + std::string(DTypeName(c->dtype())) : std::string();
  switch (prediction.source) {
    case SourceKind::kMeasured:
      text = "measured";
      break;
    case SourceKind::kInterpolated:
      text = "interpolated";
      break;
    case SourceKind::kScaledMeasured:
      text = "scaled from " + from + " measured";
      break;
    case SourceKind::kScaledInterpolated:
      text = "scaled from " + from + " interpolated";
      break;
    case SourceKind::kSurface:
      text = "surface fitted on " + from;
      break;
    case SourceKind::kRoofline:
      text = "roofline only";
      break;
    case SourceKind::kClassFit:  // The non-GEMM kernel model's (kernel_model.h); never a GEMM's.
    case SourceKind::kScaledKernel:
      text = "not a GEMM model source";
      break;
  }
  if (prediction.batch_folded) text += " (batch folded into m)";
  return text;
}

}  // namespace lumos::modeler::models
