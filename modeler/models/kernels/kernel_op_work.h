// Design: the work (kernel_work.h) of a framework op's kernel from the op's inputs as the
// PyTorch profiler records them (`Input Dims`, `Input type` of a Kineto `cpu_op`), for the ops
// whose single kernel's traffic follows from its inputs. The rules, by the kernel's class:
//   elementwise  bytes = every tensor input read + the output written; the output has the
//                broadcast shape of the tensor inputs and the element size of the largest
//                input (1 byte for comparisons and logical ops); an in-place op (name ending
//                in '_') writes its first input instead; copy_ reads its second input and
//                writes its first; fill_, zero_ and the random fills only write their first.
//                FLOPs: one per output element;
//   reduction    sum, mean, max, min, amax, amin, norm, var, std, prod, all, any, argmax,
//                argmin, logsumexp: the first input read (the output is taken as negligible);
//                FLOPs: one per input element;
//   norm         native_layer_norm: the input read and the output written, plus weight and
//                bias; FLOPs: 8 per element;
//   softmax      _softmax, _log_softmax: input read, output written; their backward: grad and
//                output read, grad written.
// Anything else (tensor lists: cat, _foreach_*, fused optimizers; embedding lookups; an input
// type that is not a tensor element type; shapes that do not broadcast) has no rule: nullopt.
// These are lower bounds on the traffic of one kernel; ops that launch several kernels are for
// the caller to leave out (their work is not one kernel's).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "modeler/models/kernels/kernel_work.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

struct OpInput {
  std::vector<int64_t> dims;  // Empty with an element type: a 0-d tensor (one element).
  std::string type;           // "float", "c10::BFloat16", "long int", "Scalar", "TensorList", ""
};

// Bytes of one element of a Kineto input type; 0: not a tensor of elements.
int ElementBytes(std::string_view type);

std::optional<KernelWork> OpWork(std::string_view op, const std::vector<OpInput>& inputs,
                                 KernelClass kind);

}  // namespace lumos::modeler::models
