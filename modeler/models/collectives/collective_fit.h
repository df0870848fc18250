// Design: calibrating the collective model (collective_model.h) from measured collectives:
// rows of a table like ../shared/data/costs/nccl_*.csv or the collectives of a traced job
// (collective_calibration.h).
//
// Per operation, the points of one node are split among the protocols (LL, LL128, Simple) and,
// on an NVLS fabric, NVLS: a point the trace labels goes to its protocol (NVLS: to NVLS); the
// others start by size (LL up to 64 KiB, LL128 up to 4 MiB, Simple above) and then go, round
// after round, to whichever protocol's fitted formula is fastest for them, as NCCL would pick
// it, until no point moves (at most 50 rounds). Each protocol's four numbers (base, step,
// local and link cost) are a least-squares fit of the relative error, none negative. What the
// points cannot tell apart takes NCCL's value: with one rank count, the latency splits into
// base and steps in the proportion of NCCL's (so it grows with ranks as NCCL's does) and the
// local cost is 0 (all bytes on the link: the bus-bandwidth formula); with one size, the link
// cost is the fabric's datasheet. NVLS is fitted
// (its latency and efficiency) from NVLS-labelled points only; without them it is NCCL's,
// on the Simple fit, and the unlabelled points it would win are left out of the ring fits.
// Points that span nodes are kept as measurements but fit nothing (the network terms are
// NCCL's and the fabric's; see README). Points without a size or a time calibrate nothing.
// Deterministic: the same points in the same order give the same model.
// Threading: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/collectives/collective_model.h"
#include "schema/enums.h"

namespace lumos::modeler::models {

// One measured collective.
struct CalibrationPoint {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  schema::DataType data_type = schema::DataType::kUnspecified;
  uint32_t ranks = 0;
  uint32_t nodes = 0;   // 0: not known (as few as hold the ranks, on the fit's fabric).
  uint64_t bytes = 0;   // ModelBytes; 0: not known.
  int64_t time_ns = 0;  // The transfer: the collective itself, without waiting for peers.
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
  uint32_t channels = 0;  // 0: not known.
  uint32_t origin = 0;    // Index into CalibrationSet::origins.
};

struct CalibrationSet {
  std::vector<CalibrationPoint> points;
  std::vector<std::string> origins;  // "nccl_h100.csv (H100-SXM5-80GB)", "job dlrm_kineto".
};

// Appends `from`'s points (with their origins) to `to`.
void AppendCalibration(const CalibrationSet& from, CalibrationSet* to);

struct CollectiveFitReport {
  uint32_t fitted = 0;        // Points the formulas were fitted on.
  uint32_t multi_node = 0;    // Kept as measurements only.
  uint32_t no_size = 0;       // No bytes or no time: not used.
  uint32_t not_modelled = 0;  // No operation, or a single-node tree / CollNet / PAT point.
  std::array<uint32_t, kCollectiveClasses> by_op{};  // Fitted points per operation.
};

// Fits a model on `fabric` (which needs intra_bandwidth_gbps and gpus_per_node). An empty or
// useless set gives a model of NCCL's defaults with no measurements.
StatusOr<CollectiveModel> FitCollectiveModel(const CalibrationSet& set,
                                             const CollectiveFabric& fabric,
                                             CollectiveFitReport* report = nullptr);

}  // namespace lumos::modeler::models
