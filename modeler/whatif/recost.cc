#include "modeler/whatif/recost.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string_view>

#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/costs/cost_inputs.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/models/kernels/kernel_trace.h"
#include "modeler/models/kernels/kernel_work.h"

namespace lumos::modeler::whatif {
namespace {

using models::DType;
using models::GpuSpec;
using models::KernelClass;
using models::SourceKind;

bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// A kernel's dtype from its name where no GEMM call says it (only the matrix peak depends on it:
// memory-bound classes are the same in any).
DType DTypeFromName(std::string_view name) {
  if (Contains(name, "bf16")) return DType::kBf16;
  if (Contains(name, "e4m3") || Contains(name, "e5m2") || Contains(name, "fp8")) return DType::kFp8;
  if (Contains(name, "fp16") || Contains(name, "f16") || Contains(name, "half") ||
      Contains(name, "h884") || Contains(name, "h1688") || Contains(name, "h16816")) {
    return DType::kFp16;
  }
  if (Contains(name, "tf32") || Contains(name, "s1688")) return DType::kTf32;
  return DType::kFp32;
}

bool IsAttentionCall(const schema::GemmCallEvent& call) {
  return call.api == schema::GemmApi::kFrameworkAttention ||
         call.api == schema::GemmApi::kFrameworkAttentionBackward;
}

const WorkChange::Dimension* FindDimension(int64_t value,
                                           const std::vector<WorkChange::Dimension>& dims) {
  for (const WorkChange::Dimension& d : dims) {
    if (d.from == value) return &d;
  }
  return nullptr;
}

int64_t Scaled(int64_t value, double factor) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(value) * factor));
}

Basis BasisOfGemm(SourceKind source) {
  switch (source) {
    case SourceKind::kMeasured:
    case SourceKind::kInterpolated:
      return Basis::kInterpolated;
    case SourceKind::kRoofline:
      return Basis::kModelOnly;
    default:
      return Basis::kScaled;
  }
}

class Recoster {
 public:
  Recoster(const CostSetup& s, const ExecutionGraph& graph, const std::vector<uint32_t>& origin,
           Scenario* scenario, CostReport* report)
      : s_(s), graph_(graph), origin_(origin), scenario_(*scenario), report_(*report) {}

  Status Run() {
    const size_t n = graph_.nodes.size();
    report_.node_basis.assign(n, Basis::kMeasured);
    report_.node_reasons.assign(n, 0);
    report_.collective_basis.assign(graph_.collectives.size(), Basis::kMeasured);
    gpu_changed_ = s_.source_gpu->name != s_.target_gpu->name;
    work_.resize(s_.job->ranks.size());
    for (uint32_t id = 0; id < n; ++id) {
      const Node& node = graph_.nodes[id];
      if (!node.gpu() || node.work == WorkClass::kCommunication) continue;
      LUMOS_RETURN_IF_ERROR(RecostGpuOp(id));
    }
    if (gpu_changed_) {
      Note("host calls, host gaps and launch latencies as measured (the same CPU and framework)");
    }
    return RecostCollectives();
  }

 private:
  uint32_t Origin(uint32_t node) const { return origin_.empty() ? node : origin_[node]; }

  void Note(const std::string& line) {
    if (noted_.insert(line).second) report_.notes.push_back(line);
  }

  const WorkChange& WorkOf(uint32_t origin) const {
    const structure::NodeInfo& info = s_.structure->nodes[origin];
    if (info.layer != structure::kNoLayer) return s_.layer_work;
    if (info.phase == structure::Phase::kOptimizer) return s_.optimizer_work;
    return s_.other_work;
  }

  const std::vector<models::TraceGpuWork>& RankWork(uint32_t rank_index) {
    if (s_.classified != nullptr) return (*s_.classified)[rank_index];
    auto& w = work_[rank_index];
    if (!w)
      w = std::make_unique<std::vector<models::TraceGpuWork>>(
          models::ClassifyRank(s_.job->ranks[rank_index]));
    return *w;
  }

