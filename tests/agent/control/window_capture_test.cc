// Windowed capture end to end: real processes (window_workload, a CPU-only loop with NVTX
// profiler steps and the fake libnccl.so.2, the test double for NCCL) under lumos-run, real
// control sockets driven by the real lumos-ctl, real files read back with the modeler's reader.
// Covers: one on-demand window across two processes (same iterations, same directory, seq numbers
// that pair), periodic windows with the disk quota, a job that is killed or exits mid-window, a
// loop without markers, and a continuous agent refusing a capture.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "agent/control/window_output.h"
#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos {
namespace {

namespace pb = ::lumos::trace;
using ::lumos::testing::BackgroundCommand;
using ::lumos::testing::ListDir;
using ::lumos::testing::PollUntil;
using ::lumos::testing::RunCommand;

struct WindowFile {
  std::string path;
  pb::TraceHeader header;
  pb::CaptureWindow window;  // The packet at the close (absent: a file without its end).
  bool has_window_packet = false;
  std::vector<std::string> nvtx;
  std::vector<pb::NcclCollective> collectives;
  int communicators = 0;
  modeler::ReadResult read;
};

WindowFile ReadWindowFile(const std::string& path) {
  WindowFile file;
  file.path = path;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << path << ": " << reader.status().message();
  if (!reader.ok()) return file;
  file.header = (*reader)->header();
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (packet.has_nvtx()) file.nvtx.emplace_back(context.String(packet.nvtx().name_iid()));
        if (packet.has_collective()) file.collectives.push_back(packet.collective());
        if (packet.has_communicator()) ++file.communicators;
        if (packet.has_capture_window()) {
          file.window = packet.capture_window();
          file.has_window_packet = true;
        }
        return Status::Ok();
      },
      &file.read);
  EXPECT_TRUE(status.ok()) << status.message();
  return file;
}

// Every complete window file under DIR/<job>/<stamp>/.
std::vector<std::string> WindowFiles(const std::string& dir, const std::string& job) {
  std::vector<std::string> files;
  const std::string job_dir = dir + "/" + job;
  for (const std::string& stamp : ListDir(job_dir)) {
    for (const std::string& name : ListDir(job_dir + "/" + stamp)) {
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".pb.zst") == 0) {
        files.push_back(job_dir + "/" + stamp + "/" + name);
      }
    }
  }
  std::sort(files.begin(), files.end());  // Oldest window first (stamps sort as times).
  return files;
}

std::vector<std::string> PartialFiles(const std::string& dir, const std::string& job) {
  std::vector<std::string> files;
  const std::string job_dir = dir + "/" + job;
  for (const std::string& stamp : ListDir(job_dir)) {
    for (const std::string& name : ListDir(job_dir + "/" + stamp)) {
      if (name.find(".partial") != std::string::npos) {
        files.push_back(job_dir + "/" + stamp + "/" + name);
      }
    }
  }
  return files;
}

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }
std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

