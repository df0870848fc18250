// How the lumos-model commands write files, as a user runs them: real processes of the built
// binary on real traces, real devices and FIFOs, a real full file system (a small tmpfs, where
// this machine lets the test mount one) and a real file size limit (`ulimit -f`), and real
// signals. Every command's output is all there or not there; nothing that existed before is
// replaced by anything less, or at all when it is not a regular file.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::BackgroundCommand;
using ::lumos::testing::CommandResult;
using ::lumos::testing::ListDir;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::PollUntil;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

const std::string kExample = std::string(LUMOS_SOURCE_DIR) + "/examples/dlrm-8rank";
const std::string kSharedTraces = std::string(LUMOS_SOURCE_DIR) + "/../shared/data/traces";

std::string Model(const std::string& args) { return LumosModelBinary() + " " + args; }

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

bool HasTemporaryFile(const std::string& dir) {
  for (const std::string& name : ListDir(dir)) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") return true;
  }
  return false;
}

// A one-rank Kineto trace (launch + kernel).
std::string TinyKineto(int rank) {
  return R"({"distributedInfo": {"rank": )" + std::to_string(rank) +
         R"(, "world_size": 3}, "traceEvents": [
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9,
     "ts": 100, "dur": 5, "args": {"correlation": 1, "cbid": 211}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 110, "dur": 3,
     "args": {"correlation": 1, "stream": 7, "device": 0}}]})";
}

// A small tmpfs mounted for the test: a file system that really fills up (ENOSPC). Mounting
// needs CAP_SYS_ADMIN; where it is not permitted, the tests that need it are skipped (their
// `ulimit -f` twins still run).
class SmallFileSystem {
 public:
  explicit SmallFileSystem(const std::string& size) {
    const std::string options = "size=" + size + ",mode=0755";
    mounted_ = ::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, options.c_str()) == 0;
  }
  ~SmallFileSystem() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallFileSystem(const SmallFileSystem&) = delete;
  SmallFileSystem& operator=(const SmallFileSystem&) = delete;
  bool mounted() const { return mounted_; }
  std::string File(const std::string& name) const { return dir_.File(name); }

 private:
  TempDir dir_;
  bool mounted_ = false;
};

// A private character device node like /dev/null (minor 3) or /dev/full (7): the real ones
// are never given to these tests as outputs. Empty when device nodes cannot be made here.
std::string MakeCharDevice(const TempDir& dir, const std::string& name, unsigned minor) {
  const std::string path = dir.File(name);
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(1, minor)) != 0) return "";
  if (::access(path.c_str(), W_OK) != 0) return "";
  return path;
}

TEST(OutputCommandsTest, ExportWritesThroughADeviceAndNeverReplacesIt) {
  TempDir dir;
  const std::string null_device = MakeCharDevice(dir, "null", 3);
  const std::string full_device = MakeCharDevice(dir, "full", 7);
  if (null_device.empty() || full_device.empty()) {
    GTEST_SKIP() << "device nodes cannot be made here (root, no nodev); the FIFO test covers "
                    "writing through";
  }
  CommandResult r = RunCommand(Model("export " + kExample + " -o " + null_device));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(S_ISCHR(ModeOf(null_device))) << "replaced by a regular file";

  r = RunCommand(Model("export " + kExample + " -o " + full_device));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "lumos-model export: writing " + full_device + ": No space left on device\n");
  EXPECT_TRUE(S_ISCHR(ModeOf(full_device))) << "replaced by a regular file";
  EXPECT_EQ(ListDir(dir.path()).size(), 2u) << "a temporary file was left";
}

