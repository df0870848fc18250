// Design: the work of a kernel other than a GEMM, in FLOPs and bytes of memory traffic, the two
// numbers the non-GEMM kernel model (kernel_model.h) puts on a GPU's roofline.
// Attention follows FlashAttention's own accounting (Dao-AILab/flash-attention,
// benchmarks/benchmark_flash_attention.py, `flops()`): forward 4·b·h·s_q·s_kv·d (two GEMMs,
// QKᵀ and PV, 2 FLOPs per multiply-add), halved when causal (s_q = s_kv), backward 2.5× the
// forward (five GEMMs instead of two). For s_q ≠ s_kv a causal mask is aligned bottom-right
// (FlashAttention ≥ 2.1): the unmasked share is 1 − s_q / (2·s_kv) when s_q ≤ s_kv, else
// s_kv / (2·s_q). Bytes are what a fused kernel must move at least: forward reads Q, K, V and
// writes O (the softmax statistics, b·h·s_q floats, are added too); backward reads Q, K, V, O,
// dO and writes dQ, dK, dV. K and V have `kv_heads` heads (grouped-query attention).
// Threading: pure functions.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "modeler/models/hardware/dtype.h"

namespace lumos::modeler::models {

struct KernelWork {
  double flops = 0;  // 0: not known (or none worth counting).
  double bytes = 0;  // Memory traffic (reads + writes); 0: not known.

  bool known() const { return flops > 0 || bytes > 0; }
};

struct AttentionShape {
  int64_t batch = 1;
  int64_t heads = 1;
  int64_t kv_heads = 0;  // 0: as many as `heads`.
  int64_t seq_q = 0;
  int64_t seq_kv = 0;  // 0: as long as seq_q.
  int64_t head_dim = 0;
  bool causal = false;
  bool backward = false;
};

// The share of the s_q × s_kv score matrix a causal mask leaves (bottom-right aligned).
double CausalShare(int64_t seq_q, int64_t seq_kv);

// Errors: a dimension ≤ 0 (or above 2^31), more kv heads than heads.
StatusOr<KernelWork> AttentionWork(const AttentionShape& shape, DType dtype);

}  // namespace lumos::modeler::models
