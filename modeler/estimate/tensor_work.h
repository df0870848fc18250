// Design: an elementwise kernel's new work from the tensor it touches (issue 24 item 6).
// Without a rule every elementwise kernel of a layer scales by one activations factor; on the
// shared H200 traces that is wrong for the kernels that touch weights: under bf16 autocast
// each forward casts every weight (fp32 -> bf16) just before its GEMM, and backward casts
// each weight gradient (bf16 -> fp32) just after the GEMM that made it. Width x2 makes those
// x4 (the parameters), not x2 (the activations): est-width's weight casts ran 3.0 x and its
// gradient casts 3.7 x the base's.
//
// The tensor is recognised by its size, its place and its name. Size: a PyTorch elementwise
// kernel launches one thread per 1, 2, 4, 8 or 16 elements (grid x block, rounded up to a
// block), the same number for every launch of one kernel name: the one that lets most of the
// name's launches match a candidate below, in a tie the one its template says
// (vectorized_elementwise_kernel<8, ...>: 8; elementwise_kernel<128, 4, ...>: 4; unrolled: 4).
// Place: a kernel after a GEMM on its stream consumes that GEMM's output C (m x n), one before
// a GEMM makes one of its inputs, A (m x k) or B (k x n); row-major m, n, k as loaded. Per
// elementwise kernel of the forward and backward phases (not the optimizer's:
// optimizer_launches.h), on its stream, in its phase, at most kMaxDistance ops away:
//   outputs: C of the nearest GEMM with a recorded shape before it (in backward of the two
//   nearest: a weight gradient's GEMM and the input gradient's come in either order);
//   inputs: A and B of the nearest GEMM after it; a weight input (no tokens dimension,
//   WorkChange::TokenDim) only for a copy (a cast, a layout change) in forward: backward
//   makes the gradient inputs and uses the weights as forward left them;
//   a copy in backward that matches a weight-shaped output takes it over activation-shaped
//   ones of the same size (autograd's AccumulateGrad copies a weight gradient into .grad);
//   a matrix's factor is its size after (its GEMM's dimensions mapped by the part's
//   WorkChange, as the GEMM itself is re-costed) over before;
//   the kernel's work factor: the matching matrices' factor when they agree; when they differ
//   (a weight and an activation of the same size: f x h and tokens x h when ffn = tokens, as
//   in the shared set), the geometric mean of the distinct factors, counted as ambiguous; no
//   match: the part's activations factor, as before.
// Measured on the shared set (elementwise GPU time from est-base against each variant's own
// trace): width x2 -12.9 % -> +2.4 %, seq x2 +5.6 % -> -3.8 %, batch x2 +5.5 % -> -3.9 %.
// Only kernels whose factor differs from their part's are returned.
// Threading: pure function.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/structure/job_structure.h"
#include "modeler/whatif/recost.h"

namespace lumos::modeler::estimate {

struct TensorWork {
  // Measured kernel node -> the factor on its work (bytes and FLOPs) in place of its part's.
  std::unordered_map<uint32_t, double> kernel_work;
  uint64_t matched = 0;    // Kernels whose tensor matched one factor (all, not only changed).
  uint64_t ambiguous = 0;  // Kernels matching tensors of different factors (geometric mean).
};

// Ops between a kernel and the GEMM whose operand it may touch (the bias, weight and input
// casts, a memset and the GEMM under autocast are 4 apart at most).
inline constexpr int kMaxDistance = 6;

// `layer_work` applies to nodes in a layer, `other_work` to the rest of forward and backward
// (as whatif::Recost does). The graph must have node sources.
TensorWork PlanTensorWork(const Job& job, const ExecutionGraph& graph,
                          const structure::JobStructure& structure,
                          const whatif::WorkChange& layer_work,
                          const whatif::WorkChange& other_work);

}  // namespace lumos::modeler::estimate