  Status RecostGpuOp(uint32_t id) {
    const uint32_t origin = Origin(id);
    const Node& node = graph_.nodes[id];
    WorkChange overridden;
    const WorkChange* part = &WorkOf(origin);
    if (s_.kernel_work != nullptr) {
      if (auto it = s_.kernel_work->find(origin); it != s_.kernel_work->end()) {
        overridden = *part;
        overridden.kernel_bytes = it->second;
        overridden.kernel_flops = it->second;
        part = &overridden;
      }
    }
    const WorkChange& work = *part;
    if (!gpu_changed_ && !work.changes()) return Status::Ok();
    reasons_ = static_cast<uint8_t>((gpu_changed_ ? kChangedGpu : 0) |
                                    (work.changes() ? kChangedWork : 0));
    const RankTrace& rank = s_.job->ranks[node.rank_index];
    const uint32_t source = s_.measured->node_source[origin];
    int64_t& duration = scenario_.duration_ns[id];
    if (duration <= 0) return Status::Ok();  // Nothing to scale (a zero-length record).
    const std::vector<models::TraceGpuWork>& classified = RankWork(node.rank_index);
    size_t index = source;  // ClassifyRank: kernels, then copies, then memsets.
    if (node.kind == NodeKind::kMemcpy) index += rank.kernels.size();
    if (node.kind == NodeKind::kMemset) index += rank.kernels.size() + rank.memcpys.size();
    if (index >= classified.size()) return Status::Ok();
    const models::TraceGpuWork& traced = classified[index];
    const KernelClass kind = s_.structure->nodes[origin].kernel_class;
    if (node.kind == NodeKind::kKernel) {
      if (const schema::GemmCallEvent* call = rank.GemmOf(source)) {
        if (IsAttentionCall(*call)) return RecostAttention(id, *call, traced, work);
        if (kind == KernelClass::kGemm) {
          bool handled = false;
          LUMOS_RETURN_IF_ERROR(RecostGemm(id, *call, traced, work, &handled));
          if (handled) return Status::Ok();
        }
      }
    }
    models::MeasuredKernel measured;
    measured.key = traced.key;
    if (node.kind == NodeKind::kKernel) measured.key.kind = kind;
    measured.duration_ns = duration;
    measured.gpu = s_.source_gpu;
    measured.dtype = DTypeFromName(traced.name);
    measured.name = traced.name;
    if (traced.bytes > 0) measured.work.bytes = static_cast<double>(traced.bytes);
    models::WorkFactors factors{work.kernel_bytes, work.kernel_flops};
    if (kind == KernelClass::kAttention && work.attention.forward_flops > 0 &&
        !measured.work.known()) {
      const bool backward = Contains(traced.name, "bprop") || Contains(traced.name, "bwd") ||
                            Contains(traced.name, "backward");
      measured.work.flops = work.attention.forward_flops * (backward ? 2.5 : 1.0);
      measured.work.bytes = work.attention.forward_bytes * (backward ? 2.0 : 1.0);
      Note(
          "fused attention kernels without a recorded shape: their work from the measured "
          "setup (4 b h s^2 d FLOPs forward, 2.5 x backward)");
    }
    if (kind == KernelClass::kAttention) {
      const WorkChange::Attention& a = work.attention;
      factors.bytes = a.batch * a.heads * a.seq * a.head_dim;
      factors.flops = a.batch * a.heads * a.seq * a.seq * a.head_dim;
    } else if (kind == KernelClass::kGemm && !work.gemm.empty()) {
      // A GEMM without a recorded shape: its FLOPs go as the activations' (factors above).
      Note("GEMMs without a recorded shape scaled with the layer's FLOPs (no shape to map)");
    }
    return Apply(id, measured, factors);
  }

  Status Apply(uint32_t id, const models::MeasuredKernel& measured,
               const models::WorkFactors& factors) {
    StatusOr<models::Prediction> p = s_.model->kernels.Scale(measured, factors, *s_.target_gpu);
    if (!p.ok()) {
      return Status::Error("kernel '" + std::string(measured.name) + "' (" +
                           models::KernelClassName(measured.key.kind) +
                           "): " + p.status().message());
    }
    Set(id, p->duration_ns, p->source == SourceKind::kMeasured ? Basis::kMeasured : Basis::kScaled);
    return Status::Ok();
  }

  void Set(uint32_t id, int64_t duration, Basis basis) {
    int64_t& d = scenario_.duration_ns[id];
    if (d != duration) {
      ++report_.changed_kernels;
      report_.node_reasons[id] = reasons_;
    }
    d = std::max<int64_t>(0, duration);
    report_.node_basis[id] = basis;
  }

