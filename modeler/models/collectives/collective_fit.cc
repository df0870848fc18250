// Fitting the collective model; see collective_fit.h.
#include "modeler/models/collectives/collective_fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace lumos::modeler::models {
namespace {

using schema::NcclAlgorithm;
using schema::NcclProtocol;

constexpr int kNvlsCandidate = kProtocols;  // After LL, LL128, Simple.
constexpr int kSimple = 2;
constexpr int kMaxRounds = 50;

struct FitPoint {
  double ranks;
  double bytes;
  double time_ns;
  bool nvls_eligible;
  int pinned;  // -1, a protocol, or kNvlsCandidate.
  int assigned;
};

double Steps(CollectiveClass c, double n) {
  switch (c) {
    case CollectiveClass::kAllReduce:
      return 2 * (n - 1);
    case CollectiveClass::kSendRecv:
      return 1;
    default:
      return n - 1;
  }
}

double BusFactor(CollectiveClass c, double n) {
  switch (c) {
    case CollectiveClass::kAllReduce:
      return 2 * (n - 1) / n;
    case CollectiveClass::kBroadcast:
    case CollectiveClass::kSendRecv:
      return 1;
    default:
      return (n - 1) / n;
  }
}

double Time(CollectiveClass c, const ProtocolCost& p, double n, double bytes) {
  return p.base_ns + Steps(c, n) * p.step_ns +
         bytes * 1e-3 * (p.local_ps_per_byte + BusFactor(c, n) * p.link_ps_per_byte);
}

double NvlsTime(const ProtocolCost& simple, const NvlsCost& nvls, double n, double bytes) {
  return nvls.base_ns +
         bytes * 1e-3 *
             (simple.local_ps_per_byte + (1 + 1 / n) * simple.link_ps_per_byte / nvls.efficiency);
}

// Solves the normal equations of a small weighted least-squares problem (columns equilibrated;
// Gaussian elimination with partial pivoting). False when singular.
bool SolveLeastSquares(const std::vector<std::vector<double>>& rows, const std::vector<double>& y,
                       const std::vector<double>& w, std::vector<double>* x) {
  const size_t k = rows.empty() ? 0 : rows[0].size();
  // A handful of parameters; the bound also lets GCC's -O3 see the allocations below are
  // small (its -Walloc-size-larger-than= failed the Release build without it).
  constexpr size_t kMaxParameters = 64;
  if (k == 0 || k > kMaxParameters || rows.size() < k) return false;
  std::vector<double> scale(k, 0);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t j = 0; j < k; ++j) scale[j] = std::max(scale[j], std::abs(rows[i][j] * w[i]));
  }
  for (double& s : scale) {
    if (s == 0) return false;
  }
  std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
  for (size_t i = 0; i < rows.size(); ++i) {
    for (size_t r = 0; r < k; ++r) {
      const double fr = rows[i][r] * w[i] / scale[r];
      for (size_t c = 0; c < k; ++c) a[r][c] += fr * rows[i][c] * w[i] / scale[c];
      a[r][k] += fr * y[i] * w[i];
    }
  }
  for (size_t c = 0; c < k; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < k; ++r) {
      if (std::abs(a[r][c]) > std::abs(a[pivot][c])) pivot = r;
    }
    if (std::abs(a[pivot][c]) < 1e-12 * static_cast<double>(rows.size())) return false;
    std::swap(a[c], a[pivot]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (size_t j = c; j <= k; ++j) a[r][j] -= f * a[c][j];
    }
  }
  x->assign(k, 0);
  for (size_t c = 0; c < k; ++c) (*x)[c] = a[c][k] / a[c][c] / scale[c];
  return true;
}

