// The entry points of liblumos_agent.so. Only these symbols are exported (lumos_agent.map).
#include <exception>

#include "agent/cupti/cupti_channel.h"
// The NCCL entry points (ncclProfiler_v5/_v4 and the ncclX wrappers) live in agent/nccl/.
#include "agent/nvtx/nvtx_injection.h"
#include "agent/runtime/agent_runtime.h"

namespace {

// LD_PRELOAD (and dlopen) load hook: parse the configuration only (STYLE.md 6.2). No threads,
// no file: those start lazily at the first channel's initialisation. It also tells the runtime
// where the header's CUPTI version comes from (loaded only when Start() finds a CUPTI channel
// enabled), before any entry point can start the agent.
__attribute__((constructor)) void LumosAgentOnLoad() {
  lumos::agent::Agent& agent = lumos::agent::Agent::Get();
  agent.SetCuptiVersionProbe(&lumos::agent::cupti::CuptiVersionForHeader);
  agent.LoadConfig();
}

}  // namespace

// The entry points run on the job's threads, inside calls the job made (its first NVTX call,
// cuInit): no exception may leave them, or std::terminate ends the job. Agent::Start catches
// everything the agent's start-up throws (the usual source: no thread to be had); this guard
// is the last line for the rest: one warning and a CHANNEL_FAILED record, and the job carries
// on. (The channel functions are noexcept themselves, so a throw inside them that they do not
// catch still terminates there; keep them catching what they call.)
namespace {

template <typename Body>
int Guarded(lumos::schema::Channel channel, int result_on_failure, Body body) noexcept {
  try {
    return body();
  } catch (const std::exception& error) {
    lumos::agent::Agent::Get().ReportChannelFailure(channel, error.what());
  } catch (...) {
    lumos::agent::Agent::Get().ReportChannelFailure(channel, "unknown exception at start-up");
  }
  return result_on_failure;
}

}  // namespace

// Called by NVTX3 on the first NVTX call when NVTX_INJECTION64_PATH names this library. 0 on
// failure: NVTX then turns its calls into no-ops, as without an injection.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) noexcept {
  return Guarded(lumos::schema::Channel::kNvtx, 0,
                 [&] { return lumos::agent::InitializeNvtxInjection(get_export_table); });
}

// Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library: starts the
// agent (if no other entry point has) and the CUPTI channel. Always 1: the job runs either way.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() noexcept {
  return Guarded(lumos::schema::Channel::kCuptiActivity, 1, [] {
    lumos::agent::Agent::Get().NoteCudaInjectionCalled();
    return lumos::agent::cupti::InitializeCuptiInjection();
  });
}