  Status RecostGemm(uint32_t id, const schema::GemmCallEvent& call,
                    const models::TraceGpuWork& traced, const WorkChange& work, bool* handled) {
    const std::optional<DType> dtype = models::GemmDType(
        call, Contains(traced.name, "s1688gemm") || Contains(traced.name, "tf32"));
    if (!dtype || call.m == 0 || call.n == 0 || call.k == 0) return Status::Ok();
    models::KernelQuery from;
    from.kind = KernelClass::kGemm;
    from.gemm = {static_cast<int64_t>(call.m), static_cast<int64_t>(call.n),
                 static_cast<int64_t>(call.k), std::max<int64_t>(1, call.batch_count)};
    from.dtype = *dtype;
    from.gpu = s_.source_gpu;
    models::KernelQuery to = from;
    to.gpu = s_.target_gpu;
    to.gemm = work.Map(from.gemm, ActivationRows(call));
    *handled = true;
    const bool same_shape =
        to.gemm.m == from.gemm.m && to.gemm.n == from.gemm.n && to.gemm.k == from.gemm.k;
    if (!gpu_changed_ && same_shape) return Status::Ok();
    StatusOr<models::Prediction> target = s_.model->gemm.Predict(to);
    if (!target.ok()) {
      return Status::Error("GEMM kernel '" + std::string(traced.name) +
                           "': " + target.status().message());
    }
    if (target->source == SourceKind::kMeasured || target->source == SourceKind::kInterpolated) {
      // Whatever GEMM the trace ran, this shape was measured on the target (a table, a trace).
      Set(id, target->duration_ns, Basis::kInterpolated);
      return Status::Ok();
    }
    StatusOr<models::Prediction> base = s_.model->gemm.Predict(from);
    if (!base.ok() || base->duration_ns <= 0) {
      return Status::Error("GEMM kernel '" + std::string(traced.name) +
                           "': " + (base.ok() ? "no duration" : base.status().message()));
    }
    const double ratio =
        static_cast<double>(target->duration_ns) / static_cast<double>(base->duration_ns);
    Set(id, std::llround(static_cast<double>(scenario_.duration_ns[id]) * ratio),
        BasisOfGemm(target->source));
    return Status::Ok();
  }

  Status RecostAttention(uint32_t id, const schema::GemmCallEvent& call,
                         const models::TraceGpuWork& traced, const WorkChange& work) {
    const int64_t heads = std::max<int64_t>(1, call.heads);
    models::AttentionShape before;
    before.heads = heads;
    before.batch = std::max<int64_t>(1, static_cast<int64_t>(call.batch_count) / heads);
    before.kv_heads = call.kv_heads;
    before.seq_q = static_cast<int64_t>(call.m);
    before.seq_kv = static_cast<int64_t>(call.n);
    before.head_dim = static_cast<int64_t>(call.k);
    before.causal = call.mask == schema::AttentionMask::kCausal;
    before.backward = call.api == schema::GemmApi::kFrameworkAttentionBackward;
    models::AttentionShape after = before;
    const WorkChange::Attention& a = work.attention;
    after.batch = Scaled(before.batch, a.batch);
    after.heads = Scaled(before.heads, a.heads);
    if (before.kv_heads > 0) after.kv_heads = Scaled(before.kv_heads, a.heads);
    after.seq_q = Scaled(before.seq_q, a.seq);
    after.seq_kv = Scaled(before.seq_kv, a.seq);
    after.head_dim = Scaled(before.head_dim, a.head_dim);
    const DType dtype = models::GemmDType(call, false).value_or(DType::kBf16);
    StatusOr<models::KernelWork> w0 = models::AttentionWork(before, dtype);
    StatusOr<models::KernelWork> w1 = models::AttentionWork(after, dtype);
    models::MeasuredKernel measured;
    measured.key.kind = KernelClass::kAttention;
    measured.duration_ns = scenario_.duration_ns[id];
    measured.gpu = s_.source_gpu;
    measured.dtype = dtype;
    measured.name = traced.name;
    models::WorkFactors factors;
    if (w0.ok() && w1.ok() && w0->flops > 0 && w0->bytes > 0) {
      measured.work = *w0;
      factors.flops = w1->flops / w0->flops;
      factors.bytes = w1->bytes / w0->bytes;
    } else {
      factors.bytes = a.batch * a.heads * a.seq * a.head_dim;
      factors.flops = factors.bytes * a.seq;
    }
    return Apply(id, measured, factors);
  }

  // Hosts a collective's ranks span in the measurement.
  uint32_t MeasuredNodes(const CollectiveGroup& group, uint32_t ranks, uint32_t domain) const {
    std::set<std::string_view> hosts;
    for (uint32_t m : group.nodes) hosts.insert(s_.job->ranks[graph_.nodes[m].rank_index].host);
    const auto fewest = std::max<uint32_t>(1, (ranks + domain - 1) / domain);
    if (group.nodes.size() >= ranks && !hosts.empty()) {
      return std::max<uint32_t>(fewest, static_cast<uint32_t>(hosts.size()));
    }
    return fewest;
  }

