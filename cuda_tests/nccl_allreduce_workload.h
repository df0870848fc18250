// The shape of nccl_allreduce_workload.cu, shared with the checker (nccl_allreduce_test.cc).
#pragma once

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

inline constexpr int kAllReduces = 4;               // On one single-rank communicator.
inline constexpr int kAllReduceElements = 1 << 20;  // float32, sum.
inline constexpr int kAllReduceBytes = kAllReduceElements * 4;
inline constexpr char kAllReduceRange[] = "allreduce";  // NVTX push/pop around each call.

}  // namespace lumos::cuda_tests
