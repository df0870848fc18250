#include "agent/runtime/agent_runtime.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>

#include "agent/core/env_lookup.h"
#include "agent/core/file_names.h"
#include "agent/runtime/signal_flush.h"
#include "base/logging.h"

#ifndef LUMOS_AGENT_VERSION
#define LUMOS_AGENT_VERSION "0.0.0"
#endif

namespace lumos::agent {
namespace {

uint64_t ClockResolutionNs(clockid_t clock) {
  timespec ts{};
  if (clock_getres(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
}

std::string HostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof(buffer) - 1) != 0) return "unknown";
  return buffer;
}

// argv joined by spaces; "" when /proc is not mounted. Bounded so a huge command line cannot
// bloat the header.
std::string CommandLine() {
  constexpr size_t kMaxBytes = 4096;
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string text(kMaxBytes, '\0');
  size_t size = 0;
  while (size < kMaxBytes) {
    ssize_t n = read(fd, text.data() + size, kMaxBytes - size);
    if (n <= 0) break;
    size += static_cast<size_t>(n);
  }
  close(fd);
  text.resize(size);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  for (char& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

constexpr char kNoCudaInjection[] =
    "CUDA injection never called: no cuInit (no CUDA driver, CUDA unused, or "
    "CUDA_INJECTION64_PATH not naming the agent)";

void AtExitStop() { Agent::Get().Stop(); }
void AtForkChild() { Agent::Get().DisableInForkChild(); }

}  // namespace

Agent& Agent::Get() {
  static NoDestructor<Agent> agent;
  return *agent;
}

void Agent::LoadConfig() {
  std::call_once(config_once_, [this] {
    ParsedAgentConfig parsed = ParseAgentConfig(ProcessEnvLookup(), ProcessEnvNames());
    config_ = std::move(parsed.config);
    config_warnings_ = std::move(parsed.warnings);
    SetMinLogLevel(config_.log_level);
  });
}

bool Agent::Start() {
  LoadConfig();
  std::call_once(start_once_, [this] {
    bool started = false;
    // Entry points are noexcept and the job's threads call them: nothing may escape (an
    // exception would reach std::terminate). StartOnce cleans up after itself on the way out.
    try {
      started = StartOnce();
    } catch (const std::exception& error) {
      LUMOS_LOG(Warn, "agent disabled, the job runs untraced: start-up failed: %s", error.what());
    } catch (...) {
      LUMOS_LOG(Warn, "agent disabled, the job runs untraced: start-up failed");
    }
    started_.store(started, std::memory_order_release);
  });
  return started_.load(std::memory_order_acquire);
}

bool Agent::StartOnce() {
  // Logged here, not at load: every process the library is preloaded into parses the
  // configuration (a shell, `ls`), but only one that starts the agent has a use for the lines.
  for (const std::string& warning : config_warnings_) LUMOS_LOG(Warn, "%s", warning.c_str());
  config_warnings_.clear();
  if (!config_.enabled || config_.channels.empty()) return false;
  RankInfo rank = DetectRank(ProcessEnvLookup());
  for (const std::string& warning : rank.warnings) LUMOS_LOG(Warn, "%s", warning.c_str());

  schema::HeaderInfo header;
  header.agent_version = LUMOS_AGENT_VERSION;
  header.producer = schema::Producer::kAgent;
  header.host_name = HostName();
  owner_pid_ = static_cast<uint32_t>(getpid());
  header.pid = owner_pid_;
  header.job_id = config_.job_id;
  FillHeaderRank(rank, &header);
  header.command_line = CommandLine();
  // Every enabled channel; one that fails later says so in a LossRecord (CHANNEL_FAILED).
  header.capture_config = ToCaptureConfigInfo(config_);
  if (config_.channels.Has(schema::Channel::kCuptiActivity) ||
      config_.channels.Has(schema::Channel::kCuptiCallback)) {
    // Loads libcupti now (the channel reuses it at cuInit); a failure is the channel's to report.
    if (CuptiVersionProbe probe = cupti_version_probe_.load(std::memory_order_acquire)) {
      header.cupti_version = probe(config_);
    }
  }
  header.clock_domains = {
      {schema::ClockId::kMonotonic, "CLOCK_MONOTONIC", ClockResolutionNs(CLOCK_MONOTONIC)},
      {schema::ClockId::kRealtime, "CLOCK_REALTIME", ClockResolutionNs(CLOCK_REALTIME)}};
  header.default_clock_id = schema::ClockId::kMonotonic;
  header.start_time_ns = static_cast<uint64_t>(ReadMonotonicNs());

  StatusOr<std::unique_ptr<ThreadRings>> rings =
      ThreadRings::Create(config_.arena_bytes, config_.ring_bytes);
  if (!rings.ok()) {
    LUMOS_LOG(Warn, "agent disabled: %s", rings.status().message().c_str());
    return false;
  }
  // Absolute, so the rename at the close (AdoptCommunicatorRank) finds the file after a chdir.
  trace_dir_ = AbsoluteDirectory(config_.output_dir);
  // Windowed modes write a file per window (agent_windows.cc), none now.
  std::string path;
  StatusOr<std::unique_ptr<schema::TraceFileWriter>> writer(nullptr);
  if (!windowed()) {
    path = trace_dir_ + "/" + TraceFileName(config_.job_id, header.host_name, owner_pid_, rank);
    writer = schema::TraceFileWriter::Create(path, header, ToWriterOptions(config_));
    if (!writer.ok()) {
      LUMOS_LOG(Warn, "agent disabled, the job runs untraced: %s",
                writer.status().message().c_str());
      return false;
    }
  }
  // From here on a failure (or an exception) leaves no half-written file behind: a header-only
  // trace would read as a process that recorded nothing, not as one that was never traced.
  struct RemoveUnlessKept {
    const std::string& path;
    bool keep = false;
    ~RemoveUnlessKept() {
      if (!keep && !path.empty()) unlink(path.c_str());
    }
  } remove_file{path};
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    LUMOS_LOG(Warn, "agent disabled, the job runs untraced: eventfd: %s", std::strerror(errno));
    return false;
  }
  writer_ = std::move(writer).value();
  trace_path_ = path;
  env_rank_ = std::move(rank);
  host_name_ = header.host_name;
  base_header_ = std::move(header);
  if (writer_ != nullptr) WriteClockSnapshot();

  // Started here, after every way to fail: the writer thread refines it (see WriterLoop).
  if (!config_.tsc_clock) {
    LUMOS_LOG(Debug, "LUMOS_CLOCK=monotonic: record times from clock_gettime");
  } else if (!FastClock::Get().Start(static_cast<int64_t>(config_.flush_interval_ms) * 1'000'000)) {
    LUMOS_LOG(Debug, "no invariant TSC: record times from clock_gettime");
  }
  // The writer drains owned_rings_; published to the callbacks (rings_) only once it runs.
  owned_rings_ = std::move(rings).value();
  // A ring filled to half wakes the writer, so a fast thread is drained before the flush timer
  // (the H200's 8-layer loop: 2,000 records per 27-ms step filled a 1 MiB ring in 0.2 s).
  owned_rings_->SetDrainWake({[](void* agent) { static_cast<Agent*>(agent)->Wake(); }, this});
  // Before the writer thread: its first pass already needs the window controller.
  StartWindows();
  const int thread_error = pthread_create(&writer_thread_, nullptr, &Agent::WriterThreadMain, this);
  if (thread_error != 0) {
    // A process or thread limit (RLIMIT_NPROC, a pids cgroup): the job may well live with it.
    LUMOS_LOG(Warn, "agent disabled, the job runs untraced: cannot start the writer thread: %s",
              std::strerror(thread_error));
    writer_.reset();
    owned_rings_.reset();  // No callback has seen them: rings_ is still null.
    trace_path_.clear();
    close(wake_fd_);
    wake_fd_ = -1;
    return false;
  }
  writer_thread_started_ = true;
  remove_file.keep = true;
  rings_.store(owned_rings_.get(), std::memory_order_release);
  // Registered after the thread exists, so Stop() always has a thread to join.
  std::atexit(AtExitStop);
  pthread_atfork(nullptr, nullptr, AtForkChild);
  if (config_.flush_on_signals) FlushOnSignals::Install();
  running_.Set(true);
  // Windowed: the gate opens with the first window (WindowController).
  if (!windowed()) enabled_.Set(true);
  StartControlEndpoint();
  return true;
}

void Agent::ReportChannelFailure(schema::Channel channel, std::string_view why, bool log_warning) {
  std::string detail = std::string(ChannelName(channel)) + ": " + std::string(why);
  if (log_warning) LUMOS_LOG(Warn, "channel %s", detail.c_str());
  if (!started_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(failures_mutex_);
  pending_failures_.push_back(std::move(detail));
}

void Agent::SetSnapshotClock(schema::ClockId id, int64_t (*read_ns)()) {
  // The id first: a snapshot that sees the new reader also sees its id.
  snapshot_clock_id_.store(id, std::memory_order_release);
  snapshot_clock_.store(read_ns, std::memory_order_release);
}

void Agent::NoteCommunicator(int32_t rank, int32_t size) {
  if (size < 1 || rank < 0 || rank >= size) return;
  const uint64_t noted =
      (static_cast<uint64_t>(static_cast<uint32_t>(size)) << 32) | static_cast<uint32_t>(rank);
  // Relaxed: see world_comm_. Only a strictly larger communicator replaces the one noted, so
  // of equal sizes the first stays.
  uint64_t current = world_comm_.load(std::memory_order_relaxed);
  while ((current >> 32) < static_cast<uint64_t>(size) &&
         !world_comm_.compare_exchange_weak(current, noted, std::memory_order_relaxed)) {
  }
}

bool Agent::AddRecordSource(RecordSource* source) {
  for (std::atomic<RecordSource*>& slot : sources_) {
    RecordSource* expected = nullptr;
    if (slot.compare_exchange_strong(expected, source, std::memory_order_release,
                                     std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void Agent::Stop() {
  // Only the process that started the agent owns the file and the thread (see fork above).
  if (!started_.load(std::memory_order_acquire) || static_cast<uint32_t>(getpid()) != owner_pid_) {
    return;
  }
  stop_requested_.store(true, std::memory_order_release);
  Wake();
  // The writer closes the file (or already did, for a signal). Stop() runs in the job's exit
  // path, so the wait is bounded: a writer stuck in write() (a hung network file system) must
  // not hang the job. The file then keeps what reached it, without a trailer.
  if (writer_thread_started_ && !pthread_equal(writer_thread_, pthread_self())) {
    timespec deadline{};
    clock_gettime(CLOCK_REALTIME, &deadline);  // pthread_timedjoin_np's clock.
    deadline.tv_sec += kStopJoinTimeoutS;
    const int join_error = pthread_timedjoin_np(writer_thread_, nullptr, &deadline);
    if (join_error != 0) {
      stopped_.store(true, std::memory_order_release);
      enabled_.Set(false);
      LUMOS_LOG(Warn,
                "the trace writer did not finish within %d s (%s); the job exits without waiting, "
                "and %s is left without its trailer",
                kStopJoinTimeoutS, std::strerror(join_error), trace_path().c_str());
      return;
    }
    writer_thread_started_ = false;
  }
  FinishTrace();  // Done by the writer already; here for a Stop() from the writer thread itself.
}

void Agent::FinishTrace() {
  if (stopped_.exchange(true)) return;
  // Sources flush first, while callbacks still record: CUPTI hands over its last buffers here.
  for (std::atomic<RecordSource*>& slot : sources_) {
    if (RecordSource* source = slot.load(std::memory_order_acquire)) {
      source->FlushBeforeFinalDrain();
    }
  }
  if (!windowed()) enabled_.Set(false);
  if (!cuda_injection_called_.load(std::memory_order_relaxed)) {
    for (schema::Channel channel :
         {schema::Channel::kCuptiActivity, schema::Channel::kCuptiCallback}) {
      if (!config_.channels.Has(channel)) continue;
      // No warning: a process that does not use CUDA (a data loader, a CPU-only tool) is
      // normal; the record is for readers wondering why there is no CUDA activity.
      ReportChannelFailure(channel, kNoCudaInjection, /*log_warning=*/false);
    }
  }
  if (windowed()) {
    // A window being captured is closed as usual (its end: now); between windows nothing is
    // written. The failures just reported reach that window's file: still pending, they are
    // written by its last drain (a file opened only now has the earlier ones from
    // all_failures_ first). Moving them to all_failures_ here lost them from a file already
    // open.
    FinishWindowsAtExit();
    enabled_.Set(false);
    running_.Set(false);
    return;
  }
  // Everything the rings hold, however much: nothing drains them after this. Records pushed by
  // callbacks that passed the flag check just before it turned off may still land after this
  // drain; they are lost with the process, as the design accepts at the edges.
  DrainOnce(SIZE_MAX);
  WriteClockSnapshot();
  if (FastClock::Get().running()) {
    LUMOS_LOG(Debug, "fast clock: largest error at a refinement %lld ns",
              static_cast<long long>(FastClock::Get().max_abs_error_ns()));
  }
  const schema::TrailerInfo trailer = CurrentTrailer();
  running_.Set(false);
  if (endpoint_) endpoint_->Stop();
  Status closed = writer_->Close(static_cast<uint64_t>(ReadMonotonicNs()), trailer);
  // One line per trace: the writer has said it already when an earlier flush failed.
  if (!closed.ok() && !writer_->warned()) {
    LUMOS_LOG(Warn, "closing the trace failed: %s", closed.message().c_str());
  }
  if (trailer.has_rank) AdoptCommunicatorRank(trailer.rank, trailer.world_size);
}

void Agent::AdoptCommunicatorRank(int32_t rank, int32_t size) {
  if (env_rank_.rank.has_value() && (*env_rank_.rank != rank || (env_rank_.world_size.has_value() &&
                                                                 *env_rank_.world_size != size))) {
    const std::string env_size =
        env_rank_.world_size.has_value() ? std::to_string(*env_rank_.world_size) : "?";
    LUMOS_LOG(Warn,
              "rank: the environment says %s=%d (world size %s), the NCCL world communicator says "
              "rank %d of %d; the trace's trailer and file name follow the communicator",
              env_rank_.source.c_str(), *env_rank_.rank, env_size.c_str(), rank, size);
  }
  if (env_rank_.rank == rank) return;  // The name is right already.
  RankInfo learned;
  learned.rank = rank;
  const std::string to =
      trace_dir_ + "/" + TraceFileName(config_.job_id, host_name_, owner_pid_, learned);
  const std::string why = RenameNoReplace(trace_path_, to);
  if (!why.empty()) {
    LUMOS_LOG(Warn, "rank %d from NCCL: the trace keeps its name %s, not renamed to %s: %s", rank,
              trace_path_.c_str(), to.c_str(), why.c_str());
    return;
  }
  renamed_path_ = to;
  renamed_.store(true, std::memory_order_release);  // Stop() may read it in another thread.
}

void Agent::DisableInForkChild() {
  // The child has no writer thread and must not touch the parent's file: it stays off.
  enabled_.Set(false);
  running_.Set(false);
  // A window armed in the parent must not open the gate at the child's next boundary.
  if (control::WindowController* windows = windows_.load(std::memory_order_acquire)) {
    windows->DisableInForkChild();
  }
  if (endpoint_) endpoint_->CloseInForkChild();
  stopped_.store(true, std::memory_order_relaxed);
}

}  // namespace lumos::agent