  Status RecostCollectives() {
    const bool net_changed = s_.source_net.bytes_per_s != s_.target_net.bytes_per_s ||
                             s_.source_net.latency_ns != s_.target_net.latency_ns;
    std::unordered_map<uint64_t, uint32_t> sizes;
    for (const structure::CommGroup& c : s_.structure->groups) sizes[c.comm_id] = c.size;
    auto from = models::MakeCollectiveTarget(s_.model->collectives, *s_.source_gpu, s_.source_net);
    if (!from.ok()) return from.status();
    auto to = models::MakeCollectiveTarget(s_.model->collectives, *s_.target_gpu, s_.target_net);
    if (!to.ok()) return to.status();
    for (uint32_t c = 0; c < graph_.collectives.size(); ++c) {
      const CollectiveGroup& group = graph_.collectives[c];
      if (group.nodes.empty()) continue;
      auto size_it = sizes.find(group.comm_id);
      const uint32_t ranks = size_it != sizes.end() && size_it->second > 0
                                 ? size_it->second
                                 : static_cast<uint32_t>(group.nodes.size());
      const uint32_t nodes = MeasuredNodes(group, ranks, (*from)->domain);
      CostSetup::GroupSize after{ranks, nodes};
      if (auto it = s_.group_sizes.find(group.comm_id); it != s_.group_sizes.end()) {
        after = it->second;
      }
      double bytes_factor = WorkOf(Origin(group.nodes.front())).collective_bytes;
      if (auto it = s_.group_bytes.find(group.comm_id); it != s_.group_bytes.end()) {
        bytes_factor *= it->second;
      }
      const bool spans = nodes > 1 || after.nodes > 1;
      if (!gpu_changed_ && !(net_changed && spans) && after.ranks == ranks &&
          after.nodes == nodes && bytes_factor == 1) {
        continue;
      }
      int64_t& transfer = scenario_.transfer_ns[c];
      const int64_t measured = transfer;
      Basis basis = Basis::kScaled;
      const std::optional<models::CollectiveClass> cls = models::ClassOf(group.op);
      if (group.bytes == 0 || !cls) {
        // No size: the fabric's bandwidth ratio, for the part of the job it crosses.
        const double from_bw =
            nodes > 1 ? s_.source_net.bytes_per_s : s_.source_gpu->nvlink_bytes_per_s.value_or(0);
        const double to_bw = after.nodes > 1 ? s_.target_net.bytes_per_s
                                             : s_.target_gpu->nvlink_bytes_per_s.value_or(0);
        double ratio = from_bw > 0 && to_bw > 0 ? from_bw / to_bw : 1.0;
        // A ring's traffic per rank: 2 (n - 1) / n of the data for all-reduce, (n - 1) / n else.
        const double steps0 = ranks > 1 ? (ranks - 1.0) / ranks : 1.0;
        const double steps1 = after.ranks > 1 ? (after.ranks - 1.0) / after.ranks : 1.0;
        ratio *= bytes_factor * steps1 / steps0;
        transfer = std::llround(static_cast<double>(measured) * ratio);
        basis = Basis::kModelOnly;
        Note("collectives without a recorded size scaled by the fabric's bandwidth ratio alone");
      } else {
        models::CollectiveQuery q0;
        q0.op = group.op;
        q0.data_type = group.data_type;
        q0.bytes = models::ModelBytes(*cls, group.bytes, ranks);
        q0.ranks = ranks;
        q0.nodes = nodes;
        models::CollectiveQuery q1 = q0;
        q1.ranks = after.ranks;
        q1.nodes = after.nodes;
        q1.bytes = models::ModelBytes(
            *cls,
            static_cast<uint64_t>(std::llround(static_cast<double>(group.bytes) * bytes_factor)),
            after.ranks);
        const models::CollectivePredictor& p0 = nodes > 1 ? *(*from)->multi : *(*from)->single;
        const models::CollectivePredictor& p1 = after.nodes > 1 ? *(*to)->multi : *(*to)->single;
        const models::CollectivePrediction a = p0.Predict(q0);
        const models::CollectivePrediction b = p1.Predict(q1);
        if (a.duration_ns <= 0 || b.duration_ns < 0 || b.source == models::CostSource::kNone) {
          Note("a collective the model cannot answer kept as measured (" +
               std::string(models::ClassName(*cls)) + ", " + std::to_string(after.ranks) +
               " ranks)");
          continue;
        }
        transfer = std::llround(static_cast<double>(measured) * static_cast<double>(b.duration_ns) /
                                static_cast<double>(a.duration_ns));
        basis = b.source == models::CostSource::kModelOnly ? Basis::kModelOnly : Basis::kScaled;
      }
      const auto reasons = static_cast<uint8_t>(
          (gpu_changed_ ? kChangedGpu : 0) |
          (after.ranks != ranks || after.nodes != nodes ? kChangedRanks : 0) |
          (net_changed && spans ? kChangedNetwork : 0) | (bytes_factor != 1 ? kChangedBytes : 0));
      if (transfer != measured) ++report_.changed_collectives;
      report_.collective_basis[c] = basis;
      for (uint32_t m : group.nodes) {
        report_.node_basis[m] = basis;
        if (transfer != measured) report_.node_reasons[m] = reasons;
      }
    }
    return Status::Ok();
  }

