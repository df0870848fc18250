#include "modeler/import/kineto_gemm.h"

#include <algorithm>
#include <limits>
#include <variant>
#include <vector>

#include "modeler/import/kineto_trace.h"

namespace lumos::modeler::kineto {
namespace {

using schema::AttentionMask;
using schema::DataType;

constexpr uint64_t kMaxDimension = uint64_t{1} << 62;  // Products stay far from overflow.

// "Input Dims": one array of sizes per input (an empty one for scalars and None).
using Dims = std::vector<uint64_t>;

bool ReadDims(dom::element input_dims, std::vector<Dims>* out) {
  dom::array inputs;
  if (input_dims.get_array().get(inputs) != simdjson::SUCCESS) return false;
  for (dom::element input : inputs) {
    Dims dims;
    dom::array sizes;
    if (input.get_array().get(sizes) == simdjson::SUCCESS) {
      for (dom::element size : sizes) {
        std::optional<int64_t> v = AsInt(size);
        // A negative or huge size is not a tensor's: the whole operator is skipped.
        if (!v || *v < 0 || static_cast<uint64_t>(*v) > kMaxDimension) return false;
        dims.push_back(static_cast<uint64_t>(*v));
      }
    }
    out->push_back(std::move(dims));
  }
  return true;
}

// A c10 scalar type name ("Input type") -> schema type.
DataType TypeFromTorch(std::string_view name) {
  struct Name {
    std::string_view torch;
    DataType type;
  };
  static constexpr Name kNames[] = {
      {"float", DataType::kFloat32},
      {"double", DataType::kFloat64},
      {"c10::Half", DataType::kFloat16},
      {"c10::BFloat16", DataType::kBfloat16},
      {"c10::Float8_e4m3fn", DataType::kFloat8E4m3},
      {"c10::Float8_e4m3fnuz", DataType::kFloat8E4m3},
      {"c10::Float8_e5m2", DataType::kFloat8E5m2},
      {"c10::Float8_e5m2fnuz", DataType::kFloat8E5m2},
      {"c10::Float4_e2m1fn_x2", DataType::kFloat4E2m1},
      {"signed char", DataType::kInt8},
      {"unsigned char", DataType::kUint8},
      {"int", DataType::kInt32},
      {"long int", DataType::kInt64},
      {"c10::complex<c10::Half>", DataType::kComplexFloat16},
      {"c10::complex<float>", DataType::kComplexFloat32},
      {"c10::complex<double>", DataType::kComplexFloat64},
  };
  for (const Name& n : kNames) {
    if (n.torch == name) return n.type;
  }
  return DataType::kUnspecified;
}

// The strings of a string array ("Input type", "Concrete Inputs"); non-strings read as "".
std::vector<std::string_view> ReadStrings(std::optional<dom::element> value) {
  std::vector<std::string_view> out;
  dom::array array;
  if (!value || value->get_array().get(array) != simdjson::SUCCESS) return out;
  for (dom::element item : array) out.push_back(AsString(item));
  return out;
}

uint64_t Product(const Dims& dims, size_t begin, size_t end) {
  uint64_t product = 1;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i] != 0 && product > kMaxDimension / dims[i]) return 0;  // Not a real tensor.
    product *= dims[i];
  }
  return product;
}

// torch.matmul's broadcast of the leading (batch) dimensions: their product, or 0 when they
// do not broadcast.
uint64_t BroadcastBatch(const Dims& a, size_t a_batch, const Dims& b, size_t b_batch) {
  const size_t n = std::max(a_batch, b_batch);
  Dims out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = i < n - a_batch ? 1 : a[i - (n - a_batch)];
    const uint64_t y = i < n - b_batch ? 1 : b[i - (n - b_batch)];
    if (x != y && x != 1 && y != 1) return 0;
    out[i] = x == 1 ? y : x;
  }
  return Product(out, 0, n);
}

enum class Kind { kMm, kBmm, kMatmul, kLinear, kAttentionBhld, kAttentionBlhd };
enum class Result { kAsA, kUnknown, kInt32 };  // The output's element type.
constexpr int kNone = -1;

