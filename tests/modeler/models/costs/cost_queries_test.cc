// costs fit and predict of the non-GEMM kernel model (cost_queries.h), in-process: fitted on the
// bundled traces of a real V100 job (examples/dlrm-8rank), answered as KernelModel::Predict
// answers on the same calibrations, through the model file and back.
#include "modeler/models/costs/cost_queries.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "modeler/models/costs/cost_model.h"
#include "modeler/models/kernels/kernel_model.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::models {
namespace {

std::string Example() { return std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank"; }

StatusOr<CostModel> FitExample(FitLog* log) {
  auto inputs = ExpandCostInputs({Example()}, &log->problems);
  if (!inputs.ok()) return inputs.status();
  return FitCostInputs(*inputs, SpecTable::Builtin(), *SpecTable::Builtin().FindNetwork("ib400"),
                       log);
}

// What predict must answer for `row` (the query columns as given): Predict called directly.
std::string Expected(const KernelModel& model, const std::string& row, const KernelKey& key,
                     KernelWork work, DType dtype, const GpuSpec* gpu) {
  auto p = model.Predict(KernelWorkQuery{key, work, dtype, gpu});
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (!p.ok()) return "";
  // Written as SourceText gives it: one CSV cell (the text has no comma).
  return row + "," + FormatMicroseconds(p->duration_ns) + "," + model.SourceText(*p) + "\n";
}

TEST(CostQueriesTest, TracedCopiesAndMemsetsCalibrateTheKernelModelOfTheirGpu) {
  FitLog log;
  auto model = FitExample(&log);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(log.problems.empty());
  EXPECT_TRUE(model->gemm.calibrations().empty());
  EXPECT_TRUE(model->collectives.empty());
  const std::vector<KernelCalibration>& calibrations = model->kernels.calibrations();
  ASSERT_FALSE(calibrations.empty());
  ASSERT_EQ(log.notes.size(), 1u);
  const std::string& note = log.notes[0];
  EXPECT_NE(note.find("; kernels: "), std::string::npos) << note;
  uint32_t kernels = 0;
  for (const KernelCalibration& c : calibrations) {
    EXPECT_EQ(c.gpu(), "V100-SXM2-32GB");
    EXPECT_TRUE(c.key().kind == KernelClass::kMemcpy || c.key().kind == KernelClass::kMemset)
        << KeyName(c.key());
    EXPECT_GE(c.kernels(), KernelCalibration::kMinSamples);
    // The job's note names every key it calibrated with its samples.
    EXPECT_NE(note.find(KeyName(c.key()) + " " + std::to_string(c.kernels())), std::string::npos)
        << note;
    kernels += c.kernels();
  }
  EXPECT_NE(note.find(std::to_string(kernels) + " sample(s) on V100-SXM2-32GB"), std::string::npos)
      << note;
  const SpecTable& specs = SpecTable::Builtin();
  const GpuSpec* v100 = specs.FindGpu("V100-SXM2-32GB");
  const GpuSpec* h100 = specs.FindGpu("H100-SXM5-80GB");
  ASSERT_NE(v100, nullptr);
  ASSERT_NE(h100, nullptr);
  const int pinned = model->kernels.Find(
      "V100-SXM2-32GB", KernelKey{KernelClass::kMemcpy, CopyKind::kHostToDevice, false});
  ASSERT_GE(pinned, 0);
  const std::string header = "class,dtype,bytes,flops,gpu";
  const std::string queries = header +
                              "\n"
                              "elementwise,fp32,4096,1024,\n"
                              "elementwise,fp32,67108864,16777216,\n"
                              "elementwise,bf16,1048576,,H100-SXM5-80GB\n"
                              "memcpy HtoD pinned,fp32,8388608,,\n"
                              "memcpy HtoD,fp32,8388608,,H100-SXM5-80GB\n"
                              "memset,fp32,1048576,,\n";
  auto table = io::ParseCsv(queries, "k.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  auto out = PredictCostQueries(*model, *table, v100, specs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const KernelModel& m = model->kernels;
  const KernelKey elementwise{KernelClass::kElementwise};
  const KernelKey htod{KernelClass::kMemcpy, CopyKind::kHostToDevice, false};
  const std::string expected =
      header + ",predicted_us,source\n" +
      Expected(m, "elementwise,fp32,4096,1024,", elementwise, {1024, 4096}, DType::kFp32, v100) +
      Expected(m, "elementwise,fp32,67108864,16777216,", elementwise, {16777216, 67108864},
               DType::kFp32, v100) +
      Expected(m, "elementwise,bf16,1048576,,H100-SXM5-80GB", elementwise, {0, 1048576},
               DType::kBf16, h100) +
      Expected(m, "memcpy HtoD pinned,fp32,8388608,,", htod, {0, 8388608}, DType::kFp32, v100) +
      Expected(m, "memcpy HtoD,fp32,8388608,,H100-SXM5-80GB", htod, {0, 8388608}, DType::kFp32,
               h100) +
      Expected(m, "memset,fp32,1048576,,", KernelKey{KernelClass::kMemset}, {0, 1048576},
               DType::kFp32, v100);
  EXPECT_EQ(out->csv, expected);
  EXPECT_EQ(out->rows, 6u);
  // Elementwise kernels have no work in Lumos traces: roofline only, said so; the pinned copy
  // rests on its class fit, on the V100 and carried to the H100.
  EXPECT_EQ(out->sources[static_cast<int>(SourceKind::kRoofline)], 3u);
  EXPECT_EQ(out->sources[static_cast<int>(SourceKind::kClassFit)], 3u);
  EXPECT_NE(out->csv.find(",roofline only\n"), std::string::npos);
  EXPECT_NE(out->csv.find(",class fit on V100-SXM2-32GB (memcpy HtoD pinned; "), std::string::npos)
      << out->csv;

  // The model file round trip: version 3, the same calibrations, the same answers and bytes.
  const std::string json = CostModelJson(*model);
  EXPECT_NE(json.find("\"version\": 3,"), std::string::npos);
  EXPECT_NE(json.find("\"kernels\": {\"format\":\"lumos-kernel-model\""), std::string::npos);
  auto back = ParseCostModel(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->kernels.calibrations().size(), calibrations.size());
  EXPECT_EQ(CostModelJson(*back), json);
  auto again = PredictCostQueries(*back, *table, v100, specs);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->csv, out->csv);
}

// Attention rows give their shape (AttentionWork) or their work; a model without kernel
// calibrations (a version 2 file) answers every kernel query from the roofline and says so.
TEST(CostQueriesTest, AModelWithoutKernelCalibrationsAnswersRooflineOnly) {
  auto model = ReadCostModel(std::string(LUMOS_SOURCE_DIR) +
                             "/tests/data/cost_model_v2/gemm_nccl_a100.json");
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->kernels.calibrations().empty());
  const SpecTable& specs = SpecTable::Builtin();
  const GpuSpec* a100 = specs.FindGpu("A100-SXM4-80GB");
  auto table = io::ParseCsv(
      "class,dtype,bytes,flops,batch,heads,seq_q,seq_kv,head_dim,causal,backward\n"
      "attention,bf16,,,8,16,2048,,128,1,\n"
      "attention,bf16,,,8,16,2048,4096,128,0,1\n"
      "norm,fp32,33554432,,,,,,,,\n",
      "k.csv");
  ASSERT_TRUE(table.ok()) << table.status().message();
  auto out = PredictCostQueries(*model, *table, a100, specs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  auto causal = AttentionWork(AttentionShape{8, 16, 0, 2048, 0, 128, true, false}, DType::kBf16);
  auto backward =
      AttentionWork(AttentionShape{8, 16, 0, 2048, 4096, 128, false, true}, DType::kBf16);
  ASSERT_TRUE(causal.ok() && backward.ok());
  const KernelModel none;
  const KernelKey attention{KernelClass::kAttention};
  EXPECT_EQ(out->csv,
            "class,dtype,bytes,flops,batch,heads,seq_q,seq_kv,head_dim,causal,backward,"
            "predicted_us,source\n" +
                Expected(none, "attention,bf16,,,8,16,2048,,128,1,", attention, *causal,
                         DType::kBf16, a100) +
                Expected(none, "attention,bf16,,,8,16,2048,4096,128,0,1", attention, *backward,
                         DType::kBf16, a100) +
                Expected(none, "norm,fp32,33554432,,,,,,,,", KernelKey{KernelClass::kNorm},
                         {0, 33554432}, DType::kFp32, a100));
  EXPECT_EQ(out->sources[static_cast<int>(SourceKind::kRoofline)], 3u);
}

// A measured kernel table (data/costs/kernels_a100_megatron.csv: a real Megatron-LM layer's
// non-GEMM kernels, scripts/derive-megatron-kernels.py) calibrates each class it holds on its
// GPU, as traced kernels do: the norms well under the roofline, the fused elementwise kernels
// nearer it.
TEST(CostQueriesTest, AMeasuredKernelTableCalibratesItsClassesOnItsGpu) {
  CostInputs inputs;
  inputs.tables = {std::string(LUMOS_SOURCE_DIR) + "/data/costs/kernels_a100_megatron.csv"};
  FitLog log;
  auto model =
      FitCostInputs(inputs, SpecTable::Builtin(), *SpecTable::Builtin().FindNetwork("ib400"), &log);
  ASSERT_TRUE(model.ok()) << model.status().message();
  std::map<std::string, const KernelCalibration*> by_class;
  for (const KernelCalibration& c : model->kernels.calibrations()) {
    EXPECT_EQ(c.gpu(), "A100-SXM4-80GB");
    by_class[KeyName(c.key())] = &c;
  }
  ASSERT_EQ(by_class.size(), 3u);
  ASSERT_TRUE(by_class.count("norm") && by_class.count("softmax") && by_class.count("elementwise"));
  EXPECT_EQ(by_class["norm"]->kernels(), 8u);  // One size a rank: the default floor.
  EXPECT_EQ(by_class["norm"]->floor_ns(), KernelModel::kDefaultFloorNs);
  EXPECT_GT(by_class["norm"]->efficiency(), 0.4);
  EXPECT_LT(by_class["norm"]->efficiency(), 0.6);
  EXPECT_GT(by_class["softmax"]->efficiency(), 0.5);
  EXPECT_LT(by_class["softmax"]->efficiency(), 0.75);
  EXPECT_EQ(by_class["elementwise"]->kernels(), 32u);
  EXPECT_GT(by_class["elementwise"]->efficiency(), by_class["norm"]->efficiency());
  // One efficiency for the fused kernels (near 0.8-0.9 of the roofline) and the bias add and
  // transpose copy (near 0.4-0.5): a median error of about 40 %, said as it is.
  EXPECT_EQ(by_class["elementwise"]->floor_ns(), KernelModel::kDefaultFloorNs);
  EXPECT_LT(by_class["elementwise"]->median_error(), 0.5);
}

// What a measured kernel table must hold, each refusal naming the file and row.
TEST(CostQueriesTest, AKernelTableWithoutItsMeasurementsIsRefused) {
  ::lumos::testing::TempDir dir;
  const struct {
    const char* csv;
    const char* error;
  } kCases[] = {
      {"class,bytes\nelementwise,100\n", "kernel queries (a class column without latency_us)"},
      {"class,dtype,bytes,latency_us\nelementwise,fp16,100,3\n", "a measured kernel needs its gpu"},
      {"gpu,class,dtype,bytes,latency_us\nA100-SXM4-80GB,elementwise,fp16,100,0\n", "latency_us"},
      {"gpu,class,dtype,bytes,latency_us\nNoSuchGpu,elementwise,fp16,100,3\n", "NoSuchGpu"},
      {"gpu,class,dtype,bytes,batch,heads,seq_q,head_dim,latency_us\n"
       "A100-SXM4-80GB,attention,bf16,,1,8,512,64,9\n",
       "costs fit --attention"},
  };
  for (const auto& c : kCases) {
    const std::string path = dir.path() + "/kernels.csv";
    std::ofstream(path) << c.csv;
    CostInputs inputs;
    inputs.tables = {path};
    FitLog log;
    auto model = FitCostInputs(inputs, SpecTable::Builtin(),
                               *SpecTable::Builtin().FindNetwork("ib400"), &log);
    ASSERT_FALSE(model.ok()) << c.csv;
    EXPECT_NE(model.status().message().find(c.error), std::string::npos)
        << model.status().message();
    EXPECT_NE(model.status().message().find("kernels.csv"), std::string::npos)
        << model.status().message();
  }
}

}  // namespace
}  // namespace lumos::modeler::models