class WindowCaptureTest : public ::testing::Test {
 protected:
  // A job id no other test (or a run in parallel) uses: lumos-ctl --job finds only ours. A
  // parameterized test's name holds a '/', which a job id (a directory name) must not.
  std::string job_ = [] {
    std::string job = "win" + std::to_string(getpid()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(job.begin(), job.end(), '/', '-');
    return job;
  }();
  ::lumos::testing::TempDir dir_;

  std::string Workload(const std::string& env, int rank, int world, const std::string& args) {
    return "env LD_LIBRARY_PATH=" FAKE_NCCL_DIR " LUMOS_FLUSH_INTERVAL_MS=50 LUMOS_JOB_ID=" + job_ +
           " RANK=" + std::to_string(rank) + " WORLD_SIZE=" + std::to_string(world) +
           " WINDOW_WORKLOAD_STOP=" + dir_.path() + "/stop " + env + " " LUMOS_RUN_PATH " -o " +
           dir_.path() + " -- " WINDOW_WORKLOAD_PATH " " + args;
  }
  std::string Ctl(const std::string& args) { return std::string(LUMOS_CTL_PATH) + " " + args; }
  // The job's agents as `lumos-ctl status` lists them, in `state`.
  int AgentsIn(const std::string& state) {
    const auto status = RunCommand(Ctl("status --json"));
    int n = 0;
    const std::string job = "\"job\": \"" + job_ + "\"";
    for (size_t at = status.out.find(job); at != std::string::npos;
         at = status.out.find(job, at + 1)) {
      const size_t end = status.out.find('}', at);
      n += status.out.substr(at, end - at).find("\"state\": \"" + state + "\"") != std::string::npos
               ? 1
               : 0;
    }
    return n;
  }
  void Stop() { std::ofstream(dir_.path() + "/stop") << "stop\n"; }
  // Every agent of the job reports an iteration, all in one decade and at most its fourth.
  bool EarlyInADecade() {
    const auto status = RunCommand(Ctl("status --json"));
    const std::string job = "\"job\": \"" + job_ + "\"", key = "\"iteration\": ";
    std::vector<long> iterations;
    for (size_t at = status.out.find(job); at != std::string::npos;
         at = status.out.find(job, at + 1)) {
      const size_t end = status.out.find('}', at);
      const size_t it = status.out.find(key, at);
      if (it == std::string::npos || it > end) return false;
      const std::string value = status.out.substr(it + key.size(), 20);
      if (value.rfind("null", 0) == 0) return false;
      iterations.push_back(std::atol(value.c_str()));
    }
    if (iterations.size() != 2) return false;
    for (const long i : iterations) {
      if (i / 10 != iterations[0] / 10 || i % 10 > 3) return false;
    }
    return true;
  }
};

// The two ranks keep in step at their all-reduce as a real job's do (WINDOW_WORKLOAD_LOCKSTEP:
// the fake NCCL waits for nobody), and the request goes out early in a decade of iterations, as
// both agents report them: each process then arms the same next multiple of 10. (Sent as one
// rank passes a multiple of 10 and the other has not, the two would arm different ones: an
// agent arms the next multiple it has yet to reach.)
TEST_F(WindowCaptureTest, OneRequestGivesEveryProcessTheSameIterations) {
  const std::string lockstep = "WINDOW_WORKLOAD_LOCKSTEP=" + dir_.path() + " LUMOS_MODE=on-demand";
  // 20 ms steps: the request then has 120 ms or more to reach both before a multiple of 10.
  BackgroundCommand rank0(Workload(lockstep, 0, 2, "0 20"));
  BackgroundCommand rank1(Workload(lockstep, 1, 2, "0 20"));
  ASSERT_TRUE(rank0.started() && rank1.started());
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 2; }, 30))
      << RunCommand(Ctl("status")).out;
  ASSERT_TRUE(PollUntil([&] { return EarlyInADecade(); }, 30)) << RunCommand(Ctl("status")).out;
  const auto capture =
      RunCommand(Ctl("capture --job " + job_ + " --iterations 3 --every-iteration 10"));
  ASSERT_EQ(capture.exit_code, 0) << capture.out << capture.err;
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 2; }, 30));
  Stop();
  EXPECT_EQ(rank0.Wait().exit_code, 0);
  EXPECT_EQ(rank1.Wait().exit_code, 0);

  std::vector<std::string> files = WindowFiles(dir_.path(), job_);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(Parent(files[0]), Parent(files[1]));  // One window directory.
  WindowFile a = ReadWindowFile(files[0]), b = ReadWindowFile(files[1]);
  for (const WindowFile* f : {&a, &b}) {
    SCOPED_TRACE(f->path);
    EXPECT_TRUE(f->read.has_trailer);
    EXPECT_TRUE(f->read.damage.ok()) << f->read.damage.message();
    ASSERT_TRUE(f->header.has_capture_window());
    EXPECT_EQ(f->header.capture_window().trigger(), pb::WINDOW_TRIGGER_ON_DEMAND);
    EXPECT_NE(f->header.capture_window().requested_by().find("(lumos-ctl)"), std::string::npos);
    EXPECT_EQ(f->header.capture_window().target(), "iteration % 10 == 0");
    ASSERT_TRUE(f->has_window_packet);
    EXPECT_EQ(f->window.iteration_count(), 3u);
    EXPECT_EQ(f->window.first_iteration() % 10, 0u);
    EXPECT_EQ(f->window.missed_target(), "");
    EXPECT_GT(f->window.duration_ns(), 0u);
    // Exactly its three profiler steps, each with its forward range.
    std::vector<std::string> steps;
    int forwards = 0;
    for (const std::string& name : f->nvtx) {
      if (name.rfind("ProfilerStep#", 0) == 0) steps.push_back(name);
      forwards += name == "forward" ? 1 : 0;
    }
    const uint64_t first = f->window.first_iteration();
    EXPECT_EQ(steps, (std::vector<std::string>{"ProfilerStep#" + std::to_string(first),
                                               "ProfilerStep#" + std::to_string(first + 1),
                                               "ProfilerStep#" + std::to_string(first + 2)}));
    EXPECT_EQ(forwards, 3);
    // The communicator, made long before the window, is in it; one all-reduce per iteration,
    // numbered consecutively (NCCL's own numbers: the fake loads the agent's profiler plugin).
    EXPECT_EQ(f->communicators, 1);
    ASSERT_EQ(f->collectives.size(), 3u);
    for (size_t i = 1; i < 3; ++i) {
      EXPECT_EQ(f->collectives[i].seq_number(), f->collectives[0].seq_number() + i);
    }
  }
  // The same collectives on both ranks: they pair.
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].seq_number(), b.collectives[i].seq_number());
    EXPECT_EQ(a.collectives[i].comm_id(), b.collectives[i].comm_id());
  }
  EXPECT_EQ(a.window.first_iteration(), b.window.first_iteration());
  EXPECT_EQ(a.header.capture_window().request_id(), b.header.capture_window().request_id());
  EXPECT_NE(a.header.capture_window().request_id(), 0u);
  EXPECT_NE(Basename(files[0]).find(".rank"), std::string::npos);
  EXPECT_NE(Basename(files[0]), Basename(files[1]));
  // The window directory reads as a trace set.
  const auto inspect = RunCommand(::lumos::testing::LumosModelBinary() + " inspect " +
                                  Parent(files[0]) + " > /dev/null");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.err;
}

