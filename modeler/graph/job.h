// Design: a job is the set of trace files of one training run, one per rank, loaded into
// memory as the writer's plain event structs (schema/writer/trace_events.h) so the graph builder
// can index them. Names (kernel, API, range) are copied once into a job-wide NamePool: the
// reader's views die with each frame, the pool's live as long as the Job.
// Grouping: files are grouped by the header's job id; LoadOptions::job_id picks one, else
// more than one job in the input is an error that names them (replay one job at a time). Ranks:
// the header's (the launcher's). A file without one, or whose header rank another file claims
// too, takes its trailer's (the agent's NCCL world rank, schema 2.1), else its largest NCCL
// communicator's, else the next free one, each with a warning; duplicates no trailer tells
// apart are an error. A unique header rank the trailer contradicts is kept, with a warning.
// Clocks: every event keeps the time of its own file (agent traces: CLOCK_MONOTONIC of the
// host; imported ones: the profiler's clock). Aligning hosts is clock_alignment.h's job.
// GEMM shapes: each rank's kernels are linked to its GEMM calls (RankTrace::GemmOf) when the
// rank is read, before on_rank; with keep_events = false the calls and links go with the kernels.
// Streaming: with LoadOptions::on_rank a caller (the graph builder) sees each rank's events as
// soon as they are read, in rank order; with keep_events = false they are then dropped, except
// what later steps need (collectives for clock alignment, communicators, and the ranges that
// keep_range accepts), so memory holds one rank's events at a time, not the job's.
// Failure behaviour: a file that cannot be opened (no readable header) is skipped with a
// warning naming it (its rank counts as missing); none readable is an error. A damaged tail
// keeps what was read and adds a warning naming file and offset (the rank is "cut short"); so
// does a file without its trailer. Each of these is an input problem too (Job::input_problems).
// Threading: single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "modeler/trace/gemm_link.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler {

// Owns strings; views into it stay valid for the pool's lifetime.
class NamePool {
 public:
  std::string_view Intern(std::string_view text);
  size_t size() const { return names_.size(); }

 private:
  std::unordered_set<std::string> names_;  // Node-based: elements never move.
};

struct CommunicatorInfo {
  uint64_t comm_id = 0;
  int32_t rank = 0;
  uint32_t comm_size = 0;
  std::string_view name;
};

struct RankTrace {
  std::string path;
  int32_t rank = 0;
  int32_t world_size = 0;
  std::string host;
  std::string device;      // The header's first CUDA device name ("NVIDIA H100 80GB HBM3").
  bool cut_short = false;  // The file has a damaged tail (see warnings).
  std::string damage;      // What is wrong with the tail and where, when cut_short.
  // The trailer's rank and world size (schema 2.1: what the agent learned from the NCCL world
  // communicator after the header was written); -1 / 0 when absent.
  int32_t trailer_rank = -1;
  int32_t trailer_world_size = 0;
  std::vector<schema::KernelEvent> kernels;
  // One per call: the driver calls older agents recorded inside runtime calls are left out
  // (modeler/trace/nested_calls.h), and counted in nested_driver_calls.
  std::vector<schema::ApiCallEvent> api_calls;
  uint64_t nested_driver_calls = 0;
  // A capture window's file: the events outside its window, dropped (window_clip.h).
  uint64_t outside_window = 0;
  std::vector<schema::MemcpyEvent> memcpys;
  std::vector<schema::MemsetEvent> memsets;
  std::vector<schema::SyncEvent> syncs;
  std::vector<schema::CudaEventRecordEvent> cuda_events;
  std::vector<schema::HostRangeEvent> host_ranges;
  std::vector<schema::NvtxEvent> nvtx;
  std::vector<schema::CollectiveEvent> collectives;
  // GEMM problems (schema 2.2: the agent's cublas channel, Kineto "Input Dims"), row-major
  // whoever recorded them (modeler/trace/gemm_orientation.h: m the tokens of a linear layer),
  // and per kernel (same index as `kernels`) the index in gemm_calls of the call that launched
  // it, or kNoGemm (modeler/trace/gemm_link.h has the rule). GemmOf() reads them.
  std::vector<schema::GemmCallEvent> gemm_calls;
  std::vector<uint32_t> kernel_gemm;
  std::vector<CommunicatorInfo> communicators;
  // The file's LossRecords (events its writer lost), details in the Job's NamePool; kept with
  // keep_events = false too, so a tool writing the rank anew can carry them (synth).
  std::vector<schema::LossEvent> losses;

