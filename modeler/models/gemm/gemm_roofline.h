// Design: the analytic half of the GEMM model, all in ns.
//   roofline   r = sqrt(tc² + tm²), tc = 2·m·n·k·batch / peak(dtype),
//              tm = batch·(in_bytes·(m·k + k·n) + out_bytes·m·n) / HBM bandwidth;
//              the smooth maximum (p = 2) instead of max(): near the ridge a GEMM is limited by
//              both at once (A100 and H100 tables: 0.42× the A100 time at the A100 ridge, where
//              max() says 0.61×);
//   floor      t = sqrt(floor² + w²): a fixed launch/latency floor that a kernel's work w hides
//              once it is long (a sum t = floor + w charges a 17 µs GEMM the whole floor);
//   efficiency e = r / w: how far below its roofline a kernel's work runs.
// The efficiency surface: ln e as a least-squares fit on a few features of the shape on the
// calibration GPU: u = log2 of the roofline in µs (size), piecewise linear between knots every
// 2 units from −6 to 18 (efficiency rises with size and saturates: no low-order polynomial
// follows that); v = log2(tc/tm) (intensity against the ridge), piecewise linear between
// knots at −8, −4, 0, 4, 8; a = log2(m/n) and a² (aspect); q = log2 of the wave efficiency of
// 128×128 tiles on the GPU's SMs (tile quantisation). 20 coefficients. u and v are clamped to
// the range the fit saw, so a shape far outside it gets the efficiency of the nearest edge.
// (A quadratic in u and v, tried first, missed the long kernels: 54% time-weighted error on an
// inner split of the H100 calibration half, against 5% for this one.)
// Threading: pure functions and plain values.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/dtype.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

// The figures of one GPU that a GEMM's roofline needs.
struct RooflineSpec {
  int sms = 0;
  double peak_flops_per_s = 0;  // Dense, for the dtype in question.
  double hbm_bytes_per_s = 0;
};

struct Roofline {
  double compute_ns = 0;
  double memory_ns = 0;
  double time_ns = 0;  // The smooth maximum of the two.
};

Roofline GemmRoofline(const GemmShape& shape, DType dtype, const RooflineSpec& spec);

// w from a measured t: sqrt(t² − floor²), kept ≥ t/10 so that a kernel at the floor has a
// finite efficiency.
double WorkNs(double latency_ns, double floor_ns);
// t from w: sqrt(floor² + w²).
double LatencyNs(double work_ns, double floor_ns);

inline constexpr int kSurfaceTerms = 20;

struct EfficiencySurface {
  std::array<double, kSurfaceTerms> coefficients{};
  double u_min = 0, u_max = 0;  // The fit's range of u and v: features are clamped to it.
  double v_min = 0, v_max = 0;

  // ln e of `shape` (batch folded in already), on the calibration GPU.
  double LogEfficiency(const GemmShape& shape, const Roofline& roofline, int sms) const;
};

// One measured point of a fit: the shape's roofline on the calibration GPU, and ln e.
struct SurfaceSample {
  GemmShape shape;
  Roofline roofline;
  double log_efficiency = 0;
};

// Least squares over `samples` (at least kSurfaceTerms of them).
StatusOr<EfficiencySurface> FitSurface(const std::vector<SurfaceSample>& samples, int sms);

}  // namespace lumos::modeler::models
