// The collective model as JSON: what is read back predicts what was written, the object can
// sit under a key of a larger model file, and damaged or foreign documents are one clear error
// naming where.
#include "modeler/models/collectives/collective_model_json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "modeler/models/collectives/collective_validation.h"
#include "tests/modeler/models/collectives/collective_test_util.h"

namespace lumos::modeler::models {
namespace {

using schema::CollectiveOp;

CollectiveModel H100Model() {
  return testing::Fit(testing::Table("nccl_h100.csv"), H100SxmFabric());
}

// `text` with the first `from` replaced by `to` (the test fails if there is none).
std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string Error(const std::string& text) {
  StatusOr<CollectiveModel> model = ParseCollectiveModelJson(text);
  EXPECT_FALSE(model.ok());
  return model.ok() ? "" : model.status().message();
}

TEST(CollectiveModelJsonTest, WhatIsReadBackPredictsWhatWasWritten) {
  const CollectiveModel model = H100Model();
  const std::string json = CollectiveModelJson(model);
  StatusOr<CollectiveModel> back = ParseCollectiveModelJson(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->fabric, model.fabric);
  EXPECT_EQ(back->origins, model.origins);
  ASSERT_EQ(back->measurements.size(), model.measurements.size());
  // Every table row, on the model's fabric and carried to A100: the same answer, within the
  // rounding of the written parameters (6 decimals of ns and ps per byte).
  const CalibrationSet table = testing::Table("nccl_h100.csv");
  for (const CollectiveFabric& target : {H100SxmFabric(), A100SxmFabric()}) {
    const CollectivePredictor a(model, target), b(*back, target);
    for (const CalibrationPoint& p : table.points) {
      for (uint32_t ranks : {p.ranks, 16u * p.ranks}) {
        CollectiveQuery q;
        q.op = p.op;
        q.data_type = p.data_type;
        q.ranks = ranks;
        q.bytes = p.bytes + 1;  // Interpolated on the model's fabric.
        const CollectivePrediction x = a.Predict(q), y = b.Predict(q);
        EXPECT_LE(std::llabs(x.duration_ns - y.duration_ns), 1);
        EXPECT_EQ(x.source, y.source);
        EXPECT_EQ(x.protocol, y.protocol);
        EXPECT_EQ(x.algorithm, y.algorithm);
      }
    }
  }
  // Written again, the read model is the same text: the format holds all of it.
  EXPECT_EQ(CollectiveModelJson(*back), json);
}

TEST(CollectiveModelJsonTest, ItSitsUnderAKeyOfALargerFile) {
  const CollectiveModel model = H100Model();
  std::string out;
  io::JsonWriter w([&out](std::string_view chunk) {
    out.append(chunk);
    return Status::Ok();
  });
  w.BeginObject();
  w.KeyString("format", "a model file of someone else");
  w.Key("collectives");
  WriteCollectiveModelJson(model, &w);
  w.EndObject();
  ASSERT_TRUE(w.Finish().ok());
  simdjson::dom::parser parser;
  simdjson::dom::element doc, collectives;
  ASSERT_EQ(parser.parse(simdjson::padded_string(out)).get(doc), simdjson::SUCCESS);
  ASSERT_EQ(doc["collectives"].get(collectives), simdjson::SUCCESS);
  StatusOr<CollectiveModel> back = ReadCollectiveModelJson(collectives);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(CollectiveModelJson(*back), CollectiveModelJson(model));
}

TEST(CollectiveModelJsonTest, BadDocumentsAreOneErrorNamingWhere) {
  const std::string good = CollectiveModelJson(H100Model());
  EXPECT_EQ(Error("{").rfind("collective model: not JSON: ", 0), 0u);
  EXPECT_EQ(Error("[]"), "collective model: the document: is not an object");
  EXPECT_EQ(Error(Replace(good, "\"lumos-collective-model\"", "\"gemm\"")),
            "collective model: the document: format is 'gemm', not 'lumos-collective-model'");
  EXPECT_EQ(Error(Replace(good, "\"version\":1", "\"version\":2")),
            "collective model: the document: version 2 is not one this lumos-model reads (1 to 1)");
  EXPECT_EQ(Error(Replace(good, "\"base_ns\":", "\"base\":")),
            "collective model: operations.all_reduce.protocols.LL: has no 'base_ns'");
  EXPECT_EQ(Error(Replace(good, "\"step_ns\":", "\"step_ns\":-")),
            "collective model: operations.all_reduce.protocols.LL: step_ns is negative");
  EXPECT_EQ(
      Error(Replace(good, "\"intra_bandwidth_gbps\":450.000000", "\"intra_bandwidth_gbps\":0")),
      "collective model: fabric: gpus_per_node and intra_bandwidth_gbps must be > 0");
  EXPECT_EQ(Error(Replace(good, "\"op\":\"all_reduce\"", "\"op\":\"all_mean\"")),
            "collective model: measurements[0]: unknown op 'all_mean'");
  EXPECT_EQ(Error(Replace(good, "\"origin\":0", "\"origin\":7")),
            "collective model: measurements[0]: origin names no origin");
  EXPECT_EQ(Error(Replace(good, "\"bytes\":512,", "\"bytes\":1099511627776,")),
            "collective model: measurements[1]: is not after the one before it (op, dtype, "
            "ranks, nodes, bytes)");
}

}  // namespace
}  // namespace lumos::modeler::models
