// Design: the agent's process-wide state and lifecycle (STYLE.md 6). One Agent lives in a
// NoDestructor and is never destroyed, because capture callbacks on other threads can reach it
// while the process exits.
//   LoadConfig(): reads AgentConfig from the real environment once (the only getenv) and keeps
//     its warnings for Start() to log: every process the library is preloaded into parses the
//     configuration (a shell, `ls`), only one that starts the agent says what was wrong. Cheap
//     and thread-free: the LD_PRELOAD constructor calls only this.
//   Start(): once per process (std::call_once; later calls return the first result). Maps the
//     rings, opens <output_dir>/<name> (see TraceFileName; the rank from the environment,
//     rank_detection.h), writes the header, starts ONE writer thread, registers the atexit
//     (Stop) and pthread_atfork (child) handlers, then turns the enabled flag on. With a CUPTI
//     channel enabled, the header's cupti_version comes from the CuptiVersionProbe (the CUPTI
//     channel's libcupti when the CUDA injection loaded it before starting the agent; else 0:
//     the probe never loads a library under Start()'s once-lock). Any failure (unwritable
//     directory, arena mmap, no thread to be had: RLIMIT_NPROC, a pids cgroup; even an
//     exception) logs one warning line, removes a file it created and leaves the agent off: the
//     traced job is never affected (fail open, STYLE.md 3.2).
//   Writer thread (agent_writer.cc): every flush interval (or when woken through an eventfd,
//     which a signal handler may write) drains all rings through RecordEncoder,
//     turns ring drops into LossRecords, writes a clock snapshot (CLOCK_MONOTONIC, the records'
//     clock, with CLOCK_REALTIME) at start, every kClockSnapshotIntervalNs and at the end, and
//     lets the writer flush frames by age. It also refines the fast clock (agent/core/
//     fast_clock.h; started at the end of Start() unless LUMOS_CLOCK=monotonic), waking sooner
//     than the flush interval for its first refinements.
//   Stop(): asks the writer thread to close (flag off, final drain, trailer, file closed) and
//     joins it, waiting at most kStopJoinTimeoutS: a writer stuck in write() (a hung network
//     file system) leaves the file without a trailer and one warning, and the job exits on time.
//     Idempotent. Runs from atexit. SIGTERM/SIGINT: see signal_flush.h (flush, or close when the
//     signal kills the process). SIGKILL or _exit() leave a readable prefix without a trailer.
//     The writer thread blocks SIGXFSZ: RLIMIT_FSIZE costs trace data, never the job
//     (trace_file_writer.h keeps below it).
//   Rank from NCCL: the header is written at start, usually before NCCL. The NCCL channel
//     reports every communicator it sees (NoteCommunicator); the largest (the world
//     communicator; ties: the first) is authoritative, unless it is smaller than the
//     launcher's WORLD_SIZE (a tensor/data/pipeline sub-group: its rank is not the global one,
//     and the launcher's stays). At the close its rank and size go into
//     the trailer, and when the file name's rank differs (or reads "norank") the closed file is
//     renamed to that rank (rename in the same directory, never over an existing file; on any
//     failure the old name stays, with one warning). An environment rank that disagrees gets
//     one warning naming both. No communicator seen: the environment's rank, as before. A
//     process killed without a close keeps the environment's name and no trailer.
//   fork(): the child stays off for its whole life (a window armed in the parent never starts
//     in it). It does not own the parent's file or writer thread, so it never writes (its atexit
//     Stop() is a no-op: the pid differs).
//   Channels: the agent starts when any channel is enabled, at the first channel's entry point
//     (the LD_PRELOAD constructor only reads the configuration; a process that never reaches
//     one writes no file). A channel that fails reports it through ReportChannelFailure; the
//     others carry on. CUPTI channels whose entry point never came (no cuInit: no driver) get
//     their CHANNEL_FAILED record at the close (NoteCudaInjectionCalled). A channel whose records
//     the writer pulls (CUPTI activity buffers) registers a RecordSource: drained after the rings
//     on every pass, flushed before the final drain.
//   Windowed capture (LUMOS_MODE=periodic|on-demand; agent_windows.cc, issue 15): no file at
//     start. The enabled flag is the capture gate, open only inside a window; running() stays on
//     from start to stop for what every window needs (communicators, NVTX domains). A
//     control::WindowController decides when windows start and end (on iteration boundaries the
//     NVTX channel reports, or by time); the writer thread arms it (from the periodic schedule
//     or a lumos-ctl request through the control endpoint), opens DIR/<job>/<stamp>/<name>
//     .partial when a window starts, writes the communicators and channel failures seen so far,
//     then the window's records, and at the end the CaptureWindow packet and the trailer, and
//     renames the file (agent/control/window_output.h); then the disk quota. Between windows the
//     writer keeps only communicator records; the CUPTI channel turns activity and callbacks off
//     (CaptureSwitch) and back on just before a window is armed, so a window's first kernels are
//     seen. Channel failures reported at the close reach the window open then.
//   Control endpoint: every mode serves `lumos-ctl status`; captures only windowed modes.
// Hot path: capture callbacks use only EnabledFlag() (one relaxed load) and Rings().
#pragma once

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "agent/control/control_endpoint.h"
#include "agent/control/iteration_marker.h"
#include "agent/control/kernel_boundaries.h"
#include "agent/control/window_controller.h"
#include "agent/core/agent_config.h"
#include "agent/core/fast_clock.h"
#include "agent/core/file_names.h"  // TraceFileName
#include "agent/core/no_destructor.h"
#include "agent/core/rank_detection.h"
#include "agent/core/string_table.h"
#include "agent/core/thread_rings.h"
#include "agent/runtime/capture_switch.h"
#include "agent/runtime/process_devices.h"
#include "agent/runtime/record_source.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent {

