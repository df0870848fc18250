// End to end: the NVTX workload under lumos-run, its trace read back with the modeler's reader.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::ListDir;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

struct Range {
  std::string name;
  std::string domain;
  int kind = 0;
  uint32_t depth = 0;
  uint32_t thread_id = 0;
  uint32_t end_thread_id = 0;
  uint64_t range_id = 0;
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
};

struct Trace {
  modeler::pb::TraceHeader header;
  modeler::ReadResult read;
  std::vector<Range> ranges;
  int clock_snapshots = 0;
  std::map<uint32_t, std::string> thread_names;  // ThreadInfo packets.
  std::map<std::string, uint64_t> loss;          // LossRecord counts by detail.
};

Trace ReadTrace(const std::string& path) {
  Trace trace;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return trace;
  trace.header = (*reader)->header();
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (packet.has_clock_snapshot()) ++trace.clock_snapshots;
        if (packet.has_loss()) trace.loss[packet.loss().detail()] += packet.loss().count();
        if (packet.has_thread())
          trace.thread_names[packet.thread().thread_id()] = packet.thread().name();
        if (!packet.has_nvtx()) return Status::Ok();
        const auto& nvtx = packet.nvtx();
        trace.ranges.push_back({std::string(context.String(nvtx.name_iid())),
                                std::string(context.String(nvtx.domain_iid())), nvtx.kind(),
                                nvtx.depth(), nvtx.thread_id(), nvtx.end_thread_id(),
                                nvtx.range_id(), context.start_ns, nvtx.duration_ns()});
        return Status::Ok();
      },
      &trace.read);
  EXPECT_TRUE(status.ok()) << status.message();
  return trace;
}

const Range* Find(const Trace& trace, const std::string& name) {
  for (const Range& range : trace.ranges) {
    if (range.name == name) return &range;
  }
  return nullptr;
}

std::string LumosRun(const std::string& args) { return std::string(LUMOS_RUN_PATH) + " " + args; }

TEST(NvtxInjectionTest, RecordsEveryRangeKindUnderLumosRun) {
  TempDir dir;
  const std::string out = dir.File("traces");
  auto r = RunCommand("RANK=3 WORLD_SIZE=8 LOCAL_RANK=1 LUMOS_FLUSH_INTERVAL_MS=10 " +
                      LumosRun("-o " + out + " -- " + NVTX_WORKLOAD_PATH));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "workload done\n");
  EXPECT_EQ(r.err, "");
  std::vector<std::string> files = ListDir(out);
  ASSERT_EQ(files.size(), 1u);
  std::smatch match;
  ASSERT_TRUE(std::regex_match(files[0], match,
                               std::regex(R"(([A-Za-z0-9._-]+)\.([0-9]+)\.rank3\.pb\.zst)")))
      << files[0];

  Trace trace = ReadTrace(out + "/" + files[0]);
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
  EXPECT_EQ(std::to_string(trace.header.pid()), match[2].str());
  EXPECT_EQ(trace.header.producer(), modeler::pb::PRODUCER_AGENT);
  // NVTX started the agent (no CUDA here): libcupti was not loaded for the header's version.
  EXPECT_EQ(trace.header.cupti_version(), 0u);
  EXPECT_EQ(trace.header.rank(), 3);
  EXPECT_EQ(trace.header.world_size(), 8);
  EXPECT_EQ(trace.header.local_rank(), 1);
  EXPECT_EQ(trace.header.default_clock_id(), modeler::pb::CLOCK_ID_MONOTONIC);
  EXPECT_NE(trace.header.command_line().find("nvtx_workload"), std::string::npos);
  EXPECT_GE(trace.clock_snapshots, 2);  // At start and at the end.

  std::map<int, int> kinds;
  for (const Range& range : trace.ranges) {
    ++kinds[range.kind];
    EXPECT_NE(range.thread_id, 0u) << range.name;
    EXPECT_GT(range.start_ns, 0) << range.name;
  }
  EXPECT_EQ(trace.ranges.size(), 10u);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_PUSH_POP], 4);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_START_END], 3);
  EXPECT_EQ(kinds[modeler::pb::NVTX_KIND_MARK], 3);

  const Range* outer = Find(trace, "outer");
  const Range* inner = Find(trace, "inner");
  ASSERT_TRUE(outer != nullptr && inner != nullptr);
  EXPECT_EQ(outer->depth, 0u);
  EXPECT_EQ(inner->depth, 1u);
  EXPECT_GE(inner->start_ns, outer->start_ns);
  EXPECT_LE(inner->start_ns + static_cast<int64_t>(inner->duration_ns),
            outer->start_ns + static_cast<int64_t>(outer->duration_ns));
  EXPECT_NE(Find(trace, "this-is-a-very-long-rang..."), nullptr);  // Cut at 24 bytes.
  // The recording thread is described once, by its kernel name (the program's).
  ASSERT_EQ(trace.thread_names.count(outer->thread_id), 1u);
  EXPECT_EQ(trace.thread_names[outer->thread_id], "nvtx_workload");

  const Range* local = Find(trace, "local-range");
  const Range* cross = Find(trace, "cross-thread");
  ASSERT_TRUE(local != nullptr && cross != nullptr);
  EXPECT_EQ(local->end_thread_id, 0u);  // Ended on its own thread.
  EXPECT_NE(local->range_id, 0u);
  EXPECT_NE(cross->end_thread_id, 0u);
  EXPECT_NE(cross->end_thread_id, cross->thread_id);
  EXPECT_EQ(cross->thread_id, outer->thread_id);

  const Range* registered = Find(trace, "registered-name");
  ASSERT_NE(registered, nullptr);
  EXPECT_EQ(registered->domain, "lumos.test");
  EXPECT_EQ(registered->kind, modeler::pb::NVTX_KIND_PUSH_POP);
  EXPECT_EQ(registered->depth, 0u);
  const Range* domain_range = Find(trace, "domain-range");
  ASSERT_NE(domain_range, nullptr);
  EXPECT_EQ(domain_range->domain, "lumos.test");
  const Range* domain_mark = Find(trace, "domain-mark");
  ASSERT_NE(domain_mark, nullptr);
  EXPECT_EQ(domain_mark->duration_ns, 0u);
  EXPECT_EQ(domain_mark->domain, "lumos.test");
  ASSERT_NE(Find(trace, "mark-ex"), nullptr);
  EXPECT_EQ(Find(trace, "mark-a")->domain, "");
}

