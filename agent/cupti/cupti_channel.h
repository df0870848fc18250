// Design: the CUPTI channel's lifecycle: activity records (channel cupti_activity) and API
// callbacks (channel cupti_callback), started once per process from InitializeInjection (the
// CUDA driver calls it at cuInit when CUDA_INJECTION64_PATH names the agent).
//
// Start: (1) the CuptiApi table (dlopen, see cupti_api.h; ProcessCuptiApi: loaded once per
// process, often already by Agent::Start() for the header's cupti_version); (2) cuptiGetVersion
// must equal the headers' CUPTI_API_VERSION, else activity stays off (record layouts differ
// between 13.x releases) while callbacks, whose data structs are stable, still run; (3) activity:
// the buffer pool, the CUPTI clock offset, buffer callbacks, device timestamps for CUDA events
// (when the call exists), and CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, SYNCHRONIZATION,
// CUDA_EVENT, EXTERNAL_CORRELATION; the channel registers as the agent's RecordSource and puts the
// CUPTI clock in every clock snapshot; (4) callbacks: cuptiSubscribe, then every cbid of
// TracedApis(). Failure: any CUPTI error switches off the channel it belongs to (fail open): one
// warning line for the whole start (naming each channel, the call and CUPTI's result) and one
// CHANNEL_FAILED LossRecord per channel; the job and the agent's other channels carry on.
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (Nsight Systems, torch.profiler, Kineto
// already subscribed) is named as such.
// Writer thread (Drain): refreshes the clock offset, decodes completed buffers (see
// activity_decoder.h), and writes CUPTI_DROPPED (cuptiActivityGetNumDroppedRecords, read in
// bufferCompleted) and BUFFER_POOL_EMPTY losses.
// Windowed modes (LUMOS_MODE=periodic|on-demand): the channel registers as the agent's
// CaptureSwitch after it started; between windows activity and callbacks are off.
// Exit: an atexit handler registered after CUPTI is set up (so it runs before CUPTI's own
// teardown) and the agent's final drain both call cuptiActivityFlushAll(FORCED), once.
// Threading: Start once (call_once in InitializeCuptiInjection); the buffer callbacks on CUPTI's
// threads; Drain on the writer. The channel is never destroyed (callbacks may fire until exit).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "agent/core/agent_config.h"
#include "agent/cupti/activity_buffer_pool.h"
#include "agent/cupti/activity_decoder.h"
#include "agent/cupti/api_callbacks.h"
#include "agent/cupti/cupti_api.h"
#include "agent/cupti/cupti_clock.h"
#include "agent/runtime/capture_switch.h"
#include "agent/runtime/record_source.h"

namespace lumos::agent::cupti {

// What the channel needs from the agent (Agent::Get() in the .so; a fake in tests).
class ChannelHost {
 public:
  virtual ~ChannelHost() = default;
  virtual const EnabledFlag& enabled() = 0;
  virtual ThreadRings* rings() = 0;
  virtual StringTable& strings() = 0;
  // One CHANNEL_FAILED LossRecord; the channel logs the warning itself (once per start).
  virtual void ReportFailure(schema::Channel channel, std::string_view why) = 0;
  virtual bool AddRecordSource(RecordSource* source) = 0;
  virtual void SetSnapshotClock(int64_t (*read_ns)()) = 0;
  // Windowed capture: the channel's switch, turned off between windows (a no-op in continuous
  // mode, where the channel collects all the time).
  virtual void SetCaptureSwitch(CaptureSwitch* capture_switch) = 0;
  // Windowed modes: where kernel launches go while a window looks for the kernel stream's
  // period (control/kernel_boundaries.h); null in continuous mode (and in tests that do not
  // need it). Called once, when the callbacks start.
  virtual control::KernelBoundaries* kernel_boundaries() { return nullptr; }
};

class CuptiChannel : public RecordSource, public CaptureSwitch {
 public:
  CuptiChannel(const CuptiApi& api, ChannelHost* host);
  ~CuptiChannel() override;

  // Starts the channels config asks for. True when at least one of them runs.
  bool Start(const AgentConfig& config);

  // RecordSource (writer thread).
  void Drain(RecordSink& sink) override;
  void FlushBeforeFinalDrain() override;

  // CaptureSwitch (writer thread), windowed modes: between windows, activity kinds disabled and
  // API callbacks off (CUPTI then does no work per API call); on again when a window is armed.
  // Errors are ignored (the next window tries again); the window's trace shows what came.
  void SetCapturing(bool armed) override;
  void FlushForWindow() override;

  bool activity_running() const { return activity_running_.load(std::memory_order_acquire); }
  bool callbacks_running() const { return callbacks_running_; }
  const ActivityDecoder& decoder() const { return decoder_; }
  ActivityBufferPool* pool() { return pool_.get(); }
  const CuptiClock& clock() const { return clock_; }

  // CUPTI's buffer callbacks (C function pointers: they reach the running channel through a
  // global). Public for tests, which drive them like CUPTI does.
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid_bytes);

 private:
  // Each returns "" on success, else the reason (call and CUPTI result).
  std::string StartActivity(const AgentConfig& config);
  std::string StartCallbacks();
  void FlushOnce();
  static void FlushAtExit();

  const CuptiApi api_;
  ChannelHost* const host_;
  std::unique_ptr<ActivityBufferPool> pool_;
  ActivityDecoder decoder_;
  CuptiClock clock_;
  CallbackTable table_;
  CallbackContext context_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<bool> activity_running_{false};
  bool callbacks_running_ = false;
  std::atomic<bool> flushed_{false};          // The final flush ran (exchange: once).
  std::atomic<uint64_t> cupti_dropped_{0};    // From bufferCompleted; relaxed counter.
  std::atomic<uint64_t> foreign_buffers_{0};  // Completed buffers that were not ours.
};

// The process's channel, started once with the agent (fail open). Returns 1, as the CUDA driver
// expects from InitializeInjection, whatever happened.
int InitializeCuptiInjection() noexcept;

// The process's CUPTI table: LoadCuptiApi(fallback_path) on the first call, that result after
// (the path is the config's, the same for every caller). Shared by the header's version probe
// and InitializeCuptiInjection, so libcupti is looked for once. Any thread.
const StatusOr<CuptiApi>& ProcessCuptiApi(const std::string& fallback_path);

// The trace header's cupti_version (Agent::CuptiVersionProbe): cuptiGetVersion() of the
// process's libcupti, which needs no driver, when InitializeCuptiInjection has loaded it (it
// does so before starting the agent: the usual order in a CUDA job). 0 when the agent was
// started first by another channel (NVTX, NCCL), when the library cannot be loaded, or when
// the call fails: this never loads libcupti itself (see the .cc). Logs nothing.
uint32_t CuptiVersionForHeader(const AgentConfig& config) noexcept;

}  // namespace lumos::agent::cupti