TEST(OutputCommandsTest, ExportAndTimelineWriteThroughAFifoToItsReader) {
  TempDir dir;
  CommandResult r = RunCommand(Model("export " + kExample + " -q -o " + dir.File("plain.json")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string fifo = dir.File("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  {
    BackgroundCommand reader("cat " + fifo);
    ASSERT_TRUE(reader.started());
    r = RunCommand(Model("export " + kExample + " -q -o " + fifo));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(S_ISFIFO(ModeOf(fifo))) << "replaced by a regular file";
    // The reader sees the whole export: it ends when the writer closes the FIFO. (Were the
    // FIFO replaced, the reader would wait for a writer that never comes, until the
    // destructor kills it.)
    ASSERT_TRUE(PollUntil([&] { return !reader.Running(); }, 60)) << "the reader got no EOF";
    CommandResult read = reader.Wait();
    EXPECT_EQ(read.exit_code, 0);
    EXPECT_EQ(read.out, ReadFileBytes(dir.File("plain.json")));
  }
  {
    BackgroundCommand reader("cat " + fifo);
    r = RunCommand(Model("replay " + kExample + " --timeline " + fifo));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(PollUntil([&] { return !reader.Running(); }, 60)) << "the reader got no EOF";
    EXPECT_EQ(reader.Wait().out.substr(0, 1), "{");
    EXPECT_TRUE(S_ISFIFO(ModeOf(fifo)));
  }
  // -o /dev/stdout into a pipe: a private link of the same kind (to /proc/self/fd/1).
  const std::string stdout_link = dir.File("stdout");
  ASSERT_EQ(::symlink("/proc/self/fd/1", stdout_link.c_str()), 0);
  r = RunCommand(Model("export " + kExample + " -q -o " + stdout_link) + " | cat >" +
                 dir.File("copy.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileBytes(dir.File("copy.json")), ReadFileBytes(dir.File("plain.json")));
  EXPECT_TRUE(S_ISLNK(ModeOf(stdout_link)));
  EXPECT_EQ(ListDir(dir.path()).size(), 4u);
}

TEST(OutputCommandsTest, ADirectoryAsTheOutputFileIsRefusedWithTheReason) {
  TempDir dir;
  const std::string out = dir.File("out.json");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  WriteFileBytes(out + "/keep", "mine");
  for (const std::string& command :
       {"export " + kExample + " -o " + out, "replay " + kExample + " --timeline " + out}) {
    CommandResult r = RunCommand(Model(command));
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(Lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(out + ": it is a directory"), std::string::npos) << r.err;
    EXPECT_EQ(ListDir(out), std::vector<std::string>{"keep"});
    EXPECT_EQ(ListDir(dir.path()), std::vector<std::string>{"out.json"});
  }
}

// `import kineto one_bad_of_three.tar.gz -o d`: the bad rank fails the import, and d is left as
// it was: the user's own d/w0.pb.zst (which the good first rank would replace) byte for byte,
// and no temporary file, no w1.pb.zst.
TEST(OutputCommandsTest, FailedImportLeavesEveryExistingFileAsItWas) {
  TempDir dir;
  ASSERT_EQ(::mkdir(dir.File("in").c_str(), 0755), 0);
  WriteFileBytes(dir.File("in/w0.json"), TinyKineto(0));
  WriteFileBytes(dir.File("in/w1.json"), TinyKineto(1));
  WriteFileBytes(dir.File("in/w2.json"), "{\"traceEvents\": [ {\"ph\": ");
  CommandResult tar = RunCommand("tar -C " + dir.File("in") + " -czf " + dir.File("three.tar.gz") +
                                 " w0.json w1.json w2.json");
  ASSERT_EQ(tar.exit_code, 0) << tar.err;
  const std::string d = dir.File("d");
  ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
  const std::string mine = "the user's own trace, not to be touched";
  WriteFileBytes(d + "/w0.pb.zst", mine);

  // A file import did not write is refused before anything is converted.
  CommandResult r = RunCommand(Model("import kineto " + dir.File("three.tar.gz") + " -o " + d));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("will not replace " + d + "/w0.pb.zst"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileBytes(d + "/w0.pb.zst"), mine);
  // Forced, the bad rank still fails the whole import: nothing replaced.
  r = RunCommand(Model("import kineto " + dir.File("three.tar.gz") + " -o " + d + " --force"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(":w2.json"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileBytes(d + "/w0.pb.zst"), mine);
  EXPECT_EQ(ListDir(d), std::vector<std::string>{"w0.pb.zst"});

  // The same import without the bad rank replaces it, and all is there.
  r = RunCommand("tar -C " + dir.File("in") + " -czf " + dir.File("two.tar.gz") +
                 " w0.json w1.json");
  ASSERT_EQ(r.exit_code, 0);
  r = RunCommand(Model("import kineto " + dir.File("two.tar.gz") + " -o " + d + " --force"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(ReadFileBytes(d + "/w0.pb.zst"), mine);
  EXPECT_EQ(ListDir(d).size(), 2u);
  // Its own earlier import is replaced without --force.
  r = RunCommand(Model("import kineto " + dir.File("two.tar.gz") + " -o " + d));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(OutputCommandsTest, ImportOntoItsOwnInputIsRefused) {
  TempDir dir;
  const std::string in = dir.File("x.json");
  WriteFileBytes(in, TinyKineto(0));
  CommandResult r = RunCommand(Model("import kineto " + in + " -o " + in));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("also an input"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileBytes(in), TinyKineto(0));
  // Through another name of the same file, too.
  ASSERT_EQ(::symlink("x.json", dir.File("alias.json").c_str()), 0);
  r = RunCommand(Model("import kineto " + in + " -o " + dir.File("alias.json")));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(ReadFileBytes(in), TinyKineto(0));
  EXPECT_EQ(ListDir(dir.path()).size(), 2u);
}

// Nor is a timeline written over one of the replay's inputs, nor a synth job over its input.
TEST(OutputCommandsTest, TimelineAndSynthOntoTheirInputsAreRefused) {
  TempDir dir;
  CommandResult r =
      RunCommand(Model("synth " + kExample + " -o " + dir.File("job") + " --ranks 8"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string rank0 = dir.File("job/synth-8x1.rank0.pb.zst");
  const std::string before = ReadFileBytes(rank0);
  ASSERT_FALSE(before.empty());
  r = RunCommand(Model("replay " + dir.File("job") + " --timeline " + rank0));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("lumos-model replay: the timeline " + rank0 + " is also an input\n", 0), 0u)
      << r.err;
  r = RunCommand(Model("synth " + dir.File("job") + " -o " + dir.File("job") + " --ranks 8"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("the output " + rank0 + " is the input"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFileBytes(rank0), before);
  EXPECT_EQ(ListDir(dir.File("job")).size(), 8u);
}

// `import kineto traces/*.json.gz -o run/` when the glob matches one file: -o ending in '/' or
// naming a directory is a directory.
TEST(OutputCommandsTest, ImportOfOneTraceIntoADirectory) {
  TempDir dir;
  WriteFileBytes(dir.File("rank0.json"), TinyKineto(0));
  CommandResult r =
      RunCommand(Model("import kineto " + dir.File("rank0.json") + " -o " + dir.File("run/")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(dir.File("run")), std::vector<std::string>{"rank0.pb.zst"});
  r = RunCommand(Model("import kineto " + dir.File("rank0.json") + " -o " + dir.File("run")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ListDir(dir.File("run")), std::vector<std::string>{"rank0.pb.zst"});
  r = RunCommand(Model("inspect " + dir.File("run")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// SIGTERM (or SIGINT) while a command writes: the process ends by the signal and leaves no
// temporary file and no partial output. Each job is far longer than it takes to notice its
// first temporary file and send the signal; the test waits for that file, not for a time.
struct SignalCase {
  const char* name;
  int signal_number;
};
void PrintTo(const SignalCase& c, std::ostream* os) { *os << c.name; }

class SignalDuringOutputTest : public ::testing::TestWithParam<SignalCase> {
 protected:
  // Starts `args`, waits for a file to appear in `out_dir` (a temporary file, or before the
  // fix any output), signals the process and checks what it leaves in `out_dir`.
  void SignalWhileWriting(const std::string& args, const std::string& out_dir,
                          const std::vector<std::string>& left_before) {
    BackgroundCommand job(Model(args));
    ASSERT_TRUE(job.started());
    const bool writing = PollUntil(
        [&] { return ListDir(out_dir).size() > left_before.size() || !job.Running(); }, 300);
    ASSERT_TRUE(writing && job.Running())
        << "the job ended before it could be signalled: " << job.Wait().err;
    job.Signal(GetParam().signal_number);
    CommandResult r = job.Wait();
    EXPECT_EQ(r.exit_code, 128 + GetParam().signal_number) << r.err;
    EXPECT_FALSE(HasTemporaryFile(out_dir));
    EXPECT_EQ(ListDir(out_dir), left_before) << "partial output left behind";
  }
};

TEST_P(SignalDuringOutputTest, Export) {
  TempDir dir;
  // 600 copies of the example's 8 ranks (8 MB): 1.5 M events, several seconds of work.
  ASSERT_EQ(::mkdir(dir.File("in").c_str(), 0755), 0);
  const std::vector<std::string> ranks = ListDir(kExample);
  ASSERT_EQ(ranks.size(), 8u);
  for (int i = 0; i < 600; ++i) {
    WriteFileBytes(dir.File("in/r" + std::to_string(i) + ".pb.zst"),
                   ReadFileBytes(kExample + "/" + ranks[static_cast<size_t>(i) % ranks.size()]));
  }
  ASSERT_EQ(::mkdir(dir.File("out").c_str(), 0755), 0);
  WriteFileBytes(dir.File("out/big.json"), "{\"lumos_output\":\"export\"} an older export");
  SignalWhileWriting("export " + dir.File("in") + " -o " + dir.File("out/big.json"),
                     dir.File("out"), {"big.json"});
  EXPECT_EQ(ReadFileBytes(dir.File("out/big.json")),
            "{\"lumos_output\":\"export\"} an older export");
}

TEST_P(SignalDuringOutputTest, Import) {
  TempDir dir;
  // 16 copies of one real 1.7 MB trace: about 0.4 s of conversion each.
  const std::string trace = ReadFileBytes(kSharedTraces + "/hta-single-rank/control.json.gz");
  ASSERT_GT(trace.size(), 1000000u);
  std::string inputs;
  for (int i = 0; i < 16; ++i) {
    const std::string name = dir.File("rank" + std::to_string(i) + ".json.gz");
    WriteFileBytes(name, trace);
    inputs += " " + name;
  }
  ASSERT_EQ(::mkdir(dir.File("out").c_str(), 0755), 0);
  SignalWhileWriting("import kineto" + inputs + " -o " + dir.File("out"), dir.File("out"), {});
}

TEST_P(SignalDuringOutputTest, Synth) {
  TempDir dir;
  // 1024 ranks of 50 iterations: 127 M events.
  ASSERT_EQ(::mkdir(dir.File("out").c_str(), 0755), 0);
  WriteFileBytes(dir.File("out/notes.txt"), "mine");
  SignalWhileWriting(
      "synth " + kExample + " -o " + dir.File("out") + " --ranks 1024 --iterations 50",
      dir.File("out"), {"notes.txt"});
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalDuringOutputTest,
                         ::testing::Values(SignalCase{"SIGTERM", SIGTERM},
                                           SignalCase{"SIGINT", SIGINT}),
                         [](const auto& info) { return std::string(info.param.name); });

// `replay --timeline` onto an earlier timeline, with no room for the new one: the earlier file
// stays whole, the error says why, and no temporary file is left.
void ExpectTimelineFailureKeepsThePrevious(const std::string& timeline, const std::string& limit,
                                           const std::string& reason) {
  CommandResult r = RunCommand(Model("replay " + kExample + " --timeline " + timeline));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string previous = ReadFileBytes(timeline);
  ASSERT_GT(previous.size(), 1000000u);
  r = RunCommand(limit + Model("replay " + kExample + " --timeline " + timeline));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "lumos-model replay: writing " + timeline + ": " + reason + "\n");
  EXPECT_TRUE(ReadFileBytes(timeline) == previous) << "the earlier timeline was changed";
  const std::string dir = timeline.substr(0, timeline.rfind('/'));
  EXPECT_EQ(ListDir(dir).size(), 1u) << "a temporary file was left";
}

TEST(OutputCommandsTest, TimelineOnAFullDiskKeepsThePreviousFile) {
  SmallFileSystem disk("5m");  // Room for one 3.2 MB timeline, not two.
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  ExpectTimelineFailureKeepsThePrevious(disk.File("replay.json"), "", "No space left on device");
}

TEST(OutputCommandsTest, TimelineBeyondTheFileSizeLimitKeepsThePreviousFile) {
  TempDir dir;
  // 1000 blocks: 500 KB where sh counts 512 bytes (dash), 1 MB where it counts 1 KB (bash);
  // either way well below the 3.2 MB timeline.
  ExpectTimelineFailureKeepsThePrevious(dir.File("replay.json"), "ulimit -f 1000; ",
                                        "File too large");
}

// synth with no room for all ranks: nothing of the job is left, the directory's own files are,
// and there is one error line naming the file and the reason (no log line from the writer).
void ExpectSynthLeavesNothing(const std::string& out, const std::string& limit,
                              const std::string& reason) {
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  WriteFileBytes(out + "/notes.txt", "mine");
  CommandResult r =
      RunCommand(limit + Model("synth " + kExample + " -o " + out + " --ranks 64 --iterations 40"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("lumos-model synth: writing " + out + "/synth-64x40.rank", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[lumos"), std::string::npos) << r.err;
  EXPECT_EQ(ListDir(out), std::vector<std::string>{"notes.txt"});
}

// A job larger than the file system's free space is refused before anything is written (exit 2,
// the sizes named); a disk that fills during the writing is the RLIMIT_FSIZE case below.
TEST(OutputCommandsTest, SynthLargerThanTheFreeSpaceIsRefusedUpFront) {
  SmallFileSystem disk("1m");  // The job takes about 34 MB.
  if (!disk.mounted()) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  const std::string out = disk.File("big");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  WriteFileBytes(out + "/notes.txt", "mine");
  CommandResult r =
      RunCommand(Model("synth " + kExample + " -o " + out + " --ranks 64 --iterations 40"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("lumos-model synth: --ranks 64 --iterations 40: about ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" free where " + out + " is\n"), std::string::npos) << r.err;
  EXPECT_EQ(ListDir(out), std::vector<std::string>{"notes.txt"});
}

TEST(OutputCommandsTest, SynthBeyondTheFileSizeLimitLeavesNothing) {
  TempDir dir;
  // 40 blocks: 20 KB (or 40 KB, see above) per file, each rank takes about 105 KB.
  ExpectSynthLeavesNothing(dir.File("big"), "ulimit -f 40; ", "RLIMIT_FSIZE");
}

}  // namespace
}  // namespace lumos::modeler
