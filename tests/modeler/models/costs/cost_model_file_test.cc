// The model file (modeler/models/costs/cost_model.h): written, read back and answering exactly as
// the fitted model did; deterministic; versioned; a damaged file is one error naming the
// element.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "modeler/models/collectives/collective_model_json.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/costs/cost_queries.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/query/cost_table.h"

namespace lumos::modeler::models {
namespace {

std::string Costs(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

const CostModel& Fitted() {
  static const CostModel* const model = [] {
    auto fitted = FitCostTables({Costs("gemm_a100_bf16.csv"), Costs("gemm_h100_fp8.csv")},
                                SpecTable::Builtin());
    EXPECT_TRUE(fitted.ok()) << fitted.status().message();
    return new CostModel(std::move(*fitted));
  }();
  return *model;
}

TEST(CostModelFileTest, ReadBackItAnswersExactlyAsTheFittedModel) {
  const CostModel& model = Fitted();
  const std::string json = CostModelJson(model);
  auto back = ParseCostModel(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->inputs, model.inputs);
  ASSERT_EQ(back->gemm.calibrations().size(), 2u);
  EXPECT_EQ(CostModelJson(*back), json);  // Nothing lost or rounded on the way.
  const SpecTable& specs = SpecTable::Builtin();
  size_t queries = 0;
  for (const char* gpu : {"A100-SXM4-80GB", "H100-SXM5-80GB", "B200"}) {
    for (DType dtype : {DType::kBf16, DType::kFp8}) {
      for (int64_t m : {1, 7, 100, 4096, 100000}) {
        for (int64_t nk : {32, 1000, 8192}) {
          KernelQuery q;
          q.gemm = GemmShape{m, nk, nk, 1};
          q.dtype = dtype;
          q.gpu = specs.FindGpu(gpu);
          auto a = model.gemm.Predict(q);
          auto b = back->gemm.Predict(q);
          ASSERT_EQ(a.ok(), b.ok());
          if (!a.ok()) continue;
          EXPECT_EQ(a->duration_ns, b->duration_ns);
          EXPECT_EQ(model.gemm.SourceText(*a), back->gemm.SourceText(*b));
          ++queries;
        }
      }
    }
  }
  EXPECT_GT(queries, 50u);
}

TEST(CostModelFileTest, TheSameInputsGiveTheSameBytesWhateverTheirOrder) {
  auto again = FitCostTables({Costs("gemm_h100_fp8.csv"), Costs("gemm_a100_bf16.csv")},
                             SpecTable::Builtin());
  ASSERT_TRUE(again.ok());
  again->inputs = Fitted().inputs;  // The inputs are listed as given; the rest is ordered.
  EXPECT_EQ(CostModelJson(*again), CostModelJson(Fitted()));
}

TEST(CostModelFileTest, ANewerVersionOrAnotherFileIsRefusedWithOneError) {
  std::string json = CostModelJson(Fitted());
  const std::string version = "\"version\": 3,";
  ASSERT_NE(json.find(version), std::string::npos);
  std::string newer = json;
  newer.replace(newer.find(version), version.size(), "\"version\": 4,");
  auto refused = ParseCostModel(newer, "m.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "m.json: model version 4 is newer than this lumos-model reads (3)");
  const std::pair<const char*, const char*> bad[] = {
      {"", "m.json: not valid JSON ("},
      {"[1, 2]", "m.json: not a Lumos cost model (no \"format\": \"lumos-cost-model\"; "},
      {"{\"format\": \"lumos-cost-model\", \"version\": 1}", "m.json: no \"gemm\" array"},
      {"{\"format\": \"lumos-cost-model\", \"version\": 1, \"gemm\": [{\"gpu\": \"X\"}]}",
       "m.json: gemm[0]: no \"dtype\""},
      {"{\"format\": \"lumos-cost-model\", \"version\": 2, \"gemm\": []}",
       "m.json: no \"collectives\" array"},
      {"{\"format\": \"lumos-cost-model\", \"version\": 3, \"gemm\": [], \"collectives\": []}",
       "m.json: no \"kernels\" object"},
      {"{\"format\": \"lumos-cost-model\", \"version\": 3, \"gemm\": [], \"collectives\": [], "
       "\"kernels\": {\"format\": \"lumos-kernel-model\", \"version\": 9, \"calibrations\": []}}",
       "m.json: kernels: "},
      {"{\"format\": \"lumos-cost-model\", \"version\": 2, \"gemm\": [], \"collectives\": "
       "[{\"gpu\": \"X\", \"network\": \"ib400\", \"model\": {\"format\": \"x\"}}]}",
       "m.json: collectives[0]: collective model: the document: format is 'x', not "
       "'lumos-collective-model'"},
  };
  for (const auto& [text, error] : bad) {
    auto r = ParseCostModel(text, "m.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().message().rfind(error, 0), 0u) << r.status().message();
  }
  // A damaged point names itself.
  std::string damaged = json;
  const size_t points = damaged.find("\"points\": [[");
  ASSERT_NE(points, std::string::npos);
  damaged.replace(points + 12, 1, "0");  // m = 0.
  auto r = ParseCostModel(damaged, "m.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("m.json: gemm[0].points[0]: ", 0), 0u)
      << r.status().message();
}

// Both kinds of table in one file: read back, every collective calibration is what was written
// (the same JSON) and answers every query as the fitted one did.
TEST(CostModelFileTest, CollectiveCalibrationsRoundTrip) {
  auto fitted =
      FitCostTables({Costs("nccl_h100.csv"), Costs("gemm_a100_bf16.csv"), Costs("nccl_a100.csv")},
                    SpecTable::Builtin());
  ASSERT_TRUE(fitted.ok()) << fitted.status().message();
  ASSERT_EQ(fitted->collectives.size(), 2u);
  ASSERT_EQ(fitted->gemm.calibrations().size(), 1u);
  const std::string json = CostModelJson(*fitted);
  auto back = ParseCostModel(json, "m.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(CostModelJson(*back), json);
  EXPECT_EQ(back->inputs, fitted->inputs);
  ASSERT_EQ(back->collectives.size(), 2u);
  const std::string queries =
      "gpu,op,dtype,ranks,bytes\n"
      "H100-SXM5-80GB,all_reduce,half,8,1048576\n"
      "H100-SXM5-80GB,all_gather,half,8,1000000\n"
      "A100-SXM4-80GB,reduce_scatter,int8,4,65536\n"
      "B200,all_reduce,bfloat16,64,1073741824\n"
      "V100-SXM2-32GB,alltoall,half,16,4096\n";
  auto table = io::ParseCsv(queries, "q.csv");
  ASSERT_TRUE(table.ok());
  auto a = PredictCostQueries(*fitted, *table, nullptr, SpecTable::Builtin());
  auto b = PredictCostQueries(*back, *table, nullptr, SpecTable::Builtin());
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().message();
  EXPECT_EQ(a->csv, b->csv);
  EXPECT_EQ(a->rows, 5u);
}

// A version 1 file (tests/data/cost_model_v1/, written by the version 1 code) is still read:
// GEMMs only, no collectives, answering as it did then.
TEST(CostModelFileTest, AVersionOneFileIsStillRead) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/tests/data/cost_model_v1/gemm_a100_bf16_1024.json";
  auto model = ReadCostModel(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->collectives.empty());
  ASSERT_EQ(model->gemm.calibrations().size(), 1u);
  EXPECT_EQ(model->gemm.calibrations()[0].points().size(), 572u);
  auto queries = io::ParseCsv("m,n,k,dtype\n8192,8192,8192,bf16\n3000,5000,7000,bf16\n", "q.csv");
  ASSERT_TRUE(queries.ok());
  const SpecTable& specs = SpecTable::Builtin();
  auto out = PredictCostQueries(*model, *queries, specs.FindGpu("A100-SXM4-80GB"), specs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  // What the version 1 command answered for this file (its README).
  EXPECT_EQ(out->csv,
            "m,n,k,dtype,predicted_us,source\n"
            "8192,8192,8192,bf16,4188.501,measured\n"
            "3000,5000,7000,bf16,785.923,interpolated\n");
  // Written again it is a version 3 file with no collectives and no kernel calibrations.
  EXPECT_NE(CostModelJson(*model).find("\"version\": 3,"), std::string::npos);
  EXPECT_NE(CostModelJson(*model).find("\"collectives\": []"), std::string::npos);
  EXPECT_NE(CostModelJson(*model).find("\"calibrations\":[]"), std::string::npos);
}

// A version 2 file (tests/data/cost_model_v2/, written by the version 2 code) is still read:
// GEMMs and collectives, no kernel calibrations, answering as it did then.
TEST(CostModelFileTest, AVersionTwoFileIsStillRead) {
  const std::string path =
      std::string(LUMOS_SOURCE_DIR) + "/tests/data/cost_model_v2/gemm_nccl_a100.json";
  auto model = ReadCostModel(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  ASSERT_EQ(model->gemm.calibrations().size(), 1u);
  EXPECT_EQ(model->gemm.calibrations()[0].points().size(), 572u);
  ASSERT_EQ(model->collectives.size(), 1u);
  EXPECT_EQ(model->collectives[0].gpu, "A100-SXM4-80GB");
  const SpecTable& specs = SpecTable::Builtin();
  const GpuSpec* a100 = specs.FindGpu("A100-SXM4-80GB");
  auto gemm = io::ParseCsv("m,n,k,dtype\n8192,8192,8192,bf16\n3000,5000,7000,bf16\n", "q.csv");
  ASSERT_TRUE(gemm.ok());
  auto gemm_out = PredictCostQueries(*model, *gemm, a100, specs);
  ASSERT_TRUE(gemm_out.ok()) << gemm_out.status().message();
  // What the version 2 command answered for this file (its README); the network's term of the
  // 64-rank all-reduce has changed since (a node's 8 NICs, not one, carry what leaves it).
  EXPECT_EQ(gemm_out->csv,
            "m,n,k,dtype,predicted_us,source\n"
            "8192,8192,8192,bf16,4188.501,measured\n"
            "3000,5000,7000,bf16,785.923,interpolated\n");
  auto ar = io::ParseCsv(
      "op,dtype,ranks,bytes\nall_reduce,bfloat16,8,1073741824\nall_reduce,bfloat16,64,1073741824\n",
      "ar.csv");
  ASSERT_TRUE(ar.ok());
  auto ar_out = PredictCostQueries(*model, *ar, a100, specs);
  ASSERT_TRUE(ar_out.ok()) << ar_out.status().message();
  EXPECT_EQ(ar_out->csv,
            "op,dtype,ranks,bytes,predicted_us,source\n"
            "all_reduce,bfloat16,8,1073741824,8904.808,scaled from A100-SXM4-80GB all_reduce fit\n"
            "all_reduce,bfloat16,64,1073741824,10231.563,model only (A100-SXM4-80GB all_reduce "
            "fit; network never measured)\n");
}

}  // namespace
}  // namespace lumos::modeler::models