  uint64_t events() const {
    return kernels.size() + api_calls.size() + memcpys.size() + memsets.size() + syncs.size() +
           cuda_events.size() + host_ranges.size() + nvtx.size() + collectives.size() +
           gemm_calls.size();
  }
  // The GEMM problem of kernel `kernel_index` (m, n, k, batch, types: what a cost model needs),
  // or null when no GEMM call launched it. Imported attention kernels get an attention problem
  // here too: api FRAMEWORK_ATTENTION or _BACKWARD, whose fields trace.proto's GemmCall gives
  // another meaning (query and key lengths, head dimension; heads, mask): check `api`.
  const schema::GemmCallEvent* GemmOf(size_t kernel_index) const {
    if (kernel_index >= kernel_gemm.size() || kernel_gemm[kernel_index] == kNoGemm) return nullptr;
    return &gemm_calls[kernel_gemm[kernel_index]];
  }
};

struct Job {
  std::string job_id;
  std::vector<RankTrace> ranks;  // Sorted by rank.
  std::vector<std::string> warnings;
  // What is wrong with the input files, one line each, naming the file (each is in `warnings`
  // too): skipped (no readable header), cut short (a damaged tail) or never closed (no trailer).
  // Commands exit 1 when there is any (README: "Commands").
  std::vector<std::string> input_problems;
  NamePool names;
  uint64_t events_read = 0;  // Timed events in the files (before any are dropped).
};

struct LoadOptions {
  // The job to load when the files hold several (by header job id); empty: there must be one.
  std::optional<std::string> job_id;
  // The capture window to load when the job's files hold several (a window directory's stamp,
  // "20261204T144812Z"); empty: the first, and a warning names the others. One process's
  // windows are never taken for ranks.
  std::optional<std::string> window;
  // Called once per rank, in rank order, with all of its events (names already in the Job's
  // pool); rank_index is its index in Job::ranks.
  std::function<void(const RankTrace& rank, uint32_t rank_index)> on_rank;
  // Called once before the first on_rank: how many ranks will be loaded (the chosen job's
  // readable files), e.g. for GraphBuilder::ExpectRanks.
  std::function<void(size_t ranks)> on_rank_count;
  // After on_rank: keep every event (true), or only collectives, communicators and the ranges
  // keep_range accepts (false).
  bool keep_events = true;
  // Host ranges and NVTX ranges to keep (all when empty). `step`: a STEP-category host range.
  std::function<bool(std::string_view name, bool step)> keep_range;
  // The most events the job's files may hold together, checked frame by frame before a frame's
  // events are kept (a frame holds at most 1M: the overshoot is bounded); past it loading stops
  // with one error naming the file and the budget. 0: MemoryBudget() / kBytesPerLoadedEvent.
  uint64_t max_events = 0;
};

// What a loaded event costs until the command is done with it, for the budget: replay of a
// synthetic GPT job grew 164 B an event from 25k to 191k events (peak RSS, --stats); a command
// that keeps every event (structure, estimate) needs more.
inline constexpr uint64_t kBytesPerLoadedEvent = 512;

// Loads the trace files (already expanded, see trace_set.h) of one job.
StatusOr<Job> LoadJob(const std::vector<std::string>& paths, const LoadOptions& options = {});

}  // namespace lumos::modeler
