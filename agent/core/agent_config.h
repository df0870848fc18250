// Design: the agent's configuration, read once at start from LUMOS_* environment variables into
// an immutable, validated AgentConfig (STYLE.md 6.3). Every value is checked (STYLE.md 3.4); a
// bad one produces exactly one warning line naming the variable, the bad value and the default
// used instead, and the default is used. Parsing never logs: the warnings are returned and the
// caller logs them (once, after LUMOS_LOG_LEVEL is applied). An empty value counts as unset.
// With LUMOS_ENABLE=0 nothing else is read: the agent stays out of the process entirely.
//
// Variables, defaults and bounds (sizes take K/M/G/T binary suffixes, optionally with B or iB):
//   LUMOS_ENABLE              1            0/1, false/true, no/yes, off/on
//   LUMOS_OUTPUT_DIR          "."          at most 4095 bytes, no control characters
//   LUMOS_CHANNELS            all          comma list of cupti_activity, cupti_callback,
//                                          nccl_plugin, nccl_wrappers, nvtx, cublas; or "all"
//   LUMOS_RING_BYTES          1M           64K..1G, rounded down to a power of two
//   LUMOS_ARENA_BYTES         max(64M, 4 rings)  1M..64G, and at least 2 rings
//   LUMOS_CUPTI_BUFFER_BYTES  8M           64K..1G, rounded down to a multiple of 8
//   LUMOS_CUPTI_BUFFERS       16           2..1024
//   LUMOS_CUPTI_LIBRARY       ""           libcupti.so.13 to load when none is in the process and
//                                          the loader finds none ("" = the CUDA toolkit's paths);
//                                          at most 4095 bytes, no control characters
//   LUMOS_NVTX_CHAIN          off          off, cupti, or a path (with a '/') to another NVTX
//                                          injection library the agent chains to: it keeps
//                                          receiving every NVTX call (agent/nvtx/nvtx_chain.h);
//                                          cupti = the libcupti.so.13 found as for CUPTI above;
//                                          at most 4095 bytes, no control characters
//   LUMOS_FLUSH_INTERVAL_MS   1000         10..60000
//   LUMOS_MAX_FILE_BYTES      0 (no limit) 0 or 1M..1P
//   LUMOS_ZSTD_LEVEL          3            1..19
//   LUMOS_JOB_ID              SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, else ""; at most 128
//                                          printable ASCII bytes without spaces
//   LUMOS_LOG_LEVEL           info         debug, info, warn(ing), error
//   LUMOS_FLUSH_ON_SIGNALS    1            0/1 as LUMOS_ENABLE: SIGTERM/SIGINT flush the trace
//                                          (agent/runtime/signal_flush.h)
//   LUMOS_CLOCK               tsc          tsc (records timed from the TSC, calibrated to
//                                          CLOCK_MONOTONIC; clock_gettime where the TSC is not
//                                          invariant) or monotonic (clock_gettime always)
//   LUMOS_MODE                continuous   continuous (one file for the whole run), periodic
//                                          (a window every LUMOS_PERIOD_S) or on-demand (a
//                                          window when asked: lumos-ctl)
//   LUMOS_PERIOD_S            600          periodic: seconds between window starts, 1..604800,
//                                          up to 3 decimals (kept in ms)
//   LUMOS_JITTER              0.1          periodic: random shift of each start, as a fraction
//                                          of the period (a fleet does not fire together),
//                                          0..0.5, up to 6 decimals (kept in millionths)
//   LUMOS_WINDOW_ITERATIONS   3            a window's length in whole iterations, 1..10000
//   LUMOS_WINDOW_S            0            a window's length in seconds instead (0 = by
//                                          iterations), 0..3600, up to 3 decimals; periodic:
//                                          shorter than the period
//   LUMOS_ITERATION_MARKER    ProfilerStep*  the NVTX or host range name that marks an iteration:
//                                          a glob (* any run, ? any byte), at most 256
//                                          printable ASCII bytes
//   LUMOS_MAX_DISK            0 (no quota) 0 or 1M..1P: window files in LUMOS_OUTPUT_DIR above it
//                                          are deleted, oldest windows first
//                                          (agent/control/window_output.h)
// Word values (LUMOS_ENABLE, LUMOS_CHANNELS, LUMOS_LOG_LEVEL, LUMOS_NVTX_CHAIN, LUMOS_MODE, ...)
// are case-insensitive. Any other LUMOS_* name set gives one warning (a likely typo).
// Threading: call once, at start, before the agent's threads exist.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/core/env_lookup.h"
#include "base/logging.h"
#include "schema/enums.h"
#include "schema/writer/trace_events.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::agent {

