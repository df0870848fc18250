// Design: the cost stage of a rewrite: new durations for the nodes a new setup changes, each
// with what it rests on. It runs on a RewrittenGraph (step_repetition.h; Unchanged() when the
// setup changes nothing structural), whose nodes know the measured node they copy.
//
// What changes, and how (every new duration starts from the node's own measurement, so what
// the models get wrong about a kernel in general cancels out where they are only asked for a
// ratio):
//   kernels       another GPU, or new work (WorkChange, e.g. hidden x2 scales a layer GEMM's n
//                 and k): a GEMM with its shape (RankTrace::GemmOf) takes the GEMM model's answer
//                 on the target directly where the target GPU measured that shape (measured,
//                 interpolated), else measured x model(new shape, target) / model(old, source)
//                 (scaled); any other kernel, or a GEMM without a shape, is KernelModel::Scale'd
//                 (through both rooflines and the floor; attention with its shape's FLOPs and
//                 bytes, copies and memsets with their bytes).
//   collectives   another GPU's NVLink, another network, another size (bytes), or another rank
//                 count (dp=): the transfer time (the simulator's per-group duration; waiting for
//                 peers still emerges) is measured x model(new) / model(old) with the collective
//                 model on each fabric; a collective without a recorded size (imported traces)
//                 scales by the fabric's bandwidth ratio alone, and says so (model only).
//   host calls    unchanged: the same CPU, the same framework (an assumption, reported).
// The trace's own GPU is the source; its network (unknown from a trace) is `source_net`.
// Errors: a GPU or dtype the specs cannot run (e.g. fp8 on V100), naming the kernel.
// Threading: pure function of its inputs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "modeler/graph/job.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/models/kernels/kernel_trace.h"
#include "modeler/structure/job_structure.h"
#include "modeler/whatif/step_repetition.h"

