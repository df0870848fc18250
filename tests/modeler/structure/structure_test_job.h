// Design: a hand-built Megatron-like job whose structure is known by construction, for the
// structure tests: R ranks of one tensor-parallel group (comm kTpComm, all-reduces inside each
// forward layer), I iterations (ProfilerStep#k), M micro-batches of forward + backward, L
// layers of 8 kernels forward (QKV, Q K^T, softmax, P V, attention output, fc1, gelu, fc2, then
// the NCCL all-reduce) and 4 backward, an output layer, optimizer kernels. GEMMs carry
// cuBLAS-convention shapes (m = out, n = tokens, k = in) of hidden 64, ffn 256, heads 4, seq
// 16, mbs 2, vocab 1000, split over the ranks (tp = R). Ranges: NVTX "forward" / "backward" /
// "optimizer" and "decoder.layers.<i>" as asked.
#pragma once

#include "modeler/graph/job.h"

namespace lumos::modeler::testing {

inline constexpr uint64_t kTpComm = 0x7e11;

struct TestJobSpec {
  int ranks = 2;
  int iterations = 2;
  int micro_batches = 2;
  int layers = 3;
  bool phase_ranges = true;
  bool layer_ranges = false;
  bool steps = true;
};

Job MakeTransformerJob(const TestJobSpec& spec);

}  // namespace lumos::modeler::testing