struct Operator {
  std::string_view name;
  Kind kind;
  int first;  // Input index of operand A (attention: the query; key and value follow).
  Result result = Result::kAsA;
  // Attention: the input index of an attn_mask / attn_bias tensor, and the "Concrete Inputs"
  // index of is_causal (a bool) or, with mask_type, custom_mask_type (0 none, 1 and 2 causal).
  int mask_tensor = kNone;
  int causal = kNone;
  bool mask_type = false;
  bool backward = false;
};

// The argument positions are those of the operators' schemas (native_functions.yaml; flash-attn's
// torch.library registration).
constexpr Operator kOperators[] = {
    {"aten::mm", Kind::kMm, 0},
    {"aten::_scaled_mm", Kind::kMm, 0, Result::kUnknown},
    {"aten::_int_mm", Kind::kMm, 0, Result::kInt32},
    {"aten::addmm", Kind::kMm, 1},
    {"aten::bmm", Kind::kBmm, 0},
    {"aten::baddbmm", Kind::kBmm, 1},
    {"aten::matmul", Kind::kMatmul, 0},
    {"aten::linear", Kind::kLinear, 0},
    // (query, key, value, attn_mask, dropout_p, is_causal, ...)
    {"aten::scaled_dot_product_attention", Kind::kAttentionBhld, 0, Result::kAsA, 3, 5},
    // (query, key, value, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_flash_attention", Kind::kAttentionBhld, 0, Result::kAsA, kNone, 4},
    // (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
    //  dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_flash_attention_backward", Kind::kAttentionBhld, 1, Result::kAsA,
     kNone, 11, false, true},
    // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_efficient_attention", Kind::kAttentionBhld, 0, Result::kAsA, 3, 6},
    // (grad_out_, query, key, value, attn_bias, out, logsumexp, philox_seed, philox_offset,
    //  dropout_p, grad_input_mask, is_causal, ...)
    {"aten::_scaled_dot_product_efficient_attention_backward", Kind::kAttentionBhld, 1,
     Result::kAsA, 4, 11, false, true},
    // (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_cudnn_attention", Kind::kAttentionBhld, 0, Result::kAsA, 3, 6},
    // (grad_out, query, key, value, out, logsumexp, philox_seed, philox_offset, attn_bias,
    //  cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_cudnn_attention_backward", Kind::kAttentionBhld, 1, Result::kAsA, 8,
     14, false, true},
    // (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
    {"aten::_flash_attention_forward", Kind::kAttentionBlhd, 0, Result::kAsA, kNone, 8},
    // (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
    //  dropout_p, is_causal, ...)
    {"aten::_flash_attention_backward", Kind::kAttentionBlhd, 1, Result::kAsA, kNone, 11, false,
     true},
    // (query, key, value, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
    //  dropout_p, custom_mask_type, ...)
    {"aten::_efficient_attention_forward", Kind::kAttentionBlhd, 0, Result::kAsA, 3, 9, true},
    // (grad_out_, query, key, value, bias, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
    //  max_seqlen_k, logsumexp, dropout_p, philox_seed, philox_offset, custom_mask_type, ...)
    {"aten::_efficient_attention_backward", Kind::kAttentionBlhd, 1, Result::kAsA, 4, 14, true,
     true},
    // (q, k, v, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_forward", Kind::kAttentionBlhd, 0, Result::kAsA, kNone, 5},
    // (dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_backward", Kind::kAttentionBlhd, 1, Result::kAsA, kNone, 11, false,
     true},
};

bool GemmShape(const Operator& op, const Dims& a, const Dims& b, schema::GemmCallEvent* g) {
  g->api = schema::GemmApi::kFrameworkMatmul;
  g->batch_count = 1;
  switch (op.kind) {
    case Kind::kMm:
      if (a.size() != 2 || b.size() != 2 || a[1] != b[0]) return false;
      g->m = a[0];
      g->k = a[1];
      g->n = b[1];
      return true;
    case Kind::kBmm:
      if (a.size() != 3 || b.size() != 3 || a[0] != b[0] || a[2] != b[1]) return false;
      g->batch_count = a[0];
      g->m = a[1];
      g->k = a[2];
      g->n = b[2];
      return true;
    case Kind::kMatmul: {
      if (a.empty() || b.empty()) return false;
      // A 1-D operand is a row (a) or a column (b) vector.
      const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
      g->m = a_vector ? 1 : a[a.size() - 2];
      g->k = a.back();
      const uint64_t b_k = b_vector ? b[0] : b[b.size() - 2];
      g->n = b_vector ? 1 : b.back();
      if (b_k != g->k) return false;
      g->batch_count =
          BroadcastBatch(a, a_vector ? 0 : a.size() - 2, b, b_vector ? 0 : b.size() - 2);
      return g->batch_count != 0;
    }
    case Kind::kLinear:
      if (a.empty() || b.size() != 2 || a.back() != b[1]) return false;
      g->m = Product(a, 0, a.size() - 1);
      g->k = a.back();
      g->n = b[0];
      return true;
    case Kind::kAttentionBhld:
    case Kind::kAttentionBlhd:
      break;
  }
  return false;
}