// CLOCK_MONOTONIC in ns: the clock of every record this agent writes. Inline for the hot path:
// from the TSC once the agent's writer has calibrated it (agent/core/fast_clock.h, a few ns),
// else clock_gettime (vDSO, ~20 ns). Code that needs the exact clock calls ReadMonotonicNs().
inline int64_t MonotonicNowNs() { return FastMonotonicNs(); }

class Agent {
 public:
  // Written between a thread's clock snapshots (the writer adds one each loop otherwise).
  static constexpr uint64_t kClockSnapshotIntervalNs = 10'000'000'000;
  // Events drained per ring per pass: bounds how long one ring can hold the writer. The close
  // and a signal's flush take everything (a ring can hold more: LUMOS_RING_BYTES > 4 MiB).
  static constexpr size_t kMaxDrainPerRing = 1 << 16;
  // Longest Stop() waits for the writer thread at exit before it leaves the file as it is.
  static constexpr int kStopJoinTimeoutS = 5;
  // The writer's pass interval while a window is armed or open (its timers and file).
  static constexpr int kWindowPassMs = 10;

  static Agent& Get();

  void LoadConfig();
  // True when the agent is running (started now or before).
  bool Start();
  void Stop();

  // The hot-path entry check.
  const EnabledFlag& enabled() const { return enabled_; }
  // The rings; null until Start() succeeded. Acquire pairs with the release store in Start(),
  // so a callback that sees the pointer sees the constructed rings (a plain load on x86).
  ThreadRings* rings() const { return rings_.load(std::memory_order_acquire); }
  // Domain names and registered strings (Intern off the hot path only).
  StringTable& strings() { return strings_; }
  // The config, valid after LoadConfig().
  const AgentConfig& config() const { return config_; }
  // The trace being written ("" when not started or disabled). The close may rename it (rank
  // from NCCL, see above): read it after Stop() for the final name.
  const std::string& trace_path() const {
    return renamed_.load(std::memory_order_acquire) ? renamed_path_ : trace_path_;
  }

  // Where the header's cupti_version comes from (cuptiGetVersion of the libcupti the CUDA
  // injection already loaded; else 0), so the runtime needs no CUPTI. Set by the .so's load
  // constructor before anything can start the agent; Start() calls it once, and only with a
  // CUPTI channel enabled. It must not load libraries (it runs under Start()'s once-lock).
  // How the writer asks the process's CUDA driver, runtime and NCCL for its devices and their
  // versions (agent/cupti/cuda_devices.h); set by the CUDA injection when cuInit runs, so the
  // writer asks only once the job has a driver. True once the devices are known.
  using DeviceProbe = bool (*)(ProcessDevices* out);
  void SetDeviceProbe(DeviceProbe probe) { device_probe_.store(probe, std::memory_order_release); }
  using CuptiVersionProbe = uint32_t (*)(const AgentConfig& config);
  void SetCuptiVersionProbe(CuptiVersionProbe probe) {
    cupti_version_probe_.store(probe, std::memory_order_release);
  }
  // A communicator this process belongs to: `rank` of `size` (the NCCL channel, at communicator
  // creation). The largest one seen is the job's world communicator and decides the trace's
  // rank at the close (see above). Invalid values (size < 1, rank outside [0, size)) are
  // ignored. Any thread; lock-free (a CAS loop on one word).
  void NoteCommunicator(int32_t rank, int32_t size);