// The four numbers of one protocol from its points; `prior` fills what they cannot tell apart.
// Returns false (and leaves *out alone) when there are too few points.
bool FitProtocol(CollectiveClass c, const std::vector<const FitPoint*>& points,
                 const ProtocolCost& prior, ProtocolCost* out) {
  if (points.size() < 2) return false;
  std::set<double> ranks, sizes;
  for (const FitPoint* p : points) {
    ranks.insert(p->ranks);
    sizes.insert(p->bytes);
  }
  // Columns: 0 base, 1 step, 2 local, 3 link. Inactive ones are fixed (prior or 0). With one
  // rank count, column 0 scales NCCL's whole latency (base and steps in NCCL's proportion).
  const bool scaled_latency = ranks.size() < 2;
  bool active[4] = {true, !scaled_latency, !scaled_latency && sizes.size() >= 2, sizes.size() >= 2};
  double fixed[4] = {0, scaled_latency ? 0 : prior.step_ns, 0, prior.link_ps_per_byte};
  for (int round = 0; round < 8; ++round) {
    int columns = 0;
    for (bool a : active) columns += a ? 1 : 0;
    while (columns > static_cast<int>(points.size())) {
      // Too few points for the columns: give up the local cost, then the step, then the link.
      for (int drop : {2, 1, 3}) {
        if (active[drop]) {
          active[drop] = false;
          --columns;
          break;
        }
      }
    }
    std::vector<std::vector<double>> rows;
    std::vector<double> y, w;
    for (const FitPoint* p : points) {
      const double f[4] = {scaled_latency ? prior.base_ns + Steps(c, p->ranks) * prior.step_ns : 1,
                           Steps(c, p->ranks), p->bytes * 1e-3,
                           p->bytes * 1e-3 * BusFactor(c, p->ranks)};
      std::vector<double> row;
      double target = p->time_ns;
      for (int j = 0; j < 4; ++j) {
        if (active[j]) {
          row.push_back(f[j]);
        } else {
          target -= f[j] * fixed[j];
        }
      }
      rows.push_back(std::move(row));
      y.push_back(target);
      w.push_back(1 / p->time_ns);  // Relative errors.
    }
    std::vector<double> x;
    if (!SolveLeastSquares(rows, y, w, &x)) {
      // Collinear columns: fix the latest of step, local, link still free and try again.
      bool dropped = false;
      for (int drop : {2, 1, 3}) {
        if (active[drop]) {
          active[drop] = false;
          dropped = true;
          break;
        }
      }
      if (!dropped) return false;
      continue;
    }
    double value[4];
    int most_negative = -1;
    for (int j = 0, k = 0; j < 4; ++j) {
      value[j] = active[j] ? x[static_cast<size_t>(k++)] : fixed[j];
      if (active[j] && value[j] < 0 && (most_negative < 0 || value[j] < value[most_negative])) {
        most_negative = j;
      }
    }
    if (most_negative >= 0) {
      // Not physical: that term is 0 (the link cost: the datasheet's, never free).
      active[most_negative] = false;
      fixed[most_negative] = most_negative == 3 ? prior.link_ps_per_byte : 0;
      continue;
    }
    if (value[2] + value[3] <= 0) {
      // Nothing per byte: the link costs what the datasheet says.
      active[3] = false;
      fixed[3] = prior.link_ps_per_byte;
      continue;
    }
    out->base_ns = scaled_latency ? value[0] * prior.base_ns : value[0];
    out->step_ns = scaled_latency ? value[0] * prior.step_ns : value[1];
    out->local_ps_per_byte = value[2];
    out->link_ps_per_byte = value[3];
    out->points = static_cast<uint32_t>(points.size());
    return true;
  }
  return false;
}

// NVLS latency and efficiency from NVLS-labelled points, on the Simple fit.
void FitNvls(const std::vector<const FitPoint*>& points, const ProtocolCost& simple,
             NvlsCost* nvls) {
  std::set<double> sizes;
  for (const FitPoint* p : points) sizes.insert(p->bytes * (1 + 1 / p->ranks));
  if (points.size() < 2 || sizes.size() < 2 || simple.link_ps_per_byte <= 0) return;
  std::vector<std::vector<double>> rows;
  std::vector<double> y, w;
  for (const FitPoint* p : points) {
    rows.push_back({1, p->bytes * 1e-3 * (1 + 1 / p->ranks) * simple.link_ps_per_byte});
    y.push_back(p->time_ns - p->bytes * 1e-3 * simple.local_ps_per_byte);
    w.push_back(1 / p->time_ns);
  }
  std::vector<double> x;
  if (!SolveLeastSquares(rows, y, w, &x) || x[0] < 0 || x[1] <= 0) return;
  nvls->base_ns = x[0];
  nvls->efficiency = 1 / x[1];
  nvls->points = static_cast<uint32_t>(points.size());
}

