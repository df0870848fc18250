#include "modeler/models/gemm/gemm_roofline.h"

#include <algorithm>
#include <cmath>

namespace lumos::modeler::models {
namespace {

constexpr int64_t kTile = 128;  // The surface's tile for wave quantisation (128×128 CTAs).

struct Features {
  double u, v, a, q;
};

Features RawFeatures(const GemmShape& shape, const Roofline& roofline, int sms) {
  Features f{};
  f.u = std::log2(std::max(roofline.time_ns, 1e-3) / 1000.0);
  f.v = std::clamp(
      std::log2(std::max(roofline.compute_ns, 1e-9) / std::max(roofline.memory_ns, 1e-9)), -16.0,
      16.0);
  f.a = std::clamp(std::log2(static_cast<double>(shape.m) / static_cast<double>(shape.n)), -12.0,
                   12.0);
  // Tiles over SMs: 1 when the last wave is full, 0.5 when it is half empty, ...
  const int64_t tiles = ((shape.m + kTile - 1) / kTile) * ((shape.n + kTile - 1) / kTile);
  const int64_t slots = std::max<int64_t>(sms, 1);
  const int64_t waves = (tiles + slots - 1) / slots;
  f.q = std::log2(static_cast<double>(tiles) / static_cast<double>(waves * slots));
  return f;
}

// Hat functions (linear interpolation between knots): the surface is piecewise linear in u
// and in v, so it can follow a rise that saturates, which no low-order polynomial does.
constexpr double kUKnot0 = -6, kUStep = 2;  // u knots -6, -4, ..., 18 (15 ns .. 260 ms).
constexpr int kUKnots = 13;

void Hats(double x, double first, double step, int count, double* out) {
  const double at = std::clamp((x - first) / step, 0.0, static_cast<double>(count - 1));
  const int below = std::min(static_cast<int>(at), count - 2);
  const double frac = at - below;
  out[below] += 1 - frac;
  out[below + 1] += frac;
}

std::array<double, kSurfaceTerms> Terms(const Features& f) {
  std::array<double, kSurfaceTerms> t{};
  Hats(f.u, kUKnot0, kUStep, kUKnots, t.data());
  // v: hats at -8, -4, 0, 4, 8 without the one at 0.
  double v[5] = {};
  Hats(f.v, -8, 4, 5, v);
  t[kUKnots + 0] = v[0];
  t[kUKnots + 1] = v[1];
  t[kUKnots + 2] = v[3];
  t[kUKnots + 3] = v[4];
  t[kUKnots + 4] = f.a;
  t[kUKnots + 5] = f.a * f.a;
  t[kUKnots + 6] = f.q;
  return t;
}

}  // namespace

Roofline GemmRoofline(const GemmShape& shape, DType dtype, const RooflineSpec& spec) {
  const double m = static_cast<double>(shape.m);
  const double n = static_cast<double>(shape.n);
  const double k = static_cast<double>(shape.k);
  const double batch = static_cast<double>(shape.batch);
  Roofline r;
  r.compute_ns = 2.0 * m * n * k * batch / spec.peak_flops_per_s * 1e9;
  const double bytes = batch * (InputBytes(dtype) * (m * k + k * n) + OutputBytes(dtype) * m * n);
  r.memory_ns = bytes / spec.hbm_bytes_per_s * 1e9;
  r.time_ns = std::hypot(r.compute_ns, r.memory_ns);
  return r;
}

double WorkNs(double latency_ns, double floor_ns) {
  const double squared = latency_ns * latency_ns - floor_ns * floor_ns;
  return std::sqrt(std::max(squared, 0.01 * latency_ns * latency_ns));
}

double LatencyNs(double work_ns, double floor_ns) { return std::hypot(floor_ns, work_ns); }

double EfficiencySurface::LogEfficiency(const GemmShape& shape, const Roofline& roofline,
                                        int sms) const {
  Features f = RawFeatures(shape, roofline, sms);
  f.u = std::clamp(f.u, u_min, u_max);
  f.v = std::clamp(f.v, v_min, v_max);
  const std::array<double, kSurfaceTerms> terms = Terms(f);
  double sum = 0;
  for (int i = 0; i < kSurfaceTerms; ++i) sum += coefficients[i] * terms[i];
  return sum;
}

StatusOr<EfficiencySurface> FitSurface(const std::vector<SurfaceSample>& samples, int sms) {
  if (samples.size() < static_cast<size_t>(kSurfaceTerms)) {
    return ErrorStatus("%zu measured shapes: the efficiency surface needs at least %d",
                       samples.size(), kSurfaceTerms);
  }
  EfficiencySurface surface;
  surface.u_min = surface.v_min = 1e300;
  surface.u_max = surface.v_max = -1e300;
  // Normal equations A x = b of the least-squares fit, solved by Gaussian elimination with
  // partial pivoting (9 unknowns; deterministic, no library).
  std::array<std::array<double, kSurfaceTerms + 1>, kSurfaceTerms> a{};
  for (const SurfaceSample& sample : samples) {
    const Features f = RawFeatures(sample.shape, sample.roofline, sms);
    surface.u_min = std::min(surface.u_min, f.u);
    surface.u_max = std::max(surface.u_max, f.u);
    surface.v_min = std::min(surface.v_min, f.v);
    surface.v_max = std::max(surface.v_max, f.v);
    const std::array<double, kSurfaceTerms> t = Terms(f);
    for (int i = 0; i < kSurfaceTerms; ++i) {
      for (int j = 0; j < kSurfaceTerms; ++j) a[i][j] += t[i] * t[j];
      a[i][kSurfaceTerms] += t[i] * sample.log_efficiency;
    }
  }
  // A little ridge: a feature that does not vary in the data (one aspect only) stays at 0.
  for (int i = 0; i < kSurfaceTerms; ++i) a[i][i] += 1e-6 * (a[i][i] + 1.0);
  for (int col = 0; col < kSurfaceTerms; ++col) {
    int pivot = col;
    for (int row = col + 1; row < kSurfaceTerms; ++row) {
      if (std::fabs(a[row][col]) > std::fabs(a[pivot][col])) pivot = row;
    }
    std::swap(a[col], a[pivot]);
    if (std::fabs(a[col][col]) < 1e-300) return ErrorStatus("efficiency surface: singular fit");
    for (int row = 0; row < kSurfaceTerms; ++row) {
      if (row == col) continue;
      const double factor = a[row][col] / a[col][col];
      for (int j = col; j <= kSurfaceTerms; ++j) a[row][j] -= factor * a[col][j];
    }
  }
  for (int i = 0; i < kSurfaceTerms; ++i) {
    surface.coefficients[i] = a[i][kSurfaceTerms] / a[i][i];
    if (!std::isfinite(surface.coefficients[i])) {
      return ErrorStatus("efficiency surface: the fit did not converge");
    }
  }
  return surface;
}

}  // namespace lumos::modeler::models
