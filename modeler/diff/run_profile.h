// Design: one side of `lumos-model diff` (a trace set: the ranks of one job) reduced to what two
// runs are compared by, every figure counted inside iterations only (warm-up and tail left
// out) and summed over every (rank, iteration) pair, so that dividing by `rank_iterations`
// gives "per iteration and rank" and runs of different length or size compare.
//   load        as `replay` loads a job (streaming: each rank's graph part built as it loads,
//               its events then dropped), clocks aligned (AlignClocks);
//   iterations  AnalyzeMeasured (FindIterations: ProfilerStep#N, --iteration REGEX, the
//               repeating kernel stream, else the whole trace), measured breakdown;
//   kernels     per (name, grid, block, GEMM shape m x n x k [x batch] of the GemmCall that
//               launched it, none when no GemmCall did), each GPU kernel that is not a
//               collective and starts inside an iteration of its rank: count and total time;
//   collectives per (op, bytes in nccl-tests' convention: ModelBytes, communicator size), each
//               member GPU op inside an iteration: count and total time (waiting for peers
//               included: what the rank spent in it), and the operation's transfer time (latest
//               member start to earliest end) for operations whose members all lie inside;
//   host        API calls (syncs apart: their time is waiting for the GPU) and the gaps between
//               consecutive API calls of a thread, both inside one iteration; each thread's
//               call sequence with its median gaps (host_pace.h: the host's pace);
//   ranks       per global rank: iterations, median iteration time, the breakdown, GPU time
//               of its kernels and collectives.
// With keep_graph the Job, its graph and the iterations stay (the timeline draws them);
// otherwise they are freed before ProfileRun returns (memory: one side's graph at a time).
// Failure: nothing readable, no job (or several and none chosen), or no API call or GPU op
// is an error; damaged or unclosed files are input problems (the profile still comes).
// Threading: pure function (file reads only).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "modeler/analysis/iteration_analysis.h"
#include "modeler/diff/host_pace.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"

namespace lumos::modeler::diff {

struct KernelKey {
  std::string name;
  std::array<uint32_t, 3> grid{}, block{};
  std::array<uint64_t, 4> shape{};  // GEMM m, n, k, batch; all 0: no GEMM call.
  auto tie() const { return std::tie(name, grid, block, shape); }
  bool operator<(const KernelKey& o) const { return tie() < o.tie(); }
  bool operator==(const KernelKey& o) const { return tie() == o.tie(); }
};

struct CollectiveKey {
  std::string op;      // "ALLREDUCE", ...
  uint64_t bytes = 0;  // ModelBytes (0: not recorded).
  uint32_t ranks = 0;  // Communicator size.
  auto tie() const { return std::tie(op, bytes, ranks); }
  bool operator<(const CollectiveKey& o) const { return tie() < o.tie(); }
  bool operator==(const CollectiveKey& o) const { return tie() == o.tie(); }
};

struct TimeStat {
  uint64_t count = 0;
  int64_t total_ns = 0;
};

struct CollectiveStat {
  TimeStat time;      // Member GPU ops (waiting included).
  TimeStat transfer;  // Whole operations: transfer time.
};

struct HostStat {
  int64_t api_ns = 0;   // API calls that are not syncs.
  int64_t sync_ns = 0;  // Sync calls (blocked on the GPU).
  int64_t gap_ns = 0;   // Between consecutive API calls of a thread.
};

struct RankProfile {
  int32_t rank = 0;
  std::string host;
  uint64_t iterations = 0;
  int64_t median_iteration_ns = 0;
  int64_t iteration_ns = 0;  // Sum over its iterations.
  Breakdown breakdown;       // Sums.
  int64_t kernel_ns = 0;     // Its kernels' GPU time inside iterations.
  int64_t collective_ns = 0;
};

struct RunProfile {
  std::string job_id;
  size_t files = 0;
  std::vector<std::string> input_problems;
  std::string iteration_method;       // "ProfilerStep ranges", "detected", "whole trace", mixes.
  std::string iteration_choice;       // Which of them were kept (FindJobIterations).
  uint64_t rank_iterations = 0;       // (rank, iteration) pairs.
  std::vector<int64_t> iteration_ns;  // Every (rank, iteration)'s measured time.
  Breakdown breakdown;                // Sums.
  HostStat host;                      // Sums.
  std::vector<HostCallSequence> host_calls;  // Per rank and thread (host_pace.h).
  std::map<KernelKey, TimeStat> kernels;
  std::map<CollectiveKey, CollectiveStat> collectives;
  std::vector<RankProfile> ranks;  // By rank.
  // keep_graph only (the timeline): the job (the graph's names view its pool), its graph on
  // the aligned timeline and the iterations found.
  std::unique_ptr<Job> job;
  std::unique_ptr<ExecutionGraph> graph;
  std::vector<IterationReport> iterations;
};

struct ProfileOptions {
  AnalysisOptions analysis;           // --iteration.
  std::optional<std::string> job_id;  // --job.
  bool keep_graph = false;
};

StatusOr<RunProfile> ProfileRun(const std::vector<std::string>& paths,
                                const ProfileOptions& options);

// "4096x1024x1024" (m x n x k), "x8" appended for a batch above 1; "" for no shape.
std::string ShapeText(const std::array<uint64_t, 4>& shape);

// Nearest-rank median (the smallest value with at least half at or below it); 0 when empty.
int64_t Median(std::vector<int64_t> values);

}  // namespace lumos::modeler::diff