  const CostSetup& s_;
  const ExecutionGraph& graph_;
  const std::vector<uint32_t>& origin_;  // Empty: every node is its own.
  Scenario& scenario_;
  CostReport& report_;
  bool gpu_changed_ = false;
  uint8_t reasons_ = 0;  // Why the GPU op being re-costed changes (ChangeReason bits).
  std::vector<std::unique_ptr<std::vector<models::TraceGpuWork>>> work_;
  std::set<std::string> noted_;
};

}  // namespace

const char* ChangeReasonName(int bit) {
  static constexpr const char* kNames[kChangeReasonCount] = {"gpu", "work", "ranks", "network",
                                                             "bytes"};
  return bit >= 0 && bit < kChangeReasonCount ? kNames[bit] : "?";
}

const char* BasisName(Basis basis) {
  switch (basis) {
    case Basis::kMeasured:
      return "measured";
    case Basis::kInterpolated:
      return "interpolated";
    case Basis::kScaled:
      return "scaled";
    case Basis::kModelOnly:
      return "model only";
  }
  return "?";
}

int ActivationRows(const schema::GemmCallEvent& call) {
  const bool transposed =
      call.transa == schema::GemmTranspose::kT || call.transa == schema::GemmTranspose::kC;
  return transposed ? 2 : 0;
}

int WorkChange::TokenDim(const models::GemmShape& shape, int rows) const {
  if (tokens.from <= 0) return -1;
  const std::array<int64_t, 3> dims = {shape.m, shape.n, shape.k};
  int chosen = -1;
  // Ties: `rows` first, then m, k, n (row-major, a linear layer's tokens are m in forward and
  // for the input gradient, k for the weight gradient, never n).
  const int other = rows == 2 ? 0 : 2;
  for (const int i : {rows, other, 1}) {
    if (dims[i] != tokens.from) continue;
    bool weights = true;
    for (int j = 0; j < 3; ++j) {
      if (j != i && FindDimension(dims[j], gemm) == nullptr) weights = false;
    }
    if (chosen < 0 || weights) chosen = i;
    if (weights) break;
  }
  return chosen;
}

models::GemmShape WorkChange::Map(const models::GemmShape& shape, int rows) const {
  std::array<int64_t, 3> dims = {shape.m, shape.n, shape.k};
  const int token = TokenDim(shape, rows);
  for (int i = 0; i < 3; ++i) {
    if (i == token) {
      dims[i] = tokens.to;
    } else if (const Dimension* d = FindDimension(dims[i], gemm)) {
      dims[i] = d->to;
    }
  }
  return models::GemmShape{dims[0], dims[1], dims[2], shape.batch};
}

bool WorkChange::changes() const {
  if (tokens.from != tokens.to) return true;
  for (const Dimension& d : gemm) {
    if (d.from != d.to) return true;
  }
  return kernel_bytes != 1 || kernel_flops != 1 || attention.batch != 1 || attention.heads != 1 ||
         attention.seq != 1 || attention.head_dim != 1 || collective_bytes != 1;
}

Status Recost(const CostSetup& setup, RewrittenGraph* graph, CostReport* report) {
  return Recost(setup, graph->graph, graph->origin, &graph->scenario, report);
}

Status Recost(const CostSetup& setup, const ExecutionGraph& graph,
              const std::vector<uint32_t>& origin, Scenario* scenario, CostReport* report) {
  if (setup.job == nullptr || setup.measured == nullptr || setup.structure == nullptr ||
      setup.model == nullptr || setup.source_gpu == nullptr || setup.target_gpu == nullptr) {
    return Status::Error("Recost: incomplete setup");
  }
  if (setup.measured->node_source.size() != setup.measured->nodes.size() ||
      setup.structure->nodes.size() != setup.measured->nodes.size()) {
    return Status::Error(
        "Recost: the graph was built without record_sources, or the structure "
        "is of another graph");
  }
  return Recoster(setup, graph, origin, scenario, report).Run();
}

}  // namespace lumos::modeler::whatif
