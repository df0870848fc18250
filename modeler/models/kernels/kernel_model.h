// Design: the cost model of kernels other than GEMMs (attention, convolution, elementwise, norm,
// softmax, reduction, optimizer, embedding) and of copies and memsets, by their work in FLOPs
// and bytes (kernel_work.h) on a GPU's roofline, the way gemm_roofline.h does it for GEMMs:
//   roofline  r = sqrt(tc² + tm²) (the smooth maximum), tc = FLOPs / peak, where the peak is the
//             tensor-core peak of the dtype for attention and convolutions (and GEMMs, when a
//             GEMM is scaled here: its shape unknown) and the FP32 CUDA-core peak for the
//             others; tm = bytes / bandwidth: HBM for kernels and memsets, the host link for
//             host↔device copies (the specs' host_gb_per_s), NVLink for peer copies, HBM twice
//             for a device-to-device copy (it reads and writes each byte);
//   duration  t = sqrt(floor² + (r / e)²): a launch and latency floor a long kernel hides, and
//             the class's achieved efficiency e on that GPU (0 < e; above 1 where the bytes
//             counted overstate the traffic, e.g. operands that stay in L2).
// A KernelCalibration is (e, floor) for one GPU and one KernelKey (a class; a copy's direction
// and host memory kind), fitted to that GPU's own kernels of the key whose work is known: least
// absolute log error (the median fit: a few misattributed kernels do not move it), floor on a
// log grid, e by golden section. Predict answers a kernel of known work: with a calibration of
// its key on its GPU, that calibration (kClassFit); with one on another GPU only, its efficiency
// and floor carried over to this GPU's roofline (kClassFit, naming that GPU); with none, the
// roofline at e = 1 above kDefaultFloorNs (kRoofline).
// Scale is what estimation mostly needs: a kernel measured on GPU A (duration, key, work if
// known) whose work changes by a factor (bytes and FLOPs apart), run on GPU B. Its measured time
// is split into its floor and its work part, w = sqrt(t² − floor²) (the floor: A's calibrated
// one for the key, else the default, and never above sqrt(1 − 10⁻⁴)·t, so t splits exactly; a
// kernel at or below its floor is taken to do 1 % of its time's work, and stays there). The
// work part goes through both rooflines: with the work known, the kernel's own efficiency
// r_A / w (weighed against its class's by how much of t is work and how far the factor and GPU
// take it, see Scale in the .cc) is kept on B's roofline of the scaled work; without it, the
// class's bound alone is scaled (memory classes: bytes factor × bandwidth_A / bandwidth_B;
// attention, convolution, GEMM: FLOPs factor × peak_A / peak_B), marked work_assumed. Where
// both GPUs have a calibration of the key, the ratio of their efficiencies and floors carries
// over too. t_B = sqrt(floor_B² + w_B²). The same GPU at factor 1 is the measurement itself.
// Errors (Status): no GPU, a class the model does not answer (GEMMs are gemm_model.h's to
// predict; communication is the collective model's), a negative or non-finite work or factor,
// a duration ≤ 0, a compute-bound class on a GPU with no peak for its dtype, a result beyond
// 10^18 ns.
// Threading: built by one thread; Predict and Scale are const, allocate nothing and may be
// called from any number of threads (≥ 1 M queries/s on one core: docs/performance.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/models/hardware/dtype.h"
#include "modeler/models/kernels/kernel_work.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

struct GpuSpec;

enum class CopyKind : uint8_t {
  kNone = 0,  // Not a copy.
  kHostToDevice,
  kDeviceToHost,
  kDeviceToDevice,
  kPeer,  // Between two GPUs.
  kHostToHost,
};
inline constexpr int kCopyKindCount = 6;
const char* CopyKindName(CopyKind kind);  // "-", "HtoD", "DtoH", "DtoD", "PtoP", "HtoH"
std::optional<CopyKind> CopyKindFromName(std::string_view name);

// What a calibration is for: a class; for copies also the direction and whether the host side
// is pageable memory (staged through a pinned buffer by the driver: slower than pinned).
struct KernelKey {
  KernelClass kind = KernelClass::kElementwise;
  CopyKind copy = CopyKind::kNone;
  bool pageable = false;

  bool operator==(const KernelKey&) const = default;
};
// "elementwise", "memcpy HtoD pinned", "memcpy DtoH pageable", "memcpy DtoD", ...
std::string KeyName(const KernelKey& key);

// The figures of one GPU a non-GEMM kernel's roofline needs.
struct KernelRooflineSpec {
  double vector_flops_per_s = 0;  // FP32 on the CUDA cores (the specs' fp32 figure).
  double matrix_flops_per_s = 0;  // Dense tensor-core peak of the dtype; 0: none (use vector).
  double hbm_bytes_per_s = 0;
  double host_bytes_per_s = 0;  // One direction (the specs' host_gb_per_s).
  double peer_bytes_per_s = 0;  // NVLink, one direction; 0: peer copies go over the host link.

