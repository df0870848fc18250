// End to end: the agent's start, signals, limits and close under lumos-run, with a real
// program (lifecycle_workload.cc) and its trace read back. Each case checks that the job
// behaves exactly as without the agent (exit status, output) and that stderr carries at most
// the one line the case calls for.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::agent {
namespace {

using ::lumos::testing::CommandResult;
using ::lumos::testing::ListDir;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

const std::string kWorkload = LIFECYCLE_WORKLOAD_PATH;

struct Trace {
  modeler::ReadResult read;
  std::map<std::string, uint64_t> loss;  // LossRecord counts by detail.
  std::map<int, uint64_t> loss_by_source;
  int nvtx = 0;
};

Trace ReadTrace(const std::string& path) {
  Trace trace;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return trace;
  Status status = (*reader)->ReadPackets(
      [&](const modeler::pb::TracePacket& packet, const modeler::PacketContext&) {
        if (packet.has_nvtx()) ++trace.nvtx;
        if (packet.has_loss()) {
          trace.loss[packet.loss().detail()] += packet.loss().count();
          trace.loss_by_source[packet.loss().source()] += packet.loss().count();
        }
        return Status::Ok();
      },
      &trace.read);
  EXPECT_TRUE(status.ok()) << status.message();
  return trace;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// `env` goes in front of lumos-run (LD_PRELOAD there reaches the job behind the agent).
CommandResult Traced(const std::string& dir, const std::string& env, const std::string& args) {
  return RunCommand(env + " " + LUMOS_RUN_PATH + " -o " + dir + " -- " + kWorkload + " " + args);
}

// 1. No thread to be had (RLIMIT_NPROC, a pids cgroup): the agent stays off with one line and
// leaves no header-only file; the job runs as without it (it used to abort in std::thread).
TEST(LifecycleTest, NoWriterThreadLeavesTheJobAloneAndNoFile) {
  TempDir dir;
  CommandResult r = Traced(dir.path(), "LD_PRELOAD=" NO_THREAD_SHIM_PATH, "ranges 10");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 10\n");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("cannot start the writer thread"), std::string::npos) << r.err;
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

// 2. A file size limit (ulimit -f) costs trace data, never the job (SIGXFSZ used to kill it):
// the trace stops below the limit, keeps its trailer, and says what it could not hold.
TEST(LifecycleTest, FileSizeLimitCostsTraceDataNotTheJob) {
  TempDir dir;
  // Set here and inherited (the shell's `ulimit -f` counts in blocks of a size that differs
  // between shells): room for the first frame (about 300 KB), not for the whole trace (1.2 MB).
  // The ring has room for every range, so the trace is that size however seldom the writer
  // thread runs beside the job (a busy machine: with the default 1 MiB ring, most ranges are
  // dropped and the rest can fit under the limit).
  constexpr rlim_t kLimit = 512'000;
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_TRUE(saved.rlim_max == RLIM_INFINITY || saved.rlim_max >= kLimit);
  rlimit limited = saved;
  limited.rlim_cur = kLimit;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limited), 0);
  CommandResult r =
      Traced(dir.path(), "LUMOS_RING_BYTES=4M LUMOS_FLUSH_INTERVAL_MS=10", "ranges 60000");
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 60000\n");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("RLIMIT_FSIZE"), std::string::npos) << r.err;
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  struct stat st {};
  ASSERT_EQ(stat(dir.File(files[0]).c_str(), &st), 0);
  EXPECT_LE(static_cast<rlim_t>(st.st_size), kLimit);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
  EXPECT_GT(trace.nvtx, 0);
  EXPECT_GT(trace.loss_by_source[modeler::pb::LOSS_SOURCE_FILE_LIMIT], 0u);
  EXPECT_EQ(trace.loss_by_source[modeler::pb::LOSS_SOURCE_RING_FULL], 0u);
}

// ulimit -f 0, as in a sandbox whose job writes only to pipes: no room for even the file's
// preamble. The agent's first write (at start-up, in the job's thread) used to raise SIGXFSZ
// and kill the job; now the agent stays off with one line and leaves no file. The limit is set
// in a subshell behind pipes (stdout and stderr are files in RunCommand), and the job's exit
// status comes back on stdout after its output.
TEST(LifecycleTest, FileSizeLimitZeroLeavesTheAgentOffAndTheJobAlive) {
  TempDir dir;
  const std::string job =
      std::string(LUMOS_RUN_PATH) + " -o " + dir.path() + " -- " + kWorkload + " ranges 10";
  CommandResult r = RunCommand("( ( ulimit -f 0; " + job +
                               " 2>&1 1>&3 3>&-; echo \"exit $?\" >&3 ) | cat >&2 ) 3>&1 | cat");
  EXPECT_EQ(r.out, "done 10\nexit 0\n") << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("RLIMIT_FSIZE"), std::string::npos) << r.err;
  EXPECT_TRUE(ListDir(dir.path()).empty());
}

