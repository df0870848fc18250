// The shape of two_streams_workload.cu, shared with the checker (two_streams_test.cc).
#pragma once

#include "cuda_tests/workload_exit.h"

namespace lumos::cuda_tests {

inline constexpr int kKernelsPerStream = 8;
inline constexpr int kKernels = 2 * kKernelsPerStream;
inline constexpr int kMemcpys = 2;  // One blocking H2D, one async D2H.
inline constexpr int kMemsets = 1;
inline constexpr int kEventRecords = 1;
inline constexpr int kStreamWaits = 1;

}  // namespace lumos::cuda_tests
