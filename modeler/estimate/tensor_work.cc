#include "modeler/estimate/tensor_work.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lumos::modeler::estimate {
namespace {

using models::KernelClass;
using structure::Phase;

// One matrix of a GEMM: elements before and its factor after.
struct Matrix {
  double elements = 0;
  double factor = 1;
  bool activation = false;  // It has the tokens dimension (WorkChange::TokenDim).
};

struct GemmMatrices {
  Matrix a, b, c;  // A: m x k, B: k x n, C: m x n (cuBLAS's, times the batch).
};

// Elements per thread a PyTorch elementwise kernel may take.
constexpr int kPerThreadCount = 5;
constexpr std::array<double, kPerThreadCount> kPerThread = {1, 2, 4, 8, 16};

// Whether `elements` is `threads` x `per_thread`, within 5 % (a grid rounds up to a block).
bool Matches(double elements, double threads, double per_thread) {
  return threads > 0 && elements > 0 && std::abs(elements / (threads * per_thread) - 1) <= 0.05;
}

// The elements per thread a PyTorch elementwise kernel's template names (index into
// kPerThread), or -1: vectorized_elementwise_kernel<VEC, ...>, elementwise_kernel<THREADS,
// PER_THREAD, ...>, unrolled_elementwise_kernel (4 a thread).
int TemplatePerThread(std::string_view name) {
  auto number_after = [&](std::string_view prefix, int skip) -> double {
    size_t at = name.find(prefix);
    if (at == std::string_view::npos) return 0;
    at += prefix.size();
    for (int i = 0; i < skip; ++i) {
      at = name.find(',', at);
      if (at == std::string_view::npos) return 0;
      ++at;
    }
    while (at < name.size() && name[at] == ' ') ++at;
    double value = 0;
    while (at < name.size() && name[at] >= '0' && name[at] <= '9')
      value = value * 10 + (name[at++] - '0');
    return value;
  };
  double per_thread = number_after("vectorized_elementwise_kernel<", 0);
  if (per_thread == 0 && name.find("unrolled_elementwise_kernel<") != std::string_view::npos) {
    per_thread = 4;
  }
  if (per_thread == 0 && name.find("vectorized") == std::string_view::npos) {
    per_thread = number_after("elementwise_kernel<", 1);
  }
  for (int i = 0; i < kPerThreadCount; ++i) {
    if (kPerThread[i] == per_thread) return i;
  }
  return -1;
}

class Planner {
 public:
  Planner(const Job& job, const ExecutionGraph& g, const structure::JobStructure& s,
          const whatif::WorkChange& layer_work, const whatif::WorkChange& other_work)
      : job_(job), g_(g), s_(s), layer_work_(layer_work), other_work_(other_work) {}

  TensorWork Run() {
    for (const Processor& p : g_.processors) {
      if (!p.gpu) continue;
      Stream(p.nodes);
    }
    Decide();
    return std::move(out_);
  }

 private:
  const whatif::WorkChange* WorkOf(uint32_t node) const {
    const structure::NodeInfo& info = s_.nodes[node];
    if (info.phase != Phase::kForward && info.phase != Phase::kBackward) return nullptr;
    return info.layer != structure::kNoLayer ? &layer_work_ : &other_work_;
  }

  const schema::GemmCallEvent* GemmCall(uint32_t node) const {
    if (g_.nodes[node].kind != NodeKind::kKernel ||
        s_.nodes[node].kernel_class != KernelClass::kGemm) {
      return nullptr;
    }
    const schema::GemmCallEvent* call =
        job_.ranks[g_.nodes[node].rank_index].GemmOf(g_.node_source[node]);
    if (call == nullptr || call->m == 0 || call->n == 0 || call->k == 0) return nullptr;
    if (call->api == schema::GemmApi::kFrameworkAttention ||
        call->api == schema::GemmApi::kFrameworkAttentionBackward) {
      return nullptr;
    }
    return call;
  }

  GemmMatrices MatricesOf(const schema::GemmCallEvent& call, const whatif::WorkChange& work) const {
    const models::GemmShape before{static_cast<int64_t>(call.m), static_cast<int64_t>(call.n),
                                   static_cast<int64_t>(call.k),
                                   std::max<int64_t>(1, call.batch_count)};
    const int rows = whatif::ActivationRows(call);
    const models::GemmShape after = work.Map(before, rows);
    const int token = work.TokenDim(before, rows);  // 0: m, 1: n, 2: k.
    auto matrix = [&](int64_t x0, int64_t y0, int64_t x1, int64_t y1, int dim0, int dim1) {
      const double b = static_cast<double>(before.batch);
      const double e0 = static_cast<double>(x0) * static_cast<double>(y0) * b;
      const double e1 = static_cast<double>(x1) * static_cast<double>(y1) * b;
      return Matrix{e0, e1 / e0, token == dim0 || token == dim1};
    };
    return {matrix(before.m, before.k, after.m, after.k, 0, 2),
            matrix(before.k, before.n, after.k, after.n, 2, 1),
            matrix(before.m, before.n, after.m, after.n, 0, 1)};
  }

  // An elementwise kernel and the matrices it may touch.
  struct Candidate {
    uint32_t node = 0;
    std::string_view name;
    double threads = 0;
    std::array<Matrix, 4> matrices{};
    size_t count = 0;
    // A copy in backward: after a weight gradient's GEMM (k = tokens) it is the gradient's
    // copy into the parameter's .grad (autograd's AccumulateGrad), so a weight-shaped output
    // it matches is taken over an activation-shaped one of the same size.
    bool gradient_copy = false;
    size_t outputs = 0;  // matrices[0, outputs) are GEMM outputs, the rest inputs.
  };