  // A channel that could not start, or gave up: one warning line naming it, and a LossRecord
  // (LOSS_SOURCE_CHANNEL_FAILED, count 1, detail "<channel>: <why>") in the trace at the next
  // drain. The header lists every enabled channel as started; readers subtract these. Any
  // thread, never the hot path (takes a lock). Before Start() succeeded: the warning only.
  // log_warning = false: the caller already logged one line for several channels at once.
  void ReportChannelFailure(schema::Channel channel, std::string_view why, bool log_warning = true);
  // A further clock read at every clock snapshot beside CLOCK_MONOTONIC and CLOCK_REALTIME
  // (a channel's own time base, e.g. cuptiGetTimestamp), so readers can relate its domain.
  // One extra clock at most; a later call replaces it. Any thread.
  void SetSnapshotClock(schema::ClockId id, int64_t (*read_ns)());
  // A source the writer drains after the rings on every pass (see record_source.h). At most
  // kMaxRecordSources; false when full. Any thread, once per source; it must live forever.
  bool AddRecordSource(RecordSource* source);

  // The CUDA driver called the CUDA injection (InitializeInjection, at cuInit). When it never
  // does (no libcuda, a process that never uses CUDA), the close adds a CHANNEL_FAILED record
  // for each enabled CUPTI channel, so the trace says why it has no CUDA activity. Any thread.
  void NoteCudaInjectionCalled() noexcept {
    cuda_injection_called_.store(true, std::memory_order_relaxed);
  }

  // The fork child handler: turns this process's agent off for good.
  void DisableInForkChild();

  // ---- Windowed capture (agent_windows.cc) ----
  // On from a successful Start() to the close, in every mode: the gate for what is recorded
  // between windows too (communicators, NVTX domains and registered strings).
  const EnabledFlag& running() const { return running_; }
  // The window state machine; null in continuous mode (or before Start()).
  control::WindowController* windows() const { return windows_.load(std::memory_order_acquire); }
  // The ranges that mark iterations (LUMOS_ITERATION_MARKER); valid after LoadConfig().
  const control::IterationMarker& iteration_marker() const { return iteration_marker_; }
  // The CUPTI channel's switch (one; a later call replaces it). Called at once with the current
  // state, then by the writer thread whenever a window is armed or ends. Any thread.
  void SetCaptureSwitch(CaptureSwitch* capture_switch);
  // Windowed modes: where the CUPTI callback channel sends kernel launches while a window looks
  // for the kernel stream's period (control/kernel_boundaries.h); made at the first call (about
  // 1.2 MiB), null in continuous mode or before Start(). Any thread.
  control::KernelBoundaries* EnableKernelBoundaries();
  // The control endpoint's handlers (its thread): lumos-ctl status, capture and cancel.
  control::AgentStatus ControlStatus();
  std::string ControlCapture(const control::CaptureRequest& request);
  control::CancelReply ControlCancel(const control::CancelRequest& request);

  // Async-signal-safe (signal_flush.cc): asks the writer thread to write out everything
  // recorded so far, and with `finish` to close the file too, then waits up to timeout_ns.
  // Returns whether it was done in time; false at once when the agent is not running here.
  bool FlushFromSignal(bool finish, int64_t timeout_ns);

 private:
  friend class NoDestructor<Agent>;
  Agent() = default;

  bool StartOnce();
  // Final drain, clock snapshot, trailer, close: once, by Stop() or the writer on a signal.
  void FinishTrace();
  // After the close: the trailer's rank vs the file name's, rename and warnings (see above).
  void AdoptCommunicatorRank(int32_t rank, int32_t size);

