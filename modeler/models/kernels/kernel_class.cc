#include "modeler/models/kernels/kernel_class.h"

#include <array>
#include <initializer_list>
#include <string>

namespace lumos::modeler::models {
namespace {

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

class Words {
 public:
  explicit Words(std::string_view text) : lower_(Lower(text)) {}
  bool Has(std::string_view word) const { return lower_.find(word) != std::string::npos; }
  bool Any(std::initializer_list<std::string_view> words) const {
    for (std::string_view w : words) {
      if (Has(w)) return true;
    }
    return false;
  }
  bool StartsWith(std::string_view prefix) const {
    return std::string_view(lower_).substr(0, prefix.size()) == prefix;
  }
  bool empty() const { return lower_.empty(); }
  // "gemm" as a word of its own, not inside "fbgemm" (FBGEMM's sparse and embedding kernels).
  bool HasGemm() const {
    for (size_t at = lower_.find("gemm"); at != std::string::npos;
         at = lower_.find("gemm", at + 1)) {
      if (at < 2 || lower_.compare(at - 2, 2, "fb") != 0) return true;
    }
    return false;
  }

 private:
  std::string lower_;
};

bool NormWords(const Words& w) {
  return w.Any({"layer_norm", "layernorm", "rms_norm", "rmsnorm", "batch_norm", "batchnorm",
                "group_norm", "groupnorm", "instance_norm", "instancenorm"});
}

bool ConvolutionWords(const Words& w) {
  if (w.Any({"fprop", "dgrad", "wgrad", "winograd", "scudnn", "cutlass_cudnn", "cask_cudnn"})) {
    return true;
  }
  // "conv", but not as part of "convert" (FlashAttention's convert_dq kernel, dtype casts).
  if (w.Any({"convolution", "convolve", "conv1d", "conv2d", "conv3d"})) return true;
  return w.Has("conv") && !w.Has("convert");
}

KernelClass ByName(const Words& w) {
  if (w.Has("nccl")) return KernelClass::kCommunication;
  // TorchInductor's generated kernels say what they are in their prefix.
  if (w.StartsWith("triton_poi")) return KernelClass::kElementwise;
  if (w.StartsWith("triton_red") || w.StartsWith("triton_per")) {
    if (NormWords(w)) return KernelClass::kNorm;
    if (w.Has("softmax")) return KernelClass::kSoftmax;
    return KernelClass::kReduction;
  }
  if (w.StartsWith("triton_tem")) return KernelClass::kGemm;
  if (w.Any({"flash", "fmha", "attention", "attn", "sdpa"})) return KernelClass::kAttention;
  if (ConvolutionWords(w)) return KernelClass::kConvolution;
  if (w.Any({"split_embedding", "dense_embedding"})) return KernelClass::kEmbedding;
  if (w.HasGemm() || w.Any({"gemv", "nvjet", "cublas", "splitkreduce", "dot_kernel", "matmul"})) {
    return KernelClass::kGemm;
  }
  if (NormWords(w) ||
      w.Any({"bn_fw", "bn_bw", "gammabetabackward", "rowwisemoments", "layer_norm_grad"})) {
    return KernelClass::kNorm;
  }
  if (w.Has("softmax")) return KernelClass::kSoftmax;
  if (w.Any({"multi_tensor_apply", "adam", "sgd", "adagrad", "_amp_", "amp_update_scale", "foreach",
             "optimizer"})) {
    return KernelClass::kOptimizer;
  }
  if (w.Any({"embedding", "embs", "index_select", "indexselect", "indexing_backward",
             "index_elementwise", "indexfunc", "gather", "scatter", "take_kernel",
             "bounds_check_indices", "linearize_index", "jagged", "sparse_features", "permute_2d",
             "permute_indices"})) {
    return KernelClass::kEmbedding;
  }
  if (w.Any({"memcpy"})) return KernelClass::kMemcpy;
  if (w.Any({"memset"})) return KernelClass::kMemset;
  if (w.Any({"reduce", "scan", "cumsum", "pool", "argmax", "argmin", "topk", "nll", "cross_entropy",
             "welford"})) {
    return KernelClass::kReduction;
  }
  if (w.Any({"elementwise", "copy",   "fill",    "nchwtonhwc", "nhwctonchw", "transpose", "permute",
             "catarray",    "concat", "dropout", "gelu",       "silu",       "relu",      "sigmoid",
             "tanh",        "where",  "clamp",   "masked",     "rotary",     "cast"})) {
    return KernelClass::kElementwise;
  }
  return KernelClass::kOther;
}

// What the launching op says, for the kernels its name leaves open.
KernelClass ByOp(const Words& op) {
  if (op.empty()) return KernelClass::kOther;
  if (NormWords(op)) return KernelClass::kNorm;
  if (op.Has("softmax")) return KernelClass::kSoftmax;
  if (op.Any({"attention", "sdpa", "scaled_dot_product", "flash", "fmha"})) {
    return KernelClass::kAttention;
  }
  if (op.Any({"conv"})) return KernelClass::kConvolution;
  if (op.Any({"embedding", "lookup", "index_select", "gather", "scatter", "jagged"})) {
    return KernelClass::kEmbedding;
  }
  if (op.Any({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
              "aten::linear"})) {
    return KernelClass::kGemm;
  }
  return KernelClass::kOther;
}

constexpr std::array<const char*, kKernelClassCount> kNames = {
    "gemm",      "attention", "convolution", "elementwise", "norm",          "softmax", "reduction",
    "optimizer", "embedding", "memcpy",      "memset",      "communication", "other"};

}  // namespace

KernelClass ClassifyKernel(std::string_view kernel_name, std::string_view cpu_op) {
  const KernelClass by_name = ByName(Words(kernel_name));
  if (cpu_op.empty()) return by_name;
  const bool generic = by_name == KernelClass::kElementwise || by_name == KernelClass::kReduction ||
                       by_name == KernelClass::kOther;
  if (!generic) return by_name;
  const KernelClass by_op = ByOp(Words(cpu_op));
  if (by_op == KernelClass::kNorm || by_op == KernelClass::kSoftmax) return by_op;
  if (by_name == KernelClass::kOther) return by_op;
  return by_name;
}

const char* KernelClassName(KernelClass kind) { return kNames[static_cast<size_t>(kind)]; }

std::optional<KernelClass> KernelClassFromName(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<KernelClass>(i);
  }
  return std::nullopt;
}

bool ComputeBoundClass(KernelClass kind) {
  return kind == KernelClass::kGemm || kind == KernelClass::kAttention ||
         kind == KernelClass::kConvolution;
}

KernelClass KernelClassCache::Get(std::string_view kernel_name, std::string_view cpu_op) {
  const Key key{kernel_name.data(), kernel_name.size(), cpu_op.data(), cpu_op.size()};
  auto [it, added] = classes_.try_emplace(key, KernelClass::kOther);
  if (added) it->second = ClassifyKernel(kernel_name, cpu_op);
  return it->second;
}

}  // namespace lumos::modeler::models
