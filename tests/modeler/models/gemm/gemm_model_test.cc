// The GEMM model (modeler/models/gemm/gemm_model.h) fitted on the shared measured tables
// (../shared/data/costs): what each kind of query rests on, and the physics it must keep.
#include "modeler/models/gemm/gemm_model.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

#include "modeler/models/costs/cost_model.h"
#include "modeler/models/gemm/gemm_table.h"
#include "modeler/models/hardware/hardware_specs.h"

namespace lumos::modeler::models {
namespace {

using Shape = std::tuple<int64_t, int64_t, int64_t>;

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

struct Fitted {
  io::CsvTable table;
  std::map<Shape, int64_t> measured;  // Shape -> latency_ns.
  CostModel model;
};

// Fits one shared table (once per test binary).
const Fitted& Fit(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Fitted>> cache;
  std::unique_ptr<Fitted>& fitted = cache[name];
  if (fitted) return *fitted;
  fitted = std::make_unique<Fitted>();
  auto table = io::ReadCsv(Costs(name));
  EXPECT_TRUE(table.ok()) << table.status().message();
  fitted->table = std::move(*table);
  auto rows = ReadGemmRows(fitted->table, Latency::kRequired);
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  for (const GemmRow& row : *rows) {
    fitted->measured[{row.shape.m, row.shape.n, row.shape.k}] = row.latency_ns;
  }
  auto model = FitCostModel({GemmTable{&fitted->table, *rows}}, SpecTable::Builtin());
  EXPECT_TRUE(model.ok()) << model.status().message();
  fitted->model = std::move(*model);
  return *fitted;
}

KernelQuery Query(const char* gpu, DType dtype, int64_t m, int64_t n, int64_t k,
                  int64_t batch = 1) {
  KernelQuery q;
  q.gemm = GemmShape{m, n, k, batch};
  q.dtype = dtype;
  q.gpu = SpecTable::Builtin().FindGpu(gpu);
  EXPECT_NE(q.gpu, nullptr) << gpu;
  return q;
}

constexpr const char kH100[] = "H100-SXM5-80GB";
constexpr const char kA100[] = "A100-SXM4-80GB";

TEST(GemmModelTest, AMeasuredShapeIsItsMeasurementExactly) {
  const Fitted& h100 = Fit("gemm_h100_bf16.csv");
  size_t checked = 0;
  for (const auto& [shape, latency_ns] : h100.measured) {
    if (checked++ % 97 != 0) continue;  // Every 97th: 368 shapes across the table.
    const auto [m, n, k] = shape;
    auto p = h100.model.gemm.Predict(Query(kH100, DType::kBf16, m, n, k));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->duration_ns, latency_ns);
    EXPECT_EQ(p->source, SourceKind::kMeasured);
    EXPECT_EQ(h100.model.gemm.SourceText(*p), "measured");
  }
}

TEST(GemmModelTest, AnUnseenShapeBetweenMeasuredOnesIsInterpolatedBetweenThem) {
  const Fitted& h100 = Fit("gemm_h100_bf16.csv");
  // m between 2048 and 2304 (both measured, 2049 too), n and k measured.
  for (const auto& [n, k] : {std::pair<int64_t, int64_t>{4096, 4096}, {8192, 1024}, {512, 8192}}) {
    auto p = h100.model.gemm.Predict(Query(kH100, DType::kBf16, 2200, n, k));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->source, SourceKind::kInterpolated);
    const double low = static_cast<double>(h100.measured.at({2048, n, k}));
    const double high = static_cast<double>(h100.measured.at({2304, n, k}));
    EXPECT_GT(p->duration_ns, 0.9 * std::min(low, high)) << n << " " << k;
    EXPECT_LT(p->duration_ns, 1.1 * std::max(low, high)) << n << " " << k;
  }
}