namespace lumos::modeler::whatif {

// What an estimated duration rests on, best first (the report's "how much rests on what").
enum class Basis : uint8_t {
  kMeasured,      // The node's measured duration, unchanged.
  kInterpolated,  // Measured on the target (that shape, or neighbouring ones): the model's table.
  kScaled,        // The node's measurement carried by a model ratio (rooflines, fitted costs).
  kModelOnly,     // No measurement of its kind entered (no size: bandwidth ratio alone).
};
inline constexpr int kBasisCount = 4;
const char* BasisName(Basis basis);  // "measured", "interpolated", "scaled", "model only".

// New work for the kernels and collectives of a part of the program. A GEMM's dimensions are
// mapped by value, whatever their order (cuBLAS's m, n, k are PyTorch's transposed): one
// dimension equal to `tokens.from` becomes `tokens.to` (the one whose other two dimensions are
// both weight sizes, when several equal it), the others by the first `weights` entry equal to
// them (list the most specific first); a dimension nothing matches stays. Other kernels' FLOPs
// and bytes, and collectives' bytes, multiply.
struct WorkChange {
  struct Dimension {
    int64_t from = 0;
    int64_t to = 0;
  };
  Dimension tokens;             // Rows of the activations (mbs x seq per micro-batch).
  std::vector<Dimension> gemm;  // Weight dimensions (hidden / tp, ffn / tp, ...).
  double kernel_bytes = 1;      // Other kernels (elementwise, norm, ...), copies, memsets.
  double kernel_flops = 1;
  // Attention problems, as factors on their sizes (a recorded shape is scaled and its work
  // recomputed; without one, FLOPs go as batch x heads x seq^2 x head_dim, bytes as
  // batch x heads x seq x head_dim).
  struct Attention {
    double batch = 1, heads = 1, seq = 1, head_dim = 1;
    // The measured setup's problem per GPU, when the setup is known (0: not known): a fused
    // attention forward's FLOPs (4 b h s^2 d) and bytes (Q, K, V, O in bf16: 8 b h s d); a
    // backward's (its name says so: bprop, bwd, backward) 2.5 x the FLOPs (FlashAttention-2's
    // five matrix products to the forward's two) and twice the bytes (dO, dQ, dK, dV too).
    // With it a traced attention kernel without a recorded shape is scaled on the roofline
    // from its own efficiency, which moves toward the peak as the problem grows.
    double forward_flops = 0, forward_bytes = 0;
  } attention;
  double collective_bytes = 1;
  bool changes() const;
  // A GEMM's new dimensions by the rule above; `rows`: ActivationRows of its call.
  models::GemmShape Map(const models::GemmShape& shape, int rows = 0) const;
  // Which of m, n, k (0, 1, 2) Map takes for the tokens, or -1: a dimension equal to
  // tokens.from, the one whose other two are weight dimensions where several are, then
  // `rows`, m, k, n in that order.
  int TokenDim(const models::GemmShape& shape, int rows = 0) const;
};

// The dimension a row-major GEMM's A operand is stored along (0: m, 2: k when A is
// transposed): the tokens of an activation, where m and k are the same size (a weight
// gradient dW = dY^T X has its tokens in k, an input gradient dX = dY W in m).
int ActivationRows(const schema::GemmCallEvent& call);

struct CostSetup {
  const Job* job = nullptr;                  // With its events (node_source indexes them).
  const ExecutionGraph* measured = nullptr;  // Built with record_sources.
  const structure::JobStructure* structure = nullptr;
  const models::CostModel* model = nullptr;
  const models::GpuSpec* source_gpu = nullptr;
  const models::GpuSpec* target_gpu = nullptr;
  models::NetworkSpec source_net, target_net;
  // Per layer kernel (node in a layer segment) / other kernels of forward, backward / optimizer.
  WorkChange layer_work, other_work, optimizer_work;
  // Per communicator (comm id): the rank count and nodes it spans in the new setup (dp=, and the
  // placement on the target's NVLink domains); absent: as measured.
  struct GroupSize {
    uint32_t ranks = 0;
    uint32_t nodes = 0;
  };
  std::unordered_map<uint64_t, GroupSize> group_sizes;
  // Per rank index, models::ClassifyRank of the job's ranks, when the caller keeps them (a sweep
  // classifies once); null: classified here, per rank as needed.
  const std::vector<std::vector<models::TraceGpuWork>>* classified = nullptr;
  // Per communicator: the collectives' bytes factor (gradient buckets when the model grows).
  std::unordered_map<uint64_t, double> group_bytes;
  // Per measured kernel node: the factor on its work (bytes, FLOPs) in place of its part's
  // (a multi-tensor optimizer launch whose op now spans more or fewer launches); null: none.
  const std::unordered_map<uint32_t, double>* kernel_work = nullptr;
};

// Why a node's duration changed (bits; 0: it did not).
enum ChangeReason : uint8_t {
  kChangedGpu = 1,      // Another GPU (or its NVLink, for a collective).
  kChangedWork = 2,     // New work: shapes, activations, parameters (hidden, seq, mbs, ...).
  kChangedRanks = 4,    // A collective over another number of ranks or nodes (dp=).
  kChangedNetwork = 8,  // A collective across nodes, over another network.
  kChangedBytes = 16,   // A collective of another size (the gradients of a bigger model).
};
inline constexpr int kChangeReasonCount = 5;
const char* ChangeReasonName(int bit);  // "gpu", "work", "ranks", "network", "bytes".

struct CostReport {
  std::vector<Basis> node_basis;        // Per node of the rewritten graph (host calls: measured).
  std::vector<uint8_t> node_reasons;    // Per node: ChangeReason bits (0: as measured).
  std::vector<Basis> collective_basis;  // Per collective group of the rewritten graph.
  uint64_t changed_kernels = 0, changed_collectives = 0;
  std::vector<std::string> notes;  // Assumptions and what could not be re-costed, once each.
};

Status Recost(const CostSetup& setup, RewrittenGraph* graph, CostReport* report);
// The same on a graph the caller keeps (the measured one, when nothing structural changes):
// `origin` maps its nodes to the measured graph's (empty: they are the measured ones).
Status Recost(const CostSetup& setup, const ExecutionGraph& graph,
              const std::vector<uint32_t>& origin, Scenario* scenario, CostReport* report);

}  // namespace lumos::modeler::whatif
