// Design: the collective cost model (docs/architecture.md, "Estimation"): how long an NCCL
// collective takes, by operation, message size, ranks, nodes, data type, algorithm and
// protocol, on a fabric described by plain numbers (CollectiveFabric).
//
// Structure (NCCL's own tuning model, src/graph/tuning.cc, refined by a fit):
//   time = base + steps x step + bytes x (local + bus_factor x link)
// for each protocol (LL, LL128, Simple), where `steps` and `bus_factor` come from the
// algorithm: ring all-reduce 2(n-1) steps and factor 2(n-1)/n, all-gather / reduce-scatter
// n-1 and (n-1)/n, all-to-all n-1 peers and (n-1)/n, broadcast / reduce n-1 and 1, send/recv
// 1 and 1 (the nccl-tests "bus bandwidth" factors). `link` is the cost per byte each GPU moves
// over its link, `local` the cost per message byte that does not grow with the rank count
// (local copies and reductions, pipeline fill). NVLS (NVLink SHARP, all-reduce in the switch)
// moves (1 + 1/n) bytes per GPU at NCCL's NVLS efficiency; across nodes the ring crosses the
// network (the slower link per byte, NCCL's network step latency per node boundary), a tree
// all-reduce takes 2 log2(nodes) network steps, and CollNet (in-network SHARP) sends 1/g of
// the message per GPU. NCCL's choice of algorithm and protocol is taken as the fastest.
// Four numbers per (operation, protocol) are fitted to measurements (collective_fit.h); what
// is not fitted takes NCCL's tuning constants and the fabric's datasheet numbers.
//
// Another fabric (another GPU's NVLink, another network): a model calibrated on one fabric
// predicts for another by scaling: link costs by the ratio of link bandwidths, the local cost
// by the ratio of memory bandwidths (or of link bandwidths when either is not given), LL and
// LL128 per-byte costs at least by the ratio of NCCL's limits for those protocols on the two
// architectures (when both give a compute capability), latencies by the ratio of GPU clocks
// (steps: by the ratio of per-hop latencies when both fabrics give one), network terms from
// the target's network numbers.
//
// Sources: every prediction says what it rests on (CostSource): a measurement of exactly this
// case, an interpolation between two measured sizes of the same case (the model's shape,
// corrected by the measured residuals on both sides), the fitted formula carried to another
// size, rank count or fabric (naming the operation whose fit it uses), or the model alone
// (NCCL's constants, an algorithm or network never measured).
//
// Times: integer ns in and out; fitted parameters are doubles (ns, ps per byte) because they
// are continuous quantities, never durations of events.
// Threading: a CollectiveModel is plain data; a CollectivePredictor is immutable after
// construction and may be shared by threads. Predict allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modeler/models/collectives/collective_class.h"
#include "schema/enums.h"

namespace lumos::modeler::models {

// The hardware a collective runs on, in datasheet terms. Zero means "not given" where a
// comment says so.
struct CollectiveFabric {
  std::string name;            // For reports ("H100-SXM5 NVLink 4").
  uint32_t gpus_per_node = 8;  // GPUs that share the intra-node fabric (NVLink domain).
  // Per GPU, one direction, GB/s (1e9 bytes/s): NVLink (H100 450, A100 300, V100 150) or PCIe.
  double intra_bandwidth_gbps = 0;
  // Per ring step inside a node, µs; 0: not given (NCCL's NVLink value where needed).
  double intra_latency_us = 0;
  // The network per GPU, one direction, GB/s (8x 400 Gb/s NICs for 8 GPUs: 50); 0: none.
  double inter_bandwidth_gbps = 0;
  // Per network step (LL), µs; 0: NCCL's default (2.7).
  double inter_latency_us = 0;
  bool nvls = false;     // NVLink SHARP in the switches (H100/H200/B200 with NVSwitch).
  bool collnet = false;  // In-network reduction across nodes (InfiniBand SHARP).
  // Optional GPU numbers a collective's time also depends on; 0: not given.
  double gpu_clock_mhz = 0;          // SM boost clock: scales latencies to another GPU.
  double memory_bandwidth_gbps = 0;  // HBM: scales the local per-byte cost.
  // SM architecture (70 V100, 80 A100, 90 H100, 100 B200): NCCL's LL and LL128 limits differ
  // by architecture, which scales those protocols to another GPU; 0: not given.
  uint32_t compute_capability = 0;

