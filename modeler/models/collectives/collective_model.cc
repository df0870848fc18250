// The collective cost formulas, the predictor (fabric scaling, measured and interpolated
// answers) and the descriptions of sources; see collective_model.h.
#include "modeler/models/collectives/collective_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include "modeler/models/collectives/collective_nccl_constants.h"

namespace lumos::modeler::models {
namespace {

using schema::NcclAlgorithm;
using schema::NcclProtocol;

constexpr NcclProtocol kProtocolOf[kProtocols] = {NcclProtocol::kLl, NcclProtocol::kLl128,
                                                  NcclProtocol::kSimple};
constexpr int kSimple = 2;

uint32_t CeilLog2(uint32_t v) {
  uint32_t bits = 0;
  while ((1u << bits) < v) ++bits;
  return bits;
}

// Sort key of measurements (and of a query looking for them).
auto MeasurementKey(const CollectiveMeasurement& m) {
  return std::make_tuple(m.op, m.data_type, m.ranks, m.nodes, m.bytes);
}

std::string FormatBytes(uint64_t bytes) { return std::to_string(bytes) + " B"; }

std::string RankList(const std::vector<uint32_t>& ranks) {
  std::string out;
  for (uint32_t r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

}  // namespace

const char* CostSourceName(CostSource s) {
  switch (s) {
    case CostSource::kNone:
      return "none";
    case CostSource::kMeasured:
      return "measured";
    case CostSource::kInterpolated:
      return "interpolated";
    case CostSource::kScaled:
      return "scaled";
    case CostSource::kModelOnly:
      return "model only";
  }
  return "?";
}

OperationCost DefaultOperationCost(const CollectiveFabric& fabric) {
  OperationCost cost;
  const double step_scale =
      fabric.intra_latency_us > 0 ? fabric.intra_latency_us / nccl::kNvlinkStepUs[0] : 1.0;
  const double link_ps =
      fabric.intra_bandwidth_gbps > 0 ? 1000.0 / fabric.intra_bandwidth_gbps : 0.0;
  for (int p = 0; p < kProtocols; ++p) {
    ProtocolCost& c = cost.protocol[p];
    c.base_ns = nccl::kRingBaseUs[p] * 1000.0;
    c.step_ns = nccl::kNvlinkStepUs[p] * 1000.0 * step_scale;
    c.local_ps_per_byte = 0;
    c.link_ps_per_byte = link_ps * nccl::kProtocolLinkFactor[p];
  }
  cost.nvls = DefaultNvlsCost(cost.protocol[kSimple]);
  return cost;
}

NvlsCost DefaultNvlsCost(const ProtocolCost& simple) {
  NvlsCost nvls;
  nvls.base_ns = simple.base_ns + 2 * simple.step_ns + nccl::kNvlsExtraBaseUs * 1000.0;
  nvls.efficiency = nccl::kNvlsEfficiency;
  nvls.points = 0;
  return nvls;
}

// The query in the formula's terms.
struct CollectivePredictor::Shape {
  CollectiveClass op;
  double bytes;
  uint32_t ranks;
  uint32_t nodes;
  uint32_t per_node;  // Ranks per node (the largest node's).
  bool reducible;     // NVLS can reduce the data type.
};

CollectivePredictor::CollectivePredictor(const CollectiveModel& model,
                                         const CollectiveFabric& target)
    : model_(&model), target_(target), same_fabric_(model.fabric == target) {
  const CollectiveFabric& s = model.fabric;
  const CollectiveFabric& t = target;
  auto ratio = [](double a, double b) { return a > 0 && b > 0 ? a / b : 0.0; };
  double link_mul = ratio(s.intra_bandwidth_gbps, t.intra_bandwidth_gbps);
  if (link_mul == 0) link_mul = 1;
  double local_mul = ratio(s.memory_bandwidth_gbps, t.memory_bandwidth_gbps);
  if (local_mul == 0) local_mul = link_mul;
  double clock_mul = ratio(s.gpu_clock_mhz, t.gpu_clock_mhz);
  if (clock_mul == 0) clock_mul = 1;
  double step_mul = ratio(t.intra_latency_us, s.intra_latency_us);
  if (step_mul == 0) step_mul = clock_mul;

  // LL and LL128 run below the link on some GPUs: NCCL caps them per architecture, so their
  // costs grow at least by the ratio of the caps. No lower bound otherwise (0): a faster link
  // or memory makes every protocol faster.
  double protocol_mul[kProtocols] = {0, 0, 0};
  const int sa = nccl::ArchIndex(s.compute_capability), ta = nccl::ArchIndex(t.compute_capability);
  if (sa >= 0 && ta >= 0) {
    protocol_mul[0] = nccl::kLlMaxGbps[sa] / nccl::kLlMaxGbps[ta];
    protocol_mul[1] = nccl::kLl128PerChannelGbps[sa] / nccl::kLl128PerChannelGbps[ta];
  }

  const OperationCost defaults = DefaultOperationCost(target);
  for (int c = 0; c < kCollectiveClasses; ++c) {
    const OperationCost& fitted = model.ops[c];
    // Fitted: some protocol's costs come from points (too few points fit none).
    const bool any = std::any_of(fitted.protocol.begin(), fitted.protocol.end(),
                                 [](const ProtocolCost& p) { return p.points > 0; });
    if (fitted.points == 0 || !any) {
      costs_[c] = defaults;
      fit_of_[c] = -1;
      continue;
    }
    OperationCost& out = costs_[c];
    out = fitted;
    for (int p = 0; p < kProtocols; ++p) {
      ProtocolCost& cost = out.protocol[p];
      cost.base_ns *= clock_mul;
      cost.step_ns *= step_mul;
      cost.local_ps_per_byte *= std::max(local_mul, protocol_mul[p]);
      cost.link_ps_per_byte *= std::max(link_mul, protocol_mul[p]);
    }
    out.nvls.base_ns *= clock_mul;
    fit_of_[c] = static_cast<int8_t>(c);
  }
  // An operation never measured borrows a related one's costs: all-gather and reduce-scatter
  // are the two halves of a ring all-reduce and cost alike; broadcast moves what an all-gather
  // moves; a send/recv is a 2-rank all-to-all of twice its size (Formula).
  auto borrow = [this](CollectiveClass to, CollectiveClass from) {
    const auto t = static_cast<size_t>(to), f = static_cast<size_t>(from);
    if (fit_of_[t] >= 0 || fit_of_[f] != static_cast<int8_t>(f)) return;
    costs_[t] = costs_[f];
    fit_of_[t] = static_cast<int8_t>(f);
  };
  borrow(CollectiveClass::kAllGather, CollectiveClass::kReduceScatter);
  borrow(CollectiveClass::kReduceScatter, CollectiveClass::kAllGather);
  borrow(CollectiveClass::kBroadcast, CollectiveClass::kAllGather);
  borrow(CollectiveClass::kBroadcast, CollectiveClass::kReduceScatter);
  borrow(CollectiveClass::kSendRecv, CollectiveClass::kAllToAll);
}

double CollectivePredictor::Evaluate(const Shape& s, const OperationCost& cost,
                                     NcclAlgorithm algorithm, int p) const {
  const ProtocolCost& c = cost.protocol[p];
  const double n = s.ranks, g = s.per_node;
  const double bytes_ns = s.bytes * 1e-3;  // ps per byte x bytes = ns x 1000.
  const bool multi = s.nodes > 1;
  // One GPU's NIC, per byte: the fitted link cost carried to the network's bandwidth, and never
  // faster than the line rate at what NCCL reaches of it (nccl_constants.h).
  const double net_ratio = target_.inter_bandwidth_gbps > 0
                               ? target_.intra_bandwidth_gbps / target_.inter_bandwidth_gbps
                               : 0.0;
  const double line_ps = target_.inter_bandwidth_gbps > 0
                             ? 1000.0 / (target_.inter_bandwidth_gbps * nccl::kNetBusEfficiency) *
                                   nccl::kProtocolLinkFactor[p]
                             : 0.0;
  const double net_link = std::max(c.link_ps_per_byte * net_ratio, line_ps);
  // A ring or tree across nodes leaves each node once per channel, and NCCL spreads the
  // channels over the NICs of the node's g ranks (one NIC a GPU): what leaves a node goes at g
  // NICs' speed, as CollNet's 1/g below.
  const double node_link = g > 0 ? net_link / g : net_link;
  const double net_scale =
      target_.inter_latency_us > 0 ? target_.inter_latency_us / nccl::kNetRingStepUs[0] : 1.0;
  const double net_step = nccl::kNetRingStepUs[p] * 1000.0 * net_scale;
  const double link = multi ? std::max(c.link_ps_per_byte, node_link) : c.link_ps_per_byte;
  switch (algorithm) {
    case NcclAlgorithm::kRing: {
      const bool ar = s.op == CollectiveClass::kAllReduce;
      if (s.op == CollectiveClass::kAllToAll) {
        // Every peer at once: NVLink to the g-1 on the node, the network to the n-g off it.
        const double intra = (g - 1) / n * c.link_ps_per_byte;
        const double inter = (n - g) / n * net_link;
        return c.base_ns + (n - 1) * c.step_ns + (multi ? net_step : 0) +
               bytes_ns * (c.local_ps_per_byte + std::max(intra, inter));
      }
      if (s.op == CollectiveClass::kSendRecv) {
        return c.base_ns + (multi ? net_step : c.step_ns) +
               bytes_ns * (c.local_ps_per_byte + (multi ? net_link : c.link_ps_per_byte));
      }
      const double steps = ar ? 2 * (n - 1) : n - 1;
      const double inter_steps = multi ? (ar ? 2.0 * (s.nodes - 1) : s.nodes - 1.0) : 0;
      const double factor = ar                                    ? 2 * (n - 1) / n
                            : s.op == CollectiveClass::kBroadcast ? 1.0
                                                                  : (n - 1) / n;
      return c.base_ns + (steps - inter_steps) * c.step_ns + inter_steps * net_step +
             bytes_ns * (c.local_ps_per_byte + factor * link);
    }
    case NcclAlgorithm::kTree: {
      // Across nodes only: a chain in each node, a double binary tree over the nodes, up and
      // down; NCCL's tree moves 2 bytes per byte at 92 % of the link.
      const double tree_step = nccl::kNetTreeStepUs[p] * 1000.0 * net_scale;
      return c.base_ns + 2 * ((g - 1) * c.step_ns + CeilLog2(s.nodes) * tree_step) +
             bytes_ns * (c.local_ps_per_byte + 2 / nccl::kTreeEfficiency * link);
    }
    case NcclAlgorithm::kNvls: {
      // Single node: each GPU sends its data to the switch and receives the reduced result,
      // (1 + 1/n) bytes per byte each way, at the NVLS efficiency.
      const NvlsCost& v = cost.nvls;
      return v.base_ns +
             bytes_ns * (c.local_ps_per_byte + (1 + 1 / n) * c.link_ps_per_byte / v.efficiency);
    }
    case NcclAlgorithm::kCollnetDirect: {
      // Reduce within the node (NVLS when it can, else a ring reduce-scatter + all-gather),
      // 1/g of the message per GPU through the network's in-switch reduction.
      const bool nvls = target_.nvls && s.reducible;
      const double intra = nvls ? (1 + 1 / g) * c.link_ps_per_byte / cost.nvls.efficiency
                                : 2 * (g - 1) / g * c.link_ps_per_byte;
      const double inter = node_link;
      const double latency = (nvls ? cost.nvls.base_ns : c.base_ns + 2 * (g - 1) * c.step_ns) +
                             nccl::kNetRingStepUs[kSimple] * 1000.0 * net_scale;
      return latency + bytes_ns * (c.local_ps_per_byte + std::max(intra, inter));
    }
    default:
      break;
  }
  return -1;
}

CollectivePrediction CollectivePredictor::Formula(const CollectiveQuery& q, CollectiveClass c,
                                                  uint32_t nodes) const {
  CollectivePrediction best;
  best.nodes = nodes;
  const int8_t fit = fit_of_[static_cast<size_t>(c)];
  Shape s{c,     static_cast<double>(q.bytes),  q.ranks,
          nodes, (q.ranks + nodes - 1) / nodes, NvlsCanReduce(q.data_type)};
  const OperationCost* cost = &costs_[static_cast<size_t>(c)];
  if (c == CollectiveClass::kSendRecv && fit == static_cast<int8_t>(CollectiveClass::kAllToAll)) {
    // A send/recv of S bytes moves what a 2-rank all-to-all of 2S moves (S/2 each way there).
    s = Shape{CollectiveClass::kAllToAll,
              2.0 * static_cast<double>(q.bytes),
              2,
              std::min<uint32_t>(nodes, 2),
              nodes > 1 ? 1u : 2u,
              s.reducible};
  }
  const bool fitted = fit >= 0;
  const bool multi = nodes > 1;
  const bool ar = c == CollectiveClass::kAllReduce;
  const NcclAlgorithm algorithms[] = {NcclAlgorithm::kRing, NcclAlgorithm::kTree,
                                      NcclAlgorithm::kNvls, NcclAlgorithm::kCollnetDirect};
  double best_ns = -1;
  for (NcclAlgorithm a : algorithms) {
    if (q.algorithm != NcclAlgorithm::kUnspecified && q.algorithm != a) continue;
    if (a == NcclAlgorithm::kTree && !(ar && multi)) continue;
    if (a == NcclAlgorithm::kNvls &&
        !(ar && !multi && target_.nvls && s.reducible && q.ranks >= 2)) {
      continue;
    }
    if (a == NcclAlgorithm::kCollnetDirect && !(ar && multi && target_.collnet)) continue;
    const bool simple_only = a == NcclAlgorithm::kNvls || a == NcclAlgorithm::kCollnetDirect;
    for (int p = 0; p < kProtocols; ++p) {
      if (q.protocol != NcclProtocol::kUnspecified && q.protocol != kProtocolOf[p]) continue;
      if (simple_only && p != kSimple) continue;
      // A fitted operation runs the protocols it was seen to use (unless one is asked for).
      if (fitted && cost->protocol[p].points == 0 && q.protocol == NcclProtocol::kUnspecified) {
        continue;
      }
      const double ns = Evaluate(s, *cost, a, p);
      if (ns < 0 || (best_ns >= 0 && ns >= best_ns)) continue;
      best_ns = ns;
      best.algorithm = a;
      best.protocol = kProtocolOf[p];
    }
  }
  if (best_ns < 0) return best;
  best.duration_ns = std::llround(best_ns);
  best.fit = fit;
  const bool measured_kind = fitted && cost->protocol[ProtocolIndex(best.protocol)].points > 0 &&
                             !multi &&
                             (best.algorithm != NcclAlgorithm::kNvls || cost->nvls.points > 0);
  best.source = measured_kind ? CostSource::kScaled : CostSource::kModelOnly;
  return best;
}

CollectivePrediction CollectivePredictor::Lookup(const CollectiveQuery& q, CollectiveClass c,
                                                 uint32_t nodes,
                                                 const CollectivePrediction& formula) const {
  const std::vector<CollectiveMeasurement>& ms = model_->measurements;
  CollectiveMeasurement key;
  key.op = c;
  key.data_type = q.data_type;
  key.ranks = q.ranks;
  key.nodes = nodes;
  key.bytes = q.bytes;
  auto less = [](const CollectiveMeasurement& a, const CollectiveMeasurement& b) {
    return MeasurementKey(a) < MeasurementKey(b);
  };
  const auto it = std::lower_bound(ms.begin(), ms.end(), key, less);
  auto same_case = [&](const CollectiveMeasurement& m) {
    return m.op == c && m.data_type == q.data_type && m.ranks == q.ranks && m.nodes == nodes;
  };
  auto labels_fit = [&](const CollectiveMeasurement& m) {
    return (q.algorithm == NcclAlgorithm::kUnspecified || q.algorithm == m.algorithm) &&
           (q.protocol == NcclProtocol::kUnspecified || q.protocol == m.protocol);
  };
  if (it != ms.end() && same_case(*it) && it->bytes == q.bytes && labels_fit(*it)) {
    CollectivePrediction p = formula;
    p.duration_ns = it->time_ns;
    p.source = CostSource::kMeasured;
    p.measurement = static_cast<int32_t>(it - ms.begin());
    if (it->algorithm != NcclAlgorithm::kUnspecified) p.algorithm = it->algorithm;
    if (it->protocol != NcclProtocol::kUnspecified) p.protocol = it->protocol;
    return p;
  }
  if (it == ms.begin() || it == ms.end() || formula.duration_ns <= 0) return formula;
  const CollectiveMeasurement& hi = *it;
  const CollectiveMeasurement& lo = *(it - 1);
  if (!same_case(lo) || !same_case(hi) || !labels_fit(lo) || !labels_fit(hi)) return formula;
  // The model's shape between them, corrected by its measured residuals at both ends (their
  // logarithms interpolated in log size).
  auto residual = [&](const CollectiveMeasurement& m) {
    CollectiveQuery at = q;
    at.bytes = m.bytes;
    const CollectivePrediction f = Formula(at, c, nodes);
    return f.duration_ns > 0 && m.time_ns > 0
               ? std::log(static_cast<double>(m.time_ns) / static_cast<double>(f.duration_ns))
               : 0.0;
  };
  const double w =
      (std::log(static_cast<double>(q.bytes)) - std::log(static_cast<double>(lo.bytes))) /
      (std::log(static_cast<double>(hi.bytes)) - std::log(static_cast<double>(lo.bytes)));
  const double log_r = (1 - w) * residual(lo) + w * residual(hi);
  CollectivePrediction p = formula;
  p.duration_ns = std::llround(static_cast<double>(formula.duration_ns) * std::exp(log_r));
  p.source = CostSource::kInterpolated;
  p.measurement = static_cast<int32_t>((it - 1) - ms.begin());
  return p;
}

CollectivePrediction CollectivePredictor::Predict(const CollectiveQuery& q) const {
  const std::optional<CollectiveClass> c = ClassOf(q.op);
  if (!c || q.ranks == 0 || target_.gpus_per_node == 0 || !(target_.intra_bandwidth_gbps > 0)) {
    return {};
  }
  const uint32_t nodes =
      q.nodes != 0 ? q.nodes : (q.ranks + target_.gpus_per_node - 1) / target_.gpus_per_node;
  if (nodes > q.ranks) return {};
  if (nodes > 1 && target_.inter_bandwidth_gbps <= 0) return {};
  const CollectivePrediction formula = Formula(q, *c, nodes);
  if (formula.duration_ns < 0 || !same_fabric_ || q.bytes == 0) return formula;
  return Lookup(q, *c, nodes, formula);
}

std::string CollectivePredictor::Describe(const CollectivePrediction& p) const {
  if (p.source == CostSource::kNone) return "none: the model cannot run this query";
  std::string how = std::string(AlgorithmName(p.algorithm)) + "/" + ProtocolName(p.protocol);
  if (p.source == CostSource::kMeasured || p.source == CostSource::kInterpolated) {
    const CollectiveMeasurement& m = model_->measurements[static_cast<size_t>(p.measurement)];
    const std::string origin = m.origin < model_->origins.size() ? model_->origins[m.origin] : "?";
    std::string out = std::string(CostSourceName(p.source)) + " (" + origin + ": " +
                      ClassName(m.op) + ", " + std::to_string(m.ranks) + " ranks, " +
                      std::to_string(m.nodes) + " node(s), " + FormatBytes(m.bytes);
    if (p.source == CostSource::kInterpolated) {
      out +=
          " .. " + FormatBytes(model_->measurements[static_cast<size_t>(p.measurement) + 1].bytes);
    }
    return out + "; " + how + ")";
  }
  std::string out = std::string(CostSourceName(p.source)) + " (" + how;
  if (p.fit >= 0) {
    const auto c = static_cast<CollectiveClass>(p.fit);
    const OperationCost& f = model_->ops[static_cast<size_t>(c)];
    out += "; the fit of " + std::string(ClassName(c)) + ": " + std::to_string(f.points) +
           " points, ranks " + RankList(f.rank_counts) + ", " + FormatBytes(f.min_bytes) + " .. " +
           FormatBytes(f.max_bytes) + ", on " + model_->fabric.name;
    if (!same_fabric_) out += ", carried to " + target_.name;
  } else {
    out += "; NCCL's tuning constants on " + target_.name;
  }
  if (p.source == CostSource::kModelOnly && p.fit >= 0) {
    out += p.nodes > 1 ? "; network terms from the fabric, never measured"
           : p.algorithm == NcclAlgorithm::kNvls
               ? "; NVLS never measured: NCCL's NVLS efficiency on the Simple fit"
               : "; a protocol never measured for it";
  }
  return out + ")";
}

}  // namespace lumos::modeler::models