int InitialProtocol(double bytes) {
  if (bytes <= 64.0 * 1024) return 0;
  if (bytes <= 4.0 * 1024 * 1024) return 1;
  return kSimple;
}

void FitOperation(CollectiveClass c, std::vector<FitPoint> points, const CollectiveFabric& fabric,
                  OperationCost* out) {
  const OperationCost prior = DefaultOperationCost(fabric);
  *out = prior;
  for (ProtocolCost& p : out->protocol) p.points = 0;
  if (points.empty()) return;
  for (FitPoint& p : points) p.assigned = p.pinned >= 0 ? p.pinned : InitialProtocol(p.bytes);
  std::array<bool, kProtocols> fitted{};
  for (int round = 0; round < kMaxRounds; ++round) {
    for (int p = 0; p < kProtocols; ++p) {
      std::vector<const FitPoint*> mine;
      for (const FitPoint& f : points) {
        if (f.assigned == p) mine.push_back(&f);
      }
      ProtocolCost cost = prior.protocol[p];
      fitted[p] = FitProtocol(c, mine, prior.protocol[p], &cost);
      out->protocol[p] = fitted[p] ? cost : prior.protocol[p];
      if (!fitted[p]) out->protocol[p].points = 0;
    }
    const ProtocolCost& simple = out->protocol[kSimple];
    out->nvls = DefaultNvlsCost(simple);
    std::vector<const FitPoint*> nvls_points;
    for (const FitPoint& f : points) {
      if (f.pinned == kNvlsCandidate) nvls_points.push_back(&f);
    }
    FitNvls(nvls_points, simple, &out->nvls);
    bool moved = false;
    for (FitPoint& f : points) {
      if (f.pinned >= 0) continue;
      int best = -1;
      double best_ns = 0;
      for (int p = 0; p < kProtocols; ++p) {
        if (!fitted[p]) continue;
        const double ns = Time(c, out->protocol[p], f.ranks, f.bytes);
        if (best < 0 || ns < best_ns) {
          best = p;
          best_ns = ns;
        }
      }
      if (f.nvls_eligible && fitted[kSimple] &&
          NvlsTime(simple, out->nvls, f.ranks, f.bytes) < best_ns) {
        best = kNvlsCandidate;
      }
      if (best >= 0 && best != f.assigned) {
        f.assigned = best;
        moved = true;
      }
    }
    if (!moved) break;
  }
  // Summary over every point: the formula as the predictor evaluates it (the fastest).
  std::set<uint32_t> ranks;
  double sum_sq = 0;
  uint32_t used = 0;
  out->min_bytes = UINT64_MAX;
  out->max_bytes = 0;
  for (const FitPoint& f : points) {
    ranks.insert(static_cast<uint32_t>(f.ranks));
    out->min_bytes = std::min(out->min_bytes, static_cast<uint64_t>(f.bytes));
    out->max_bytes = std::max(out->max_bytes, static_cast<uint64_t>(f.bytes));
    double best = -1;
    for (int p = 0; p < kProtocols; ++p) {
      if (out->protocol[p].points == 0) continue;
      const double ns = Time(c, out->protocol[p], f.ranks, f.bytes);
      if (best < 0 || ns < best) best = ns;
    }
    if (f.nvls_eligible && out->protocol[kSimple].points > 0) {
      best = std::min(best, NvlsTime(out->protocol[kSimple], out->nvls, f.ranks, f.bytes));
    }
    if (best < 0) continue;
    sum_sq += std::pow((best - f.time_ns) / f.time_ns, 2);
    ++used;
  }
  out->points = static_cast<uint32_t>(points.size());
  out->rank_counts.assign(ranks.begin(), ranks.end());
  out->rms_error = used ? std::sqrt(sum_sq / used) : 0;
}

}  // namespace

void AppendCalibration(const CalibrationSet& from, CalibrationSet* to) {
  const auto offset = static_cast<uint32_t>(to->origins.size());
  to->origins.insert(to->origins.end(), from.origins.begin(), from.origins.end());
  for (CalibrationPoint p : from.points) {
    p.origin += offset;
    to->points.push_back(p);
  }
}