// Query, key (and value) 4-D each: same batch, query and key the same head dimension, key and
// value the same length and heads, query heads a multiple of key heads (GQA).
bool AttentionShape(const Operator& op, const Dims& q, const Dims& k, const Dims* v,
                    schema::GemmCallEvent* g) {
  if (q.size() != 4 || k.size() != 4 || q[0] != k[0] || q[3] != k[3]) return false;
  const bool bhld = op.kind == Kind::kAttentionBhld;
  const size_t heads_at = bhld ? 1 : 2, length_at = bhld ? 2 : 1;
  const uint64_t heads = q[heads_at], kv_heads = k[heads_at];
  if (heads == 0 || kv_heads == 0 || heads % kv_heads != 0 ||
      heads > std::numeric_limits<uint32_t>::max()) {
    return false;
  }
  g->api = op.backward ? schema::GemmApi::kFrameworkAttentionBackward
                       : schema::GemmApi::kFrameworkAttention;
  g->m = q[length_at];
  g->n = k[length_at];
  g->k = q[3];
  g->batch_count = Product(Dims{q[0], heads}, 0, 2);
  g->heads = static_cast<uint32_t>(heads);
  g->kv_heads = static_cast<uint32_t>(kv_heads);
  if (v != nullptr && v->size() == 4 && (*v)[0] == q[0] && (*v)[heads_at] == kv_heads &&
      (*v)[length_at] == k[length_at]) {
    g->head_dim_v = (*v)[3];
  }
  return g->batch_count != 0;
}

AttentionMask MaskOf(const Operator& op, const std::vector<Dims>& inputs,
                     const std::vector<std::string_view>& concrete) {
  bool not_causal = false;  // is_causal (custom_mask_type) read, and false.
  const auto index = static_cast<size_t>(op.causal);
  if (op.causal != kNone && index < concrete.size()) {
    const std::string_view value = concrete[index];
    if (op.mask_type ? value == "1" || value == "2" : value == "True") {
      return AttentionMask::kCausal;
    }
    not_causal = op.mask_type ? value == "0" : value == "False";
  }
  const auto tensor = static_cast<size_t>(op.mask_tensor);
  if (op.mask_tensor != kNone && tensor < inputs.size() && !inputs[tensor].empty()) {
    return AttentionMask::kTensor;
  }
  return not_causal ? AttentionMask::kNone : AttentionMask::kUnspecified;
}

}  // namespace

bool ParseGemmOperator(std::string_view name, dom::element input_dims,
                       std::optional<dom::element> input_types,
                       std::optional<dom::element> concrete_inputs, schema::GemmCallEvent* shape) {
  const Operator* op = nullptr;
  for (const Operator& candidate : kOperators) {
    if (candidate.name == name) op = &candidate;
  }
  if (op == nullptr) return false;
  std::vector<Dims> inputs;
  if (!ReadDims(input_dims, &inputs)) return false;
  const auto first = static_cast<size_t>(op->first);
  if (inputs.size() < first + 2) return false;
  const bool attention = op->kind == Kind::kAttentionBhld || op->kind == Kind::kAttentionBlhd;
  if (attention) {
    const Dims* value = inputs.size() > first + 2 ? &inputs[first + 2] : nullptr;
    if (!AttentionShape(*op, inputs[first], inputs[first + 1], value, shape)) return false;
    shape->mask = MaskOf(*op, inputs, ReadStrings(concrete_inputs));
  } else if (!GemmShape(*op, inputs[first], inputs[first + 1], shape)) {
    return false;
  }
  const std::vector<std::string_view> type_names = ReadStrings(input_types);
  auto type = [&type_names](size_t index) {
    return index < type_names.size() ? TypeFromTorch(type_names[index]) : DataType::kUnspecified;
  };
  shape->a_type = type(first);
  shape->b_type = type(first + 1);
  switch (op->result) {
    case Result::kAsA:
      shape->c_type = shape->d_type = shape->a_type;
      break;
    case Result::kUnknown:
      shape->c_type = shape->d_type = DataType::kUnspecified;
      break;
    case Result::kInt32:
      shape->c_type = shape->d_type = DataType::kInt32;
      break;
  }
  return true;
}