  // Writer thread (agent_writer.cc).
  static void* WriterThreadMain(void* agent);
  void WriterLoop();
  void Wake();
  // One pass over the rings (up to max_per_ring events each), then the record sources.
  void DrainOnce(size_t max_per_ring);
  // A ThreadInfo packet (thread id, name from /proc, pid) for each thread seen the first time.
  void DescribeNewThreads();
  void WriteClockSnapshot();

  // Windowed capture (agent_windows.cc), all on the writer thread unless said otherwise.
  bool windowed() const { return config_.mode != CaptureMode::kContinuous; }
  // Sets up the controller, the periodic schedule and the control endpoint (StartOnce).
  void StartWindows();
  void StartControlEndpoint();
  // One writer pass in windowed mode: timers, arming, opening, draining and closing windows.
  void WindowPass(int64_t now_ns, bool flush_now);
  // A cancel the control thread handed over: drops or ends the window it named.
  void ApplyPendingCancel(int64_t now_ns);
  // Arms the next window when one is asked for or due; true when it did.
  bool MaybeArm(int64_t now_ns);
  void OpenWindowFile();
  // Flushes the sources, drains everything, writes the window packet and trailer, renames the
  // file, enforces the quota, and returns the controller to dormant.
  void CloseWindow();
  // Between windows: keeps communicator records, holds records of a window that just started
  // (they go into its file once open), drops the rest.
  void DrainBetweenWindows();
  // The close in windowed mode (FinishTrace): a window being captured is closed as usual.
  void FinishWindowsAtExit();
  // The rank the next file is named after: the NCCL world communicator's when known.
  RankInfo CurrentRank() const;
  schema::TrailerInfo CurrentTrailer() const;
  void CacheCommunicator(const Record& head);
  // What marks the window's iterations (its CaptureWindow.iteration_marker): the marker's
  // pattern, or "(kernel stream: a period of N launches)" when the kernel stream's did.
  std::string IterationSource(const control::WindowController& windows) const;
  void NotifyCaptureSwitch(bool armed);

  std::once_flag config_once_;
  std::once_flag start_once_;
  // Result of StartOnce. Atomic because Stop() may run on a thread that never went through
  // call_once; release/acquire publishes owner_pid_ and the writer with it.
  std::atomic<bool> started_{false};
  AgentConfig config_;
  // LoadConfig()'s warnings, logged by StartOnce (only a process that starts the agent logs).
  std::vector<std::string> config_warnings_;
  EnabledFlag enabled_;
  std::atomic<ThreadRings*> rings_{nullptr};
  std::unique_ptr<ThreadRings> owned_rings_;  // Never released: rings outlive every callback.
  StringTable strings_;
  // The file's name from Start(): set before the writer thread exists, then never changed, so
  // any thread may read it. A rename at the close (AdoptCommunicatorRank, in the writer
  // thread, while a job's thread may be in Stop()) writes renamed_path_ once and then
  // publishes it (release on renamed_): trace_path() and Stop() read either without a race.
  std::string trace_path_;
  std::string renamed_path_;
  std::atomic<bool> renamed_{false};
  uint32_t owner_pid_ = 0;  // The process that started the agent; forked children differ.
  // What Start() named the file after (the environment's rank) and the host in the name: the
  // close compares the communicator's rank with it and builds the new name from both.
  RankInfo env_rank_;
  std::string host_name_;
  std::string trace_dir_;  // LUMOS_OUTPUT_DIR made absolute at Start().
  std::atomic<CuptiVersionProbe> cupti_version_probe_{nullptr};
  std::atomic<DeviceProbe> device_probe_{nullptr};
  // Writer thread: what the probe said (into the trailer and every later window's header).
  ProcessDevices process_devices_;
  bool devices_known_ = false;
  uint64_t probe_attempts_ = 0;
  void MaybeProbeDevices();
  // The largest communicator noted: size in the high 32 bits, rank in the low 32; 0 = none. One
  // word, so the pair is always consistent; relaxed is enough, the word is the whole message
  // (the close reads whatever was noted before it, nothing else depends on it).
  std::atomic<uint64_t> world_comm_{0};
  std::atomic<bool> cuda_injection_called_{false};  // Relaxed: read once, at the close.

