#include "agent/core/agent_config.h"

#include <limits.h>  // PATH_MAX
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <span>
#include <utility>

#include "agent/core/thread_rings.h"

namespace lumos::agent {
namespace {

using internal::ParseDecimal;
using internal::ParseInt64;
using internal::ParseSizeBytes;
using internal::QuoteForLog;
using internal::ToLowerAscii;
using internal::TrimSpaces;

constexpr schema::Channel kAllChannels[] = {
    schema::Channel::kCuptiActivity, schema::Channel::kCuptiCallback, schema::Channel::kNcclPlugin,
    schema::Channel::kNcclWrappers,  schema::Channel::kNvtx,          schema::Channel::kCublas,
};

// Every variable the agent reads, and the names Lumos's own tools read (scripts/), so a name
// outside both is a typo to warn about. tests/agent/core/agent_config_test.cc checks the table
// against what ParseAgentConfig reads, README.md's table and scripts/.
constexpr const char* kKnownVariables[] = {
    "LUMOS_ENABLE",
    "LUMOS_OUTPUT_DIR",
    "LUMOS_CHANNELS",
    "LUMOS_RING_BYTES",
    "LUMOS_ARENA_BYTES",
    "LUMOS_CUPTI_BUFFER_BYTES",
    "LUMOS_CUPTI_BUFFERS",
    "LUMOS_CUPTI_LIBRARY",
    "LUMOS_NVTX_CHAIN",
    "LUMOS_FLUSH_INTERVAL_MS",
    "LUMOS_MAX_FILE_BYTES",
    "LUMOS_ZSTD_LEVEL",
    "LUMOS_JOB_ID",
    "LUMOS_LOG_LEVEL",
    "LUMOS_FLUSH_ON_SIGNALS",
    "LUMOS_CLOCK",
    "LUMOS_MODE",
    "LUMOS_PERIOD_S",
    "LUMOS_JITTER",
    "LUMOS_WINDOW_ITERATIONS",
    "LUMOS_WINDOW_S",
    "LUMOS_ITERATION_MARKER",
    "LUMOS_MAX_DISK",
    "LUMOS_MODEL" /* scripts/import-sizes.sh */,
};

// Edit distance (insertions, deletions, substitutions), for "did you mean" hints.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// One line naming every LUMOS_* variable set that the agent does not know ("" when none).
std::string UnknownVariablesWarning(const std::vector<std::string>& names) {
  std::string line;
  for (const std::string& name : names) {
    const bool known = std::any_of(std::begin(kKnownVariables), std::end(kKnownVariables),
                                   [&](const char* known_name) { return name == known_name; });
    if (known) continue;
    line += (line.empty() ? "" : ", ") + QuoteForLog(name);
    for (const char* known_name : kKnownVariables) {
      if (EditDistance(name, known_name) <= 2) {
        line += std::string(" (").append(known_name).append("?)");
        break;
      }
    }
  }
  if (line.empty()) return line;
  return "unknown variables ignored: " + line + " (the LUMOS_* list: README.md)";
}

// Reads variables and records one warning per bad one.
class EnvReader {
 public:
  EnvReader(const EnvLookup& env, std::vector<std::string>* warnings)
      : env_(env), warnings_(warnings) {}

  // The value with surrounding spaces removed; nullopt when unset or empty.
  std::optional<std::string> Get(const char* name) const {
    std::optional<std::string> value = env_(name);
    if (!value) return std::nullopt;
    std::string trimmed(TrimSpaces(*value));
    if (trimmed.empty()) return std::nullopt;
    return trimmed;
  }

  void Warn(const char* name, std::string_view value, std::string_view why,
            std::string_view used) const {
    std::string line = std::string(name) + "=" + QuoteForLog(value) + ": ";
    line.append(why).append("; using ").append(used);
    warnings_->push_back(std::move(line));
  }

  // A size in [min, max] (or exactly 0 when allow_zero).
  uint64_t Size(const char* name, uint64_t fallback, uint64_t min, uint64_t max,
                bool allow_zero = false) const {
    std::optional<std::string> text = Get(name);
    if (!text) return fallback;
    std::optional<uint64_t> value = ParseSizeBytes(*text);
    const std::string used = "the default " + std::to_string(fallback);
    if (!value) {
      Warn(name, *text, "not a size (digits, optionally followed by K, M, G or T)", used);
      return fallback;
    }
    if (allow_zero && *value == 0) return 0;
    if (*value < min || *value > max) {
      Warn(name, *text,
           "outside " + std::to_string(min) + ".." + std::to_string(max) + " bytes" +
               (allow_zero ? " (or 0)" : ""),
           used);
      return fallback;
    }
    return *value;
  }