// Iteration markers from every way NVTX names a range (window_workload.cc's
// WINDOW_WORKLOAD_MARKER_API): wide calls (push, start), UNICODE attributes (default domain, a
// domain of its own) and a registered wide string start and end windows as the A push does.
class WideMarkerTest : public WindowCaptureTest,
                       public ::testing::WithParamInterface<const char*> {};

TEST_P(WideMarkerTest, StartsAndEndsWindowsLikeAnAsciiMarker) {
  const std::string api = GetParam();
  BackgroundCommand job(
      Workload("LUMOS_MODE=on-demand WINDOW_WORKLOAD_MARKER_API=" + api, 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  const auto capture =
      RunCommand(Ctl("capture --job " + job_ + " --iterations 3 --every-iteration 4"));
  ASSERT_EQ(capture.exit_code, 0) << capture.out << capture.err;
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 1; }, 30));
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  WindowFile f = ReadWindowFile(WindowFiles(dir_.path(), job_)[0]);
  EXPECT_TRUE(f.read.has_trailer);
  ASSERT_TRUE(f.has_window_packet);
  EXPECT_EQ(f.window.missed_target(), "");  // It found its marker: not a timed fallback.
  EXPECT_EQ(f.window.iteration_count(), 3u);
  const uint64_t first = f.window.first_iteration();
  EXPECT_EQ(first % 4, 0u);
  EXPECT_GT(first, 0u);
  // Exactly the window's three steps (each with its forward range), in its file.
  std::vector<std::string> steps;
  int forwards = 0;
  for (const std::string& name : f.nvtx) {
    if (name.rfind("ProfilerStep", 0) == 0) steps.push_back(name);
    forwards += name == "forward" ? 1 : 0;
  }
  EXPECT_EQ(forwards, 3);
  if (api == "RegisteredW") {
    // One registered string, so the steps are counted: their index is the count of markers.
    EXPECT_EQ(steps, std::vector<std::string>(3, "ProfilerStep"));
  } else {
    EXPECT_EQ(steps, (std::vector<std::string>{"ProfilerStep#" + std::to_string(first),
                                               "ProfilerStep#" + std::to_string(first + 1),
                                               "ProfilerStep#" + std::to_string(first + 2)}));
  }
}