TEST(NvtxInjectionTest, WorkloadBehavesTheSameWithoutTheAgent) {
  TempDir dir;
  auto with = RunCommand(LumosRun("-o " + dir.path() + " " + NVTX_WORKLOAD_PATH));
  auto without = RunCommand(NVTX_WORKLOAD_PATH);
  EXPECT_EQ(with.exit_code, 0);
  EXPECT_EQ(without.exit_code, 0);
  EXPECT_EQ(with.out, without.out);
  EXPECT_EQ(with.err, without.err);
}

TEST(NvtxInjectionTest, UnwritableOutputDirWarnsOnceAndTheJobRuns) {
  TempDir dir;
  lumos::testing::WriteFileBytes(dir.File("a_file"), "x");
  // A directory below a regular file cannot exist, even for root.
  auto r = RunCommand(LumosRun("-o " + dir.File("a_file/traces") + " " + NVTX_WORKLOAD_PATH));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "workload done\n");
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // Exactly one line.
  EXPECT_NE(r.err.find("agent disabled"), std::string::npos) << r.err;
}

TEST(NvtxInjectionTest, ForkChildStaysOffAndParentTraceStaysValid) {
  TempDir dir;
  auto r = RunCommand(LumosRun("-o " + dir.path() + " " + NVTX_WORKLOAD_PATH + " fork"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "fork workload done\n");
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.ranges[0].name, "parent-before");
  EXPECT_EQ(trace.ranges[1].name, "parent-after");
}

