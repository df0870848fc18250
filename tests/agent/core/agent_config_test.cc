// ParseAgentConfig: every variable with good and bad values, suffixes and bounds, exactly one
// warning per bad variable, unknown LUMOS_* names, and the disabled agent. The variables are the
// config's own table (KnownVariableNames): each one it reads is documented in README.md and has
// a bad value here, and each one it does not read is a tool's (scripts/).
#include "agent/core/agent_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agent/core/thread_rings.h"
#include "tests/testing/param_names.h"

namespace lumos::agent {
namespace {

ParsedAgentConfig Parse(std::map<std::string, std::string> env) {
  return ParseAgentConfig(MapEnvLookup(std::move(env)));
}

// The names a parse asks the environment for (nothing set: every variable is read).
std::set<std::string> VariablesRead() {
  std::set<std::string> read;
  ParseAgentConfig([&read](const char* name) -> std::optional<std::string> {
    if (std::string_view(name).rfind("LUMOS_", 0) == 0) read.insert(name);
    return std::nullopt;
  });
  return read;
}

// The variables of README.md's `lumos-run` option table (its second column).
std::set<std::string> VariablesInTheReadme() {
  std::ifstream in(std::string(LUMOS_SOURCE_DIR) + "/README.md");
  std::set<std::string> variables;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `lumos-run` option | variable |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    // Cells split at '|' but not at an escaped "\|" (`off\|cupti\|PATH`).
    std::vector<std::string> cells(1);
    for (size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        cells.emplace_back();
      } else {
        cells.back() += line[i];
      }
    }
    if (cells.size() < 2) continue;
    std::string cell = cells[1];
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    if (cell.size() > 2 && cell.front() == '`' && cell.back() == '`') {
      variables.insert(cell.substr(1, cell.size() - 2));
    }
  }
  return variables;
}

// Whether any file under scripts/ names `variable`.
bool AScriptReads(const std::string& variable) {
  namespace fs = std::filesystem;
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(fs::path(LUMOS_SOURCE_DIR) / "scripts")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find(variable) != std::string::npos) return true;
  }
  return false;
}

TEST(AgentConfigTest, AbsoluteDirectoryStartsFromTheCurrentOne) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string here = cwd;
  EXPECT_EQ(AbsoluteDirectory("/traces/run"), "/traces/run");
  EXPECT_EQ(AbsoluteDirectory("."), here);
  EXPECT_EQ(AbsoluteDirectory(""), here);
  EXPECT_EQ(AbsoluteDirectory("run/a"), here + "/run/a");
}