INSTANTIATE_TEST_SUITE_P(AllWideApis, WideMarkerTest,
                         ::testing::Values("W", "StartW", "ExUnicode", "DomainExW", "RegisteredW"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// Without the profiler plugin the wrappers number collectives, from 0 in each window: a rank
// that missed an earlier window still pairs with the others in this one.
TEST_F(WindowCaptureTest, WrapperSeqNumbersStartAgainInEachWindow) {
  BackgroundCommand job(
      Workload("LUMOS_MODE=on-demand LUMOS_CHANNELS=nvtx,nccl_wrappers", 0, 1, "0 10"));
  for (size_t window = 1; window <= 2; ++window) {
    ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
    ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --iterations 2")).exit_code, 0);
    ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == window; }, 30));
  }
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  for (const std::string& path : WindowFiles(dir_.path(), job_)) {
    SCOPED_TRACE(path);
    WindowFile f = ReadWindowFile(path);
    ASSERT_EQ(f.collectives.size(), 2u);
    EXPECT_EQ(f.collectives[0].seq_number(), 0u);
    EXPECT_EQ(f.collectives[1].seq_number(), 1u);
  }
}

// --at: the window starts at the first iteration boundary after that instant, its directory is
// named after it, and its header says so.
TEST_F(WindowCaptureTest, AnAtTimeNamesTheWindowAndStartsAfterIt) {
  BackgroundCommand job(Workload("LUMOS_MODE=on-demand", 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --at +2s --iterations 2")).exit_code, 0);
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("armed") == 1; }, 30));
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 1; }, 30));
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  const std::string path = WindowFiles(dir_.path(), job_)[0];
  WindowFile f = ReadWindowFile(path);
  ASSERT_TRUE(f.header.has_capture_window());
  const pb::CaptureWindow& asked = f.header.capture_window();
  EXPECT_EQ(asked.target(), "at " + Basename(Parent(path)));
  ASSERT_TRUE(f.has_window_packet);
  EXPECT_EQ(f.window.iteration_count(), 2u);
  EXPECT_EQ(f.window.missed_target(), "");
  // Its coordinated start is the asked instant, and names the directory.
  EXPECT_EQ(agent::control::WindowStamp(static_cast<int64_t>(f.window.start_realtime_ns())),
            Basename(Parent(path)));
}

TEST_F(WindowCaptureTest, PeriodicWindowsAndTheDiskQuota) {
  // An old window of this job, bigger than the quota: the first new window pushes it out.
  const std::string old_window = dir_.path() + "/" + job_ + "/20200101T000000Z";
  ASSERT_EQ(RunCommand("mkdir -p " + old_window + " && head -c 2097152 /dev/urandom > " +
                       old_window + "/" + job_ + ".oldhost.1.rank0.pb.zst")
                .exit_code,
            0);
  BackgroundCommand job(
      Workload("LUMOS_MODE=periodic LUMOS_PERIOD_S=1 LUMOS_JITTER=0 "
               "LUMOS_WINDOW_ITERATIONS=2 LUMOS_MAX_DISK=1M",
               0, 1, "0 20"));
  ASSERT_TRUE(job.started());
  ASSERT_TRUE(PollUntil(
      [&] {
        return WindowFiles(dir_.path(), job_).size() >= 2 && access(old_window.c_str(), F_OK) != 0;
      },
      30));
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  std::vector<std::string> files = WindowFiles(dir_.path(), job_);
  ASSERT_GE(files.size(), 2u);
  uint64_t previous_start = 0;
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    WindowFile f = ReadWindowFile(path);
    ASSERT_TRUE(f.header.has_capture_window());
    EXPECT_EQ(f.header.capture_window().trigger(), pb::WINDOW_TRIGGER_PERIODIC);
    EXPECT_EQ(f.header.capture_window().target().rfind("periodic slot at ", 0), 0u);
    // The window directory is named after the slot.
    EXPECT_EQ(f.header.capture_window().target().substr(17), Basename(Parent(path)));
    ASSERT_TRUE(f.has_window_packet);
    if (f.window.missed_target().empty()) {
      EXPECT_EQ(f.window.iteration_count(), 2u);
    }
    EXPECT_GT(f.window.start_realtime_ns(), previous_start);
    previous_start = f.window.start_realtime_ns();
  }
}

