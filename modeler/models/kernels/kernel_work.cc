#include "modeler/models/kernels/kernel_work.h"

#include <utility>

namespace lumos::modeler::models {

double CausalShare(int64_t seq_q, int64_t seq_kv) {
  const double q = static_cast<double>(seq_q);
  const double kv = static_cast<double>(seq_kv);
  if (q <= kv) return 1.0 - q / (2.0 * kv);
  return kv / (2.0 * q);
}

StatusOr<KernelWork> AttentionWork(const AttentionShape& shape, DType dtype) {
  const int64_t kv_heads = shape.kv_heads > 0 ? shape.kv_heads : shape.heads;
  const int64_t seq_kv = shape.seq_kv > 0 ? shape.seq_kv : shape.seq_q;
  constexpr int64_t kMax = int64_t{1} << 31;
  const std::pair<const char*, int64_t> dims[] = {
      {"batch", shape.batch}, {"heads", shape.heads}, {"kv_heads", kv_heads},
      {"seq_q", shape.seq_q}, {"seq_kv", seq_kv},     {"head_dim", shape.head_dim}};
  for (const auto& [name, value] : dims) {
    if (value <= 0 || value > kMax) {
      return ErrorStatus("attention %s = %lld: must be in 1..2^31", name,
                         static_cast<long long>(value));
    }
  }
  if (kv_heads > shape.heads) {
    return ErrorStatus("attention: %lld kv heads for %lld heads (at most as many)",
                       static_cast<long long>(kv_heads), static_cast<long long>(shape.heads));
  }
  const double b = static_cast<double>(shape.batch);
  const double h = static_cast<double>(shape.heads);
  const double hkv = static_cast<double>(kv_heads);
  const double sq = static_cast<double>(shape.seq_q);
  const double skv = static_cast<double>(seq_kv);
  const double d = static_cast<double>(shape.head_dim);
  KernelWork work;
  work.flops = 4.0 * b * h * sq * skv * d;
  if (shape.causal) work.flops *= CausalShare(shape.seq_q, seq_kv);
  if (shape.backward) work.flops *= 2.5;
  const double element = InputBytes(dtype);
  const double q_tensor = b * h * sq * d * element;      // Q, O, dO, dQ.
  const double kv_tensor = b * hkv * skv * d * element;  // K, V, dK, dV.
  const double stats = b * h * sq * 4.0;                 // Softmax log-sum-exp, fp32.
  work.bytes = shape.backward ? 4.0 * q_tensor + 4.0 * kv_tensor + stats
                              : 2.0 * q_tensor + 2.0 * kv_tensor + stats;
  return work;
}

}  // namespace lumos::modeler::models