// A set of capture channels (schema::Channel values other than kUnspecified).
class ChannelSet {
 public:
  constexpr ChannelSet() = default;
  static ChannelSet All();

  bool Has(schema::Channel channel) const { return (bits_ & Bit(channel)) != 0; }
  void Add(schema::Channel channel) { bits_ |= Bit(channel); }
  bool empty() const { return bits_ == 0; }
  // In enum order.
  std::vector<schema::Channel> ToVector() const;
  bool operator==(const ChannelSet& other) const = default;

 private:
  static constexpr uint32_t Bit(schema::Channel channel) {
    return static_cast<uint32_t>(channel) < 32 ? 1u << static_cast<uint32_t>(channel) : 0;
  }
  uint32_t bits_ = 0;
};

// The name LUMOS_CHANNELS uses for a channel ("cupti_activity"); "" for kUnspecified.
std::string_view ChannelName(schema::Channel channel);

// Which NVTX injection library the agent chains to (LUMOS_NVTX_CHAIN).
enum class NvtxChain {
  kOff,      // The agent is the only NVTX injection.
  kCupti,    // libcupti.so.13, found as the CUPTI channel finds it (CUPTI's MARKER activity).
  kLibrary,  // AgentConfig::nvtx_chain_library.
};

// How the agent captures (LUMOS_MODE): the whole run, or windows of it.
enum class CaptureMode {
  kContinuous,  // One file from start to exit.
  kPeriodic,    // A window every period (with jitter).
  kOnDemand,    // A window when a trigger asks for one.
};

// The name LUMOS_MODE uses for a mode ("on-demand").
std::string_view CaptureModeName(CaptureMode mode);

struct AgentConfig {
  static constexpr uint64_t kDefaultRingBytes = uint64_t{1} << 20;
  static constexpr uint64_t kMinRingBytes = uint64_t{64} << 10;
  static constexpr uint64_t kMaxRingBytes = uint64_t{1} << 30;
  static constexpr uint64_t kDefaultArenaBytes = uint64_t{64} << 20;
  static constexpr uint64_t kMinArenaBytes = uint64_t{1} << 20;
  static constexpr uint64_t kMaxArenaBytes = uint64_t{64} << 30;
  static constexpr uint64_t kDefaultCuptiBufferBytes = uint64_t{8} << 20;
  static constexpr uint64_t kMinCuptiBufferBytes = uint64_t{64} << 10;
  static constexpr uint64_t kMaxCuptiBufferBytes = uint64_t{1} << 30;
  static constexpr uint32_t kDefaultCuptiBuffers = 16;
  static constexpr uint32_t kMinCuptiBuffers = 2;
  static constexpr uint32_t kMaxCuptiBuffers = 1024;
  static constexpr uint64_t kDefaultFlushIntervalMs = 1000;
  static constexpr uint64_t kMinFlushIntervalMs = 10;
  static constexpr uint64_t kMaxFlushIntervalMs = 60000;
  static constexpr uint64_t kMinMaxFileBytes = uint64_t{1} << 20;
  static constexpr uint64_t kMaxMaxFileBytes = uint64_t{1} << 50;
  static constexpr int32_t kDefaultZstdLevel = 3;
  static constexpr int32_t kMinZstdLevel = 1;
  static constexpr int32_t kMaxZstdLevel = 19;
  static constexpr uint64_t kDefaultPeriodMs = 600'000;
  static constexpr uint64_t kMinPeriodMs = 1'000;
  static constexpr uint64_t kMaxPeriodMs = 604'800'000;   // A week.
  static constexpr uint32_t kDefaultJitterPpm = 100'000;  // 0.1 of the period.
  static constexpr uint32_t kMaxJitterPpm = 500'000;
  static constexpr uint32_t kDefaultWindowIterations = 3;
  static constexpr uint32_t kMinWindowIterations = 1;
  static constexpr uint32_t kMaxWindowIterations = 10'000;
  static constexpr uint64_t kMaxWindowMs = 3'600'000;
  static constexpr char kDefaultIterationMarker[] = "ProfilerStep*";
  static constexpr size_t kMaxIterationMarkerBytes = 256;
  static constexpr uint64_t kMinMaxDiskBytes = uint64_t{1} << 20;
  static constexpr uint64_t kMaxMaxDiskBytes = uint64_t{1} << 50;
  static constexpr size_t kMaxOutputDirBytes = 4095;
  static constexpr size_t kMaxJobIdBytes = 128;
  // Frame flush by size: fixed (1 MiB keeps zstd's ratio while bounding a crash's loss).
  static constexpr uint64_t kFrameBytes = uint64_t{1} << 20;