TEST_F(WindowCaptureTest, AJobEndingMidWindowLeavesAReadableCorrectlyNamedFile) {
  // Killed (SIGKILL): the .partial stays; the next agent on the host gives it its final name.
  BackgroundCommand killed(Workload("LUMOS_MODE=on-demand", 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --duration 60")).exit_code, 0);
  ASSERT_TRUE(PollUntil(
      [&] {
        std::vector<std::string> partial = PartialFiles(dir_.path(), job_);
        struct stat st {};
        return partial.size() == 1 && stat(partial[0].c_str(), &st) == 0 && st.st_size > 4096;
      },
      30));
  killed.Signal(SIGKILL);
  EXPECT_EQ(killed.Wait().exit_code, 128 + SIGKILL);
  ASSERT_EQ(PartialFiles(dir_.path(), job_).size(), 1u);

  // Ends by itself (SIGTERM: the loop stops, the process exits) during its window.
  BackgroundCommand exits(Workload("LUMOS_MODE=on-demand", 1, 2, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --duration 60")).exit_code, 0);
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("capturing") == 1; }, 30));
  // Its window opened: the orphan of the killed process has its final name now, and then
  // (the writer recovers orphans before it creates its own file) the running window's own
  // .partial appears. Polled: read at once it raced that creation (one CI run in many).
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 1; }, 30));
  EXPECT_TRUE(PollUntil([&] { return PartialFiles(dir_.path(), job_).size() == 1; }, 30));
  exits.Signal(SIGTERM);
  EXPECT_EQ(exits.Wait().exit_code, 0);

  std::vector<std::string> files = WindowFiles(dir_.path(), job_);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(PartialFiles(dir_.path(), job_).empty());
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    WindowFile f = ReadWindowFile(path);
    ASSERT_TRUE(f.header.has_capture_window());
    if (path.find(".rank0.") != std::string::npos) {
      EXPECT_FALSE(f.nvtx.empty());      // What reached the file before the kill (> 4 KiB).
      EXPECT_FALSE(f.read.has_trailer);  // Killed: a readable prefix.
      EXPECT_FALSE(f.has_window_packet);
    } else {
      EXPECT_TRUE(f.read.has_trailer);
      EXPECT_TRUE(f.read.damage.ok());
      ASSERT_TRUE(f.has_window_packet);
      EXPECT_NE(f.window.missed_target().find("the process ended during the window"),
                std::string::npos);
    }
  }
}

TEST_F(WindowCaptureTest, ALoopWithoutMarkersGetsATimedWindowThatSaysWhy) {
  BackgroundCommand job(
      Workload("LUMOS_MODE=on-demand LUMOS_ITERATION_MARKER=Iteration* "
               "LUMOS_WINDOW_S=0.3",
               0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --iterations 2")).exit_code, 0);
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 1; }, 30));
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  WindowFile f = ReadWindowFile(WindowFiles(dir_.path(), job_)[0]);
  ASSERT_TRUE(f.has_window_packet);
  EXPECT_EQ(f.window.iteration_count(), 0u);
  EXPECT_NE(f.window.missed_target().find("no iteration marker seen"), std::string::npos);
  EXPECT_GE(f.window.duration_ns(), 300'000'000u);
  EXPECT_FALSE(f.nvtx.empty());
}

// The request id lumos-ctl capture printed ("pid P: accepted (request N)").
std::string RequestId(const std::string& capture_out) {
  const std::string key = "(request ";
  const size_t at = capture_out.find(key);
  if (at == std::string::npos) return "";
  return capture_out.substr(at + key.size(), capture_out.find(')', at) - at - key.size());
}

// An armed window cancelled before its --at time: nothing written, the agent dormant again, and
// status says what the cancel did.
TEST_F(WindowCaptureTest, ACancelledArmedWindowWritesNothing) {
  BackgroundCommand job(Workload("LUMOS_MODE=on-demand", 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  const auto capture = RunCommand(Ctl("capture --job " + job_ + " --at +1h --iterations 2"));
  ASSERT_EQ(capture.exit_code, 0) << capture.out << capture.err;
  const std::string id = RequestId(capture.out);
  ASSERT_FALSE(id.empty()) << capture.out;
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("armed") == 1; }, 30));
  // Another request's id: nothing cancelled, and said so.
  const auto wrong = RunCommand(Ctl("cancel --job " + job_ + " --request 1"));
  EXPECT_EQ(wrong.exit_code, 0) << wrong.err;
  EXPECT_NE(
      wrong.out.find(": nothing to cancel: the window armed is request " + id + ", not request 1"),
      std::string::npos)
      << wrong.out;
  EXPECT_EQ(AgentsIn("armed"), 1);
  const auto cancel = RunCommand(Ctl("cancel --job " + job_ + " --request " + id));
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(cancel.out.find(": cancelled: request " + id + ": armed, dropped before it starts"),
            std::string::npos)
      << cancel.out;
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  const auto status = RunCommand(Ctl("status"));
  EXPECT_NE(status.out.find("last cancel: request " + id + ": cancelled while armed, by uid "),
            std::string::npos)
      << status.out;
  const auto json = RunCommand(Ctl("status --json"));
  EXPECT_NE(json.out.find("\"last_cancel\": \"request " + id + ": cancelled while armed"),
            std::string::npos)
      << json.out;
  // Nothing left to cancel.
  const auto again = RunCommand(Ctl("cancel --job " + job_));
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.out.find(": nothing to cancel: no window is armed or capturing"),
            std::string::npos)
      << again.out;
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
  EXPECT_TRUE(ListDir(dir_.path() + "/" + job_).empty());  // No window, no directory.
}