StatusOr<CollectiveModel> FitCollectiveModel(const CalibrationSet& set,
                                             const CollectiveFabric& fabric,
                                             CollectiveFitReport* report) {
  if (!(fabric.intra_bandwidth_gbps > 0) || fabric.gpus_per_node == 0) {
    return ErrorStatus(
        "fabric '%s': the collective model needs intra_bandwidth_gbps > 0 and "
        "gpus_per_node > 0",
        fabric.name.c_str());
  }
  CollectiveFitReport local_report;
  CollectiveFitReport& r = report ? *report : local_report;
  r = CollectiveFitReport();
  CollectiveModel model;
  model.fabric = fabric;
  model.origins = set.origins;
  std::array<std::vector<FitPoint>, kCollectiveClasses> by_op;
  for (const CalibrationPoint& p : set.points) {
    const std::optional<CollectiveClass> c = ClassOf(p.op);
    if (!c || p.ranks == 0) {
      ++r.not_modelled;
      continue;
    }
    if (p.bytes == 0 || p.time_ns <= 0) {
      ++r.no_size;
      continue;
    }
    const uint32_t nodes =
        p.nodes != 0 ? p.nodes : (p.ranks + fabric.gpus_per_node - 1) / fabric.gpus_per_node;
    CollectiveMeasurement m;
    m.op = *c;
    m.data_type = p.data_type;
    m.ranks = p.ranks;
    m.nodes = nodes;
    m.bytes = p.bytes;
    m.time_ns = p.time_ns;
    m.algorithm = p.algorithm;
    m.protocol = p.protocol;
    m.origin = p.origin;
    model.measurements.push_back(m);
    if (nodes > 1) {
      ++r.multi_node;
      continue;
    }
    const bool ar = *c == CollectiveClass::kAllReduce;
    const bool labelled_nvls = p.algorithm == NcclAlgorithm::kNvls;
    if (p.algorithm != NcclAlgorithm::kUnspecified && p.algorithm != NcclAlgorithm::kRing &&
        !(labelled_nvls && ar)) {
      ++r.not_modelled;  // Tree, CollNet or PAT within one node.
      continue;
    }
    FitPoint f;
    f.ranks = p.ranks;
    f.bytes = static_cast<double>(p.bytes);
    f.time_ns = static_cast<double>(p.time_ns);
    f.nvls_eligible = ar && fabric.nvls && NvlsCanReduce(p.data_type) && p.ranks >= 2 &&
                      p.algorithm == NcclAlgorithm::kUnspecified;
    f.pinned = labelled_nvls ? kNvlsCandidate : ProtocolIndex(p.protocol);
    f.assigned = -1;
    by_op[static_cast<size_t>(*c)].push_back(f);
    ++r.fitted;
    ++r.by_op[static_cast<size_t>(*c)];
  }
  for (int c = 0; c < kCollectiveClasses; ++c) {
    FitOperation(static_cast<CollectiveClass>(c), std::move(by_op[c]), fabric, &model.ops[c]);
  }
  // Measurements: sorted, repeats of a case merged into their median.
  auto key = [](const CollectiveMeasurement& m) {
    return std::make_tuple(m.op, m.data_type, m.ranks, m.nodes, m.bytes);
  };
  std::stable_sort(model.measurements.begin(), model.measurements.end(),
                   [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::vector<CollectiveMeasurement> merged;
  for (size_t i = 0; i < model.measurements.size();) {
    size_t j = i;
    std::vector<int64_t> times;
    CollectiveMeasurement m = model.measurements[i];
    while (j < model.measurements.size() && key(model.measurements[j]) == key(m)) {
      const CollectiveMeasurement& other = model.measurements[j];
      if (other.algorithm != m.algorithm) m.algorithm = NcclAlgorithm::kUnspecified;
      if (other.protocol != m.protocol) m.protocol = NcclProtocol::kUnspecified;
      times.push_back(other.time_ns);
      ++j;
    }
    std::sort(times.begin(), times.end());
    const size_t half = times.size() / 2;
    m.time_ns = times.size() % 2 ? times[half] : (times[half - 1] + times[half]) / 2;
    m.repeats = static_cast<uint32_t>(times.size());
    merged.push_back(m);
    i = j;
  }
  model.measurements = std::move(merged);
  return model;
}

}  // namespace lumos::modeler::models