TEST(AgentConfigTest, DefaultsWithoutVariables) {
  ParsedAgentConfig parsed = Parse({});
  EXPECT_TRUE(parsed.warnings.empty());
  const AgentConfig& c = parsed.config;
  EXPECT_EQ(c, AgentConfig());
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.output_dir, ".");
  EXPECT_EQ(c.channels, ChannelSet::All());
  EXPECT_EQ(c.channels.ToVector().size(), 6u);
  EXPECT_TRUE(c.channels.Has(schema::Channel::kCublas));  // "all" includes the GEMM wrappers.
  EXPECT_EQ(c.ring_bytes, 1u << 20);
  EXPECT_EQ(c.arena_bytes, 64u << 20);
  EXPECT_EQ(c.cupti_buffer_bytes, 8u << 20);
  EXPECT_EQ(c.cupti_buffer_count, 16u);
  EXPECT_EQ(c.flush_interval_ms, 1000u);
  EXPECT_EQ(c.max_file_bytes, 0u);
  EXPECT_EQ(c.zstd_level, 3);
  EXPECT_EQ(c.job_id, "");
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  EXPECT_EQ(c.nvtx_chain, NvtxChain::kOff);
  EXPECT_EQ(c.nvtx_chain_library, "");
  EXPECT_EQ(c.mode, CaptureMode::kContinuous);
  EXPECT_EQ(c.period_ms, 600'000u);
  EXPECT_EQ(c.jitter_ppm, 100'000u);
  EXPECT_EQ(c.window_iterations, 3u);
  EXPECT_EQ(c.window_ms, 0u);
  EXPECT_EQ(c.iteration_marker, "ProfilerStep*");
  EXPECT_EQ(c.max_disk_bytes, 0u);
}

TEST(AgentConfigTest, ReadsEveryVariable) {
  ParsedAgentConfig parsed = Parse({
      {"LUMOS_ENABLE", "yes"},
      {"LUMOS_OUTPUT_DIR", "/scratch/traces"},
      {"LUMOS_CHANNELS", " NVTX , cupti_callback"},
      {"LUMOS_RING_BYTES", "256KiB"},
      {"LUMOS_ARENA_BYTES", "16M"},
      {"LUMOS_CUPTI_BUFFER_BYTES", "4m"},
      {"LUMOS_CUPTI_BUFFERS", "32"},
      {"LUMOS_CUPTI_LIBRARY", "/opt/cuda/lib64/libcupti.so.13"},
      {"LUMOS_FLUSH_INTERVAL_MS", "250"},
      {"LUMOS_MAX_FILE_BYTES", "10G"},
      {"LUMOS_ZSTD_LEVEL", "19"},
      {"LUMOS_JOB_ID", "job-42"},
      {"LUMOS_LOG_LEVEL", "DEBUG"},
      {"LUMOS_FLUSH_ON_SIGNALS", "0"},
      {"LUMOS_NVTX_CHAIN", "/opt/tools/libnvtx_tool.so"},
      {"LUMOS_CLOCK", "monotonic"},
      {"LUMOS_MODE", "Periodic"},
      {"LUMOS_PERIOD_S", "90.5"},
      {"LUMOS_JITTER", "0.25"},
      {"LUMOS_WINDOW_ITERATIONS", "10"},
      {"LUMOS_WINDOW_S", "2.125"},
      {"LUMOS_ITERATION_MARKER", "train step ?"},
      {"LUMOS_MAX_DISK", "20G"},
  });
  EXPECT_TRUE(parsed.warnings.empty()) << parsed.warnings.front();
  const AgentConfig& c = parsed.config;
  EXPECT_TRUE(c.enabled);
  EXPECT_EQ(c.output_dir, "/scratch/traces");
  EXPECT_TRUE(c.channels.Has(schema::Channel::kNvtx));
  EXPECT_TRUE(c.channels.Has(schema::Channel::kCuptiCallback));
  EXPECT_FALSE(c.channels.Has(schema::Channel::kCuptiActivity));
  EXPECT_EQ(c.channels.ToVector(), (std::vector<schema::Channel>{schema::Channel::kCuptiCallback,
                                                                 schema::Channel::kNvtx}));
  EXPECT_EQ(c.ring_bytes, 256u << 10);
  EXPECT_EQ(c.arena_bytes, 16u << 20);
  EXPECT_EQ(c.cupti_buffer_bytes, 4u << 20);
  EXPECT_EQ(c.cupti_buffer_count, 32u);
  EXPECT_EQ(c.cupti_library, "/opt/cuda/lib64/libcupti.so.13");
  EXPECT_EQ(c.flush_interval_ms, 250u);
  EXPECT_EQ(c.max_file_bytes, uint64_t{10} << 30);
  EXPECT_EQ(c.zstd_level, 19);
  EXPECT_EQ(c.job_id, "job-42");
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_FALSE(c.flush_on_signals);
  EXPECT_EQ(c.nvtx_chain, NvtxChain::kLibrary);
  EXPECT_EQ(c.nvtx_chain_library, "/opt/tools/libnvtx_tool.so");
  EXPECT_FALSE(c.tsc_clock);
  EXPECT_EQ(c.mode, CaptureMode::kPeriodic);
  EXPECT_EQ(c.period_ms, 90'500u);
  EXPECT_EQ(c.jitter_ppm, 250'000u);
  EXPECT_EQ(c.window_iterations, 10u);
  EXPECT_EQ(c.window_ms, 2'125u);
  EXPECT_EQ(c.iteration_marker, "train step ?");
  EXPECT_EQ(c.max_disk_bytes, uint64_t{20} << 30);
}

TEST(AgentConfigTest, CaptureModesAndWindowBounds) {
  for (CaptureMode mode :
       {CaptureMode::kContinuous, CaptureMode::kPeriodic, CaptureMode::kOnDemand}) {
    ParsedAgentConfig parsed = Parse({{"LUMOS_MODE", std::string(CaptureModeName(mode))}});
    EXPECT_TRUE(parsed.warnings.empty()) << CaptureModeName(mode);
    EXPECT_EQ(parsed.config.mode, mode);
  }
  EXPECT_EQ(CaptureModeName(CaptureMode::kOnDemand), "on-demand");
  EXPECT_EQ(Parse({{"LUMOS_MODE", "ON-DEMAND"}}).config.mode, CaptureMode::kOnDemand);

  ParsedAgentConfig low = Parse({{"LUMOS_PERIOD_S", "1"},
                                 {"LUMOS_JITTER", "0"},
                                 {"LUMOS_WINDOW_ITERATIONS", "1"},
                                 {"LUMOS_WINDOW_S", "0.001"},
                                 {"LUMOS_ITERATION_MARKER", "*"},
                                 {"LUMOS_MAX_DISK", "1M"}});
  EXPECT_TRUE(low.warnings.empty()) << low.warnings.front();
  EXPECT_EQ(low.config.period_ms, 1000u);
  EXPECT_EQ(low.config.jitter_ppm, 0u);
  EXPECT_EQ(low.config.window_iterations, 1u);
  EXPECT_EQ(low.config.window_ms, 1u);
  EXPECT_EQ(low.config.iteration_marker, "*");
  EXPECT_EQ(low.config.max_disk_bytes, 1u << 20);

  ParsedAgentConfig high = Parse({{"LUMOS_PERIOD_S", "604800"},
                                  {"LUMOS_JITTER", "0.5"},
                                  {"LUMOS_WINDOW_ITERATIONS", "10000"},
                                  {"LUMOS_WINDOW_S", "3600"},
                                  {"LUMOS_ITERATION_MARKER", std::string(256, 'm')},
                                  {"LUMOS_MAX_DISK", "1024T"}});
  EXPECT_TRUE(high.warnings.empty()) << high.warnings.front();
  EXPECT_EQ(high.config.period_ms, 604'800'000u);
  EXPECT_EQ(high.config.jitter_ppm, 500'000u);
  EXPECT_EQ(high.config.window_iterations, 10000u);
  EXPECT_EQ(high.config.window_ms, 3'600'000u);
  EXPECT_EQ(high.config.iteration_marker.size(), 256u);
  EXPECT_EQ(high.config.max_disk_bytes, uint64_t{1} << 50);
  // 0 is the default of both: by iterations, no quota.
  EXPECT_EQ(Parse({{"LUMOS_WINDOW_S", "0.000"}, {"LUMOS_MAX_DISK", "0"}}).config, AgentConfig());
}

// A periodic window must end before the next one starts; other modes have no period.
TEST(AgentConfigTest, APeriodicWindowIsShorterThanThePeriod) {
  ParsedAgentConfig parsed =
      Parse({{"LUMOS_MODE", "periodic"}, {"LUMOS_PERIOD_S", "60"}, {"LUMOS_WINDOW_S", "60"}});
  EXPECT_EQ(parsed.warnings, std::vector<std::string>{"LUMOS_WINDOW_S='60': not shorter than the "
                                                      "period (60 s); using the default 0 (by "
                                                      "iterations)"});
  EXPECT_EQ(parsed.config.window_ms, 0u);
  EXPECT_EQ(parsed.config.period_ms, 60'000u);
  ParsedAgentConfig shorter =
      Parse({{"LUMOS_MODE", "periodic"}, {"LUMOS_PERIOD_S", "60"}, {"LUMOS_WINDOW_S", "59.999"}});
  EXPECT_TRUE(shorter.warnings.empty());
  EXPECT_EQ(shorter.config.window_ms, 59'999u);
  ParsedAgentConfig on_demand =
      Parse({{"LUMOS_MODE", "on-demand"}, {"LUMOS_PERIOD_S", "60"}, {"LUMOS_WINDOW_S", "120"}});
  EXPECT_TRUE(on_demand.warnings.empty());
  EXPECT_EQ(on_demand.config.window_ms, 120'000u);
}

// The warnings' exact text: the reason and the default, as the agent logs them.
TEST(AgentConfigTest, WindowWarningsNameTheBoundsAndTheDefault) {
  const std::pair<std::map<std::string, std::string>, std::string> cases[] = {
      {{{"LUMOS_MODE", "sometimes"}},
       "LUMOS_MODE='sometimes': not continuous, periodic or on-demand; using the default "
       "continuous"},
      {{{"LUMOS_PERIOD_S", "0.5"}},
       "LUMOS_PERIOD_S='0.5': outside 1..604800 seconds; using the default 600"},
      {{{"LUMOS_PERIOD_S", "10m"}},
       "LUMOS_PERIOD_S='10m': not a number of seconds (digits, optionally with up to 3 "
       "decimals); using the default 600"},
      {{{"LUMOS_JITTER", "0.75"}}, "LUMOS_JITTER='0.75': outside 0..0.5; using the default 0.1"},
      {{{"LUMOS_JITTER", "10%"}},
       "LUMOS_JITTER='10%': not a fraction of the period (digits, optionally with up to 6 "
       "decimals); using the default 0.1"},
      {{{"LUMOS_WINDOW_ITERATIONS", "0"}},
       "LUMOS_WINDOW_ITERATIONS='0': outside 1..10000; using the default 3"},
      {{{"LUMOS_WINDOW_S", "3600.5"}},
       "LUMOS_WINDOW_S='3600.5': outside 0.001..3600 seconds (or 0); using the default 0 (by "
       "iterations)"},
      {{{"LUMOS_ITERATION_MARKER", "step\x01"}},
       "LUMOS_ITERATION_MARKER='step\\x01': longer than 256 bytes or not printable ASCII; "
       "using the default 'ProfilerStep*'"},
      {{{"LUMOS_MAX_DISK", "512K"}},
       "LUMOS_MAX_DISK='512K': outside 1048576..1125899906842624 bytes (or 0); using the "
       "default 0"},
  };
  for (const auto& [env, warning] : cases) {
    EXPECT_EQ(Parse(env).warnings, std::vector<std::string>{warning});
  }
}

TEST(AgentConfigTest, NvtxChainTakesCuptiOffOrAPath) {
  EXPECT_EQ(Parse({{"LUMOS_NVTX_CHAIN", "CUPTI"}}).config.nvtx_chain, NvtxChain::kCupti);
  EXPECT_EQ(Parse({{"LUMOS_NVTX_CHAIN", "off"}}).config, AgentConfig());
  ParsedAgentConfig relative = Parse({{"LUMOS_NVTX_CHAIN", "./libtool.so"}});
  EXPECT_TRUE(relative.warnings.empty());
  EXPECT_EQ(relative.config.nvtx_chain, NvtxChain::kLibrary);
  EXPECT_EQ(relative.config.nvtx_chain_library, "./libtool.so");
  // Only the path is kept: "cupti" needs none.
  EXPECT_EQ(Parse({{"LUMOS_NVTX_CHAIN", "cupti"}}).config.nvtx_chain_library, "");
}

TEST(AgentConfigTest, AcceptsBoundsAndRoundsSizes) {
  ParsedAgentConfig low = Parse({{"LUMOS_RING_BYTES", "64K"},
                                 {"LUMOS_ARENA_BYTES", "1M"},
                                 {"LUMOS_CUPTI_BUFFER_BYTES", "65541"},
                                 {"LUMOS_CUPTI_BUFFERS", "2"},
                                 {"LUMOS_FLUSH_INTERVAL_MS", "10"},
                                 {"LUMOS_MAX_FILE_BYTES", "1M"},
                                 {"LUMOS_ZSTD_LEVEL", "1"}});
  EXPECT_TRUE(low.warnings.empty()) << low.warnings.front();
  EXPECT_EQ(low.config.ring_bytes, 64u << 10);
  EXPECT_EQ(low.config.arena_bytes, 1u << 20);
  EXPECT_EQ(low.config.cupti_buffer_bytes, 65536u);  // Rounded down to a multiple of 8.
  EXPECT_EQ(low.config.cupti_buffer_count, 2u);
  EXPECT_EQ(low.config.flush_interval_ms, 10u);
  EXPECT_EQ(low.config.max_file_bytes, 1u << 20);
  EXPECT_EQ(low.config.zstd_level, 1);

  ParsedAgentConfig high = Parse({{"LUMOS_RING_BYTES", "1G"},
                                  {"LUMOS_ARENA_BYTES", "64G"},
                                  {"LUMOS_CUPTI_BUFFER_BYTES", "1G"},
                                  {"LUMOS_CUPTI_BUFFERS", "1024"},
                                  {"LUMOS_FLUSH_INTERVAL_MS", "60000"},
                                  {"LUMOS_MAX_FILE_BYTES", "1024T"}});
  EXPECT_TRUE(high.warnings.empty()) << high.warnings.front();
  EXPECT_EQ(high.config.ring_bytes, 1u << 30);
  EXPECT_EQ(high.config.arena_bytes, uint64_t{64} << 30);
  EXPECT_EQ(high.config.max_file_bytes, uint64_t{1} << 50);

  // Not a power of two: rounded down, never more memory than asked for.
  EXPECT_EQ(Parse({{"LUMOS_RING_BYTES", "300K"}}).config.ring_bytes, 256u << 10);
  EXPECT_EQ(Parse({{"LUMOS_RING_BYTES", "1000000"}}).config.ring_bytes, 512u << 10);
  // A large ring raises the default arena to four rings.
  ParsedAgentConfig big = Parse({{"LUMOS_RING_BYTES", "512M"}});
  EXPECT_TRUE(big.warnings.empty());
  EXPECT_EQ(big.config.arena_bytes, 4 * ((512u << 20) + ThreadRings::kControlBytes));
}

TEST(AgentConfigTest, EmptyValuesCountAsUnset) {
  ParsedAgentConfig parsed =
      Parse({{"LUMOS_RING_BYTES", ""}, {"LUMOS_CHANNELS", "  "}, {"LUMOS_ENABLE", ""}});
  EXPECT_TRUE(parsed.warnings.empty());
  EXPECT_EQ(parsed.config, AgentConfig());
}

struct BadValue {
  const char* name;
  std::string value;
  const char* used;  // What the warning must say is used instead.
};

class AgentConfigBadValueTest : public ::testing::TestWithParam<BadValue> {};

TEST_P(AgentConfigBadValueTest, WarnsOnceAndUsesTheDefault) {
  const BadValue& bad = GetParam();
  ParsedAgentConfig parsed = Parse({{bad.name, bad.value}});
  ASSERT_EQ(parsed.warnings.size(), 1u);
  const std::string& line = parsed.warnings[0];
  EXPECT_EQ(line.rfind(std::string(bad.name) + "=" + internal::QuoteForLog(bad.value), 0), 0u)
      << line;
  EXPECT_NE(line.find(std::string("; using ") + bad.used), std::string::npos) << line;
  EXPECT_EQ(parsed.config, AgentConfig()) << line;
}

// At least one case per variable the agent reads (EveryVariableIsReadKnownDocumentedAndTested).
const BadValue kBadValues[] = {
    BadValue{"LUMOS_ENABLE", "maybe", "the default 1"},
    BadValue{"LUMOS_LOG_LEVEL", "loud", "the default info"},
    BadValue{"LUMOS_OUTPUT_DIR", "a\nb", "the default '.'"},
    BadValue{"LUMOS_CUPTI_LIBRARY", "lib\ncupti", "the toolkit's paths"},
    BadValue{"LUMOS_OUTPUT_DIR", std::string(5000, 'd'), "the default '.'"},
    BadValue{"LUMOS_CHANNELS", "nvtx,bogus", "the default all"},
    BadValue{"LUMOS_CHANNELS", "nvtx,,cupti_activity", "the default all"},
    BadValue{"LUMOS_CHANNELS", ",", "the default all"},
    BadValue{"LUMOS_RING_BYTES", "12X", "the default 1048576"},
    BadValue{"LUMOS_RING_BYTES", "32K", "the default 1048576"},
    BadValue{"LUMOS_RING_BYTES", "2G", "the default 1048576"},
    BadValue{"LUMOS_ARENA_BYTES", "lots", "the default 67108864"},
    BadValue{"LUMOS_ARENA_BYTES", "512K", "the default 67108864"},
    BadValue{"LUMOS_ARENA_BYTES", "65G", "the default 67108864"},
    BadValue{"LUMOS_ARENA_BYTES", "2M", "the default 67108864"},  // < 2 default rings.
    BadValue{"LUMOS_CUPTI_BUFFER_BYTES", "8Q", "the default 8388608"},
    BadValue{"LUMOS_CUPTI_BUFFER_BYTES", "1K", "the default 8388608"},
    BadValue{"LUMOS_CUPTI_BUFFER_BYTES", "2G", "the default 8388608"},
    BadValue{"LUMOS_CUPTI_BUFFERS", "many", "the default 16"},
    BadValue{"LUMOS_CUPTI_BUFFERS", "1", "the default 16"},
    BadValue{"LUMOS_CUPTI_BUFFERS", "1025", "the default 16"},
    BadValue{"LUMOS_FLUSH_INTERVAL_MS", "1s", "the default 1000"},
    BadValue{"LUMOS_FLUSH_INTERVAL_MS", "9", "the default 1000"},
    BadValue{"LUMOS_FLUSH_INTERVAL_MS", "60001", "the default 1000"},
    BadValue{"LUMOS_MAX_FILE_BYTES", "big", "the default 0"},
    BadValue{"LUMOS_MAX_FILE_BYTES", "1K", "the default 0"},
    BadValue{"LUMOS_MAX_FILE_BYTES", "2048T", "the default 0"},
    BadValue{"LUMOS_ZSTD_LEVEL", "fast", "the default 3"},
    BadValue{"LUMOS_FLUSH_ON_SIGNALS", "maybe", "the default 1"},
    BadValue{"LUMOS_CLOCK", "rdtsc", "the default tsc"},
    BadValue{"LUMOS_ZSTD_LEVEL", "0", "the default 3"},
    BadValue{"LUMOS_NVTX_CHAIN", "cupit", "the default off"},  // No '/': not a path.
    BadValue{"LUMOS_NVTX_CHAIN", "/lib\ntool.so", "the default off"},
    BadValue{"LUMOS_NVTX_CHAIN", "/" + std::string(4095, 'l'), "the default off"},
    BadValue{"LUMOS_ZSTD_LEVEL", "20", "the default 3"},
    BadValue{"LUMOS_JOB_ID", "has space", "the next source (SLURM_JOB_ID"},
    BadValue{"LUMOS_JOB_ID", std::string(129, 'j'), "the next source (SLURM_JOB_ID"},
    BadValue{"LUMOS_MODE", "sometimes", "the default continuous"},
    BadValue{"LUMOS_MODE", "on_demand", "the default continuous"},
    BadValue{"LUMOS_PERIOD_S", "0.999", "the default 600"},
    BadValue{"LUMOS_PERIOD_S", "604800.001", "the default 600"},
    BadValue{"LUMOS_PERIOD_S", "1.0001", "the default 600"},
    BadValue{"LUMOS_PERIOD_S", "-5", "the default 600"},
    BadValue{"LUMOS_PERIOD_S", "1e3", "the default 600"},
    BadValue{"LUMOS_JITTER", "0.500001", "the default 0.1"},
    BadValue{"LUMOS_JITTER", "-0.1", "the default 0.1"},
    BadValue{"LUMOS_JITTER", "0.1234567", "the default 0.1"},
    BadValue{"LUMOS_WINDOW_ITERATIONS", "0", "the default 3"},
    BadValue{"LUMOS_WINDOW_ITERATIONS", "10001", "the default 3"},
    BadValue{"LUMOS_WINDOW_ITERATIONS", "three", "the default 3"},
    BadValue{"LUMOS_WINDOW_S", "3600.001", "the default 0 (by iterations)"},
    BadValue{"LUMOS_WINDOW_S", "-1", "the default 0 (by iterations)"},
    BadValue{"LUMOS_WINDOW_S", "2s", "the default 0 (by iterations)"},
    BadValue{"LUMOS_ITERATION_MARKER", std::string(257, 'm'), "the default 'ProfilerStep*'"},
    BadValue{"LUMOS_ITERATION_MARKER", "step\t1", "the default 'ProfilerStep*'"},
    BadValue{"LUMOS_MAX_DISK", "lots", "the default 0"},
    BadValue{"LUMOS_MAX_DISK", "1023K", "the default 0"},
    BadValue{"LUMOS_MAX_DISK", "2048T", "the default 0"}};

INSTANTIATE_TEST_SUITE_P(
    EveryVariable, AgentConfigBadValueTest, ::testing::ValuesIn(kBadValues),
    // The variable without LUMOS_, then the value (or its length): RING_BYTES_12X.
    [](const ::testing::TestParamInfo<BadValue>& info) {
      const std::string& value = info.param.value;
      return ::lumos::testing::ParamName(
          std::string(info.param.name).substr(6) + "_" +
          (value.size() > 24 ? std::to_string(value.size()) + "_bytes" : value));
    });

// Every variable bad at once (each with its first bad value above): one warning each.
TEST(AgentConfigTest, EachBadVariableWarnsExactlyOnce) {
  std::map<std::string, std::string> env;
  for (const BadValue& bad : kBadValues) env.emplace(bad.name, bad.value);
  ASSERT_EQ(env.size(), VariablesRead().size());
  ParsedAgentConfig parsed = Parse(env);
  EXPECT_EQ(parsed.warnings.size(), env.size());
  EXPECT_EQ(parsed.config, AgentConfig());
}

// A misspelt name would otherwise be ignored without a word: one line names every unknown
// LUMOS_* variable, with the known name it most likely meant.
TEST(AgentConfigTest, UnknownVariablesGiveOneLine) {
  ParsedAgentConfig parsed = ParseAgentConfig(
      MapEnvLookup({}), {"LUMOS_OUTPT_DIR", "LUMOS_OUTPUT_DIR", "LUMOS_SOMETHING_ELSE",
                         "LUMOS_FLUSH_ON_SIGNALS", "LUMOS_CLOCK"});
  ASSERT_EQ(parsed.warnings.size(), 1u);
  EXPECT_EQ(parsed.warnings[0],
            "unknown variables ignored: 'LUMOS_OUTPT_DIR' (LUMOS_OUTPUT_DIR?), "
            "'LUMOS_SOMETHING_ELSE' (the LUMOS_* list: README.md)");
  // Every name in the table is known (what the agent reads: EveryVariableIsReadKnown...).
  const std::vector<std::string> names(KnownVariableNames().begin(), KnownVariableNames().end());
  ParsedAgentConfig known = ParseAgentConfig(MapEnvLookup({}), names);
  EXPECT_TRUE(known.warnings.empty());
  // Disabled: nothing is read, nothing is warned about.
  EXPECT_TRUE(ParseAgentConfig(MapEnvLookup({{"LUMOS_ENABLE", "0"}}), {"LUMOS_OUTPT_DIR"})
                  .warnings.empty());
}

// The config's table (KnownVariableNames) is the list: a variable the agent reads but the table
// lacks would draw the unknown-variable warning; one it reads must be in README.md's table and
// have a bad-value case above; a name in the table that the agent does not read is a tool's.
TEST(AgentConfigTest, EveryVariableIsReadKnownDocumentedAndTested) {
  const std::set<std::string> known(KnownVariableNames().begin(), KnownVariableNames().end());
  const std::set<std::string> read = VariablesRead();
  ASSERT_FALSE(read.empty());
  for (const std::string& name : read) EXPECT_TRUE(known.count(name) != 0) << name;
  EXPECT_EQ(VariablesInTheReadme(), read);
  std::set<std::string> with_bad_value;
  for (const BadValue& bad : kBadValues) with_bad_value.insert(bad.name);
  for (const std::string& name : read) EXPECT_TRUE(with_bad_value.count(name) != 0) << name;
  for (const std::string& name : known) {
    if (read.count(name) != 0) continue;
    EXPECT_TRUE(AScriptReads(name)) << name << ": in the table, not read by the agent or a script";
  }
}

TEST(AgentConfigTest, ClockNamesAreCaseInsensitive) {
  for (const char* name : {"monotonic", "MONOTONIC", "Monotonic"}) {
    ParsedAgentConfig parsed = Parse({{"LUMOS_CLOCK", name}});
    EXPECT_TRUE(parsed.warnings.empty()) << name;
    EXPECT_FALSE(parsed.config.tsc_clock) << name;
  }
  ParsedAgentConfig tsc = Parse({{"LUMOS_CLOCK", "TSC"}});
  EXPECT_TRUE(tsc.warnings.empty());
  EXPECT_TRUE(tsc.config.tsc_clock);
}

TEST(AgentConfigTest, DisabledAgentReadsNothingElse) {
  for (const char* off : {"0", "false", "OFF", "no"}) {
    ParsedAgentConfig parsed =
        Parse({{"LUMOS_ENABLE", off}, {"LUMOS_RING_BYTES", "bad"}, {"LUMOS_ZSTD_LEVEL", "99"}});
    EXPECT_FALSE(parsed.config.enabled) << off;
    EXPECT_TRUE(parsed.warnings.empty()) << off;
  }
}

TEST(AgentConfigTest, JobIdFallsBackToTheLauncher) {
  EXPECT_EQ(Parse({{"SLURM_JOB_ID", "123"}, {"TORCHELASTIC_RUN_ID", "te"}}).config.job_id, "123");
  EXPECT_EQ(Parse({{"TORCHELASTIC_RUN_ID", "te"}}).config.job_id, "te");
  EXPECT_EQ(Parse({{"LUMOS_JOB_ID", "mine"}, {"SLURM_JOB_ID", "123"}}).config.job_id, "mine");
  ParsedAgentConfig bad = Parse({{"LUMOS_JOB_ID", "a b"}, {"SLURM_JOB_ID", "123"}});
  EXPECT_EQ(bad.config.job_id, "123");
  EXPECT_EQ(bad.warnings.size(), 1u);
  ParsedAgentConfig bad_slurm = Parse({{"SLURM_JOB_ID", "\t\x7f"}});
  EXPECT_EQ(bad_slurm.config.job_id, "");
  ASSERT_EQ(bad_slurm.warnings.size(), 1u);
  EXPECT_NE(bad_slurm.warnings[0].find("SLURM_JOB_ID="), std::string::npos);
}

TEST(AgentConfigTest, LogLevelNames) {
  EXPECT_EQ(Parse({{"LUMOS_LOG_LEVEL", "info"}}).config.log_level, LogLevel::kInfo);
  EXPECT_EQ(Parse({{"LUMOS_LOG_LEVEL", "warn"}}).config.log_level, LogLevel::kWarn);
  EXPECT_EQ(Parse({{"LUMOS_LOG_LEVEL", "Warning"}}).config.log_level, LogLevel::kWarn);
  EXPECT_EQ(Parse({{"LUMOS_LOG_LEVEL", "error"}}).config.log_level, LogLevel::kError);
}

TEST(AgentConfigTest, ChannelsAcceptAllAndSingleNames) {
  EXPECT_EQ(Parse({{"LUMOS_CHANNELS", "ALL"}}).config.channels, ChannelSet::All());
  ChannelSet nccl = Parse({{"LUMOS_CHANNELS", "nccl_plugin,nccl_wrappers"}}).config.channels;
  EXPECT_EQ(nccl.ToVector(), (std::vector<schema::Channel>{schema::Channel::kNcclPlugin,
                                                           schema::Channel::kNcclWrappers}));
  EXPECT_EQ(ChannelName(schema::Channel::kCuptiActivity), "cupti_activity");
  EXPECT_EQ(ChannelName(schema::Channel::kUnspecified), "");
  ChannelSet gemm = Parse({{"LUMOS_CHANNELS", "CUBLAS,cupti_callback"}}).config.channels;
  EXPECT_EQ(gemm.ToVector(), (std::vector<schema::Channel>{schema::Channel::kCuptiCallback,
                                                           schema::Channel::kCublas}));
  EXPECT_EQ(ChannelName(schema::Channel::kCublas), "cublas");
}

TEST(AgentConfigTest, MapsToTheHeaderAndTheWriter) {
  AgentConfig config = Parse({{"LUMOS_CHANNELS", "nvtx,cupti_activity"},
                              {"LUMOS_FLUSH_INTERVAL_MS", "20"},
                              {"LUMOS_MAX_FILE_BYTES", "2M"},
                              {"LUMOS_ZSTD_LEVEL", "7"}})
                           .config;
  schema::CaptureConfigInfo info = ToCaptureConfigInfo(config);
  EXPECT_EQ(info.channels, (std::vector<schema::Channel>{schema::Channel::kCuptiActivity,
                                                         schema::Channel::kNvtx}));
  EXPECT_TRUE(info.channels_failed.empty());
  EXPECT_EQ(info.ring_bytes, config.ring_bytes);
  EXPECT_EQ(info.activity_buffer_bytes, config.cupti_buffer_bytes);
  EXPECT_EQ(info.activity_buffer_count, config.cupti_buffer_count);
  EXPECT_EQ(info.flush_interval_ns, 20'000'000u);
  EXPECT_EQ(info.frame_bytes, AgentConfig::kFrameBytes);
  EXPECT_EQ(info.max_file_bytes, 2u << 20);
  EXPECT_EQ(info.zstd_level, 7);
  schema::WriterOptions options = ToWriterOptions(config);
  EXPECT_EQ(options.flush_interval_ns, 20'000'000u);
  EXPECT_EQ(options.max_file_bytes, 2u << 20);
  EXPECT_EQ(options.zstd_level, 7);
  EXPECT_EQ(options.frame_bytes, AgentConfig::kFrameBytes);
  EXPECT_TRUE(options.header_in_own_frame);
}

}  // namespace
}  // namespace lumos::agent