TEST(GemmModelTest, BeyondTheMeasuredRangeTheSurfaceAnswersAndWorkStillCosts) {
  const Fitted& h100 = Fit("gemm_h100_bf16.csv");
  auto beyond = h100.model.gemm.Predict(Query(kH100, DType::kBf16, 131072, 8192, 8192));
  ASSERT_TRUE(beyond.ok());
  EXPECT_EQ(beyond->source, SourceKind::kSurface);
  EXPECT_EQ(h100.model.gemm.SourceText(*beyond), "surface fitted on H100-SXM5-80GB bf16");
  // Four times the rows of the largest measured m: at least three times its time, at most five.
  const double largest = static_cast<double>(h100.measured.at({32768, 8192, 8192}));
  EXPECT_GT(beyond->duration_ns, 3 * largest);
  EXPECT_LT(beyond->duration_ns, 5 * largest);
  // Nothing goes below the floor (the fastest measured kernel).
  auto tiny = h100.model.gemm.Predict(Query(kH100, DType::kBf16, 1, 1, 1));
  ASSERT_TRUE(tiny.ok());
  EXPECT_GE(tiny->duration_ns, h100.model.gemm.calibrations()[0].floor_ns());
}

TEST(GemmModelTest, AnotherGpuIsScaledThroughBothRooflines) {
  const Fitted& a100 = Fit("gemm_a100_bf16.csv");
  const SpecTable& specs = SpecTable::Builtin();
  // A large compute-bound GEMM far above the floor: the ratio of the two dense peaks.
  auto big = a100.model.gemm.Predict(Query(kH100, DType::kBf16, 8192, 8192, 8192));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->source, SourceKind::kScaledMeasured);
  EXPECT_EQ(a100.model.gemm.SourceText(*big), "scaled from A100-SXM4-80GB bf16 measured");
  const double peaks =
      specs.FindGpu(kA100)->PeakFlops(DType::kBf16) / specs.FindGpu(kH100)->PeakFlops(DType::kBf16);
  const double ratio = static_cast<double>(big->duration_ns) /
                       static_cast<double>(a100.measured.at({8192, 8192, 8192}));
  EXPECT_NEAR(ratio, peaks, 0.02 * peaks);
  // A GEMV is memory-bound: the ratio of the HBM bandwidths.
  auto gemv = a100.model.gemm.Predict(Query(kH100, DType::kBf16, 1, 65536, 16384));
  ASSERT_TRUE(gemv.ok());
  const double bandwidths =
      specs.FindGpu(kA100)->hbm_bytes_per_s / specs.FindGpu(kH100)->hbm_bytes_per_s;
  const double gemv_ratio = static_cast<double>(gemv->duration_ns) /
                            static_cast<double>(a100.measured.at({1, 65536, 16384}));
  EXPECT_NEAR(gemv_ratio, bandwidths, 0.03 * bandwidths);
  // A kernel at the floor stays at the floor: launch latency does not scale with FLOPs.
  auto small = a100.model.gemm.Predict(Query(kH100, DType::kBf16, 1, 32, 32));
  ASSERT_TRUE(small.ok());
  EXPECT_NEAR(static_cast<double>(small->duration_ns),
              static_cast<double>(a100.measured.at({1, 32, 32})), 0.05 * small->duration_ns);
}

TEST(GemmModelTest, TheCalibrationIsChosenSameGpuFirstThenSameDtypeThenNearestPeak) {
  auto h100_table = io::ReadCsv(Costs("gemm_h100_bf16.csv"));
  auto a100_table = io::ReadCsv(Costs("gemm_a100_bf16.csv"));
  ASSERT_TRUE(h100_table.ok() && a100_table.ok());
  auto h100_rows = ReadGemmRows(*h100_table, Latency::kRequired);
  auto a100_rows = ReadGemmRows(*a100_table, Latency::kRequired);
  auto both =
      FitCostModel({GemmTable{&*a100_table, *a100_rows}, GemmTable{&*h100_table, *h100_rows}},
                   SpecTable::Builtin());
  ASSERT_TRUE(both.ok()) << both.status().message();
  const GemmModel& model = both->gemm;
  const SpecTable& specs = SpecTable::Builtin();
  auto gpu_of = [&](const char* gpu, DType dtype) {
    return model.calibrations()[model.Select(*specs.FindGpu(gpu), dtype)].gpu();
  };
  EXPECT_EQ(gpu_of(kH100, DType::kBf16), kH100);
  EXPECT_EQ(gpu_of(kA100, DType::kBf16), kA100);
  EXPECT_EQ(gpu_of(kH100, DType::kFp8), kH100);              // Same GPU, other dtype.
  EXPECT_EQ(gpu_of("B200", DType::kBf16), kH100);            // 989 TFLOP/s is nearer 2250 than 312.
  EXPECT_EQ(gpu_of("A100-SXM4-40GB", DType::kBf16), kA100);  // The same peak.
  auto fp8 = model.Predict(Query(kH100, DType::kFp8, 4096, 4096, 4096));
  ASSERT_TRUE(fp8.ok());
  EXPECT_EQ(model.SourceText(*fp8), "scaled from H100-SXM5-80GB bf16 measured");
}

