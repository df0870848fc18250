// Design: shared pieces of the collective model's tests: where the real tables are, and a
// model calibrated on one of them.
#pragma once

#include <string>

#include "modeler/models/collectives/collective_fit.h"
#include "modeler/models/collectives/collective_model.h"

namespace lumos::modeler::models::testing {

// ../shared/data/costs/<name> next to the checkout.
std::string CostsTable(const std::string& name);

// The table's points (the test fails when it cannot be read).
CalibrationSet Table(const std::string& name);

// The points of `set` whose rank count `keep` accepts.
template <typename Keep>
CalibrationSet Filter(const CalibrationSet& set, Keep keep) {
  CalibrationSet out;
  out.origins = set.origins;
  for (const CalibrationPoint& p : set.points) {
    if (keep(p)) out.points.push_back(p);
  }
  return out;
}

// A model fitted on `set` for `fabric` (the test fails when the fit does).
CollectiveModel Fit(const CalibrationSet& set, const CollectiveFabric& fabric);

}  // namespace lumos::modeler::models::testing
