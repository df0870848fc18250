// The non-GEMM kernel model (modeler/models/kernels/kernel_model.h, kernel_work.h) on the built-in
// GPU specs: the roofline's physics, FlashAttention's FLOP count, the fit, Predict's and Scale's
// sources, and the floor that neither a faster GPU nor more bytes move a small kernel off.
// The fit is checked on kernels the model's own formula generates (known e and floor); its
// accuracy on real kernels is kernel_validation_test.cc's.
#include "modeler/models/kernels/kernel_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_work.h"

namespace lumos::modeler::models {
namespace {

const GpuSpec& Gpu(const char* name) {
  const GpuSpec* gpu = SpecTable::Builtin().FindGpu(name);
  EXPECT_NE(gpu, nullptr) << name;
  return *gpu;
}

constexpr KernelKey kElementwise{KernelClass::kElementwise};
constexpr KernelKey kAttention{KernelClass::kAttention};

TEST(KernelWorkTest, AttentionCountsFlopsAsFlashAttentionDoes) {
  // benchmark_flash_attention.py: f = 4·b·s²·h·d, halved when causal, backward 2.5 f.
  AttentionShape shape{.batch = 2, .heads = 16, .seq_q = 1024, .head_dim = 64};
  StatusOr<KernelWork> fwd = AttentionWork(shape, DType::kBf16);
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  EXPECT_DOUBLE_EQ(fwd->flops, 4.0 * 2 * 1024 * 1024 * 16 * 64);
  shape.causal = true;
  EXPECT_DOUBLE_EQ(AttentionWork(shape, DType::kBf16)->flops, fwd->flops / 2);
  shape.backward = true;
  EXPECT_DOUBLE_EQ(AttentionWork(shape, DType::kBf16)->flops, fwd->flops / 2 * 2.5);
  // Bytes: Q, K, V read and O written (2 bytes each) and the fp32 log-sum-exp; backward moves
  // twice the tensors.
  const double tensor = 2.0 * 16 * 1024 * 64 * 2;
  EXPECT_DOUBLE_EQ(fwd->bytes, 4 * tensor + 2.0 * 16 * 1024 * 4);
  EXPECT_DOUBLE_EQ(AttentionWork(shape, DType::kBf16)->bytes, 8 * tensor + 2.0 * 16 * 1024 * 4);
  // Grouped-query attention: K and V have fewer heads.
  shape = {.batch = 1, .heads = 32, .kv_heads = 8, .seq_q = 512, .head_dim = 128};
  EXPECT_DOUBLE_EQ(AttentionWork(shape, DType::kFp16)->bytes,
                   2.0 * 32 * 512 * 128 * 2 + 2.0 * 8 * 512 * 128 * 2 + 32.0 * 512 * 4);
}

TEST(KernelWorkTest, CausalShareIsBottomRightAligned) {
  EXPECT_DOUBLE_EQ(CausalShare(1024, 1024), 0.5);
  EXPECT_DOUBLE_EQ(CausalShare(1, 4096), 1.0 - 1.0 / 8192);  // Decoding one token: all of it.
  EXPECT_DOUBLE_EQ(CausalShare(4096, 1024), 1024.0 / 8192);
}

TEST(KernelWorkTest, ImpossibleAttentionShapesAreErrors) {
  EXPECT_FALSE(AttentionWork({.seq_q = 0, .head_dim = 64}, DType::kBf16).ok());
  EXPECT_FALSE(
      AttentionWork({.heads = 8, .kv_heads = 16, .seq_q = 8, .head_dim = 64}, DType::kBf16).ok());
  EXPECT_FALSE(
      AttentionWork({.batch = int64_t{1} << 40, .seq_q = 8, .head_dim = 64}, DType::kBf16).ok());
}

TEST(KernelRooflineTest, EachKeyMovesItsBytesOverItsLinkAndComputesOnItsUnits) {
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  const KernelRooflineSpec spec = KernelRooflineFor(h100, DType::kBf16);
  EXPECT_DOUBLE_EQ(spec.vector_flops_per_s, h100.PeakFlops(DType::kFp32));
  EXPECT_DOUBLE_EQ(spec.matrix_flops_per_s, h100.PeakFlops(DType::kBf16));
  EXPECT_DOUBLE_EQ(spec.host_bytes_per_s, 64e9);  // specs/hardware.txt: PCIe Gen5, one direction.
  EXPECT_DOUBLE_EQ(spec.peer_bytes_per_s, *h100.nvlink_bytes_per_s / 2);
  const KernelWork gigabyte{0, 1e9};
  EXPECT_NEAR(KernelRooflineOf(kElementwise, gigabyte, spec).time_ns,
              1e9 / h100.hbm_bytes_per_s * 1e9, 1e-6);
  // A device-to-device copy reads and writes each byte; host copies cross PCIe.
  EXPECT_NEAR(
      KernelRooflineOf({KernelClass::kMemcpy, CopyKind::kDeviceToDevice}, gigabyte, spec).time_ns,
      2e9 / h100.hbm_bytes_per_s * 1e9, 1e-6);
  EXPECT_NEAR(
      KernelRooflineOf({KernelClass::kMemcpy, CopyKind::kHostToDevice}, gigabyte, spec).time_ns,
      1e9 / spec.host_bytes_per_s * 1e9, 1e-6);
  EXPECT_NEAR(KernelRooflineOf({KernelClass::kMemcpy, CopyKind::kPeer}, gigabyte, spec).time_ns,
              1e9 / spec.peer_bytes_per_s * 1e9, 1e-6);
  // FLOPs: attention on the tensor cores, a norm on the CUDA cores.
  const KernelWork teraflop{1e12, 0};
  EXPECT_NEAR(KernelRooflineOf(kAttention, teraflop, spec).compute_ns,
              1e12 / h100.PeakFlops(DType::kBf16) * 1e9, 1e-3);
  EXPECT_NEAR(KernelRooflineOf({KernelClass::kNorm}, teraflop, spec).compute_ns,
              1e12 / h100.PeakFlops(DType::kFp32) * 1e9, 1e-3);
  // The smooth maximum of both.
  const KernelRoofline both = KernelRooflineOf(kAttention, {1e12, 1e9}, spec);
  EXPECT_DOUBLE_EQ(both.time_ns, std::hypot(both.compute_ns, both.memory_ns));
  // A GPU entry that gives no host link gets PCIe Gen4.
  GpuSpec unknown = h100;
  unknown.host_bytes_per_s.reset();
  EXPECT_DOUBLE_EQ(KernelRooflineFor(unknown, DType::kBf16).host_bytes_per_s,
                   kDefaultHostBytesPerS);
}

// Kernels the model's own formula gives for efficiency e and floor F, from 4 KB to 1 GB.
std::vector<KernelSample> Generated(const KernelRooflineSpec& spec, double e, double floor_ns) {
  std::vector<KernelSample> samples;
  for (double bytes = 4096; bytes <= 1e9; bytes *= 1.7) {
    const double r = KernelRooflineOf(kElementwise, {bytes / 4, bytes}, spec).time_ns;
    samples.push_back({{bytes / 4, bytes}, std::llround(std::hypot(floor_ns, r / e))});
  }
  return samples;
}

TEST(KernelCalibrationTest, FitRecoversTheEfficiencyAndFloorThatMadeTheKernels) {
  const KernelRooflineSpec spec = KernelRooflineFor(Gpu("A100-SXM4-80GB"), DType::kFp32);
  StatusOr<KernelCalibration> c = KernelCalibration::Fit(
      "A100-SXM4-80GB", kElementwise, DType::kFp32, spec, Generated(spec, 0.7, 3000));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->efficiency(), 0.7, 0.01);
  // The floor on a grid of 40 log steps: within one step (about 9 %).
  EXPECT_NEAR(static_cast<double>(c->floor_ns()), 3000, 300);
  EXPECT_LT(c->median_error(), 0.02);
}

// Kernels of one size (a measured table's one LayerNorm shape, eight ranks) cannot tell a floor
// from an efficiency: the default floor is kept and e fitted under it, not a floor as large as
// the kernels themselves with e at the roofline's.
TEST(KernelCalibrationTest, KernelsOfOneSizeKeepTheDefaultFloor) {
  const KernelRooflineSpec spec = KernelRooflineFor(Gpu("A100-SXM4-80GB"), DType::kFp32);
  std::vector<KernelSample> samples;
  for (int i = 0; i < 8; ++i) samples.push_back({{0, 134299648}, 135000 + 500 * (i % 3)});
  StatusOr<KernelCalibration> c =
      KernelCalibration::Fit("A100-SXM4-80GB", {KernelClass::kNorm}, DType::kFp32, spec, samples);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->floor_ns(), KernelModel::kDefaultFloorNs);
  const double roofline = KernelRooflineOf({KernelClass::kNorm}, {0, 134299648}, spec).time_ns;
  EXPECT_NEAR(c->efficiency(), roofline / 135500, 0.01);
  EXPECT_LT(c->median_error(), 0.01);
}

