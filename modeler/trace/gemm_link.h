// Design: which kernels a GEMM call's shape belongs to (schema 2.2 GemmCall, the rule in
// schema/lumos/trace.proto). A GEMM call names its kernels in one of two ways:
//   * correlation_id != 0 (imported traces: one call per launch the operator made): the
//     kernels with that correlation id;
//   * else by span (the agent: cuBLAS launches inside its own call, on the caller's thread):
//     every kernel whose launching ApiCall (a LAUNCH_KERNEL call with the kernel's correlation
//     id) started on the GEMM call's thread within [start, end] of the call. With nested
//     calls the innermost (latest start) wins. A split-K GEMM launches two kernels: both get
//     the shape.
// Failed calls (return_code != 0) launched nothing and link to nothing. Kernels a CUDA graph
// launch replays carry the graph launch's correlation id (a LAUNCH_GRAPH call), so they get no
// shape: linking them needs graph node ids at capture, which traces do not record yet.
// Memory: 24 bytes per launch, 32 per GEMM call, a hash map entry per linked launch; no event
// is kept. Threading: single-threaded.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "schema/writer/trace_events.h"

namespace lumos::modeler {

// "No GEMM call launched this kernel."
inline constexpr uint32_t kNoGemm = UINT32_MAX;

class GemmLinker {
 public:
  // The GEMM calls, in the order their indices name them (the n-th call added is index n).
  void AddGemmCall(const schema::GemmCallEvent& call);
  // API calls; only kernel launches are kept.
  void AddApiCall(const schema::ApiCallEvent& call);
  // Matches launches to calls; call once, after every Add.
  void Finish();
  // The index of the GEMM call whose shape a kernel of this correlation id has, or kNoGemm.
  uint32_t GemmOf(uint64_t correlation_id) const;
  uint64_t gemm_calls() const { return spans_.size(); }

 private:
  struct Span {
    uint32_t thread_id;
    int64_t start_ns;
    int64_t end_ns;
    uint64_t correlation_id;
    bool failed;
  };
  struct Launch {
    uint64_t correlation_id;
    int64_t start_ns;
    uint32_t thread_id;
  };
  std::vector<Span> spans_;
  std::vector<Launch> launches_;
  std::unordered_map<uint64_t, uint32_t> by_correlation_;
};

// Per kernel (same order as `kernels`): the index in `gemm_calls` of the call that launched it,
// or kNoGemm.
std::vector<uint32_t> LinkKernelsToGemmCalls(const std::vector<schema::KernelEvent>& kernels,
                                             const std::vector<schema::ApiCallEvent>& api_calls,
                                             const std::vector<schema::GemmCallEvent>& gemm_calls);

}  // namespace lumos::modeler
