// Design: iterations of a rank found from the repeating pattern of its kernel stream, for traces
// with no iteration markers (no ProfilerStep#N host range, no range matching --iteration).
//
// Method. The rank's kernels (all streams merged, in start order; copies and memsets left out:
// they are the ops most often added irregularly, by the caching allocator or a .item()) become a
// sequence of name ids. A training loop repeats one iteration's kernels, so the sequence is
// periodic with the iteration's length P (in kernels), up to a few inserted or missing kernels
// and kernels of different streams swapping places.
//  1. Candidate anchors: a name that occurs once per repetition recurs every ~P kernels. For
//     each name with at least 3 occurrences: the median distance M between successive
//     occurrences, and the longest run of successive distances within max(1, M/20) of M (a
//     warm-up or a phase change breaks the run; the run is what is kept). A run must hold at
//     least 3 occurrences (2 whole repetitions) and, with the repetition after its last
//     occurrence, cover at least half of the sequence, so a loop inside one phase (a layer's
//     kernels in the forward pass) is no candidate: its distances jump at the phase's end.
//  2. Verification, smallest M first (the smallest period, not a multiple of it): the run cuts
//     the sequence into segments; successive segments must hold the same names as multisets
//     (order ignored, so stream interleaving does not matter), with at most 10% of the kernels
//     of all compared pairs unmatched in total (an occasional extra kernel passes; ABCABD read
//     with period 3 does not: a third of each pair differs). A period must hold at least 2
//     distinct names (one name repeated says nothing about where iterations start).
//  3. Phase: any name regular with the verified period (a marker) occurs once per repetition;
//     the one whose first occurrence comes first is chosen. When the kernels before its first
//     occurrence match (as a multiset, 90%) as many kernels before its second one, the sequence
//     starts with a whole repetition (PyTorch profiler schedules start recording at a step
//     boundary), and every repetition is taken to start that many kernels before its marker
//     (the first kernels of a step, e.g. zeroing gradients, are often names that recur within
//     the step and cannot be markers). Else repetitions start at the marker (after a warm-up).
//     A trace that starts inside a repetition is cut at the same place in every repetition,
//     but not necessarily where the step starts: the kernel stream alone cannot tell.
//     Tried and dropped: the marker after the longest GPU idle. On the shared real traces the
//     longest idle sits 32-40 ms inside the step (e.g. cuDNN's), and a GPU running 150 ms
//     behind its host is never idle where a step starts; docs/validation.md.
// Boundaries: the kernel starting each repetition is its anchor. Where all anchors were
// launched from one host thread, iteration k spans from the start of anchor k's launch call to
// that of anchor k+1 (host time, as ProfilerStep ranges are, and mapped to replayed time the
// same way); else (kernels of a CUDA graph have no launch call of their own) from anchor k's
// GPU start to anchor k+1's. What follows the last anchor (a partial or unbounded repetition)
// is no iteration. Fewer than 2 whole repetitions: nothing is detected; the caller keeps
// "whole trace".
// Cost: O(n log n) for the sort, O(n) per verified candidate, at most kMaxVerifications of them.
// Ranks with more than kMaxKernels kernels: only the first kMaxKernels are analysed (the result
// says so), bounding time and memory.
// Deterministic: ids in order of first occurrence, candidates ordered by (period, position).
// Threading: pure function.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace lumos::modeler {

struct ExecutionGraph;

inline constexpr size_t kMaxKernels = size_t{1} << 21;
inline constexpr size_t kMaxVerifications = 32;

struct DetectedIterations {
  // Kernel nodes starting each repetition, in time order; empty when no repetition was found,
  // otherwise at least 3 (2 iterations).
  std::vector<uint32_t> anchors;
  // The anchors' launch calls, when all have one on the same thread (else empty): the
  // iterations' boundaries are then these calls' starts, else the anchors' GPU starts.
  std::vector<uint32_t> launches;
  std::string_view marker_name;        // The kernel name occurring once per repetition.
  uint32_t marker_offset_kernels = 0;  // Kernels from a repetition's start to its marker.
  uint32_t period_kernels = 0;         // Median distance between markers, in kernels.
  uint64_t kernels = 0;                // Kernels of the rank that were analysed.
  bool capped = false;                 // The rank had more than kMaxKernels kernels.

  size_t iterations() const { return anchors.size() < 2 ? 0 : anchors.size() - 1; }
};

DetectedIterations DetectIterations(const ExecutionGraph& graph, uint32_t rank_index);

}  // namespace lumos::modeler