TEST(KernelCalibrationTest, KernelsAllAtTheFloorLeaveTheEfficiencyAtTheRooflines) {
  // Memsets of 8 bytes to 10 KB at 1-3 µs (as in the HTA traces): their work is invisible
  // beside the floor, so their jitter must not set e (a 100 MB memset would take seconds).
  const KernelRooflineSpec spec = KernelRooflineFor(Gpu("A100-SXM4-80GB"), DType::kFp32);
  std::vector<KernelSample> samples;
  for (int i = 0; i < 30; ++i) {
    samples.push_back({{0, 8.0 + 340.0 * i}, 1000 + 1000 * (i % 3)});
  }
  StatusOr<KernelCalibration> c =
      KernelCalibration::Fit("A100-SXM4-80GB", {KernelClass::kMemset}, DType::kFp32, spec, samples);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->efficiency(), 1.0);
  EXPECT_GE(c->floor_ns(), 1000);
  EXPECT_LE(c->floor_ns(), 3000);
}

TEST(KernelCalibrationTest, TooFewKernelsOrBadOnesAreErrors) {
  const KernelRooflineSpec spec = KernelRooflineFor(Gpu("A100-SXM4-80GB"), DType::kFp32);
  std::vector<KernelSample> two = {{{0, 1e6}, 5000}, {{0, 2e6}, 6000}, {{0, 0}, 7000}};
  StatusOr<KernelCalibration> c =
      KernelCalibration::Fit("A100-SXM4-80GB", kElementwise, DType::kFp32, spec, two);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("2 kernels of known work"), std::string::npos)
      << c.status().message();
  EXPECT_FALSE(KernelCalibration::Fit("A100-SXM4-80GB", kElementwise, DType::kFp32, spec,
                                      {{{0, -1}, 5000}, {{0, 1e6}, 5000}, {{0, 2e6}, 6000}})
                   .ok());
  EXPECT_FALSE(KernelCalibration::Fit("A100-SXM4-80GB", {KernelClass::kCommunication}, DType::kFp32,
                                      spec, Generated(spec, 0.7, 3000))
                   .ok());
  EXPECT_FALSE(
      KernelCalibration::FromParts("A100", kElementwise, DType::kFp32, spec, 0, 1000, 1, 0).ok());
  EXPECT_FALSE(
      KernelCalibration::FromParts("A100", kElementwise, DType::kFp32, spec, 0.5, 0, 1, 0).ok());
  EXPECT_FALSE(
      KernelCalibration::FromParts("A100", kElementwise, DType::kFp32, {}, 0.5, 100, 1, 0).ok());
}