// A capturing window cancelled midway: a readable, complete, correctly named file whose window
// record says who ended it; the job goes on and can be captured again.
TEST_F(WindowCaptureTest, ACancelledCapturingWindowKeepsAReadableFile) {
  BackgroundCommand job(Workload("LUMOS_MODE=on-demand", 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  const auto capture = RunCommand(Ctl("capture --job " + job_ + " --duration 600"));
  ASSERT_EQ(capture.exit_code, 0) << capture.out << capture.err;
  const std::string id = RequestId(capture.out);
  ASSERT_TRUE(PollUntil([&] { return PartialFiles(dir_.path(), job_).size() == 1; }, 30));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("capturing") == 1; }, 30));
  const auto cancel = RunCommand(Ctl("cancel --job " + job_));
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_NE(
      cancel.out.find(": cancelled: request " + id + ": capturing, ends now; its file is kept"),
      std::string::npos)
      << cancel.out;
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 1; }, 30));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("dormant") == 1; }, 30));
  EXPECT_TRUE(PartialFiles(dir_.path(), job_).empty());
  const auto status = RunCommand(Ctl("status"));
  EXPECT_NE(status.out.find("last cancel: request " + id + ": ended early "), std::string::npos)
      << status.out;
  // The job is still there, and a new window can be captured.
  ASSERT_EQ(RunCommand(Ctl("capture --job " + job_ + " --iterations 1")).exit_code, 0);
  ASSERT_TRUE(PollUntil([&] { return WindowFiles(dir_.path(), job_).size() == 2; }, 30));
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);

  std::vector<std::string> files = WindowFiles(dir_.path(), job_);
  ASSERT_EQ(files.size(), 2u);
  WindowFile f;
  for (const std::string& path : files) {
    WindowFile candidate = ReadWindowFile(path);
    if (candidate.header.capture_window().request_id() == std::stoull(id)) f = candidate;
  }
  ASSERT_FALSE(f.path.empty());
  SCOPED_TRACE(f.path);
  EXPECT_TRUE(f.read.has_trailer);
  EXPECT_TRUE(f.read.damage.ok()) << f.read.damage.message();
  ASSERT_TRUE(f.has_window_packet);
  EXPECT_EQ(f.window.missed_target().rfind("cancelled by uid ", 0), 0u) << f.window.missed_target();
  EXPECT_NE(f.window.missed_target().find("(lumos-ctl cancel)"), std::string::npos);
  EXPECT_GT(f.window.duration_ns(), 0u);
  EXPECT_LT(f.window.duration_ns(), 600'000'000'000u);
  EXPECT_FALSE(f.nvtx.empty());
  // Named as every window: <job>.<host>.<pid>.rank0.pb.zst in <job>/<stamp of its start>/.
  EXPECT_EQ(Basename(f.path).rfind(job_ + ".", 0), 0u);
  EXPECT_EQ(Basename(f.path).substr(Basename(f.path).size() - 13), ".rank0.pb.zst");
  EXPECT_EQ(agent::control::WindowStamp(static_cast<int64_t>(f.window.start_realtime_ns())),
            Basename(Parent(f.path)));
}

TEST_F(WindowCaptureTest, AContinuousAgentSaysItHasNoWindows) {
  BackgroundCommand job(Workload("", 0, 1, "0 10"));
  ASSERT_TRUE(PollUntil([&] { return AgentsIn("recording") == 1; }, 30));
  const auto capture = RunCommand(Ctl("capture --job " + job_ + " --iterations 1"));
  EXPECT_EQ(capture.exit_code, 1);
  EXPECT_NE((capture.out + capture.err).find("records continuously"), std::string::npos)
      << capture.out << capture.err;
  Stop();
  EXPECT_EQ(job.Wait().exit_code, 0);
}

}  // namespace
}  // namespace lumos