  bool operator==(const CollectiveFabric&) const = default;
};

// What one (operation, protocol) costs; see the formula in the header comment.
struct ProtocolCost {
  double base_ns = 0;
  double step_ns = 0;
  double local_ps_per_byte = 0;
  double link_ps_per_byte = 0;
  uint32_t points = 0;  // Calibration points it was fitted on; 0: NCCL's defaults.
};

struct NvlsCost {
  double base_ns = 0;        // The whole latency of one NVLS all-reduce.
  double efficiency = 0.85;  // Of the link per byte (NCCL's nvlsEfficiency for Hopper).
  uint32_t points = 0;       // NVLS-labelled points it was fitted on; 0: from the Simple fit.
};

struct OperationCost {
  std::array<ProtocolCost, kProtocols> protocol;  // Indexed LL, LL128, Simple.
  NvlsCost nvls;
  uint32_t points = 0;                // Single-node points fitted (0: not fitted).
  std::vector<uint32_t> rank_counts;  // Rank counts among them, ascending.
  uint64_t min_bytes = 0, max_bytes = 0;
  double rms_error = 0;  // Relative, over its calibration points.
};

// A measured case kept for measured and interpolated answers (repeats: their median).
struct CollectiveMeasurement {
  CollectiveClass op = CollectiveClass::kAllReduce;
  schema::DataType data_type = schema::DataType::kUnspecified;
  uint32_t ranks = 0;
  uint32_t nodes = 1;
  uint64_t bytes = 0;  // ModelBytes.
  int64_t time_ns = 0;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
  uint32_t origin = 0;  // Index into CollectiveModel::origins.
  uint32_t repeats = 1;
};

// A calibrated model: the fabric it was measured on, the fitted costs per operation, and the
// measurements themselves (sorted by op, data type, ranks, nodes, bytes).
struct CollectiveModel {
  CollectiveFabric fabric;
  std::array<OperationCost, kCollectiveClasses> ops;
  std::vector<CollectiveMeasurement> measurements;
  std::vector<std::string> origins;  // Where measurements came from: a table, a job.
};

struct CollectiveQuery {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  schema::DataType data_type = schema::DataType::kUnspecified;
  uint64_t bytes = 0;  // ModelBytes.
  uint32_t ranks = 0;
  uint32_t nodes = 0;  // 0: as few as hold the ranks (gpus_per_node each).
  // To ask for one algorithm or protocol (as NCCL_ALGO / NCCL_PROTO would); else the fastest.
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
};

enum class CostSource : uint8_t {
  kNone,          // No answer: the query is not valid (see CollectivePredictor::Predict).
  kMeasured,      // This very case was measured on this fabric.
  kInterpolated,  // Between two measured sizes of this case on this fabric.
  kScaled,        // The formula fitted to measurements, at another size, rank count or fabric.
  kModelOnly,     // No measurement of this kind: NCCL's constants and the fabric's numbers.
};
const char* CostSourceName(CostSource s);  // "measured", "interpolated", "scaled", "model only"

struct CollectivePrediction {
  int64_t duration_ns = -1;
  CostSource source = CostSource::kNone;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
  // kMeasured: the measurement; kInterpolated: the smaller of the two around it (the other is
  // the next one); else -1.
  int32_t measurement = -1;
  uint32_t nodes = 0;  // The nodes the ranks span (the query's, or as few as hold them).
  // Whose fitted costs the formula used (a CollectiveClass; for an operation never measured,
  // a related one's); -1: none (NCCL's defaults).
  int8_t fit = -1;
};

// Answers queries for one target fabric from a model (which must outlive it).
class CollectivePredictor {
 public:
  CollectivePredictor(const CollectiveModel& model, const CollectiveFabric& target);
  // The calibration fabric itself.
  explicit CollectivePredictor(const CollectiveModel& model)
      : CollectivePredictor(model, model.fabric) {}

  // kNone for a target fabric without intra_bandwidth_gbps or gpus_per_node, an unspecified
  // op, no ranks, more nodes than ranks, a forced algorithm or
  // protocol that cannot run the query (NVLS on a fabric without it, a tree within one node,
  // LL with NVLS), or ranks across nodes on a fabric without a network.
  CollectivePrediction Predict(const CollectiveQuery& query) const;
  // One line: "scaled from the fit of all_gather (84 points, 2-4 ranks, 512 B-512 MiB, on
  // H100 ...) to A100 ...", "measured (nccl_h100.csv: all_reduce half, 8 ranks, 1 node,
  // 1048576 B)", ...
  std::string Describe(const CollectivePrediction& prediction) const;

  const CollectiveFabric& target() const { return target_; }
  // The model's costs as carried to the target fabric.
  const OperationCost& cost(CollectiveClass c) const { return costs_[static_cast<size_t>(c)]; }

 private:
  struct Shape;
  double Evaluate(const Shape& shape, const OperationCost& cost, schema::NcclAlgorithm algorithm,
                  int protocol) const;
  CollectivePrediction Formula(const CollectiveQuery& query, CollectiveClass c,
                               uint32_t nodes) const;
  CollectivePrediction Lookup(const CollectiveQuery& query, CollectiveClass c, uint32_t nodes,
                              const CollectivePrediction& formula) const;

  const CollectiveModel* model_;
  CollectiveFabric target_;
  bool same_fabric_;
  std::array<OperationCost, kCollectiveClasses> costs_;
  std::array<int8_t, kCollectiveClasses> fit_of_;  // Whose costs each class uses; -1 none.
};

// NCCL's defaults for one operation on a fabric (what an unfitted operation costs).
OperationCost DefaultOperationCost(const CollectiveFabric& fabric);
// NVLS from a Simple cost, with no NVLS measurement: the Simple latency of two steps plus
// NCCL's extra NVLS latency, at NCCL's NVLS efficiency.
NvlsCost DefaultNvlsCost(const ProtocolCost& simple);

}  // namespace lumos::modeler::models
