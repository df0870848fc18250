#include "modeler/models/kernels/kernel_op_work.h"

#include <algorithm>
#include <initializer_list>

namespace lumos::modeler::models {
namespace {

constexpr double kMaxElements = 1e15;  // Beyond any GPU's memory: a malformed shape.

struct Tensor {
  const OpInput* input;
  double elements;
  int element_bytes;
  double bytes() const { return elements * element_bytes; }
};

std::optional<double> Elements(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    n *= static_cast<double>(d);
  }
  if (n > kMaxElements) return std::nullopt;
  return n;
}

bool OneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Right-aligned broadcasting; nullopt when two sizes differ and neither is 1.
std::optional<double> BroadcastElements(const std::vector<Tensor>& tensors) {
  size_t rank = 0;
  for (const Tensor& t : tensors) rank = std::max(rank, t.input->dims.size());
  double n = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t size = 1;
    for (const Tensor& t : tensors) {
      const std::vector<int64_t>& dims = t.input->dims;
      if (i >= dims.size()) continue;
      const int64_t d = dims[dims.size() - 1 - i];
      if (d == size || d == 1) continue;
      if (size != 1) return std::nullopt;
      size = d;
    }
    n *= static_cast<double>(size);
  }
  return n;
}

}  // namespace

int ElementBytes(std::string_view type) {
  struct Size {
    std::string_view type;
    int bytes;
  };
  static constexpr Size kSizes[] = {{"float", 4},
                                    {"double", 8},
                                    {"c10::Half", 2},
                                    {"c10::BFloat16", 2},
                                    {"long int", 8},
                                    {"long", 8},
                                    {"int", 4},
                                    {"unsigned int", 4},
                                    {"short int", 2},
                                    {"short", 2},
                                    {"signed char", 1},
                                    {"unsigned char", 1},
                                    {"bool", 1},
                                    {"c10::complex<float>", 8},
                                    {"c10::complex<double>", 16},
                                    {"c10::Float8_e4m3fn", 1},
                                    {"c10::Float8_e5m2", 1}};
  for (const Size& s : kSizes) {
    if (s.type == type) return s.bytes;
  }
  return 0;
}

std::optional<KernelWork> OpWork(std::string_view op, const std::vector<OpInput>& inputs,
                                 KernelClass kind) {
  if (op.substr(0, 6) == "aten::") op.remove_prefix(6);
  std::vector<Tensor> tensors;
  for (const OpInput& in : inputs) {
    if (in.type == "TensorList" || in.type == "GenericList") return std::nullopt;
    const int bytes = ElementBytes(in.type);
    if (bytes == 0) continue;
    const std::optional<double> n = Elements(in.dims);
    if (!n) return std::nullopt;
    tensors.push_back(Tensor{&in, *n, bytes});
  }
  if (tensors.empty()) return std::nullopt;
  const Tensor& first = tensors.front();
  const bool first_is_input0 = !inputs.empty() && first.input == &inputs[0];
  KernelWork work;
  switch (kind) {
    case KernelClass::kElementwise: {
      if (OneOf(op, {"cat", "stack", "index", "index_put_", "_index_put_impl_"})) {
        return std::nullopt;
      }
      if (op == "copy_") {
        if (tensors.size() < 2) return std::nullopt;
        work.bytes = tensors[0].bytes() + tensors[1].bytes();
        work.flops = tensors[0].elements;
        return work;
      }
      if (OneOf(op, {"fill_", "zero_", "normal_", "uniform_", "bernoulli_", "random_",
                     "exponential_"})) {
        if (!first_is_input0) return std::nullopt;
        work.bytes = first.bytes();
        work.flops = first.elements;
        return work;
      }
      double read = 0;
      for (const Tensor& t : tensors) read += t.bytes();
      if (op.back() == '_') {
        if (!first_is_input0) return std::nullopt;
        work.bytes = read + first.bytes();
        work.flops = first.elements;
        return work;
      }
      const std::optional<double> out = BroadcastElements(tensors);
      if (!out) return std::nullopt;
      int out_bytes = 1;
      if (!OneOf(op, {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
                      "logical_not", "logical_xor", "isnan", "isinf", "isfinite"})) {
        const Tensor* largest = &tensors.front();
        for (const Tensor& t : tensors) {
          if (t.elements > largest->elements) largest = &t;
        }
        out_bytes = largest->element_bytes;
      }
      work.bytes = read + *out * out_bytes;
      work.flops = *out;
      return work;
    }
    case KernelClass::kReduction:
      if (!OneOf(op, {"sum", "mean", "max", "min", "amax", "amin", "norm", "linalg_vector_norm",
                      "var", "std", "var_mean", "std_mean", "prod", "all", "any", "argmax",
                      "argmin", "logsumexp"}) ||
          !first_is_input0) {
        return std::nullopt;
      }
      work.bytes = first.bytes();
      work.flops = first.elements;
      return work;
    case KernelClass::kNorm: {
      if (op != "native_layer_norm" || !first_is_input0) return std::nullopt;
      double params = 0;
      for (size_t i = 1; i < tensors.size(); ++i) params += tensors[i].bytes();
      work.bytes = 2 * first.bytes() + params;
      work.flops = 8 * first.elements;
      return work;
    }
    case KernelClass::kSoftmax:
      if (!first_is_input0) return std::nullopt;
      if (OneOf(op, {"_softmax", "_log_softmax", "softmax", "log_softmax"})) {
        work.bytes = 2 * first.bytes();
      } else if (OneOf(op, {"_softmax_backward_data", "_log_softmax_backward_data"})) {
        work.bytes = 3 * first.bytes();
      } else {
        return std::nullopt;
      }
      work.flops = 5 * first.elements;
      return work;
    default:
      return std::nullopt;
  }
}

}  // namespace lumos::modeler::models