// 3. A relative -o names a directory from where lumos-run was started, even when the job
// changes directory before the agent starts.
TEST(LifecycleTest, RelativeOutputDirSurvivesTheJobsChdir) {
  TempDir dir;
  ASSERT_EQ(mkdir(dir.File("sub").c_str(), 0755), 0);
  CommandResult r = RunCommand("cd " + dir.path() + " && " + LUMOS_RUN_PATH +
                               " -o rel -- sh -c 'cd sub && " + kWorkload + " ranges 10'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(ListDir(dir.File("rel")).size(), 1u);
  EXPECT_TRUE(ListDir(dir.File("sub/rel")).empty());
}

// 4. The job's own signal handling is unchanged: a one-shot handler (SA_RESETHAND, "Ctrl-C
// twice to quit") runs once and the second signal kills, for SIGTERM and SIGINT alike.
TEST(LifecycleTest, OneShotHandlerRunsOnceThenTheSignalKills) {
  for (const char* signal_name : {"TERM", "INT"}) {
    const int signo = std::string(signal_name) == "TERM" ? SIGTERM : SIGINT;
    CommandResult without = RunCommand(kWorkload + " resethand " + signal_name);
    EXPECT_EQ(without.exit_code, 128 + signo);
    EXPECT_EQ(without.out, "handled\n");
    TempDir dir;
    CommandResult with = Traced(dir.path(), "", std::string("resethand ") + signal_name);
    EXPECT_EQ(with.exit_code, 128 + signo) << signal_name << ": " << with.err;
    EXPECT_EQ(with.out, "handled\n") << signal_name;
    EXPECT_EQ(with.err, "");
    std::vector<std::string> files = ListDir(dir.path());
    ASSERT_EQ(files.size(), 1u);
    Trace trace = ReadTrace(dir.File(files[0]));
    EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
    EXPECT_EQ(trace.nvtx, 1);  // Flushed at the first signal; killed by the second.
  }
}

// SA_NODEFER: the job's handler is not blocked against its own signal, so it can nest.
TEST(LifecycleTest, NoDeferHandlerStillNests) {
  EXPECT_EQ(RunCommand(kWorkload + " nodefer").out, "deepest 2\n");
  TempDir dir;
  CommandResult r = Traced(dir.path(), "", "nodefer");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "deepest 2\n");
}

// SA_NODEFER, with a second SIGTERM while the agent's handler still waits for the flush of
// the first (a trace write held at the shim's gate, which only the job's handler opens): the
// nested signal goes straight to the job's handler, as without the agent, instead of waiting
// for the flush again (up to FlushOnSignals::kWaitNs, 2 s, each time). The second signal is
// sent once the flush's write waits at the gate, so the order of events is fixed however the
// threads are scheduled. A handler that waited again would come at least 2 s late: the flush
// cannot end before the job's handler runs.
TEST(LifecycleTest, SignalNestedDuringTheFlushReachesTheJobAtOnce) {
  TempDir dir;
  CommandResult r = Traced(
      dir.path(), "LD_PRELOAD=" TRACE_WRITE_SHIM_PATH " SHIM_TRACE_MODE=gate SHIM_TRACE_WRITES=2",
      "nested-during-flush");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  long long delay_ms = -1;
  int entries = 0, during_flush = -1;
  ASSERT_EQ(sscanf(r.out.c_str(), "nested handled after %lld ms, entries %d, during the flush %d",
                   &delay_ms, &entries, &during_flush),
            3)
      << r.out;
  EXPECT_EQ(entries, 2);
  EXPECT_EQ(during_flush, 1) << "the job's handler ran only after the flush";
  EXPECT_GE(delay_ms, 0) << "the first signal's handler did not wait for the flush";
  EXPECT_LT(delay_ms, 2000) << "the nested signal waited for the flush again";
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(ReadTrace(dir.File(files[0])).read.has_trailer);
}

// SA_SIGINFO: the job's handler gets the signal's own siginfo and context.
TEST(LifecycleTest, SiginfoHandlerGetsTheSignalsInfo) {
  TempDir dir;
  CommandResult r = Traced(dir.path(), "", "siginfo");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "siginfo signo=15 own_pid=1 context=1\n");
}

// SIGINT with its default action: the process dies of it, and the trace is closed first.
TEST(LifecycleTest, DefaultSigintKillsAndClosesTheTrace) {
  TempDir dir;
  CommandResult r = Traced(dir.path(), "", "default INT");
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_EQ(trace.nvtx, 1);
}

