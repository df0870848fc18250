// The exit code every cuda_tests workload uses when it finds no usable GPU; the checkers turn it
// into GTEST_SKIP, so CPU-only CI reports the test skipped, never failed.
#pragma once

namespace lumos::cuda_tests {

inline constexpr int kSkipExitCode = 77;

}  // namespace lumos::cuda_tests
