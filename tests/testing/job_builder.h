// Design: test support for the graph, the simulator, the analysis and the commands above them:
// builds small jobs in memory (RankTrace structs, as a loaded trace holds them) whose replay
// answers can be worked out by hand, and runs the whole replay pipeline on them.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/graph/clock_alignment.h"
#include "modeler/graph/execution_graph.h"
#include "modeler/graph/job.h"
#include "modeler/sim/replay_scales.h"
#include "modeler/sim/simulator.h"

namespace lumos::modeler::testing {

constexpr int64_t kUs = 1000;

// Appends events to one rank; times in µs for readability.
class RankBuilder {
 public:
  RankBuilder(Job* job, int32_t rank, int32_t world_size);

  RankBuilder& Api(schema::ApiKind kind, std::string_view name, int64_t start_us,
                   int64_t duration_us, uint64_t correlation, uint64_t stream = 0,
                   uint64_t event = 0, uint32_t thread = 1);
  RankBuilder& Kernel(std::string_view name, uint64_t stream, int64_t start_us, int64_t duration_us,
                      uint64_t correlation);
  // A copy on the GPU (device to pageable host memory).
  RankBuilder& Memcpy(uint64_t stream, int64_t start_us, int64_t duration_us, uint64_t correlation);
  RankBuilder& Collective(uint64_t comm, uint64_t seq, uint64_t correlation, uint64_t stream,
                          int64_t start_us, int64_t duration_us, uint32_t comm_size);
  // The last collective's op (Collective() makes an all-reduce) and, for send/recv, its peer
  // (a comm rank).
  RankBuilder& Op(schema::CollectiveOp op, int32_t peer = -1);
  // A Communicator record: this rank is `rank` of `comm`.
  RankBuilder& Communicator(uint64_t comm, int32_t rank, uint32_t comm_size);
  RankBuilder& Step(std::string_view name, int64_t start_us, int64_t duration_us,
                    uint32_t thread = 1);

 private:
  RankTrace& trace();
  Job* job_;
  size_t index_;
};

// Puts rank index `rank_index` on host `host`, whose clock runs `ahead_us` ahead: its API
// calls, kernels and collectives move by that much.
void MoveToHost(Job* job, size_t rank_index, std::string host, int64_t ahead_us);

struct Replayed {
  ExecutionGraph graph;
  SimResult sim;
};

// Graph (no clock alignment unless asked) + what-ifs + simulation. `job` must outlive the
// result (node names view its NamePool).
Replayed Replay(const Job& job, const std::vector<std::string>& scales = {}, bool drop_gaps = false,
                bool align = false);

// One rank, thread 1, stream 7 (µs), ProfilerStep#1 [0,127):
//   API  launch1 [0,5)  cudaMemcpyAsync [10,110)  launch2 [112,116)  sync [117,125)
//   GPU  gemm [10,100)  memcpy (to pageable memory) [100,108)  elementwise [118,124)
// The copy call blocks until its copy (pageable memory), which waited for the gemm.
Job BlockedCopyJob();

// A shared real trace (../shared/data/traces/<name>, Kineto) imported into `dir`, loaded with
// every raw event kept, its graph built on aligned clocks (graph.rank_offset_ns), replayed with
// measured durations and its iterations analysed: what the slow-way tests recompute against.
// Null, with the failure added to the test, when a step fails.
struct SharedTraceReplay {
  Job job;  // First: the graph's names view its pool.
  ExecutionGraph graph;
  SimResult sim;
  std::vector<IterationReport> iterations;
};
std::unique_ptr<SharedTraceReplay> ReplaySharedTrace(const std::string& name,
                                                     const std::string& dir);

// Everything written to `file` so far (rewinds it).
std::string ReadAll(std::FILE* file);

// The node of the GPU op or API call with this name on rank index r (first match).
uint32_t NodeNamed(const ExecutionGraph& graph, uint32_t rank_index, std::string_view name);

}  // namespace lumos::modeler::testing
