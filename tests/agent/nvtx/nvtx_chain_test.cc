// NVTX chaining end to end (LUMOS_NVTX_CHAIN): nvtx_workload's "chain" mode under lumos-run with
// the test-double injection (nvtx_chain_double.cc) chained behind the agent. Checks both sides:
// the agent's trace holds every range, and the double received every call with its own handles
// and ids and returned its own results to the program; plus the fail-open paths (missing
// library, failing init, a library that installs nothing, a chain back into the agent, the real
// libcupti without a driver) and the chain without the agent's NVTX channel.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::CommandResult;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

struct Range {
  std::string name;
  std::string domain;
  int kind = 0;
  uint64_t range_id = 0;
};

// The ranges of the one trace in `dir` (none when there is no trace).
std::vector<Range> ReadRanges(const std::string& dir) {
  std::vector<Range> ranges;
  CommandResult ls = RunCommand("ls " + dir);
  if (ls.out.empty()) return ranges;
  auto reader = modeler::TraceReader::Open(dir + "/" + ls.out.substr(0, ls.out.find('\n')));
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return ranges;
  modeler::ReadResult result;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (!packet.has_nvtx()) return Status::Ok();
        const auto& nvtx = packet.nvtx();
        ranges.push_back({std::string(context.String(nvtx.name_iid())),
                          std::string(context.String(nvtx.domain_iid())), nvtx.kind(),
                          nvtx.range_id()});
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(result.has_trailer);
  return ranges;
}

// The double's report: counts by entry point; empty when it never ran (never loaded).
std::map<std::string, int> ReadReport(const std::string& path) {
  std::map<std::string, int> counts;
  std::ifstream file(path);
  std::string name;
  int count = 0;
  while (file >> name >> count) counts[name] = count;
  return counts;
}

// What nvtx_workload's chain mode calls, per entry point (see its Chain()).
std::map<std::string, int> ExpectedCalls(bool lazy) {
  return {{"init", 1},
          {"RangePushA", 2},
          {"RangePushEx", 3},
          {"RangePop", 5},
          {"RangeStartA", 2},
          {"RangeStartEx", 3},
          {"RangeEnd", 5},
          {"MarkA", 2},
          {"MarkEx", 3},
          {"NameOsThreadA", 1},
          // "lumos.early" is created before a lazy double has installed its handlers.
          {"DomainCreateA", lazy ? 1 : 2},
          {"DomainRegisterStringA", 2},
          {"DomainRangePushEx", 3},
          {"DomainRangePop", 3},
          {"DomainRangeStartEx", 2},
          {"DomainRangeEnd", 2},
          {"DomainMarkEx", 5},
          {"DomainDestroy", 1},
          // The agent's own handle for "lumos.early" reaches the lazy double as null.
          {"null_domain", lazy ? 1 : 0},
          {"foreign_domain", 0},
          {"foreign_string", 0},
          {"unknown_end", 0}};
}

// The agent recorded every range of the chain mode, whoever else was chained.
void ExpectAllRanges(const std::vector<Range>& ranges, uint64_t first_range_id) {
  std::map<int, int> kinds;
  std::map<std::string, int> names;
  std::vector<uint64_t> ids;
  for (const Range& range : ranges) {
    ++kinds[range.kind];
    ++names[range.name + "@" + range.domain];
    if (range.kind == modeler::pb::NVTX_KIND_START_END) ids.push_back(range.range_id);
  }
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_PUSH_POP], 8);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_START_END], 7);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_MARK], 10);
  EXPECT_EQ(names["chain-push-ex@"], 3);
  EXPECT_EQ(names["chain-registered-1@lumos.chain"], 2);  // Registered through the chain's handle.
  EXPECT_EQ(names["chain-registered-2@lumos.chain"], 3);
  EXPECT_EQ(names["chain-domain-mark@lumos.chain"], 4);
  EXPECT_EQ(names["chain-early-mark@lumos.early"], 1);
  if (first_range_id == 0) return;  // Ids from a library the test does not know.
  std::sort(ids.begin(), ids.end());
  std::vector<uint64_t> expected;
  for (uint64_t i = 0; i < 7; ++i) expected.push_back(first_range_id + i);
  EXPECT_EQ(ids, expected);  // The ids the program got (the chained library's, when chained).
}

std::string StartsLine(uint64_t first) {
  std::string line = "starts";
  for (uint64_t i = 0; i < 7; ++i) line += " " + std::to_string(first + i);
  return line;
}
const std::string kDoubleResults = "push 100 101 102 103 104 pop 104 103 102 101 100\n" +
                                   StartsLine(1000001) + "\nchain workload done\n";
const std::string kAgentResults =
    "push 0 1 2 3 4 pop 4 3 2 1 0\n" + StartsLine(1) + "\nchain workload done\n";

struct ChainRun {
  CommandResult result;
  std::vector<Range> ranges;
  std::map<std::string, int> calls;  // The double's report.
};