// Ranges the agent cannot hold are counted as loss, not dropped silently.
TEST(NvtxInjectionTest, RangesBeyondThePushStackAreCountedAsLoss) {
  TempDir dir;
  auto r = RunCommand(LumosRun("-o " + dir.path() + " " + NVTX_WORKLOAD_PATH + " deep"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_EQ(trace.ranges.size(), 32u);  // kMaxPushDepth.
  EXPECT_EQ(trace.loss["NVTX push/pop ranges nested deeper than 32"], 8u);
}

// Runs the workload in `mode` under lumos-run (extra environment in `env`), waits for its
// "ready", sends SIGTERM; returns its wait status and stdout.
struct Signalled {
  int status = 0;
  std::string out;
};
Signalled RunAndTerminate(const std::string& dir, const char* mode,
                          const std::vector<std::string>& env = {}) {
  Signalled result;
  int out[2];
  if (pipe(out) != 0) return result;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
    execl(LUMOS_RUN_PATH, LUMOS_RUN_PATH, "-o", dir.c_str(), NVTX_WORKLOAD_PATH, mode,
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  char buffer[256];
  bool signalled = false;
  for (ssize_t n; (n = read(out[0], buffer, sizeof(buffer))) > 0;) {
    result.out.append(buffer, static_cast<size_t>(n));
    if (!signalled && result.out.find("ready\n") != std::string::npos) {
      kill(pid, SIGTERM);  // lumos-run execs: pid is the workload.
      signalled = true;
    }
  }
  close(out[0]);
  waitpid(pid, &result.status, 0);
  return result;
}

TEST(NvtxInjectionTest, SigtermClosesTheTraceAndStillKillsTheJob) {
  TempDir dir;
  Signalled r = RunAndTerminate(dir.path(), "wait");
  ASSERT_TRUE(WIFSIGNALED(r.status)) << "status " << r.status << ", out " << r.out;
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);  // Died of the signal, as without the agent.
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);  // Closed cleanly on the way out.
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
  EXPECT_NE(Find(trace, "before-signal"), nullptr);
}

TEST(NvtxInjectionTest, SigtermReachesTheJobsOwnHandler) {
  TempDir dir;
  Signalled r = RunAndTerminate(dir.path(), "handled");
  ASSERT_TRUE(WIFEXITED(r.status)) << "status " << r.status;
  EXPECT_EQ(WEXITSTATUS(r.status), 0);
  EXPECT_EQ(r.out, "ready\nhandled\n");
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);  // By exit(), after the job went on.
  EXPECT_NE(Find(trace, "before-signal"), nullptr);
  EXPECT_NE(Find(trace, "after-signal"), nullptr);  // Recording went on after the flush.
}

TEST(NvtxInjectionTest, FlushOnSignalsCanBeTurnedOff) {
  TempDir dir;
  Signalled r = RunAndTerminate(dir.path(), "wait", {"LUMOS_FLUSH_ON_SIGNALS=0"});
  ASSERT_TRUE(WIFSIGNALED(r.status));
  EXPECT_EQ(WTERMSIG(r.status), SIGTERM);
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_FALSE(trace.read.has_trailer);  // Killed as before: a readable prefix only.
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
}

TEST(NvtxInjectionTest, LumosRunReportsUsageErrors) {
  auto help = RunCommand(LumosRun("--help"));
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: lumos-run"), std::string::npos);
  EXPECT_EQ(RunCommand(LumosRun("")).exit_code, 2);
  EXPECT_EQ(RunCommand(LumosRun("--bogus true")).exit_code, 2);
  auto missing = RunCommand(LumosRun("/nonexistent/program"));
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(RunCommand(LumosRun("sh -c 'exit 5'")).exit_code, 5);
}

// Options set the LUMOS_* variables they name, in both spellings; a bad value stops lumos-run
// with the agent's own reason before the job starts.
TEST(NvtxInjectionTest, LumosRunOptionsSetTheAgentsVariables) {
  TempDir dir;
  auto r = RunCommand(LumosRun("-o " + dir.path() +
                               " --job-id optjob --channels nvtx --zstd-level=7 -- " +
                               NVTX_WORKLOAD_PATH));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].rfind("optjob.", 0), 0u) << files[0];
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_EQ(trace.header.job_id(), "optjob");
  EXPECT_EQ(trace.header.capture_config().zstd_level(), 7);
  ASSERT_EQ(trace.header.capture_config().channels_size(), 1);
  EXPECT_EQ(trace.header.capture_config().channels(0), modeler::pb::CHANNEL_NVTX);
  EXPECT_FALSE(trace.ranges.empty());

  TempDir untouched;
  auto bad =
      RunCommand(LumosRun("-o " + untouched.path() + " --zstd-level 40 -- " + NVTX_WORKLOAD_PATH));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--zstd-level 40: LUMOS_ZSTD_LEVEL='40': outside 1..19"),
            std::string::npos)
      << bad.err;
  EXPECT_TRUE(ListDir(untouched.path()).empty());  // The job never ran.
  auto missing = RunCommand(LumosRun("--channels"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--channels needs a value"), std::string::npos) << missing.err;
  auto help = RunCommand(LumosRun("--help"));
  for (const char* option : {"--job-id ID", "--channels LIST", "--clock tsc|monotonic"}) {
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace lumos::agent