  void Stream(const std::vector<uint32_t>& nodes) {
    // Per position: the GEMM's matrices, if the op is a GEMM with a recorded shape.
    const size_t n = nodes.size();
    std::vector<int> gemm(n, -1);
    std::vector<GemmMatrices> matrices;
    for (size_t i = 0; i < n; ++i) {
      const whatif::WorkChange* work = WorkOf(nodes[i]);
      if (work == nullptr) continue;
      if (const schema::GemmCallEvent* call = GemmCall(nodes[i])) {
        gemm[i] = static_cast<int>(matrices.size());
        matrices.push_back(MatricesOf(*call, *work));
      }
    }
    if (matrices.empty()) return;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t id = nodes[i];
      const Node& node = g_.nodes[id];
      if (node.kind != NodeKind::kKernel ||
          s_.nodes[id].kernel_class != KernelClass::kElementwise || WorkOf(id) == nullptr) {
        continue;
      }
      const RankTrace& rank = job_.ranks[node.rank_index];
      const uint32_t source = g_.node_source[id];
      if (source >= rank.kernels.size()) continue;
      const auto& k = rank.kernels[source];
      Candidate c;
      c.node = id;
      c.name = node.name;
      c.threads =
          static_cast<double>(k.grid.x) * k.grid.y * k.grid.z * k.block.x * k.block.y * k.block.z;
      const Phase phase = s_.nodes[id].phase;
      const bool copy = node.name.find("copy") != std::string_view::npos;
      c.gradient_copy = copy && phase == Phase::kBackward;
      // Outputs: of the nearest GEMM before it; in backward of each GEMM within reach (the
      // weight gradient's GEMM and the input gradient's come in either order).
      for (size_t d = 1; d <= kMaxDistance && d <= i && c.count < 2; ++d) {
        const size_t j = i - d;
        if (s_.nodes[nodes[j]].phase != phase) break;
        if (gemm[j] >= 0) {
          c.matrices[c.count++] = matrices[gemm[j]].c;
          if (phase == Phase::kForward) break;
        }
      }
      c.outputs = c.count;
      for (size_t d = 1; d <= kMaxDistance && i + d < n; ++d) {
        const size_t j = i + d;
        if (s_.nodes[nodes[j]].phase != phase) break;
        if (gemm[j] >= 0) {
          // A weight is only copied (a cast, a layout change) before its GEMM, and only in
          // forward: backward makes the gradient inputs and uses the weights as forward left them.
          for (const Matrix& m : {matrices[gemm[j]].a, matrices[gemm[j]].b}) {
            if (m.activation || (copy && phase == Phase::kForward)) c.matrices[c.count++] = m;
          }
          break;
        }
      }
      if (c.count == 0) continue;
      for (int e = 0; e < kPerThreadCount; ++e) {
        if (MatchCount(c, e) > 0) ++votes_[c.name][e];
      }
      candidates_.push_back(c);
    }
  }

  static size_t MatchCount(const Candidate& c, int per_thread) {
    size_t matches = 0;
    for (size_t m = 0; m < c.count; ++m) {
      if (Matches(c.matrices[m].elements, c.threads, kPerThread[per_thread])) ++matches;
    }
    return matches;
  }

  // Each kernel by its name's elements per thread: the one that explains most of its
  // launches; in a tie the one its name says (TemplatePerThread).
  void Decide() {
    for (const Candidate& c : candidates_) {
      const std::array<uint32_t, kPerThreadCount>& v = votes_[c.name];
      int per_thread = static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
      const int named = TemplatePerThread(c.name);
      if (named >= 0 && v[named] == v[per_thread]) per_thread = named;
      std::array<double, 4> found{};
      size_t count = 0;
      bool weight = false;
      for (size_t m = 0; m < c.count; ++m) {
        const Matrix& x = c.matrices[m];
        weight = weight || (c.gradient_copy && !x.activation && m < c.outputs &&
                            Matches(x.elements, c.threads, kPerThread[per_thread]));
      }
      for (size_t m = 0; m < c.count; ++m) {
        const Matrix& x = c.matrices[m];
        if (weight && x.activation) continue;
        if (!Matches(x.elements, c.threads, kPerThread[per_thread])) continue;
        bool seen = false;
        for (size_t f = 0; f < count; ++f) seen = seen || std::abs(found[f] / x.factor - 1) < 1e-9;
        if (!seen) found[count++] = x.factor;
      }
      if (count == 0) continue;
      double log_sum = 0;
      for (size_t f = 0; f < count; ++f) log_sum += std::log(found[f]);
      const double factor = std::exp(log_sum / static_cast<double>(count));
      ++out_.matched;
      if (count > 1) ++out_.ambiguous;
      if (std::abs(factor / WorkOf(c.node)->kernel_bytes - 1) > 1e-9) {
        out_.kernel_work[c.node] = factor;
      }
    }
  }

  const Job& job_;
  const ExecutionGraph& g_;
  const structure::JobStructure& s_;
  const whatif::WorkChange& layer_work_;
  const whatif::WorkChange& other_work_;
  std::vector<Candidate> candidates_;
  // Per kernel name: its launches that some candidate explains, per elements per thread.
  std::unordered_map<std::string_view, std::array<uint32_t, kPerThreadCount>> votes_;
  TensorWork out_;
};

}  // namespace

TensorWork PlanTensorWork(const Job& job, const ExecutionGraph& graph,
                          const structure::JobStructure& structure,
                          const whatif::WorkChange& layer_work,
                          const whatif::WorkChange& other_work) {
  if (graph.node_source.size() != graph.nodes.size() ||
      structure.nodes.size() != graph.nodes.size()) {
    return {};
  }
  return Planner(job, graph, structure, layer_work, other_work).Run();
}

}  // namespace lumos::modeler::estimate