// 5. Configuration warnings come from the process that traces, once, not from every process
// the library is preloaded into (the shell, ls); a misspelt LUMOS_* name is one of them, and
// word values are case-insensitive.
TEST(LifecycleTest, ConfigurationWarningsComeOnceFromTheTracedProcess) {
  TempDir dir;
  CommandResult r = RunCommand(
      "LUMOS_ZSTD_LEVEL=99 LUMOS_RING_BYTES=x LUMOS_OUTPT_DIR=/tmp LUMOS_CLOCK=Monotonic " +
      std::string(LUMOS_RUN_PATH) + " -o " + dir.path() + " -- sh -c 'true; " + kWorkload +
      " ranges 1; ls / >/dev/null'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.err), 3) << r.err;
  EXPECT_NE(r.err.find("LUMOS_ZSTD_LEVEL"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("LUMOS_RING_BYTES"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'LUMOS_OUTPT_DIR' (LUMOS_OUTPUT_DIR?)"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("LUMOS_CLOCK"), std::string::npos) << r.err;
}

// 6. A full disk (after the preamble and the header): one warning line in all (not one for the
// write and another at the close),
// the job unharmed, and the file a readable prefix that says what it lost.
TEST(LifecycleTest, FullDiskGivesOneWarningLine) {
  TempDir dir;
  CommandResult r = Traced(dir.path(),
                           "LD_PRELOAD=" TRACE_WRITE_SHIM_PATH
                           " SHIM_TRACE_MODE=full SHIM_TRACE_WRITES=2 LUMOS_FLUSH_INTERVAL_MS=10"
                           " LUMOS_RING_BYTES=4M",  // Every range fits: frames fill up by size.
                           "ranges 60000");  // Frames flushed by size, by time and at the close.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 60000\n");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.damage.ok()) << trace.read.damage.message();
}

// 7. No libcupti: one warning line, naming the reason once for both CUPTI channels; the trace
// says both failed.
TEST(LifecycleTest, NoLibcuptiGivesOneLineForBothChannels) {
  TempDir dir;
  CommandResult r = Traced(dir.path(), "LD_PRELOAD=" NO_CUPTI_SHIM_PATH, "cuinit");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cuinit 1\n");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  const size_t first = r.err.find("libcupti.so.13 not found");
  ASSERT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("libcupti.so.13 not found", first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cupti_activity, cupti_callback: "), std::string::npos) << r.err;
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_EQ(trace.loss_by_source[modeler::pb::LOSS_SOURCE_CHANNEL_FAILED], 2u);
}

// 8. No CUDA driver (so no cuInit, and the CUDA injection is never called): no warning (a
// process may well not use CUDA), but the trace says why the CUPTI channels recorded nothing.
// Channels that are off get no record.
TEST(LifecycleTest, NeverCalledCudaInjectionIsRecordedAtTheClose) {
  TempDir dir;
  CommandResult r = Traced(dir.path(), "", "ranges 1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_EQ(trace.loss_by_source[modeler::pb::LOSS_SOURCE_CHANNEL_FAILED], 2u);
  for (const char* channel : {"cupti_activity", "cupti_callback"}) {
    bool found = false;
    for (const auto& [detail, count] : trace.loss) {
      found = found || detail.rfind(std::string(channel) + ": CUDA injection never called", 0) == 0;
    }
    EXPECT_TRUE(found) << channel;
  }

  TempDir nvtx_only;
  ASSERT_EQ(Traced(nvtx_only.path(), "LUMOS_CHANNELS=nvtx", "ranges 1").exit_code, 0);
  files = ListDir(nvtx_only.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(ReadTrace(nvtx_only.File(files[0])).loss.empty());
}

// 9. The close writes everything the rings still hold, however much that is: with a ring of
// room for every range and a writer that does not wake up before the close (the longest flush
// interval, no fast-clock refinements), all 70,000 ranges are in the trace (the final drain
// used to stop at Agent::kMaxDrainPerRing, 65,536 a ring, and lose the rest uncounted).
TEST(LifecycleTest, TheCloseWritesEverythingTheRingsHold) {
  TempDir dir;
  CommandResult r =
      Traced(dir.path(), "LUMOS_RING_BYTES=8M LUMOS_FLUSH_INTERVAL_MS=60000 LUMOS_CLOCK=monotonic",
             "ranges 70000");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 70000\n");
  EXPECT_EQ(r.err, "");
  std::vector<std::string> files = ListDir(dir.path());
  ASSERT_EQ(files.size(), 1u);
  Trace trace = ReadTrace(dir.File(files[0]));
  EXPECT_TRUE(trace.read.has_trailer);
  EXPECT_EQ(trace.nvtx, 70'000);
  EXPECT_EQ(trace.loss_by_source[modeler::pb::LOSS_SOURCE_RING_FULL], 0u);
}

// 10. A trace file system that hangs (a stuck network mount) delays the job's exit by
// Agent::kStopJoinTimeoutS at most, with one line; the file keeps what reached it.
TEST(LifecycleTest, HungTraceWriteDelaysTheExitBoundedly) {
  TempDir dir;
  timespec start{}, end{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  CommandResult r = Traced(
      dir.path(), "LD_PRELOAD=" TRACE_WRITE_SHIM_PATH " SHIM_TRACE_MODE=hang SHIM_TRACE_WRITES=2",
      "ranges 20000");
  clock_gettime(CLOCK_MONOTONIC, &end);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done 20000\n");
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("did not finish within 5 s"), std::string::npos) << r.err;
  EXPECT_LT(end.tv_sec - start.tv_sec, 30);  // The shim's write sleeps 60 s.
}

}  // namespace
}  // namespace lumos::agent