  bool enabled = true;
  std::string output_dir = ".";
  ChannelSet channels = ChannelSet::All();
  uint64_t ring_bytes = kDefaultRingBytes;
  uint64_t arena_bytes = kDefaultArenaBytes;
  uint64_t cupti_buffer_bytes = kDefaultCuptiBufferBytes;
  uint32_t cupti_buffer_count = kDefaultCuptiBuffers;
  std::string cupti_library;  // LUMOS_CUPTI_LIBRARY; "" = agent/cupti/cupti_api.h's paths.
  NvtxChain nvtx_chain = NvtxChain::kOff;
  std::string nvtx_chain_library;  // The path, for NvtxChain::kLibrary only.
  uint64_t flush_interval_ms = kDefaultFlushIntervalMs;
  uint64_t max_file_bytes = 0;  // 0 = unlimited.
  int32_t zstd_level = kDefaultZstdLevel;
  std::string job_id;
  LogLevel log_level = LogLevel::kInfo;
  bool flush_on_signals = true;  // LUMOS_FLUSH_ON_SIGNALS (agent/runtime/signal_flush.h).
  bool tsc_clock = true;         // LUMOS_CLOCK=tsc (agent/core/fast_clock.h); false: monotonic.
  CaptureMode mode = CaptureMode::kContinuous;  // LUMOS_MODE.
  uint64_t period_ms = kDefaultPeriodMs;        // LUMOS_PERIOD_S (periodic).
  uint32_t jitter_ppm = kDefaultJitterPpm;      // LUMOS_JITTER, in millionths of the period.
  uint32_t window_iterations = kDefaultWindowIterations;  // LUMOS_WINDOW_ITERATIONS.
  uint64_t window_ms = 0;  // LUMOS_WINDOW_S; 0 = the window lasts window_iterations.
  std::string iteration_marker = kDefaultIterationMarker;  // LUMOS_ITERATION_MARKER (a glob).
  uint64_t max_disk_bytes = 0;                             // LUMOS_MAX_DISK; 0 = no quota.

  bool operator==(const AgentConfig& other) const = default;
};

struct ParsedAgentConfig {
  AgentConfig config;
  std::vector<std::string> warnings;  // One line per bad variable, for the caller to log.
};

// `names`: the LUMOS_* variables set (ProcessEnvNames); one warning line lists those the agent
// does not know (a misspelt name is otherwise silently ignored), with the known name closest
// to each.
ParsedAgentConfig ParseAgentConfig(const EnvLookup& env,
                                   const std::vector<std::string>& names = {});

// Every LUMOS_* name that draws no unknown-variable warning: those ParseAgentConfig reads (the
// list above; README.md's table), then those Lumos's own tools read (scripts/).
std::span<const char* const> KnownVariableNames();

// An output directory made absolute from the current directory ("" and "." are the current
// directory itself); as given when that cannot be read. The agent and lumos-run resolve it
// before the job can change directory, so a relative LUMOS_OUTPUT_DIR keeps meaning where it
// was set.
std::string AbsoluteDirectory(const std::string& dir);

// The header's CaptureConfig: every enabled channel listed as started (the agent moves those
// that fail to channels_failed).
schema::CaptureConfigInfo ToCaptureConfigInfo(const AgentConfig& config);
schema::WriterOptions ToWriterOptions(const AgentConfig& config);

}  // namespace lumos::agent
