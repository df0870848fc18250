// Design: two runs' profiles (run_profile.h) compared, and the comparison as text or JSON.
// Every time is per iteration and rank (a profile's sums divided by its (rank, iteration)
// pairs), so runs of different length or size compare; a kernel's or collective's
// contribution to the change is its per-iteration-and-rank time in B minus in A. Lists are
// sorted by |contribution|, largest first (ties by key: deterministic).
//   iteration   median and mean over every (rank, iteration), B - A and %;
//   breakdown   exposed compute, overlapped, exposed communication, idle (mean per iteration
//               and rank: they add up to the mean iteration time);
//   host        API calls, syncs, gaps between API calls; the host's pace: B's gaps before
//               the calls both runs make in the same order against A's (host_pace.h), how
//               much of a launch-bound change is the host itself (another day, another VM);
//   kernels     per (name, grid, block, GEMM shape): count, time and time per call; "new" only
//               in B, "missing" only in A;
//   collectives per (op, bytes, communicator size), likewise (time: the ranks' time in them,
//               waiting for peers included; transfer: the operation's own time);
//   ranks       per global rank in either run: median iteration time and GPU compute time
//               (exposed compute + overlapped) per iteration, sorted by |change in compute|:
//               the rank that got slower computes longer, the others wait for it.
// The text is one screen: a headline (the change and what contributed most), then each table
// cut to `top` rows (the JSON has every row). Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "modeler/diff/run_profile.h"

namespace lumos::modeler::diff {

struct SideInfo {
  std::string label;  // "A", "B".
  std::string input;  // As given.
  const RunProfile* profile = nullptr;
};

struct ItemDiff {
  const KernelKey* kernel = nullptr;  // One of the two.
  const CollectiveKey* collective = nullptr;
  TimeStat a, b;                    // Sums (collectives: member GPU ops).
  TimeStat a_transfer, b_transfer;  // Collectives only.
  double a_ns = 0, b_ns = 0;        // Per iteration and rank.
  double delta_ns() const { return b_ns - a_ns; }
};

struct RankDiff {
  int32_t rank = 0;
  const RankProfile* a = nullptr;  // Null: not in that run.
  const RankProfile* b = nullptr;
  double a_compute_ns = 0, b_compute_ns = 0;  // Per iteration.
  double delta_compute_ns() const { return b_compute_ns - a_compute_ns; }
};

struct RunDiff {
  SideInfo a, b;
  int64_t a_median_ns = 0, b_median_ns = 0;
  double a_mean_ns = 0, b_mean_ns = 0;
  double a_breakdown[4] = {}, b_breakdown[4] = {};  // Per iteration and rank.
  double a_host[3] = {}, b_host[3] = {};            // API, sync, gaps.
  std::vector<ItemDiff> kernels, collectives;
  std::vector<RankDiff> ranks;
  std::vector<std::string> notes;  // What makes the comparison less direct.
  // B's host time for the same work against A's (host_pace.h); none when too little compares.
  std::optional<HostPace> host_pace;
};

RunDiff CompareRuns(const SideInfo& a, const SideInfo& b);

// "B is +12.3 % slower per iteration (...): +8.10 ms kernel ... (+40.0 %), ...".
std::string Headline(const RunDiff& diff);
std::string DiffText(const RunDiff& diff, size_t top);
std::string DiffJson(const RunDiff& diff);

// Names of the rows: a kernel "name [grid 1x2x3, block 128x1x1, gemm 4096x1024x1024]", a
// collective "ALLREDUCE 256 MiB x64".
std::string KernelLabel(const KernelKey& key);
std::string CollectiveLabel(const CollectiveKey& key);

}  // namespace lumos::modeler::diff