  bool operator==(const KernelRooflineSpec&) const = default;
};
KernelRooflineSpec KernelRooflineFor(const GpuSpec& gpu, DType dtype);

struct KernelRoofline {
  double compute_ns = 0;
  double memory_ns = 0;
  double time_ns = 0;  // The smooth maximum of the two.
};
KernelRoofline KernelRooflineOf(const KernelKey& key, const KernelWork& work,
                                const KernelRooflineSpec& spec);

// One measured kernel of a calibration.
struct KernelSample {
  KernelWork work;
  int64_t duration_ns = 0;
};

class KernelCalibration {
 public:
  static constexpr size_t kMinSamples = 3;

  // Fits (e, floor) to the samples with known work (at least kMinSamples of them).
  static StatusOr<KernelCalibration> Fit(std::string gpu, KernelKey key, DType dtype,
                                         KernelRooflineSpec spec,
                                         const std::vector<KernelSample>& samples);
  // As read back from a model file.
  static StatusOr<KernelCalibration> FromParts(std::string gpu, KernelKey key, DType dtype,
                                               KernelRooflineSpec spec, double efficiency,
                                               int64_t floor_ns, uint32_t kernels,
                                               double median_error);

  const std::string& gpu() const { return gpu_; }
  const KernelKey& key() const { return key_; }
  DType dtype() const { return dtype_; }  // Its kernels' dtype (the matrix peak's).
  const KernelRooflineSpec& spec() const { return spec_; }
  double efficiency() const { return efficiency_; }
  int64_t floor_ns() const { return floor_ns_; }
  uint32_t kernels() const { return kernels_; }          // Samples it was fitted on.
  double median_error() const { return median_error_; }  // On those samples, a fraction.

  // sqrt(floor² + (r / e)²).
  double DurationNs(double roofline_ns) const;

 private:
  KernelCalibration() = default;

  std::string gpu_;
  KernelKey key_;
  DType dtype_ = DType::kFp32;
  KernelRooflineSpec spec_;
  double efficiency_ = 1;
  int64_t floor_ns_ = 0;
  uint32_t kernels_ = 0;
  double median_error_ = 0;
};

// A kernel of known work to predict.
struct KernelWorkQuery {
  KernelKey key;
  KernelWork work;
  DType dtype = DType::kFp32;
  const GpuSpec* gpu = nullptr;  // Not owned.
};

// A measured kernel to scale.
struct MeasuredKernel {
  KernelKey key;
  int64_t duration_ns = 0;
  const GpuSpec* gpu = nullptr;  // Where it was measured; not owned.
  DType dtype = DType::kFp32;
  KernelWork work;        // Optional (0 = not known).
  std::string_view name;  // For the source text only.
};

// By how much a kernel's work changes (hidden ×2 on an activation: bytes ×2, FLOPs ×2;
// sequence ×2 on attention: FLOPs ×4, bytes ×2).
struct WorkFactors {
  double bytes = 1;
  double flops = 1;
};

class KernelModel {
 public:
  // The floor without a calibration: the GEMM model's default (the floor of both measured GEMM
  // tables). The real traces' kernel classes fit 2.9-12 µs, their copies and memsets 1-9 µs
  // (docs/validation.md, "Non-GEMM kernels").
  static constexpr int64_t kDefaultFloorNs = 2500;

  void Add(KernelCalibration calibration) { calibrations_.push_back(std::move(calibration)); }
  const std::vector<KernelCalibration>& calibrations() const { return calibrations_; }

  // The calibration of `key` on `gpu` (an entry name); -1: none.
  int Find(std::string_view gpu, const KernelKey& key) const;
  // That one, else the calibration of `key` on the GPU whose HBM bandwidth is nearest `gpu`'s
  // (in ratio); -1: none.
  int Select(const GpuSpec& gpu, const KernelKey& key) const;

  struct Options {
    bool roofline_only = false;  // Ignore the calibrations (validation's baseline).
  };
  StatusOr<Prediction> Predict(const KernelWorkQuery& query) const { return Predict(query, {}); }
  StatusOr<Prediction> Predict(const KernelWorkQuery& query, const Options& options) const;

  StatusOr<Prediction> Scale(const MeasuredKernel& measured, const WorkFactors& factors,
                             const GpuSpec& to) const;

  // "class fit on V100-SXM2-32GB (elementwise; 812 kernels)", "roofline only", "scaled from
  // measured <name> on <GPU>" (with " (work assumed memory-bound)" when work_assumed), "measured".
  std::string SourceText(const Prediction& prediction,
                         const MeasuredKernel* measured = nullptr) const;

 private:
  std::vector<KernelCalibration> calibrations_;
};

}  // namespace lumos::modeler::models