ChainRun RunChained(const std::string& chain, const std::string& extra_env = "") {
  TempDir dir;
  const std::string report = dir.File("double-report.txt");
  ChainRun run;
  // `timeout`: a chain that hangs must fail the test, not stall it.
  run.result = RunCommand("NVTX_CHAIN_DOUBLE_REPORT=" + report + " LUMOS_NVTX_CHAIN=" + chain +
                          " " + extra_env + " timeout 60 " + LUMOS_RUN_PATH + " -o " +
                          dir.File("traces") + " -- " + NVTX_WORKLOAD_PATH + " chain");
  run.ranges = ReadRanges(dir.File("traces"));
  run.calls = ReadReport(report);
  return run;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(NvtxChainTest, ChainedLibraryReceivesEveryCallAndTheAgentRecordsThem) {
  ChainRun run = RunChained(NVTX_CHAIN_DOUBLE_PATH);
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  EXPECT_EQ(run.result.out, kDoubleResults);  // Depths and ids are the chained library's.
  EXPECT_EQ(run.calls, ExpectedCalls(/*lazy=*/false));
  ExpectAllRanges(run.ranges, 1000001);
}

TEST(NvtxChainTest, LibraryInstallingItsHandlersLaterIsChainedToo) {
  ChainRun run = RunChained(NVTX_CHAIN_DOUBLE_PATH, "NVTX_CHAIN_DOUBLE_MODE=lazy");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  EXPECT_EQ(run.result.out, kDoubleResults);
  EXPECT_EQ(run.calls, ExpectedCalls(/*lazy=*/true));
  ExpectAllRanges(run.ranges, 1000001);
}

TEST(NvtxChainTest, ChainOffNeverLoadsTheLibrary) {
  ChainRun run = RunChained("off");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  EXPECT_EQ(run.result.out, kAgentResults);
  EXPECT_TRUE(run.calls.empty());  // No report: its init never ran.
  ExpectAllRanges(run.ranges, 1);
}

// Every fail-open path: one warning line naming the chain, the program's results the agent's
// own, and every range recorded.
void ExpectAgentAlone(const ChainRun& run, const std::string& chain, const std::string& why) {
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(Lines(run.result.err), 1) << run.result.err;
  EXPECT_NE(run.result.err.find("LUMOS_NVTX_CHAIN=" + chain + ": "), std::string::npos)
      << run.result.err;
  EXPECT_NE(run.result.err.find(why), std::string::npos) << run.result.err;
  EXPECT_EQ(run.result.out, kAgentResults);
  ExpectAllRanges(run.ranges, 1);
}

TEST(NvtxChainTest, MissingLibraryWarnsOnceAndTheAgentRecordsAlone) {
  ChainRun run = RunChained("/nonexistent/libnvtx_tool.so");
  ExpectAgentAlone(run, "/nonexistent/libnvtx_tool.so", "cannot load it");
}

TEST(NvtxChainTest, LibraryWithoutTheEntryPointWarnsOnce) {
  // Any shared object without InitializeInjectionNvtx2 (lumos-run's agent does have it).
  const std::string libm = "/lib/x86_64-linux-gnu/libm.so.6";
  if (RunCommand("test -f " + libm).exit_code != 0) GTEST_SKIP() << "no " << libm;
  ExpectAgentAlone(RunChained(libm), libm, "no InitializeInjectionNvtx2");
}

TEST(NvtxChainTest, FailingInitWarnsOnceAndItsHandlersAreNeverCalled) {
  ChainRun run = RunChained(NVTX_CHAIN_DOUBLE_PATH, "NVTX_CHAIN_DOUBLE_MODE=fail");
  ExpectAgentAlone(run, NVTX_CHAIN_DOUBLE_PATH, "returned 0");
  std::map<std::string, int> expected = ExpectedCalls(false);
  for (auto& [name, count] : expected) count = name == "init" ? 1 : 0;
  EXPECT_EQ(run.calls, expected);  // Not even the slot it wrote directly (NameOsThreadA).
}

TEST(NvtxChainTest, LibraryThatInstallsNothingWarnsOnceAtExit) {
  ChainRun run = RunChained(NVTX_CHAIN_DOUBLE_PATH, "NVTX_CHAIN_DOUBLE_MODE=none");
  ExpectAgentAlone(run, NVTX_CHAIN_DOUBLE_PATH, "installed no NVTX handlers");
}

TEST(NvtxChainTest, ChainBackIntoTheAgentWarnsOnce) {
  ExpectAgentAlone(RunChained(LUMOS_AGENT_PATH), LUMOS_AGENT_PATH, "the agent itself");
}

// The real libcupti.so.13 of the toolkit. Without a driver it accepts the injection but installs
// no handlers (one warning at exit); on a GPU machine it may install them (no warning). Either
// way the job runs, is not held up, and the agent records every range.
TEST(NvtxChainTest, CuptiChainNeverHarmsTheJob) {
  ChainRun run = RunChained("cupti");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_LE(Lines(run.result.err), 1) << run.result.err;
  if (!run.result.err.empty()) {
    EXPECT_NE(run.result.err.find("LUMOS_NVTX_CHAIN=cupti: "), std::string::npos) << run.result.err;
  }
  ExpectAllRanges(run.ranges, run.result.out == kAgentResults ? 1 : 0);
}

TEST(NvtxChainTest, WithoutTheNvtxChannelTheChainedLibraryStillGetsNvtx) {
  ChainRun run = RunChained(NVTX_CHAIN_DOUBLE_PATH, "LUMOS_CHANNELS=cupti_activity");
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_EQ(run.result.err, "");
  EXPECT_EQ(run.result.out, kDoubleResults);
  EXPECT_EQ(run.calls, ExpectedCalls(/*lazy=*/false));
  EXPECT_TRUE(run.ranges.empty());
}

}  // namespace
}  // namespace lumos::agent
