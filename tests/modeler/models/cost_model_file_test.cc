// The model file (modeler/models/cost_model.h): written, read back and answering exactly as
// the fitted model did; deterministic; versioned; a damaged file is one error naming the
// element.
#include <gtest/gtest.h>

#include <string>

#include "modeler/models/cost_model.h"
#include "modeler/models/cost_queries.h"
#include "modeler/models/hardware_specs.h"

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
  const std::string version = "\"version\": 1,";
  ASSERT_NE(json.find(version), std::string::npos);
  std::string newer = json;
  newer.replace(newer.find(version), version.size(), "\"version\": 2,");
  auto refused = ParseCostModel(newer, "m.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "m.json: model version 2 is newer than this lumos-model reads (1)");
  const std::pair<const char*, const char*> bad[] = {
      {"", "m.json: not valid JSON ("},
      {"[1, 2]", "m.json: not a Lumos cost model (no \"format\": \"lumos-cost-model\"; "},
      {"{\"format\": \"lumos-cost-model\", \"version\": 1}", "m.json: no \"gemm\" array"},
      {"{\"format\": \"lumos-cost-model\", \"version\": 1, \"gemm\": [{\"gpu\": \"X\"}]}",
       "m.json: gemm[0]: no \"dtype\""},
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

}  // namespace
}  // namespace lumos::modeler::models