  // Seconds with up to 3 decimals, returned in ms, in [min_ms, max_ms] (or exactly 0 when
  // allow_zero).
  uint64_t SecondsAsMs(const char* name, uint64_t fallback_ms, uint64_t min_ms, uint64_t max_ms,
                       bool allow_zero = false, std::string_view fallback_note = "") const {
    std::optional<std::string> text = Get(name);
    if (!text) return fallback_ms;
    std::optional<uint64_t> ms = ParseDecimal(*text, 3);
    const std::string used = "the default " + Thousandths(fallback_ms) + std::string(fallback_note);
    if (!ms) {
      Warn(name, *text, "not a number of seconds (digits, optionally with up to 3 decimals)", used);
      return fallback_ms;
    }
    if (allow_zero && *ms == 0) return 0;
    if (*ms < min_ms || *ms > max_ms) {
      Warn(name, *text,
           "outside " + Thousandths(min_ms) + ".." + Thousandths(max_ms) + " seconds" +
               (allow_zero ? " (or 0)" : ""),
           used);
      return fallback_ms;
    }
    return *ms;
  }

  // "1.5" for 1500: a value in thousandths as a decimal, without trailing zeros.
  static std::string Thousandths(uint64_t value) { return Fraction(value, 3); }
  static std::string Fraction(uint64_t value, int decimals) {
    uint64_t scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10;
    std::string text = std::to_string(value / scale);
    if (value % scale == 0) return text;
    std::string fraction = std::to_string(value % scale);
    fraction.insert(0, static_cast<size_t>(decimals) - fraction.size(), '0');
    while (fraction.back() == '0') fraction.pop_back();
    return text + "." + fraction;
  }

  int64_t Int(const char* name, int64_t fallback, int64_t min, int64_t max) const {
    std::optional<std::string> text = Get(name);
    if (!text) return fallback;
    std::optional<int64_t> value = ParseInt64(*text);
    const std::string used = "the default " + std::to_string(fallback);
    if (!value) {
      Warn(name, *text, "not an integer", used);
      return fallback;
    }
    if (*value < min || *value > max) {
      Warn(name, *text, "outside " + std::to_string(min) + ".." + std::to_string(max), used);
      return fallback;
    }
    return *value;
  }

