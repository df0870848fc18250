// Design: which KernelClass (kernel_query.h) a kernel is, from its name and, where the trace
// has it, the name of the framework op that launched it (Kineto traces: the innermost `cpu_op`
// around the launch, e.g. "aten::native_layer_norm"; agent traces: none yet).
// The name decides first, by keywords of the libraries that emit the kernels, checked in an
// order that resolves their overlaps (lower case, anywhere in the name, template arguments
// included, so a cuBLAS helper named after its cublas* parameters is a GEMM):
//   communication  nccl;
//   Inductor       triton_poi_ → elementwise, triton_red_ / triton_per_ → reduction (norm or
//                  softmax when the fused op's name says so), triton_tem_ → GEMM;
//   attention      flash, fmha, attention, attn, sdpa (before convolution: cuDNN's SDPA
//                  kernels say "fprop");
//   convolution    conv (not convert), fprop, dgrad, wgrad, winograd, scudnn, cutlass_cudnn,
//                  cask_cudnn;
//   embedding      split_embedding, dense_embedding (FBGEMM's, before GEMM: their arguments
//                  name fbgemm_gpu);
//   GEMM           gemm (not fbgemm), gemv, nvjet, cublas, splitkreduce, dot_kernel, matmul;
//   norm           layer/rms/batch/group/instance norm, bn_fw, bn_bw, GammaBetaBackward,
//                  RowwiseMoments;
//   softmax        softmax;
//   optimizer      multi_tensor_apply, adam, sgd, adagrad (not an embedding's fused backward),
//                  _amp_, amp_update_scale, foreach, optimizer;
//   embedding      embedding, embs, index_select, indexing_backward, index_elementwise,
//                  indexfunc, gather, scatter, take_kernel, bounds_check_indices,
//                  linearize_index, jagged, sparse_features, permute_2d, permute_indices;
//   reduction      reduce, scan, cumsum, pool, argmax, argmin, topk, nll, cross_entropy;
//   elementwise    elementwise, copy, fill, nchwtonhwc, nhwctonchw, transpose, permute,
//                  catarray, concat (not any "cat": broadcast, truncate, locate),
//                  dropout, activations (gelu, silu, relu, sigmoid, tanh), where, clamp,
//                  masked, rotary, cast;
//   copies         memcpy, memset (a trace's copy records as Kineto names them).
// The op then refines: a kernel the name leaves as elementwise, reduction or other whose op is
// a norm or a softmax is that (batch norm's statistics run as a generic Welford reduction); a
// kernel the name leaves as other takes the op's class where the op says it (attention,
// convolution, GEMM, embedding lookups: fbgemm's sorts inside an embedding backward are part of
// it). Every name in the real traces of ../shared/data/traces is checked against this by
// tests/modeler/models/kernels/kernel_class_test.cc.
// Threading: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

KernelClass ClassifyKernel(std::string_view kernel_name, std::string_view cpu_op = {});

// ClassifyKernel once per distinct (name, op) pair of views: names that view one interned copy
// (a Job's NamePool) share their address, so a job's millions of kernels cost a lookup each,
// not ~50 keyword searches. Views of other storage are only as distinct as their addresses.
// Lifetime: the viewed strings must outlive the cache. Threading: one thread per cache.
class KernelClassCache {
 public:
  KernelClass Get(std::string_view kernel_name, std::string_view cpu_op = {});

 private:
  struct Key {
    const char* name;
    size_t name_size;
    const char* op;
    size_t op_size;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.name) * 31 + std::hash<const void*>()(k.op) +
             k.name_size * 7 + k.op_size;
    }
  };
  std::unordered_map<Key, KernelClass, KeyHash> classes_;
};

// "gemm", "attention", "convolution", "elementwise", "norm", "softmax", "reduction",
// "optimizer", "embedding", "memcpy", "memset", "communication", "other".
const char* KernelClassName(KernelClass kind);
std::optional<KernelClass> KernelClassFromName(std::string_view name);

// Classes whose kernels are limited by their FLOPs on the tensor cores when large (attention,
// convolution, GEMM); the others are limited by memory traffic.
bool ComputeBoundClass(KernelClass kind);

}  // namespace lumos::modeler::models