KernelModel CalibratedOn(const char* gpu_name, double e, double floor_ns) {
  const KernelRooflineSpec spec = KernelRooflineFor(Gpu(gpu_name), DType::kFp32);
  StatusOr<KernelCalibration> c = KernelCalibration::Fit(gpu_name, kElementwise, DType::kFp32, spec,
                                                         Generated(spec, e, floor_ns));
  EXPECT_TRUE(c.ok()) << c.status().message();
  KernelModel model;
  model.Add(std::move(c).value());
  return model;
}

TEST(KernelModelTest, PredictSaysWhatItRestsOn) {
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  KernelModel model = CalibratedOn("A100-SXM4-80GB", 0.7, 3000);
  const KernelWork work{2.5e7, 1e8};  // 100 MB: 49 µs of HBM on an A100.
  StatusOr<Prediction> own = model.Predict({kElementwise, work, DType::kFp32, &a100});
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_EQ(own->source, SourceKind::kClassFit);
  EXPECT_EQ(own->calibration, 0);
  const double r_a100 = 1e8 / a100.hbm_bytes_per_s * 1e9;
  EXPECT_NEAR(static_cast<double>(own->duration_ns), r_a100 / 0.7, 0.03 * r_a100 / 0.7);
  EXPECT_EQ(model.SourceText(*own), "class fit on A100-SXM4-80GB (elementwise; " +
                                        std::to_string(model.calibrations()[0].kernels()) +
                                        " kernels)");
  // Another GPU: the A100's efficiency on the H100's roofline.
  StatusOr<Prediction> carried = model.Predict({kElementwise, work, DType::kFp32, &h100});
  ASSERT_TRUE(carried.ok());
  EXPECT_EQ(carried->source, SourceKind::kClassFit);
  EXPECT_NEAR(static_cast<double>(carried->duration_ns) / static_cast<double>(own->duration_ns),
              a100.hbm_bytes_per_s / h100.hbm_bytes_per_s, 0.01);
  // No calibration of the class: the roofline above the default floor.
  StatusOr<Prediction> bare = model.Predict({{KernelClass::kNorm}, {0, 1e8}, DType::kFp32, &h100});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->source, SourceKind::kRoofline);
  EXPECT_EQ(model.SourceText(*bare), "roofline only");
  EXPECT_EQ(bare->duration_ns,
            std::llround(std::hypot(static_cast<double>(KernelModel::kDefaultFloorNs),
                                    1e8 / h100.hbm_bytes_per_s * 1e9)));
  // Tiny work: the floor.
  StatusOr<Prediction> tiny = model.Predict({kElementwise, {1, 4}, DType::kFp32, &a100});
  EXPECT_NEAR(static_cast<double>(tiny->duration_ns),
              static_cast<double>(model.calibrations()[0].floor_ns()), 1.0);
}

