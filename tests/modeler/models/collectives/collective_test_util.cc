#include "tests/modeler/models/collectives/collective_test_util.h"

#include <gtest/gtest.h>

#include "modeler/models/collectives/collective_calibration.h"

namespace lumos::modeler::models::testing {

std::string CostsTable(const std::string& name) {
  return std::string(LUMOS_SOURCE_DIR) + "/../shared/data/costs/" + name;
}

CalibrationSet Table(const std::string& name) {
  StatusOr<CalibrationSet> set = ReadCollectiveTable(CostsTable(name));
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? std::move(set).value() : CalibrationSet();
}

CollectiveModel Fit(const CalibrationSet& set, const CollectiveFabric& fabric) {
  StatusOr<CollectiveModel> model = FitCollectiveModel(set, fabric);
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(model).value() : CollectiveModel();
}

}  // namespace lumos::modeler::models::testing