 private:
  const EnvLookup& env_;
  std::vector<std::string>* warnings_;
};

std::optional<bool> ParseBool(std::string_view text) {
  std::string value = ToLowerAscii(text);
  if (value == "1" || value == "true" || value == "yes" || value == "on") return true;
  if (value == "0" || value == "false" || value == "no" || value == "off") return false;
  return std::nullopt;
}

std::optional<LogLevel> ParseLogLevel(std::string_view text) {
  std::string value = ToLowerAscii(text);
  if (value == "debug") return LogLevel::kDebug;
  if (value == "info") return LogLevel::kInfo;
  if (value == "warn" || value == "warning") return LogLevel::kWarn;
  if (value == "error") return LogLevel::kError;
  return std::nullopt;
}

std::optional<ChannelSet> ParseChannels(std::string_view text) {
  if (ToLowerAscii(text) == "all") return ChannelSet::All();
  ChannelSet set;
  while (true) {
    const size_t comma = text.find(',');
    const std::string name = ToLowerAscii(TrimSpaces(text.substr(0, comma)));
    const schema::Channel* found =
        std::find_if(std::begin(kAllChannels), std::end(kAllChannels),
                     [&](schema::Channel channel) { return ChannelName(channel) == name; });
    if (found == std::end(kAllChannels)) return std::nullopt;  // Also catches empty items.
    set.Add(*found);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return set;
}

std::optional<CaptureMode> ParseCaptureMode(std::string_view text) {
  const std::string value = ToLowerAscii(text);
  for (CaptureMode mode :
       {CaptureMode::kContinuous, CaptureMode::kPeriodic, CaptureMode::kOnDemand}) {
    if (value == CaptureModeName(mode)) return mode;
  }
  return std::nullopt;
}

bool IsValidIterationMarker(std::string_view text) {
  return text.size() <= AgentConfig::kMaxIterationMarkerBytes &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

// The capture mode and its window variables (issue 15). Each is checked whatever the mode, so a
// bad value is reported before someone switches the mode on.
void ReadCaptureWindows(const EnvReader& reader, AgentConfig* config) {
  if (std::optional<std::string> text = reader.Get("LUMOS_MODE")) {
    std::optional<CaptureMode> mode = ParseCaptureMode(*text);
    if (!mode) {
      reader.Warn("LUMOS_MODE", *text, "not continuous, periodic or on-demand",
                  "the default continuous");
    }
    config->mode = mode.value_or(CaptureMode::kContinuous);
  }
  config->period_ms = reader.SecondsAsMs("LUMOS_PERIOD_S", AgentConfig::kDefaultPeriodMs,
                                         AgentConfig::kMinPeriodMs, AgentConfig::kMaxPeriodMs);
  if (std::optional<std::string> text = reader.Get("LUMOS_JITTER")) {
    std::optional<uint64_t> ppm = ParseDecimal(*text, 6);
    if (ppm && *ppm <= AgentConfig::kMaxJitterPpm) {
      config->jitter_ppm = static_cast<uint32_t>(*ppm);
    } else {
      reader.Warn("LUMOS_JITTER", *text,
                  ppm ? "outside 0.." + EnvReader::Fraction(AgentConfig::kMaxJitterPpm, 6)
                      : "not a fraction of the period (digits, optionally with up to 6 decimals)",
                  "the default " + EnvReader::Fraction(AgentConfig::kDefaultJitterPpm, 6));
    }
  }
  config->window_iterations = static_cast<uint32_t>(
      reader.Int("LUMOS_WINDOW_ITERATIONS", AgentConfig::kDefaultWindowIterations,
                 AgentConfig::kMinWindowIterations, AgentConfig::kMaxWindowIterations));
  config->window_ms = reader.SecondsAsMs("LUMOS_WINDOW_S", 0, 1, AgentConfig::kMaxWindowMs,
                                         /*allow_zero=*/true, " (by iterations)");
  if (config->mode == CaptureMode::kPeriodic && config->window_ms >= config->period_ms) {
    // The next window would start before this one ends.
    reader.Warn("LUMOS_WINDOW_S", reader.Get("LUMOS_WINDOW_S").value_or(""),
                "not shorter than the period (" + EnvReader::Thousandths(config->period_ms) + " s)",
                "the default 0 (by iterations)");
    config->window_ms = 0;
  }
  if (std::optional<std::string> text = reader.Get("LUMOS_ITERATION_MARKER")) {
    if (IsValidIterationMarker(*text)) {
      config->iteration_marker = *text;
    } else {
      reader.Warn("LUMOS_ITERATION_MARKER", *text, "longer than 256 bytes or not printable ASCII",
                  std::string("the default '") + AgentConfig::kDefaultIterationMarker + "'");
    }
  }
  config->max_disk_bytes = reader.Size("LUMOS_MAX_DISK", 0, AgentConfig::kMinMaxDiskBytes,
                                       AgentConfig::kMaxMaxDiskBytes, /*allow_zero=*/true);
}

bool HasControlCharacters(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

bool IsValidJobId(std::string_view text) {
  return text.size() <= AgentConfig::kMaxJobIdBytes &&
         std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// LUMOS_JOB_ID, else the launcher's job id. A bad value is skipped with a warning.
std::string ReadJobId(const EnvReader& reader) {
  constexpr const char* kSources[] = {"LUMOS_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"};
  constexpr size_t kCount = sizeof(kSources) / sizeof(kSources[0]);
  for (size_t i = 0; i < kCount; ++i) {
    std::optional<std::string> value = reader.Get(kSources[i]);
    if (!value) continue;
    if (IsValidJobId(*value)) return *value;
    reader.Warn(kSources[i], *value,
                "not a job id (at most 128 printable ASCII bytes without spaces)",
                i + 1 < kCount ? std::string("the next source (") + kSources[i + 1] + ", ...)"
                               : std::string("an empty job id"));
  }
  return "";
}

}  // namespace

ChannelSet ChannelSet::All() {
  ChannelSet set;
  for (schema::Channel channel : kAllChannels) set.Add(channel);
  return set;
}

std::vector<schema::Channel> ChannelSet::ToVector() const {
  std::vector<schema::Channel> channels;
  for (schema::Channel channel : kAllChannels) {
    if (Has(channel)) channels.push_back(channel);
  }
  return channels;
}

std::string_view ChannelName(schema::Channel channel) {
  switch (channel) {
    case schema::Channel::kCuptiActivity:
      return "cupti_activity";
    case schema::Channel::kCuptiCallback:
      return "cupti_callback";
    case schema::Channel::kNcclPlugin:
      return "nccl_plugin";
    case schema::Channel::kNcclWrappers:
      return "nccl_wrappers";
    case schema::Channel::kNvtx:
      return "nvtx";
    case schema::Channel::kCublas:
      return "cublas";
    case schema::Channel::kUnspecified:
      break;
  }
  return "";
}

std::string_view CaptureModeName(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kContinuous:
      return "continuous";
    case CaptureMode::kPeriodic:
      return "periodic";
    case CaptureMode::kOnDemand:
      return "on-demand";
  }
  return "";
}

ParsedAgentConfig ParseAgentConfig(const EnvLookup& env, const std::vector<std::string>& names) {
  ParsedAgentConfig parsed;
  AgentConfig& config = parsed.config;
  EnvReader reader(env, &parsed.warnings);

  if (std::optional<std::string> text = reader.Get("LUMOS_ENABLE")) {
    std::optional<bool> enabled = ParseBool(*text);
    if (!enabled) reader.Warn("LUMOS_ENABLE", *text, "not 0 or 1", "the default 1");
    config.enabled = enabled.value_or(true);
  }
  if (!config.enabled) return parsed;  // Disabled: read nothing else, warn about nothing else.

  if (std::optional<std::string> text = reader.Get("LUMOS_LOG_LEVEL")) {
    std::optional<LogLevel> level = ParseLogLevel(*text);
    if (!level) {
      reader.Warn("LUMOS_LOG_LEVEL", *text, "not debug, info, warn or error", "the default info");
    }
    config.log_level = level.value_or(LogLevel::kInfo);
  }

  if (std::optional<std::string> text = reader.Get("LUMOS_OUTPUT_DIR")) {
    if (text->size() > AgentConfig::kMaxOutputDirBytes || HasControlCharacters(*text)) {
      reader.Warn("LUMOS_OUTPUT_DIR", *text,
                  "longer than 4095 bytes or contains control characters", "the default '.'");
    } else {
      config.output_dir = *text;
    }
  }

  if (std::optional<std::string> text = reader.Get("LUMOS_CHANNELS")) {
    std::optional<ChannelSet> channels = ParseChannels(*text);
    if (!channels) {
      reader.Warn("LUMOS_CHANNELS", *text,
                  "not \"all\" or a comma list of cupti_activity, cupti_callback, nccl_plugin, "
                  "nccl_wrappers, nvtx, cublas",
                  "the default all");
    }
    config.channels = channels.value_or(ChannelSet::All());
  }

  config.ring_bytes = internal::RoundDownToPowerOfTwo(
      reader.Size("LUMOS_RING_BYTES", AgentConfig::kDefaultRingBytes, AgentConfig::kMinRingBytes,
                  AgentConfig::kMaxRingBytes));

  // The arena must hold at least two threads' rings; the default holds at least four.
  const uint64_t per_thread = config.ring_bytes + ThreadRings::kControlBytes;
  const uint64_t default_arena = std::max(AgentConfig::kDefaultArenaBytes, 4 * per_thread);
  config.arena_bytes = reader.Size("LUMOS_ARENA_BYTES", default_arena, AgentConfig::kMinArenaBytes,
                                   AgentConfig::kMaxArenaBytes);
  if (config.arena_bytes < 2 * per_thread) {
    std::optional<std::string> text = reader.Get("LUMOS_ARENA_BYTES");
    reader.Warn("LUMOS_ARENA_BYTES", text.value_or(""),
                "holds fewer than 2 rings of " + std::to_string(config.ring_bytes) +
                    " bytes (LUMOS_RING_BYTES) plus their control blocks",
                "the default " + std::to_string(default_arena));
    config.arena_bytes = default_arena;
  }

  config.cupti_buffer_bytes =
      reader.Size("LUMOS_CUPTI_BUFFER_BYTES", AgentConfig::kDefaultCuptiBufferBytes,
                  AgentConfig::kMinCuptiBufferBytes, AgentConfig::kMaxCuptiBufferBytes) &
      ~uint64_t{7};  // CUPTI wants 8-byte multiples.
  config.cupti_buffer_count = static_cast<uint32_t>(
      reader.Int("LUMOS_CUPTI_BUFFERS", AgentConfig::kDefaultCuptiBuffers,
                 AgentConfig::kMinCuptiBuffers, AgentConfig::kMaxCuptiBuffers));
  if (std::optional<std::string> text = reader.Get("LUMOS_CUPTI_LIBRARY")) {
    if (text->size() > AgentConfig::kMaxOutputDirBytes || HasControlCharacters(*text)) {
      reader.Warn("LUMOS_CUPTI_LIBRARY", *text,
                  "longer than 4095 bytes or contains control characters", "the toolkit's paths");
    } else {
      config.cupti_library = *text;
    }
  }
  if (std::optional<std::string> text = reader.Get("LUMOS_NVTX_CHAIN")) {
    const std::string lower = ToLowerAscii(*text);
    if (lower == "off") {
      config.nvtx_chain = NvtxChain::kOff;
    } else if (lower == "cupti") {
      config.nvtx_chain = NvtxChain::kCupti;
    } else if (text->find('/') == std::string::npos ||
               text->size() > AgentConfig::kMaxOutputDirBytes || HasControlCharacters(*text)) {
      // A path must name a file: a bare word is far more likely a typo of "cupti" or "off"
      // than a library the loader would search for.
      reader.Warn("LUMOS_NVTX_CHAIN", *text,
                  "not off, cupti or a path (containing '/', at most 4095 bytes, no control "
                  "characters) to an NVTX injection library",
                  "the default off");
    } else {
      config.nvtx_chain = NvtxChain::kLibrary;
      config.nvtx_chain_library = *text;
    }
  }
  config.flush_interval_ms = static_cast<uint64_t>(
      reader.Int("LUMOS_FLUSH_INTERVAL_MS", AgentConfig::kDefaultFlushIntervalMs,
                 AgentConfig::kMinFlushIntervalMs, AgentConfig::kMaxFlushIntervalMs));
  config.max_file_bytes = reader.Size("LUMOS_MAX_FILE_BYTES", 0, AgentConfig::kMinMaxFileBytes,
                                      AgentConfig::kMaxMaxFileBytes, /*allow_zero=*/true);
  config.zstd_level =
      static_cast<int32_t>(reader.Int("LUMOS_ZSTD_LEVEL", AgentConfig::kDefaultZstdLevel,
                                      AgentConfig::kMinZstdLevel, AgentConfig::kMaxZstdLevel));
  config.job_id = ReadJobId(reader);
  if (std::optional<std::string> text = reader.Get("LUMOS_FLUSH_ON_SIGNALS")) {
    std::optional<bool> flush = ParseBool(*text);
    if (!flush) reader.Warn("LUMOS_FLUSH_ON_SIGNALS", *text, "not 0 or 1", "the default 1");
    config.flush_on_signals = flush.value_or(true);
  }
  if (std::optional<std::string> text = reader.Get("LUMOS_CLOCK")) {
    const std::string lower = ToLowerAscii(*text);
    if (lower == "monotonic") {
      config.tsc_clock = false;
    } else if (lower != "tsc") {
      reader.Warn("LUMOS_CLOCK", *text, "not tsc or monotonic", "the default tsc");
    }
  }
  ReadCaptureWindows(reader, &config);
  if (std::string unknown = UnknownVariablesWarning(names); !unknown.empty()) {
    parsed.warnings.push_back(std::move(unknown));
  }
  return parsed;
}

std::span<const char* const> KnownVariableNames() { return kKnownVariables; }

schema::CaptureConfigInfo ToCaptureConfigInfo(const AgentConfig& config) {
  schema::CaptureConfigInfo info;
  info.channels = config.channels.ToVector();
  info.ring_bytes = config.ring_bytes;
  info.activity_buffer_bytes = config.cupti_buffer_bytes;
  info.activity_buffer_count = config.cupti_buffer_count;
  info.flush_interval_ns = config.flush_interval_ms * 1'000'000;
  info.frame_bytes = AgentConfig::kFrameBytes;
  info.max_file_bytes = config.max_file_bytes;
  info.zstd_level = config.zstd_level;
  return info;
}

schema::WriterOptions ToWriterOptions(const AgentConfig& config) {
  schema::WriterOptions options;
  options.frame_bytes = AgentConfig::kFrameBytes;
  options.flush_interval_ns = config.flush_interval_ms * 1'000'000;
  options.zstd_level = config.zstd_level;
  options.max_file_bytes = config.max_file_bytes;
  options.header_in_own_frame = true;
  return options;
}

std::string AbsoluteDirectory(const std::string& dir) {
  if (!dir.empty() && dir[0] == '/') return dir;
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return dir;
  return dir.empty() || dir == "." ? std::string(cwd) : std::string(cwd) + "/" + dir;
}

}  // namespace lumos::agent