TEST(KernelModelTest, PredictRefusesWhatItDoesNotAnswer) {
  const GpuSpec& v100 = Gpu("V100-SXM2-32GB");
  KernelModel model;
  EXPECT_FALSE(model.Predict({kElementwise, {0, 1e6}, DType::kFp32, nullptr}).ok());
  EXPECT_FALSE(model.Predict({{KernelClass::kGemm}, {1e9, 1e6}, DType::kFp32, &v100}).ok());
  EXPECT_FALSE(model.Predict({{KernelClass::kCommunication}, {0, 1e6}, DType::kFp32, &v100}).ok());
  EXPECT_FALSE(model.Predict({kElementwise, {0, -1}, DType::kFp32, &v100}).ok());
  EXPECT_FALSE(model.Predict({kElementwise, {0, NAN}, DType::kFp32, &v100}).ok());
  EXPECT_FALSE(model.Predict({{KernelClass::kMemcpy}, {0, 1e6}, DType::kFp32, &v100}).ok());
  EXPECT_FALSE(
      model
          .Predict(
              {{KernelClass::kElementwise, CopyKind::kHostToDevice}, {0, 1e6}, DType::kFp32, &v100})
          .ok());
  // A V100 has no bf16 tensor cores.
  StatusOr<Prediction> bf16 = model.Predict({kAttention, {1e12, 1e9}, DType::kBf16, &v100});
  ASSERT_FALSE(bf16.ok());
  EXPECT_NE(bf16.status().message().find("bf16"), std::string::npos);
  EXPECT_FALSE(model.Predict({kElementwise, {0, 1e30}, DType::kFp32, &v100}).ok());
}

TEST(KernelModelTest, ScaleAtFactorOneOnTheSameGpuIsTheMeasurement) {
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  KernelModel model = CalibratedOn("A100-SXM4-80GB", 0.7, 3000);
  const MeasuredKernel k{kElementwise, 12345, &a100, DType::kFp32, {}, "add_kernel"};
  StatusOr<Prediction> p = model.Scale(k, {}, a100);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->source, SourceKind::kMeasured);
  EXPECT_EQ(p->duration_ns, 12345);
  EXPECT_EQ(model.SourceText(*p, &k), "measured");
}