TEST(GemmModelTest, WithoutAnyCalibrationTheRooflineAloneAnswersAndSaysSo) {
  GemmModel empty;
  auto p = empty.Predict(Query(kH100, DType::kBf16, 8192, 8192, 8192));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->source, SourceKind::kRoofline);
  EXPECT_EQ(empty.SourceText(*p), "roofline only");
  // 2·8192³ FLOP at 989.4 TFLOP/s: 1.111 ms, above the floor that does not matter here.
  const double roofline_ns = 2.0 * 8192 * 8192 * 8192 / 989.4e12 * 1e9;
  EXPECT_NEAR(static_cast<double>(p->duration_ns), roofline_ns, 0.01 * roofline_ns);
}

TEST(GemmModelTest, BatchedGemmsAreFoldedIntoRowsAndSaySo) {
  const Fitted& h100 = Fit("gemm_h100_bf16.csv");
  auto one = h100.model.gemm.Predict(Query(kH100, DType::kBf16, 1024, 1024, 1024));
  auto four = h100.model.gemm.Predict(Query(kH100, DType::kBf16, 1024, 1024, 1024, 4));
  ASSERT_TRUE(one.ok() && four.ok());
  EXPECT_TRUE(four->batch_folded);
  EXPECT_GT(four->duration_ns, one->duration_ns);
  EXPECT_LT(four->duration_ns, 4 * one->duration_ns);  // Four at once fill the GPU better.
  EXPECT_EQ(h100.model.gemm.SourceText(*four),
            "scaled from H100-SXM5-80GB bf16 measured"
            " (batch folded into m)");
}

TEST(GemmModelTest, ImpossibleShapesAndUnsupportedDtypesAreErrors) {
  const Fitted& h100 = Fit("gemm_h100_bf16.csv");
  const std::pair<GemmShape, const char*> bad[] = {
      {{0, 8, 8, 1}, "m = 0: must be > 0"},
      {{8, -1, 8, 1}, "n = -1: must be > 0"},
      {{8, 8, (int64_t{1} << 31) + 1, 1}, "k = 2147483649: larger than 2^31"},
      {{8, 8, 8, 0}, "batch = 0: must be > 0"},
      {{1 << 20, 8, 8, 1 << 12}, "m × batch = 4294967296: larger than 2^31"},
  };
  for (const auto& [shape, error] : bad) {
    KernelQuery q = Query(kH100, DType::kBf16, 1, 1, 1);
    q.gemm = shape;
    auto p = h100.model.gemm.Predict(q);
    ASSERT_FALSE(p.ok()) << error;
    EXPECT_EQ(p.status().message(), error);
  }
  auto v100 = h100.model.gemm.Predict(Query("V100-SXM2-32GB", DType::kBf16, 64, 64, 64));
  ASSERT_FALSE(v100.ok());
  EXPECT_EQ(v100.status().message(),
            "V100-SXM2-32GB has no bf16 peak in the specs (not supported)");
  // The largest shape allowed still gives a finite duration, or says why not.
  auto huge = h100.model.gemm.Predict(
      Query(kH100, DType::kBf16, int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31));
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("a duration beyond 10^18 ns"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler::models
