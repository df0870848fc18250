// Design: how fast two runs' hosts went through the same work (`lumos-model diff`'s "host
// pace"). A launch-bound step is as long as its host's own work between CUDA calls (Python,
// the framework's dispatch), and that pace changes from one run to the next on a shared or
// virtual host (the shared H200 runs: up to 45 % for one program, one size): a diff of two
// setups then mixes what the setups changed with what the host did that day. Comparing the
// gaps before the *same* calls separates the two:
//   a thread's call sequence per iteration: each call's key (its API name and the class of
//   the GPU op it launched: gemm, elementwise, ...; class, not name, so a GEMM whose tile
//   changed with its shape still matches) and the gap since the thread's previous call in
//   that iteration; the sequence of the first iteration kept is the reference, and each
//   position's gap is the median over the iterations that match it up to that position;
//   threads of a rank are matched between the runs by the order of their first call;
//   positions are compared from the start of the sequences up to the first key that
//   differs (A's 4 layers against B's 8 compare the common forward prefix), keeping gaps of
//   kMinGapNs to kMaxGapNs in both (shorter ones are timer resolution; longer ones are waits:
//   for another thread, a sync, the GPU);
//   the pace is B's time over A's summed over the positions (what it does to a step: two
//   threads of one run can go at different paces, on a VM's different cores), with the
//   middle half of the positions' own ratios as its spread, when at least kMinMatched
//   positions compare (else none: the runs do not share enough work).
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "modeler/graph/execution_graph.h"

namespace lumos::modeler::diff {

inline constexpr int64_t kMinGapNs = 2'000;
inline constexpr int64_t kMaxGapNs = 1'000'000;
inline constexpr size_t kMinMatched = 20;

// One host thread's calls in an iteration, as the reference sequence of its rank's thread.
struct HostCallSequence {
  int32_t rank = 0;
  uint32_t thread_order = 0;      // Among its rank's threads, by first call in the iteration.
  std::vector<std::string> keys;  // "cudaLaunchKernel gemm".
  std::vector<int64_t> gap_ns;    // Median gap before each call (position 0: none, 0).
};

// Per rank index, its iterations' [start, end) in time order (run_profile.cc's ranges).
std::vector<HostCallSequence> HostCallSequences(
    const ExecutionGraph& graph,
    const std::vector<std::vector<std::pair<int64_t, int64_t>>>& ranges);

struct HostPace {
  double ratio = 1;          // B's gaps / A's, summed over the matched positions.
  double low = 1, high = 1;  // The middle half of the ratios (25th and 75th percentile).
  size_t matched = 0;        // Positions compared.
};

std::optional<HostPace> CompareHostPace(const std::vector<HostCallSequence>& a,
                                        const std::vector<HostCallSequence>& b);

}  // namespace lumos::modeler::diff
