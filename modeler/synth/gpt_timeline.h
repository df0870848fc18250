// Design: the lockstep timeline of `synth gpt` (gpt_synth.h). Every rank runs the same program
// (gpt_program.cc calls the methods below once per operation, for all ranks at once), so one
// pass computes all ranks' times together and the collectives agree: each member's NCCL kernel
// starts when its own stream reaches it, and all members of one operation end together, at the
// latest member's start plus the transfer time (as NCCL does, and as the replay's graph
// assumes). Per rank and operation:
//   host     one cursor per rank on the current thread (the main thread, or the autograd
//            engine's thread during backward): a Python gap (1-3 µs) before each call, a
//            launch call of 4-6 µs (cudaLaunchKernel, cudaMemsetAsync, cudaEventRecord, ...);
//            the host runs ahead of the GPU and blocks only in cudaStreamSynchronize;
//   GPU      an op starts at max(its launch + 1-2.5 µs, its stream's previous op's end, the
//            events its stream waits for) and runs for its modelled duration times a seeded
//            lognormal jitter (sigma 3 %; a collective's transfer: one jitter per operation);
//   records  what the agent records for it: the API call with its correlation id, the GPU op
//            with the same id, GEMM and attention problems (GemmCall, linked by correlation),
//            event records with their cudaEventSyncId and the stream-wait syncs naming it,
//            NCCL records (comm id, seq number, bytes, algorithm, protocol, channels), NVTX
//            ranges and the ProfilerStep#N host ranges.
// Deterministic: the same config and seed give the same events. Threading: single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "modeler/synth/gpt_config.h"
#include "modeler/synth/gpt_costs.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler {

enum class GptStream : uint8_t { kCompute = 0, kTensorParallel, kDataParallel };
inline constexpr int kGptStreams = 3;
enum class GptGroup : uint8_t { kTensorParallel, kDataParallel };

// What one rank's trace holds.
struct GptRankEvents {
  std::vector<schema::ApiCallEvent> api_calls;
  std::vector<schema::KernelEvent> kernels;
  std::vector<schema::MemsetEvent> memsets;
  std::vector<schema::SyncEvent> syncs;
  std::vector<schema::CudaEventRecordEvent> cuda_events;
  std::vector<schema::NvtxEvent> nvtx;
  std::vector<schema::HostRangeEvent> host_ranges;
  std::vector<schema::CollectiveEvent> collectives;
  std::vector<schema::GemmCallEvent> gemms;
  std::vector<schema::CommunicatorEvent> communicators;
  int64_t end_ns = 0;  // The last event's end.
};

// A GEMM problem as the GemmCall records it (bf16 in and out, fp32 accumulation).
struct GptGemm {
  int64_t m = 0, n = 0, k = 0;
  schema::GemmTranspose transa = schema::GemmTranspose::kT;
  schema::GemmTranspose transb = schema::GemmTranspose::kN;
};

class GptTimeline {
 public:
  static constexpr int64_t kStartNs = 10'000'000'000;  // Where every rank's timeline begins.

  explicit GptTimeline(const GptConfig& config);

  // Host: the thread the next calls run on (the backward thread starts where the main thread
  // handed over, after the engine's wake-up; and back).
  void UseBackwardThread(bool backward);
  void HostGap(int64_t min_ns, int64_t max_ns);  // Python time before the next call.

  void Kernel(std::string_view name, int64_t duration_ns);
  void Gemm(std::string_view name, const GptGemm& gemm, int64_t duration_ns);
  void Attention(std::string_view name, const models::AttentionShape& shape, int64_t duration_ns);
  void Memset(uint64_t bytes, int64_t duration_ns);
  // `waiter` waits for the work enqueued on `recorder` so far (cudaEventRecord on `recorder`,
  // then cudaStreamWaitEvent on `waiter`).
  void EventWait(GptStream recorder, GptStream waiter);
  void AllReduce(GptGroup group, GptStream stream, uint64_t bytes, schema::DataType type,
                 const GptCosts::Collective& cost);
  void StreamSynchronize(GptStream stream);
  void Push(std::string_view name);
  void Pop();
  void StepBegin(int64_t step);
  void StepEnd();

  // After the program: the communicator records, then the events of each rank.
  std::vector<GptRankEvents>& Finish();

  uint32_t thread_id(int32_t rank, bool backward) const;
  uint64_t CommId(GptGroup group, int32_t rank) const;

 private:
  struct Open {
    std::string_view name;
    int64_t start_ns;
  };
  struct Rank {
    int64_t host_ns = kStartNs;
    bool backward = false;
    uint64_t next_correlation = 1;
    uint64_t next_event = 1;
    uint64_t draws = 0;  // Random draws so far (the jitter stream's position).
    int64_t stream_end_ns[kGptStreams] = {};
    int64_t stream_wait_ns[kGptStreams] = {};
    std::vector<Open> nvtx;
    Open step{};
    int64_t step_number = 0;
  };

  std::string_view Intern(std::string text);
  double Uniform(int32_t rank);  // [0, 1)
  double Jitter(int32_t rank);   // Lognormal, sigma 3 %.
  // The factor GptConfig's slow_rank and kernel_scales put on a compute op of `name` (interned)
  // on `rank`.
  double Slowdown(int32_t rank, std::string_view name);
  int64_t HostCall(int32_t r, int64_t min_ns, int64_t max_ns);
  schema::ApiCallEvent Launch(int32_t r, std::string_view name, schema::ApiKind kind,
                              GptStream stream, int64_t duration_ns);
  // Enqueues a GPU op of `duration_ns` on `stream` launched by `launch`: its start.
  int64_t GpuStart(int32_t r, const schema::ApiCallEvent& launch, GptStream stream);
  void AddKernel(int32_t r, const schema::ApiCallEvent& launch, GptStream stream,
                 std::string_view name, int64_t start_ns, int64_t duration_ns);

  const GptConfig& config_;
  std::vector<Rank> ranks_;
  std::vector<GptRankEvents> events_;
  std::set<std::string, std::less<>> names_;     // Every name the events view.
  std::map<const char*, double> kernel_factor_;  // Per interned name: its kernel_scales factor.
  uint64_t seq_[2] = {};                         // Per group kind (all communicators alike).
  uint64_t collectives_ = 0;
};

}  // namespace lumos::modeler