void AddGemmCalls(KinetoTrace* trace) {
  if (trace->gemm_ops.empty()) return;
  // Every cpu_op span, by (thread, start, longest first), with the running maximum of the ends
  // (see modeler/trace/gemm_link.cc: the same walk back for the innermost span).
  struct Span {
    uint32_t thread;
    int64_t start;
    int64_t end;
    size_t event;
    int32_t gemm;  // Index in trace->gemm_ops, or -1.
  };
  std::vector<Span> spans;
  std::vector<int32_t> gemm_of_event(trace->events.size(), -1);
  for (size_t i = 0; i < trace->gemm_ops.size(); ++i) {
    gemm_of_event[trace->gemm_ops[i].event_index] = static_cast<int32_t>(i);
  }
  // Correlation ids of ATen's own kernels (never the GEMM of the operator that launched them).
  std::vector<uint64_t> native_kernels;
  for (size_t i = 0; i < trace->events.size(); ++i) {
    if (const auto* kernel = std::get_if<schema::KernelEvent>(&trace->events[i])) {
      if (kernel->name.find("at::native::") != std::string_view::npos) {
        native_kernels.push_back(kernel->correlation_id);
      }
      continue;
    }
    const auto* op = std::get_if<schema::HostRangeEvent>(&trace->events[i]);
    if (op == nullptr || op->category != schema::HostRangeCategory::kCpuOp) continue;
    spans.push_back({op->thread_id, op->start_ns, schema::EventEndNs(op->start_ns, op->duration_ns),
                     i, gemm_of_event[i]});
  }
  std::sort(native_kernels.begin(), native_kernels.end());
  // At equal starts the longer span encloses the shorter one, so it sorts first and the walk
  // back meets the inner one first.
  std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start != y.start) return x.start < y.start;
    return x.end != y.end ? x.end > y.end : x.event < y.event;
  });
  std::vector<int64_t> max_end(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    const bool same = i > 0 && spans[i - 1].thread == spans[i].thread;
    max_end[i] = same ? std::max(max_end[i - 1], spans[i].end) : spans[i].end;
  }
  std::vector<schema::GemmCallEvent> calls;
  for (const ImportedEvent& event : trace->events) {
    const auto* launch = std::get_if<schema::ApiCallEvent>(&event);
    if (launch == nullptr || launch->kind != schema::ApiKind::kLaunchKernel ||
        launch->correlation_id == 0 ||
        std::binary_search(native_kernels.begin(), native_kernels.end(), launch->correlation_id)) {
      continue;
    }
    auto after = std::upper_bound(
        spans.begin(), spans.end(), *launch, [](const schema::ApiCallEvent& l, const Span& s) {
          return l.thread_id != s.thread ? l.thread_id < s.thread : l.start_ns < s.start;
        });
    // The innermost operator holding the launch: the latest-starting span that contains it.
    for (size_t i = static_cast<size_t>(after - spans.begin()); i-- > 0;) {
      if (spans[i].thread != launch->thread_id || max_end[i] < launch->start_ns) break;
      if (spans[i].end < launch->start_ns) continue;
      if (spans[i].gemm >= 0) {
        schema::GemmCallEvent call = trace->gemm_ops[static_cast<size_t>(spans[i].gemm)].call;
        call.correlation_id = launch->correlation_id;
        calls.push_back(call);
      }
      break;
    }
  }
  for (const schema::GemmCallEvent& call : calls) trace->events.emplace_back(call);
}

}  // namespace lumos::modeler::kineto
