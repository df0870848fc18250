// Design: the collective model (collective_model.h) inside `lumos-model costs`: fabrics from the
// specs, the rows of collective tables and queries, one fitted model per GPU, and the answers to
// a query table.
//   Fabric: a GPU's NVLink domain from its spec (nvlink_gb_per_s halved: the model's bandwidth
//     is one direction; nvlink_domain_gpus GPUs per domain; nvls; boost clock, HBM bandwidth and
//     compute capability), nodes joined by a network spec (its line rate per GPU and latency).
//   Rows: the columns of ../shared/data/costs/nccl_*.csv (gpu, op, dtype, ranks, elements, bytes,
//     latency_us; nodes optional), read by the same names as collective_calibration.h; queries
//     are the same without latency_us. bytes follow nccl-tests (all-gather: the gathered
//     output); elements, when given, must be bytes / the dtype's size. Without nodes (or an
//     empty cell) the ranks take as few NVLink domains as hold them; more than one spans nodes
//     over the network.
//   Fit: the points of every table and traced job are grouped by GPU (spec name) and each group
//     is fitted on its GPU's fabric (FitCollectiveModel), the network given to the fit (`costs fit
//     --net`, default kDefaultNetwork) standing for the one between the traced nodes. Within a
//     group the sources are ordered by name, so the model does not depend on the order of the
//     inputs. The fitted model is kept as the model file holds it (collective_model_json.h:
//     parameters to 6 decimals), so it answers exactly as the file read back does.
//   Predict: a query on the GPU of a calibration uses that calibration on the fabric it was
//     fitted on (stored in the model file, whatever specs predict is given), so what was measured
//     answers as measured; ranks across nodes use the query's network instead of the fit's
//     (the same fabric when they are the same). Another GPU uses the calibration of the nearest
//     GPU (SelectCollectiveCalibration) carried to its fabric from the specs; a model without
//     collectives answers from NCCL's constants on the GPU's fabric ("model only").
//   Sources (CollectiveSourceText, one CSV cell, no commas): "measured", "interpolated",
//     "scaled from GPU OP fit", "model only (GPU OP fit; network|NVLS|protocol never
//     measured)" or "model only (NCCL's constants)".
// Threading: no shared state; a fitted CollectiveCalibration is plain data.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_fit.h"
#include "modeler/models/collectives/collective_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/query/cost_table.h"
#include "schema/enums.h"

namespace lumos::modeler::models {

// Between nodes when neither a query nor a fit names a network: NDR InfiniBand, one 400 Gb/s
// port per GPU (DGX H100's).
inline constexpr const char kDefaultNetwork[] = "ib400";

// The fabric of `gpu`'s NVLink domains, joined by `network` (nullptr: none). An error names the
// GPU when its spec lacks what collectives need (nvlink_gb_per_s, nvlink_domain_gpus).
StatusOr<CollectiveFabric> FabricFromSpecs(const GpuSpec& gpu, const NetworkSpec* network);

// A collective model fitted on one GPU.
struct CollectiveCalibration {
  std::string gpu;      // The spec name of the GPU the points were measured on.
  std::string network;  // The network the fit's fabric has between nodes (a spec name).
  CollectiveModel model;

  uint32_t FittedPoints() const;
  size_t MultiNodeMeasurements() const;
};

// The points for the collective model, gathered from tables and traced jobs, by GPU.
class CollectiveFitInputs {
 public:
  // Points measured on `gpu`, from `origin` ("nccl_h100.csv (H100-SXM5-80GB)", "job X"); their
  // origin fields are set when fitted.
  void Add(const GpuSpec& gpu, std::string origin, std::vector<CalibrationPoint> points);
  // The rows of a measured collective table: their gpu looked up in `specs` (an unknown one is
  // an error naming the row), one origin per table and GPU.
  Status AddTable(const io::CsvTable& table, const std::vector<CollectiveRow>& rows,
                  const SpecTable& specs);
  bool empty() const { return groups_.empty(); }

  // One calibration per GPU whose points fit or measure something, by GPU name; `network` joins
  // the fit's nodes. Errors name the GPU.
  StatusOr<std::vector<CollectiveCalibration>> Fit(const NetworkSpec& network) const;

 private:
  struct Source {
    std::string origin;
    std::vector<CalibrationPoint> points;
  };
  struct Group {
    const GpuSpec* gpu = nullptr;
    std::vector<Source> sources;
  };
  std::vector<Group> groups_;
};

// The calibration that answers for `gpu`: its own, else the one whose GPU shares its NVLS
// support and has the nearest NVLink bandwidth (by ratio), then by name; -1 when there is none.
int SelectCollectiveCalibration(const std::vector<CollectiveCalibration>& calibrations,
                                const GpuSpec& gpu);

// What answers collectives on one GPU: its calibration (its own, else the nearest GPU's carried
// to its fabric, else NCCL's constants on its fabric), within one NVLink domain and across
// nodes joined by a network. Predict's rules above; the calibrations must outlive it.
struct CollectiveTarget {
  const CollectiveCalibration* calibration = nullptr;  // nullptr: NCCL's constants.
  CollectiveModel constants;                           // The model when there is none.
  std::unique_ptr<CollectivePredictor> single;         // Ranks within one NVLink domain.
  std::unique_ptr<CollectivePredictor> multi;          // Ranks across nodes.
  uint32_t domain = 0;                                 // GPUs per NVLink domain.
};
StatusOr<std::unique_ptr<CollectiveTarget>> MakeCollectiveTarget(
    const std::vector<CollectiveCalibration>& calibrations, const GpuSpec& gpu,
    const NetworkSpec& network);

// The source cell of a prediction made with `calibration` (nullptr: NCCL's constants).
std::string CollectiveSourceText(const CollectivePrediction& prediction,
                                 const CollectiveCalibration* calibration);

// The answers to a collective query table: every query column as given, then predicted_us and
// source. `default_gpu` (may be null) answers rows that name no GPU; `network` joins nodes.
// An unknown GPU, a malformed row or a query the model cannot run is one error naming the row.
StatusOr<PredictedTable> PredictCollectiveQueries(
    const std::vector<CollectiveCalibration>& calibrations, const io::CsvTable& queries,
    const GpuSpec* default_gpu, const SpecTable& specs, const NetworkSpec& network);

}  // namespace lumos::modeler::models