TEST(KernelModelTest, AKernelAtTheFloorStaysThereOnAFasterGpuAndWithTwiceTheBytes) {
  const GpuSpec& v100 = Gpu("V100-SXM2-32GB");
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  const KernelModel none;  // Default floor 2.5 µs.
  const MeasuredKernel small{kElementwise, 3000, &v100, DType::kFp32, {}, "vectorized_add"};
  StatusOr<Prediction> faster = none.Scale(small, {}, h100);
  ASSERT_TRUE(faster.ok());
  EXPECT_EQ(faster->source, SourceKind::kScaledKernel);
  EXPECT_TRUE(faster->work_assumed);
  EXPECT_EQ(none.SourceText(*faster, &small),
            "scaled from measured vectorized_add on V100-SXM2-32GB (work assumed memory-bound)");
  // 3 µs = the floor 2.5 µs and 1.66 µs of work; the H100's 3.7× bandwidth shrinks the work
  // only: 2.6 µs, not 0.8.
  EXPECT_GT(faster->duration_ns, 2500);
  EXPECT_LT(faster->duration_ns, 2700);
  StatusOr<Prediction> doubled = none.Scale(small, {.bytes = 2, .flops = 2}, v100);
  ASSERT_TRUE(doubled.ok());
  EXPECT_GT(doubled->duration_ns, 3000);
  EXPECT_LT(doubled->duration_ns, 4300);  // Not 6 µs.
  // Below the floor: it stays where it was.
  const MeasuredKernel tiny{kElementwise, 1000, &v100, DType::kFp32, {}, "fill"};
  EXPECT_NEAR(static_cast<double>(none.Scale(tiny, {.bytes = 2, .flops = 2}, h100)->duration_ns),
              1000, 5);
}

TEST(KernelModelTest, ALongMemoryBoundKernelScalesWithBytesAndBandwidth) {
  const GpuSpec& v100 = Gpu("V100-SXM2-32GB");
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  const KernelModel none;
  const MeasuredKernel big{kElementwise, 2'000'000, &v100, DType::kFp32, {}, "tanh_backward"};
  StatusOr<Prediction> p = none.Scale(big, {.bytes = 2, .flops = 2}, h100);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(static_cast<double>(p->duration_ns),
              2e6 * 2 * v100.hbm_bytes_per_s / h100.hbm_bytes_per_s, 1000);
  // With its work known, through both rooflines: 1.2 GB in 2 ms on a V100 is e = 0.67, kept
  // (a little of the roofline's e = 1 blended in: the factor moves it off its own size).
  MeasuredKernel known = big;
  known.work = {3e8, 1.2e9};
  StatusOr<Prediction> q = none.Scale(known, {.bytes = 2, .flops = 2}, h100);
  ASSERT_TRUE(q.ok());
  EXPECT_FALSE(q->work_assumed);
  const KernelRooflineSpec h100_spec = KernelRooflineFor(h100, DType::kFp32);
  const double r_b = KernelRooflineOf(kElementwise, {6e8, 2.4e9}, h100_spec).time_ns;
  EXPECT_LT(static_cast<double>(q->duration_ns), static_cast<double>(p->duration_ns));
  EXPECT_GT(static_cast<double>(q->duration_ns), r_b);
  EXPECT_NEAR(static_cast<double>(q->duration_ns), static_cast<double>(p->duration_ns),
              0.05 * static_cast<double>(p->duration_ns));
  EXPECT_EQ(none.SourceText(*q, &known), "scaled from measured tanh_backward on V100-SXM2-32GB");
}

TEST(KernelModelTest, AttentionScalesWithItsFlopsAndTheTensorCores) {
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  const KernelModel none;
  StatusOr<KernelWork> work = AttentionWork(
      {.batch = 4, .heads = 32, .seq_q = 4096, .head_dim = 128, .causal = true}, DType::kBf16);
  ASSERT_TRUE(work.ok());
  // Measured at 60 % of the A100's 312 TFLOPS.
  const double t = work->flops / (0.6 * a100.PeakFlops(DType::kBf16)) * 1e9;
  const MeasuredKernel fwd{kAttention, std::llround(t), &a100, DType::kBf16, *work, "flash_fwd"};
  // Sequence ×2: FLOPs ×4, bytes ×2. Its own efficiency on the A100's roofline, kept on the
  // H100's (within the 3 % the blend with e = 1 moves a kernel whose work grows 1.25×).
  StatusOr<Prediction> p = none.Scale(fwd, {.bytes = 2, .flops = 4}, h100);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const double r_a =
      KernelRooflineOf(kAttention, *work, KernelRooflineFor(a100, DType::kBf16)).time_ns;
  const double r_b = KernelRooflineOf(kAttention, {4 * work->flops, 2 * work->bytes},
                                      KernelRooflineFor(h100, DType::kBf16))
                         .time_ns;
  const double work_a = std::sqrt(t * t - 2500.0 * 2500.0);
  EXPECT_NEAR(static_cast<double>(p->duration_ns), r_b / (r_a / work_a),
              0.03 * r_b / (r_a / work_a));
  // Without its work: the FLOPs factor through the tensor-core peaks.
  MeasuredKernel blind = fwd;
  blind.work = {};
  StatusOr<Prediction> q = none.Scale(blind, {.bytes = 2, .flops = 4}, h100);
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE(q->work_assumed);
  const double expected = 4 * work_a * a100.PeakFlops(DType::kBf16) / h100.PeakFlops(DType::kBf16);
  EXPECT_NEAR(static_cast<double>(q->duration_ns), expected, 0.001 * expected);
  EXPECT_EQ(none.SourceText(*q, &blind),
            "scaled from measured flash_fwd on A100-SXM4-80GB (work assumed compute-bound)");
  // bf16 attention cannot go to a V100.
  EXPECT_FALSE(none.Scale(fwd, {}, Gpu("V100-SXM2-32GB")).ok());
}