  // Writer thread state. Only the writer thread touches writer_/encoder_ until Stop() joins it.
  std::unique_ptr<schema::TraceFileWriter> writer_;
  // pthread_create rather than std::thread: its failure (RLIMIT_NPROC, a pids cgroup) is an
  // error code to handle, not an exception through the job's call into an entry point.
  pthread_t writer_thread_{};
  bool writer_thread_started_ = false;
  int wake_fd_ = -1;  // eventfd: Stop() and signal handlers wake the writer with write().
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> stopped_{false};  // The trace was finished (exchange: exactly once).
  // Signal requests (kSignalFlush < kSignalFinish) and how many the writer has served.
  static constexpr int kSignalFlush = 1, kSignalFinish = 2;
  std::atomic<int> signal_request_{0};
  std::atomic<uint64_t> signal_served_{0};
  int64_t last_snapshot_ns_ = 0;
  std::mutex failures_mutex_;
  std::vector<std::string> pending_failures_;  // Details of LossRecords not yet written.
  std::atomic<int64_t (*)()> snapshot_clock_{nullptr};
  std::atomic<schema::ClockId> snapshot_clock_id_{schema::ClockId::kUnspecified};
  std::unordered_set<uint32_t> described_threads_;  // Writer thread only.
  // Registered sources: a slot is claimed by CAS, then read by the writer (acquire pairs with
  // the release CAS, so the writer sees a fully constructed source).
  std::atomic<RecordSource*> sources_[kMaxRecordSources] = {};

  // Windowed capture state (agent_windows.cc).
  EnabledFlag running_;
  control::IterationMarker iteration_marker_;
  std::unique_ptr<control::WindowController> owned_windows_;  // Never released (callbacks).
  std::atomic<control::WindowController*> windows_{nullptr};
  std::mutex kernel_boundaries_mutex_;  // EnableKernelBoundaries only.
  std::unique_ptr<control::KernelBoundaries> owned_kernel_boundaries_;  // Never released.
  std::atomic<control::KernelBoundaries*> kernel_boundaries_{nullptr};
  std::unique_ptr<control::ControlEndpoint> endpoint_;
  std::atomic<CaptureSwitch*> capture_switch_{nullptr};
  std::mutex capture_switch_mutex_;  // SetCaptureSwitch vs the writer's notifications.
  bool capture_switch_on_ = false;   // Under capture_switch_mutex_.
  schema::HeaderInfo base_header_;   // Each window's header starts from it.
  // Communicator records seen (one per comm id; names live in strings_): every window file
  // starts with them.
  std::vector<Record> communicators_;
  std::vector<std::string> all_failures_;  // Channel failures so far: into every window file.
  // Records of a window that started before its file was open (writer thread).
  struct HeldRecord {
    Record head;
    Record extension;
    bool has_extension;
  };
  std::vector<HeldRecord> held_;
  uint64_t held_dropped_ = 0;
  // This window's source records from before it started, dropped (agent_writer.cc DrainOnce);
  // said when the window closes.
  uint64_t outside_window_records_ = 0;
  static constexpr size_t kMaxHeldRecords = 1 << 18;
  std::string window_partial_path_, window_final_path_, window_directory_;
  bool window_open_failed_ = false;  // This window's file could not be created: it is skipped.
  uint64_t window_index_ = 0;
  int64_t next_periodic_realtime_ns_ = 0;
  // A lumos-ctl request waiting for the writer (control thread -> writer thread).
  std::mutex request_mutex_;  // Never taken by a job thread.
  std::optional<control::CaptureRequest> pending_request_;
  // A lumos-ctl cancel for the writer: the controller's word it saw (the window to cancel) and
  // who asked ("uid U pid P (comm)"); under request_mutex_.
  struct PendingCancel {
    uint64_t word = 0;
    uint64_t request_id = 0;
    std::string requested_by;
  };
  std::optional<PendingCancel> pending_cancel_;
  // For lumos-ctl status (writer writes, control thread reads).
  std::mutex status_mutex_;  // Never taken by a job thread.
  std::string last_window_path_;
  int64_t last_window_end_realtime_ns_ = 0;
  std::string last_cancel_;  // What the last lumos-ctl cancel did (status).
  std::atomic<uint64_t> windows_written_{0};
  std::atomic<uint64_t> bytes_written_{0};
  std::atomic<uint64_t> events_dropped_{0};
};

}  // namespace lumos::agent
