// The fitted non-GEMM calibrations as versioned JSON (modeler/models/kernels/kernel_model_json.h):
// a model fitted on the real DLRM trace written, read back and written again gives the same bytes
// and the same answers; newer versions, other formats and broken values are one error naming
// the JSON path.
#include "modeler/models/kernels/kernel_model_json.h"

#include <gtest/gtest.h>

#include <string>

#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_validation.h"

namespace lumos::modeler::models {
namespace {

KernelModel DlrmModel() {
  StatusOr<KernelTraceSet> set = LoadKernelTraceSet(
      "dlrm",
      {std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces/dlrm-8rank-v100/dlrm_kineto.tar.gz"},
      SpecTable::Builtin());
  EXPECT_TRUE(set.ok()) << set.status().message();
  if (!set.ok()) return {};
  StatusOr<TraceSetValidation> v = ValidateKernelTraceSet(*set, kValidationSeed);
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? v->model : KernelModel();
}

TEST(KernelModelJsonTest, AFittedModelRoundTripsByteForByteAndAnswersTheSame) {
  const KernelModel model = DlrmModel();
  ASSERT_GE(model.calibrations().size(), 5u);
  const std::string json = KernelModelJson(model);
  EXPECT_NE(json.find("\"format\":\"lumos-kernel-model\""), std::string::npos) << json;
  StatusOr<KernelModel> back = ParseKernelModelJson(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(KernelModelJson(*back), json);
  ASSERT_EQ(back->calibrations().size(), model.calibrations().size());
  const GpuSpec* v100 = SpecTable::Builtin().FindGpu("V100-SXM2-32GB");
  for (size_t i = 0; i < model.calibrations().size(); ++i) {
    const KernelCalibration& a = model.calibrations()[i];
    const KernelCalibration& b = back->calibrations()[i];
    EXPECT_EQ(a.gpu(), b.gpu());
    EXPECT_EQ(a.key(), b.key());
    EXPECT_EQ(a.spec(), b.spec());
    EXPECT_EQ(a.floor_ns(), b.floor_ns());
    EXPECT_EQ(a.kernels(), b.kernels());
    EXPECT_NEAR(a.efficiency(), b.efficiency(), 1e-9);
    const KernelWorkQuery q{a.key(), {1e6, 1e7}, DType::kFp32, v100};
    EXPECT_EQ(model.Predict(q)->duration_ns, back->Predict(q)->duration_ns) << KeyName(a.key());
  }
}

std::string Error(const std::string& json) {
  StatusOr<KernelModel> m = ParseKernelModelJson(json);
  return m.ok() ? "(no error)" : m.status().message();
}

TEST(KernelModelJsonTest, OtherFormatsNewerVersionsAndBrokenValuesAreErrorsNamingThePath) {
  const std::string good = KernelModelJson(DlrmModel());
  EXPECT_NE(Error("[1, 2").find("not JSON"), std::string::npos);
  EXPECT_NE(Error("{\"format\": \"lumos-cost-model\", \"version\": 1}").find("format"),
            std::string::npos);
  std::string newer = good;
  newer.replace(newer.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_NE(Error(newer).find("version: 2 is not one this lumos-model reads (1 to 1)"),
            std::string::npos)
      << Error(newer);
  std::string bad_class = good;
  bad_class.replace(bad_class.find("\"class\":\"elementwise\""), 21, "\"class\":\"elementwize\"");
  EXPECT_NE(Error(bad_class).find("calibrations[0].class: unknown class 'elementwize'"),
            std::string::npos)
      << Error(bad_class);
  std::string bad_e = good;
  const size_t at = bad_e.find("\"efficiency\":");
  bad_e.replace(at, 13, "\"efficiency\":\"x\",\"e\":");
  EXPECT_NE(Error(bad_e).find("calibrations[0].efficiency: not a number"), std::string::npos)
      << Error(bad_e);
  std::string zero_floor = good;
  const size_t f = zero_floor.find("\"floor_ns\":");
  zero_floor.replace(f, 11, "\"floor_ns\":0,\"was\":");
  EXPECT_NE(Error(zero_floor).find("floor must be > 0"), std::string::npos) << Error(zero_floor);
  // The same calibration twice.
  KernelModel twice = DlrmModel();
  twice.Add(twice.calibrations()[0]);
  EXPECT_NE(Error(KernelModelJson(twice))
                .find("calibrations[" + std::to_string(twice.calibrations().size() - 1) +
                      "]: a second calibration of elementwise on "
                      "V100-SXM2-32GB"),
            std::string::npos)
      << Error(KernelModelJson(twice));
}

}  // namespace
}  // namespace lumos::modeler::models