TEST(KernelModelTest, BothGpusCalibratedCarryTheirEfficienciesAndFloors) {
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  const GpuSpec& h100 = Gpu("H100-SXM5-80GB");
  KernelModel model = CalibratedOn("A100-SXM4-80GB", 0.8, 3000);
  KernelModel h = CalibratedOn("H100-SXM5-80GB", 0.4, 3000);
  model.Add(h.calibrations()[0]);
  const MeasuredKernel big{kElementwise, 5'000'000, &a100, DType::kFp32, {}, "copy"};
  StatusOr<Prediction> p = model.Scale(big, {}, h100);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->calibration, 1);  // The H100's, for its floor.
  const double ratio = model.calibrations()[0].efficiency() / model.calibrations()[1].efficiency();
  EXPECT_NEAR(static_cast<double>(p->duration_ns),
              5e6 * a100.hbm_bytes_per_s / h100.hbm_bytes_per_s * ratio, 2000);
}

TEST(KernelModelTest, ScaleRefusesBadMeasurementsAndFactors) {
  const GpuSpec& a100 = Gpu("A100-SXM4-80GB");
  const KernelModel none;
  const MeasuredKernel k{kElementwise, 5000, &a100, DType::kFp32, {}, "k"};
  EXPECT_FALSE(none.Scale(k, {.bytes = 0, .flops = 1}, a100).ok());
  EXPECT_FALSE(none.Scale(k, {.bytes = 1, .flops = -2}, a100).ok());
  EXPECT_FALSE(none.Scale(k, {.bytes = INFINITY, .flops = 1}, a100).ok());
  MeasuredKernel bad = k;
  bad.duration_ns = 0;
  EXPECT_FALSE(none.Scale(bad, {}, a100).ok());
  bad = k;
  bad.gpu = nullptr;
  EXPECT_FALSE(none.Scale(bad, {}, a100).ok());
  bad = k;
  bad.key = {KernelClass::kCommunication};
  EXPECT_FALSE(none.Scale(bad, {}, a100).ok());
  bad = k;
  bad.work = {-1, 0};
  EXPECT_FALSE(none.Scale(bad, {}, a100).ok());
  EXPECT_FALSE(none.Scale(k, {.bytes = 1e300, .flops = 1}, a100).ok());
}

TEST(KernelModelTest, CopyKeysHaveNamesAndRoundTrip) {
  EXPECT_EQ(KeyName({KernelClass::kMemcpy, CopyKind::kHostToDevice, true}), "memcpy HtoD pageable");
  EXPECT_EQ(KeyName({KernelClass::kMemcpy, CopyKind::kDeviceToHost, false}), "memcpy DtoH pinned");
  EXPECT_EQ(KeyName({KernelClass::kMemcpy, CopyKind::kDeviceToDevice}), "memcpy DtoD");
  EXPECT_EQ(KeyName({KernelClass::kSoftmax}), "softmax");
  for (int i = 0; i < kCopyKindCount; ++i) {
    const auto kind = static_cast<CopyKind>(i);
    EXPECT_EQ(CopyKindFromName(CopyKindName(kind)), kind);
  }
  EXPECT_FALSE(CopyKindFromName("HtoX").has_value());
}

}  // namespace
}  // namespace lumos::modeler::models
