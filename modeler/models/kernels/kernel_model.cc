#include "modeler/models/kernels/kernel_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler::models {
namespace {

constexpr double kMaxDurationNs = 1e18;
// A kernel's own floor is at most this share of its measured time, so that its work part
// sqrt(t² − floor²) stays ≥ t/100: a kernel measured at or below its class's floor is taken to
// do 1 % of its time's work (its time says only that the work is small; the GEMM model's
// WorkNs keeps t/10, but a 2 µs copy at the floor scaled 1000× is nowhere near 200 µs).
const double kFloorShare = std::sqrt(1 - 1e-4);

constexpr std::array<const char*, kCopyKindCount> kCopyNames = {"-",    "HtoD", "DtoH",
                                                                "DtoD", "PtoP", "HtoH"};

bool Finite(double x) { return std::isfinite(x); }

Status CheckWork(const KernelWork& work) {
  if (!Finite(work.flops) || !Finite(work.bytes) || work.flops < 0 || work.bytes < 0) {
    return ErrorStatus("work %g FLOPs, %g bytes: must be finite and ≥ 0", work.flops, work.bytes);
  }
  return Status::Ok();
}

Status CheckKey(const KernelKey& key) {
  if (key.kind == KernelClass::kCommunication) {
    return ErrorStatus("communication kernels are the collective model's (collective_model.h)");
  }
  if ((key.kind == KernelClass::kMemcpy) != (key.copy != CopyKind::kNone)) {
    return ErrorStatus("%s: a copy kind goes with memcpy and only with it", KeyName(key).c_str());
  }
  return Status::Ok();
}

// The bandwidth a key's bytes move at, and how many times each byte crosses it.
double Bandwidth(const KernelKey& key, const KernelRooflineSpec& spec) {
  switch (key.copy) {
    case CopyKind::kHostToDevice:
    case CopyKind::kDeviceToHost:
    case CopyKind::kHostToHost:
      return spec.host_bytes_per_s;
    case CopyKind::kPeer:
      return spec.peer_bytes_per_s > 0 ? spec.peer_bytes_per_s : spec.host_bytes_per_s;
    case CopyKind::kDeviceToDevice:
      return spec.hbm_bytes_per_s / 2;  // Each byte is read and written.
    case CopyKind::kNone:
      break;
  }
  return spec.hbm_bytes_per_s;
}

double Peak(const KernelKey& key, const KernelRooflineSpec& spec) {
  if (ComputeBoundClass(key.kind) && spec.matrix_flops_per_s > 0) return spec.matrix_flops_per_s;
  return spec.vector_flops_per_s;
}

// Efficiencies the fit may choose: above 4 the bytes counted would overstate the traffic more
// than any L2 reuse explains; below 1e-4 nothing runs.
constexpr double kMinLogEfficiency = -9.21;  // ln 1e-4
constexpr double kMaxLogEfficiency = 1.386;  // ln 4
// A pull towards e = 1 of this much per sample and unit of |ln e|: where the kernels do not
// tell e (all of them at the floor) the fit says 1, the roofline; any kernel above the floor
// outweighs it.
constexpr double kPull = 1e-3;

// Σ |ln t − ln sqrt(F² + (r/e)²)| over the samples, for F = floor and e = exp(log_e), plus the
// pull towards e = 1.
double Loss(const std::vector<std::array<double, 2>>& points, double floor_ns, double log_e) {
  const double inverse_e = std::exp(-log_e);
  double sum = 0;
  for (const auto& [roofline, measured] : points) {
    sum +=
        std::fabs(std::log(measured) - 0.5 * std::log(floor_ns * floor_ns +
                                                      roofline * roofline * inverse_e * inverse_e));
  }
  return sum + kPull * static_cast<double>(points.size()) * std::fabs(log_e);
}

// The best log efficiency for a floor: golden-section search over the allowed range.
std::pair<double, double> BestEfficiency(const std::vector<std::array<double, 2>>& points,
                                         double floor_ns) {
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double lo = kMinLogEfficiency, hi = kMaxLogEfficiency;
  double a = hi - ratio * (hi - lo), b = lo + ratio * (hi - lo);
  double fa = Loss(points, floor_ns, a), fb = Loss(points, floor_ns, b);
  for (int i = 0; i < 48; ++i) {
    if (fa <= fb) {
      hi = b;
      b = a;
      fb = fa;
      a = hi - ratio * (hi - lo);
      fa = Loss(points, floor_ns, a);
    } else {
      lo = a;
      a = b;
      fa = fb;
      b = lo + ratio * (hi - lo);
      fb = Loss(points, floor_ns, b);
    }
  }
  // The pull's kink at e = 1 is where a flat loss ends up: try it too.
  const double at_one = Loss(points, floor_ns, 0);
  if (at_one <= std::min(fa, fb)) return {0.0, at_one};
  return fa <= fb ? std::pair(a, fa) : std::pair(b, fb);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

const char* CopyKindName(CopyKind kind) { return kCopyNames[static_cast<size_t>(kind)]; }

std::optional<CopyKind> CopyKindFromName(std::string_view name) {
  for (size_t i = 0; i < kCopyNames.size(); ++i) {
    if (name == kCopyNames[i]) return static_cast<CopyKind>(i);
  }
  return std::nullopt;
}

std::string KeyName(const KernelKey& key) {
  std::string name = KernelClassName(key.kind);
  if (key.copy != CopyKind::kNone) {
    name += std::string(" ") + CopyKindName(key.copy);
    const bool host = key.copy == CopyKind::kHostToDevice || key.copy == CopyKind::kDeviceToHost ||
                      key.copy == CopyKind::kHostToHost;
    if (host) name += key.pageable ? " pageable" : " pinned";
  }
  return name;
}

KernelRooflineSpec KernelRooflineFor(const GpuSpec& gpu, DType dtype) {
  KernelRooflineSpec spec;
  spec.vector_flops_per_s = gpu.PeakFlops(DType::kFp32);
  spec.matrix_flops_per_s = gpu.PeakFlops(dtype);
  spec.hbm_bytes_per_s = gpu.hbm_bytes_per_s;
  spec.host_bytes_per_s = gpu.host_bytes_per_s.value_or(kDefaultHostBytesPerS);
  spec.peer_bytes_per_s = gpu.nvlink_bytes_per_s.value_or(0) / 2;
  return spec;
}

KernelRoofline KernelRooflineOf(const KernelKey& key, const KernelWork& work,
                                const KernelRooflineSpec& spec) {
  KernelRoofline r;
  const double peak = Peak(key, spec);
  const double bandwidth = Bandwidth(key, spec);
  r.compute_ns = peak > 0 ? work.flops / peak * 1e9 : 0;
  r.memory_ns = bandwidth > 0 ? work.bytes / bandwidth * 1e9 : 0;
  r.time_ns = std::hypot(r.compute_ns, r.memory_ns);
  return r;
}

StatusOr<KernelCalibration> KernelCalibration::Fit(std::string gpu, KernelKey key, DType dtype,
                                                   KernelRooflineSpec spec,
                                                   const std::vector<KernelSample>& samples) {
  LUMOS_RETURN_IF_ERROR(CheckKey(key));
  std::vector<std::array<double, 2>> points;  // (roofline ns, measured ns)
  std::vector<double> measured;
  for (const KernelSample& s : samples) {
    LUMOS_RETURN_IF_ERROR(CheckWork(s.work));
    if (!s.work.known() || s.duration_ns <= 0) continue;
    const double r = KernelRooflineOf(key, s.work, spec).time_ns;
    if (!(r > 0)) continue;
    points.push_back({r, static_cast<double>(s.duration_ns)});
    measured.push_back(static_cast<double>(s.duration_ns));
  }
  if (points.size() < kMinSamples) {
    return ErrorStatus("%s on %s: %zu kernels of known work, a fit needs %zu", KeyName(key).c_str(),
                       gpu.c_str(), points.size(), kMinSamples);
  }
  // A floor shows only in kernels whose roofline is near it or under it. Kernels that all take
  // well above a floor's time (rooflines over twice the default floor, where it would move
  // their time by under 12 %) cannot tell one: at one work size any floor up to their time fits
  // with some e, and over several a fitted floor would only absorb the slower of them, then
  // bound every small kernel. The model's default floor is assumed then, and e fitted under it
  // (a measured table of a layer's kernels: data/costs/kernels_a100_megatron.csv). Kernels
  // near the floor (small copies and memsets) are fitted on the grid below, and so is
  // attention: its fixed cost (a backward's pre- and post-processing, a wave's tail) is real,
  // and the fit from one traced shape is scored on held-out ones (scripts/validate-attention.sh).
  double least = 1e300;
  for (const auto& p : points) least = std::min(least, p[0]);
  double best_floor = static_cast<double>(KernelModel::kDefaultFloorNs), best_log_e = 0;
  if (key.kind != KernelClass::kAttention && least > 2 * best_floor) {
    best_log_e = BestEfficiency(points, best_floor).first;
  } else {
    // For each floor on a log grid (from a quarter of the fastest kernel to four times the
    // median), the efficiency that fits the kernels whose work tells it: those whose roofline
    // at peak is at least a quarter of that floor (the others sit at the floor whatever e is,
    // and would only let e explain their jitter); with fewer than kMinSamples of them e = 1,
    // the roofline's. The pair whose loss over all the kernels is least wins.
    const double fastest = *std::min_element(measured.begin(), measured.end());
    const double lo = std::log(0.25 * fastest);
    const double hi = std::log(std::max(4.0 * Median(measured), 2.0 * fastest));
    constexpr int kSteps = 40;
    best_floor = std::exp(lo);
    double best_loss = 1e300;
    std::vector<std::array<double, 2>> telling;
    for (int i = 0; i <= kSteps; ++i) {
      const double floor_ns = std::exp(lo + (hi - lo) * i / kSteps);
      telling.clear();
      for (const auto& p : points) {
        if (p[0] >= 0.25 * floor_ns) telling.push_back(p);
      }
      const double log_e =
          telling.size() >= kMinSamples ? BestEfficiency(telling, floor_ns).first : 0.0;
      const double loss = Loss(points, floor_ns, log_e);
      if (loss < best_loss) {
        best_loss = loss;
        best_floor = floor_ns;
        best_log_e = log_e;
      }
    }
  }
  std::vector<double> errors;
  errors.reserve(points.size());
  const double e = std::exp(best_log_e);
  for (const auto& [roofline, t] : points) {
    errors.push_back(std::fabs(std::hypot(best_floor, roofline / e) / t - 1));
  }
  return FromParts(std::move(gpu), key, dtype, spec, e,
                   std::max<int64_t>(1, std::llround(best_floor)),
                   static_cast<uint32_t>(points.size()), Median(errors));
}

StatusOr<KernelCalibration> KernelCalibration::FromParts(std::string gpu, KernelKey key,
                                                         DType dtype, KernelRooflineSpec spec,
                                                         double efficiency, int64_t floor_ns,
                                                         uint32_t kernels, double median_error) {
  LUMOS_RETURN_IF_ERROR(CheckKey(key));
  if (!(spec.vector_flops_per_s > 0) || !(spec.hbm_bytes_per_s > 0) ||
      !(spec.host_bytes_per_s > 0) || !(spec.matrix_flops_per_s >= 0) ||
      !(spec.peer_bytes_per_s >= 0)) {
    return ErrorStatus("calibration %s %s: FP32 peak, HBM and host bandwidth must be > 0",
                       gpu.c_str(), KeyName(key).c_str());
  }
  if (!(efficiency > 0) || !Finite(efficiency)) {
    return ErrorStatus("calibration %s %s: efficiency %g must be > 0", gpu.c_str(),
                       KeyName(key).c_str(), efficiency);
  }
  if (floor_ns <= 0) {
    return ErrorStatus("calibration %s %s: floor must be > 0", gpu.c_str(), KeyName(key).c_str());
  }
  KernelCalibration c;
  c.gpu_ = std::move(gpu);
  c.key_ = key;
  c.dtype_ = dtype;
  c.spec_ = spec;
  c.efficiency_ = efficiency;
  c.floor_ns_ = floor_ns;
  c.kernels_ = kernels;
  c.median_error_ = median_error;
  return c;
}

double KernelCalibration::DurationNs(double roofline_ns) const {
  return std::hypot(static_cast<double>(floor_ns_), roofline_ns / efficiency_);
}

int KernelModel::Find(std::string_view gpu, const KernelKey& key) const {
  for (size_t i = 0; i < calibrations_.size(); ++i) {
    if (calibrations_[i].key() == key && calibrations_[i].gpu() == gpu) return static_cast<int>(i);
  }
  return -1;
}

int KernelModel::Select(const GpuSpec& gpu, const KernelKey& key) const {
  int best = Find(gpu.name, key);
  if (best >= 0) return best;
  double best_distance = 1e300;
  for (size_t i = 0; i < calibrations_.size(); ++i) {
    const KernelCalibration& c = calibrations_[i];
    if (!(c.key() == key)) continue;
    const double distance = std::fabs(std::log(c.spec().hbm_bytes_per_s / gpu.hbm_bytes_per_s));
    if (distance < best_distance) {
      best_distance = distance;
      best = static_cast<int>(i);
    }
  }
  return best;
}

StatusOr<Prediction> KernelModel::Predict(const KernelWorkQuery& query,
                                          const Options& options) const {
  if (query.gpu == nullptr) return ErrorStatus("no GPU given");
  LUMOS_RETURN_IF_ERROR(CheckKey(query.key));
  if (query.key.kind == KernelClass::kGemm) {
    return ErrorStatus("GEMMs are predicted by their shape (gemm_model.h)");
  }
  LUMOS_RETURN_IF_ERROR(CheckWork(query.work));
  const GpuSpec& gpu = *query.gpu;
  KernelRooflineSpec spec = KernelRooflineFor(gpu, query.dtype);
  if (ComputeBoundClass(query.key.kind) && query.work.flops > 0 && !(spec.matrix_flops_per_s > 0)) {
    return ErrorStatus("%s has no %s peak in the specs (not supported)", gpu.name.c_str(),
                       std::string(DTypeName(query.dtype)).c_str());
  }
  Prediction p;
  p.calibration = options.roofline_only ? -1 : Select(gpu, query.key);
  double ns = 0;
  if (p.calibration < 0) {
    p.source = SourceKind::kRoofline;
    ns = std::hypot(static_cast<double>(kDefaultFloorNs),
                    KernelRooflineOf(query.key, query.work, spec).time_ns);
  } else {
    const KernelCalibration& c = calibrations_[p.calibration];
    // On its own GPU the calibration's figures (a model answers the same whatever specs are
    // given later), the matrix peak of the query's dtype where it differs.
    if (c.gpu() == gpu.name) {
      const double matrix = spec.matrix_flops_per_s;
      spec = c.spec();
      if (c.dtype() != query.dtype) spec.matrix_flops_per_s = matrix;
    }
    p.source = SourceKind::kClassFit;
    ns = c.DurationNs(KernelRooflineOf(query.key, query.work, spec).time_ns);
  }
  if (!(ns < kMaxDurationNs)) return ErrorStatus("a duration beyond 10^18 ns");
  p.duration_ns = std::max<int64_t>(1, std::llround(ns));
  return p;
}

StatusOr<Prediction> KernelModel::Scale(const MeasuredKernel& measured, const WorkFactors& factors,
                                        const GpuSpec& to) const {
  if (measured.gpu == nullptr) return ErrorStatus("no GPU given for the measured kernel");
  LUMOS_RETURN_IF_ERROR(CheckKey(measured.key));
  LUMOS_RETURN_IF_ERROR(CheckWork(measured.work));
  if (measured.duration_ns <= 0) {
    return ErrorStatus("measured duration %lld ns: must be > 0",
                       static_cast<long long>(measured.duration_ns));
  }
  if (!(factors.bytes > 0) || !(factors.flops > 0) || !Finite(factors.bytes) ||
      !Finite(factors.flops)) {
    return ErrorStatus("work factors %g (bytes), %g (FLOPs): must be finite and > 0", factors.bytes,
                       factors.flops);
  }
  const GpuSpec& from = *measured.gpu;
  const KernelKey& key = measured.key;
  Prediction p;
  const bool same_gpu = from.name == to.name;
  if (same_gpu && factors.bytes == 1 && factors.flops == 1) {
    p.source = SourceKind::kMeasured;
    p.duration_ns = measured.duration_ns;
    return p;
  }
  const KernelRooflineSpec spec_a = KernelRooflineFor(from, measured.dtype);
  const KernelRooflineSpec spec_b = KernelRooflineFor(to, measured.dtype);
  if (ComputeBoundClass(key.kind) && !(spec_b.matrix_flops_per_s > 0) &&
      spec_a.matrix_flops_per_s > 0) {
    return ErrorStatus("%s has no %s peak in the specs (not supported)", to.name.c_str(),
                       std::string(DTypeName(measured.dtype)).c_str());
  }
  const int cal_a = Find(from.name, key);
  const int cal_b = Find(to.name, key);
  p.calibration = cal_b;
  const double t = static_cast<double>(measured.duration_ns);
  const double class_floor_a = cal_a >= 0 ? static_cast<double>(calibrations_[cal_a].floor_ns())
                                          : static_cast<double>(kDefaultFloorNs);
  const double class_floor_b =
      cal_b >= 0 ? static_cast<double>(calibrations_[cal_b].floor_ns()) : class_floor_a;
  // The kernel's own floor, and its share of the class's, kept on B.
  const double floor_a = std::min(class_floor_a, kFloorShare * t);
  const double floor_b = class_floor_b * (floor_a / class_floor_a);
  const double work_a = std::sqrt(t * t - floor_a * floor_a);
  // Both GPUs calibrated: what the class achieves on each carries over.
  const double efficiency_ratio = cal_a >= 0 && cal_b >= 0 ? calibrations_[cal_b].efficiency() /
                                                                 calibrations_[cal_a].efficiency()
                                                           : 1.0;
  double work_b = 0;
  const double r_a =
      measured.work.known() ? KernelRooflineOf(key, measured.work, spec_a).time_ns : 0.0;
  if (r_a > 0) {
    // The kernel's own efficiency r_A / w_A, as far as its time tells it, against its class's
    // on A (the roofline's e = 1 without a calibration): weighed by its share of t² above the
    // floor, s = w_A² / t² (a kernel at its floor tells nothing of its efficiency), and by how
    // far the new work takes it, 1 / (1 + (log8 r_B / r_A)²) (its own efficiency is that of
    // its own size: 8× away it counts half; small copies and kernels do not reach the
    // bandwidth large ones do).
    const KernelWork scaled{measured.work.flops * factors.flops,
                            measured.work.bytes * factors.bytes};
    const double r_b = KernelRooflineOf(key, scaled, spec_b).time_ns;
    const double distance = std::log(std::max(r_b, 1e-300) / r_a) / std::log(8.0);
    const double share = (work_a * work_a) / (t * t) / (1 + distance * distance);
    const double log_own = std::log(r_a / work_a);
    const double log_class = cal_a >= 0 ? std::log(calibrations_[cal_a].efficiency()) : 0.0;
    const double log_e = share * log_own + (1 - share) * log_class;
    work_b = r_b / (std::exp(log_e) * efficiency_ratio);
  } else {
    p.work_assumed = true;
    if (ComputeBoundClass(key.kind)) {
      work_b = work_a * factors.flops * (Peak(key, spec_a) / Peak(key, spec_b));
    } else {
      work_b = work_a * factors.bytes * (Bandwidth(key, spec_a) / Bandwidth(key, spec_b));
    }
    work_b /= efficiency_ratio;
  }
  const double ns = std::hypot(floor_b, work_b);
  if (!(ns < kMaxDurationNs)) return ErrorStatus("a duration beyond 10^18 ns");
  p.source = SourceKind::kScaledKernel;
  p.duration_ns = std::max<int64_t>(1, std::llround(ns));
  return p;
}

std::string KernelModel::SourceText(const Prediction& prediction,
                                    const MeasuredKernel* measured) const {
  const KernelCalibration* c =
      prediction.calibration >= 0 && prediction.calibration < static_cast<int>(calibrations_.size())
          ? &calibrations_[prediction.calibration]
          : nullptr;
  switch (prediction.source) {
    case SourceKind::kMeasured:
      return "measured";
    case SourceKind::kClassFit:
      if (c == nullptr) return "class fit";
      // No comma: the text is one cell of `costs predict`'s CSV.
      return "class fit on " + c->gpu() + " (" + KeyName(c->key()) + "; " +
             std::to_string(c->kernels()) + " kernels)";
    case SourceKind::kScaledKernel: {
      std::string text = "scaled from measured";
      if (measured != nullptr) {
        if (!measured->name.empty()) text += " " + std::string(measured->name);
        if (measured->gpu != nullptr) text += " on " + measured->gpu->name;
      }
      if (prediction.work_assumed) {
        text += ComputeBoundClass(measured != nullptr ? measured->key.kind : KernelClass::kOther)
                    ? " (work assumed compute-bound)"
                    : " (work assumed memory-bound)";
      }
      return text;
    }
    case SourceKind::kRoofline:
      return "roofline only";
    default:
      return "?";
  }
}

}  // namespace lumos::modeler::models
