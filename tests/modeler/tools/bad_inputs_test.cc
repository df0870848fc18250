// Every lumos-model command on inputs it cannot read: a real process on real files, each named
// with its reason on stderr, exit status 1, never a hang (each run is bounded by timeout(1), so
// a regression fails instead of blocking the suite) and never a silent loss.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "modeler/trace/trace_reader.h"
#include "tests/testing/run_command.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::CommandResult;
using ::lumos::testing::LumosModelBinary;
using ::lumos::testing::RunCommand;
using ::lumos::testing::TempDir;

// Killed after 20 s (each needs milliseconds), with exit status 137.
CommandResult RunBounded(const std::string& args) {
  return RunCommand("timeout -s KILL 20 " + LumosModelBinary() + " " + args);
}

// mkfifo p.pb.zst; lumos-model inspect p.pb.zst waited forever for a writer, and so did every
// other command (open(2) of a FIFO blocks).
TEST(BadInputsTest, FifoIsRefusedByEveryCommandWithoutWaiting) {
  TempDir dir;
  const std::string fifo = dir.File("p.pb.zst");
  const std::string json_fifo = dir.File("p.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(mkfifo(json_fifo.c_str(), 0600), 0);
  const std::string commands[] = {
      "inspect " + fifo,
      "inspect --json " + fifo,
      "replay " + fifo,
      "export " + fifo + " -o " + dir.File("out.json"),
      "synth " + fifo + " -o " + dir.File("synth") + " --ranks 1",
      "import kineto " + json_fifo + " -o " + dir.File("imported.pb.zst"),
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    CommandResult r = RunBounded(command);
    EXPECT_EQ(r.exit_code, 1) << r.err;  // 137: killed by the timeout, it blocked.
    const std::string& name = command.rfind("import", 0) == 0 ? json_fifo : fifo;
    EXPECT_NE(r.err.find(name + ": not a regular file (a FIFO)"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.File("out.json")));
  EXPECT_FALSE(std::filesystem::exists(dir.File("imported.pb.zst")));
}

// The prefix that runs lumos-model without privileges ("" when not root; root reads every
// directory whatever its mode), or nullopt when that is not possible here.
std::optional<std::string> Unprivileged() {
  if (geteuid() != 0) return std::string();
  std::string prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (RunCommand(prefix + "test -x " + LumosModelBinary()).exit_code != 0) return std::nullopt;
  return prefix;
}

// An unreadable subdirectory silently stopped the walk of a directory argument: the files after
// it were dropped and their ranks reported "missing". Now it is named and the rest is read.
TEST(BadInputsTest, UnreadableSubdirectoryIsNamedAndTheWalkGoesOn) {
  std::optional<std::string> prefix = Unprivileged();
  if (!prefix) GTEST_SKIP() << "running as root without setpriv(1) or access for nobody";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0755), 0);
  const std::string job = dir.File("job");
  for (int rank = 0; rank < 4; ++rank) {
    // Rank 1 in a directory nobody may read; readdir(3) order puts the others before or after.
    const std::string sub = job + (rank == 1 ? "/locked" : "/r" + std::to_string(rank));
    std::filesystem::create_directories(sub);
    auto writer = schema::TraceFileWriter::Create(
        sub + "/t.pb.zst", ::lumos::testing::SampleHeader(rank, 4), schema::WriterOptions());
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Close(0).ok());
    ASSERT_EQ(chmod((sub + "/t.pb.zst").c_str(), 0644), 0);
  }
  ASSERT_EQ(chmod((job + "/locked").c_str(), 0), 0);
  CommandResult r =
      RunCommand(*prefix + "timeout -s KILL 20 " + LumosModelBinary() + " inspect " + job);
  ASSERT_EQ(chmod((job + "/locked").c_str(), 0755), 0);  // So TempDir can remove it.
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "lumos-model inspect: " + job +
                       "/locked: cannot read this directory: Permission denied\n");
  EXPECT_NE(r.out.find("job sample-job: 3 file(s), ranks 0 2 3 of 4; missing 1"), std::string::npos)
      << r.out;
}

// A directory mounted inside itself was walked twice: its traces counted twice (one rank, two
// files). Needs a private mount namespace (root and unshare(1)); skipped elsewhere.
TEST(BadInputsTest, ADirectoryReachedTwiceIsWalkedOnce) {
  if (geteuid() != 0 || RunCommand("unshare -m true").exit_code != 0) {
    GTEST_SKIP() << "needs root and unshare(1) for a private bind mount";
  }
  TempDir dir;
  const std::string job = dir.File("job");
  std::filesystem::create_directories(job + "/sub/again");
  auto writer = schema::TraceFileWriter::Create(job + "/sub/t.pb.zst",
                                                ::lumos::testing::SampleHeader(0, 1), {});
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Close(0).ok());
  CommandResult r = RunCommand("unshare -m sh -c 'mount --bind " + job + " " + job +
                               "/sub/again && timeout -s KILL 20 " + LumosModelBinary() +
                               " inspect " + job + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("job sample-job: 1 file(s), ranks 0 of 1 (all present)"), std::string::npos)
      << r.out;
}

// A path longer than PATH_MAX: the message was cut at 1024 bytes, before its reason (and the
// reason given was "no such file or directory").
TEST(BadInputsTest, ErrorOnAPathLongerThanPathMaxKeepsItsReason) {
  std::string path;
  while (path.size() <= 4096) path += "dir/";
  path += "r0.pb.zst";
  CommandResult r = RunBounded("inspect " + path);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "lumos-model inspect: " + path + ": cannot open: File name too long\n");
}

// The importer's diagnostics reach the user: warnings on stderr naming the input, the trace
// still written (exit 0); nothing usable: no output and exit 1.
TEST(BadInputsTest, ImportSaysWhatIsWrongWithItsInput) {
  TempDir dir;
  const std::string launch =
      R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 9, "tid": 9,
          "ts": 100, "dur": 5, "args": {"correlation": 1}})";
  ::lumos::testing::WriteFileBytes(
      dir.File("odd.json"),
      R"({"distributedInfo": {"rank": 2, "world_size": 2}, "traceEvents": [)" + launch + "," +
          launch + "]}");
  CommandResult r =
      RunBounded("import kineto " + dir.File("odd.json") + " -o " + dir.File("odd.pb.zst"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("lumos-model import: warning: " + dir.File("odd.json") +
                       ": distributedInfo gives rank 2, not below its world_size 2"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("lumos-model import: warning: " + dir.File("odd.json") +
                       ": 1 CUDA API call(s) repeat the correlation id"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir.File("odd.pb.zst")));

  ::lumos::testing::WriteFileBytes(dir.File("none.json"),
                                   R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 1}]})");
  r = RunBounded("import kineto " + dir.File("none.json") + " -o " + dir.File("none.pb.zst"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "lumos-model import: " + dir.File("none.json") +
                       ": none of its events could be converted (1 skipped; the first: "
                       "traceEvents[0]: \"dur\" is missing, negative or not a number in range)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.File("none.pb.zst")));
}

// One rank of a 2-rank job: 300 launches and kernels in many frames, and a LossRecord.
void WriteRank(const std::string& path, int32_t rank) {
  schema::WriterOptions options;
  options.frame_bytes = 2048;
  auto writer =
      schema::TraceFileWriter::Create(path, ::lumos::testing::SampleHeader(rank, 2), options);
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 1; i <= 300; ++i) {
    const int64_t t = static_cast<int64_t>(1000 * i);
    (*writer)->Add(schema::ApiCallEvent{.start_ns = t,
                                        .duration_ns = 50,
                                        .thread_id = 7,
                                        .correlation_id = i,
                                        .kind = schema::ApiKind::kLaunchKernel,
                                        .name = "cudaLaunchKernel"});
    (*writer)->Add(schema::KernelEvent{.start_ns = t + 100,
                                       .duration_ns = 500,
                                       .correlation_id = i,
                                       .stream_id = 7,
                                       .name = "gemm"});
  }
  (*writer)->Add(schema::LossEvent{.start_ns = 5000,
                                   .source = schema::LossSource::kRingFull,
                                   .count = 5,
                                   .thread_id = 7,
                                   .detail = "ring full"});
  ASSERT_TRUE((*writer)->Close(400'000).ok());
}

std::vector<pb::LossRecord> ReadLosses(const std::string& path) {
  std::vector<pb::LossRecord> losses;
  ReadResult result;
  auto packets = ReadAllPackets(path, &result);
  EXPECT_TRUE(packets.ok()) << packets.status().message();
  EXPECT_TRUE(result.closed_cleanly()) << result.damage.message();
  if (!packets.ok()) return losses;
  for (const pb::TracePacket& p : *packets) {
    if (p.has_loss()) losses.push_back(p.loss());
  }
  return losses;
}

// synth of a damaged input wrote outputs that claimed to be whole (no LossRecord, not even the
// input's own). Every copy of the input now carries what it lost; the damage is named on stderr
// and the exit status is 1.
TEST(BadInputsTest, SynthOfADamagedInputCarriesTheLoss) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("in"));
  WriteRank(dir.File("in/r0.pb.zst"), 0);
  WriteRank(dir.File("in/r1.pb.zst"), 1);
  const std::string cut = dir.File("in/r1.pb.zst");
  std::string bytes = ::lumos::testing::ReadFileBytes(cut);
  ::lumos::testing::WriteFileBytes(cut, bytes.substr(0, bytes.size() / 2));

  CommandResult r = RunBounded("synth " + dir.File("in") + " -o " + dir.File("out") +
                               " --ranks 2 --iterations 2");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("lumos-model synth: " + cut + ": byte offset "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated frame"), std::string::npos) << r.err;

  // Rank 0's input was whole: its LossRecord, once per copy of the input.
  std::vector<pb::LossRecord> whole = ReadLosses(dir.File("out/synth-2x2.rank0.pb.zst"));
  ASSERT_EQ(whole.size(), 2u);
  for (const pb::LossRecord& loss : whole) {
    EXPECT_EQ(loss.source(), pb::LOSS_SOURCE_RING_FULL);
    EXPECT_EQ(loss.count(), 5u);
    EXPECT_EQ(loss.detail(), "ring full");
  }
  CommandResult inspect = RunBounded("inspect " + dir.File("out/synth-2x2.rank0.pb.zst"));
  EXPECT_NE(inspect.out.find("loss       10 events: ring_full 10"), std::string::npos)
      << inspect.out;

  // Rank 1's was cut short: its own record is gone with the tail; each copy says it is
  // incomplete, naming the input and where it is damaged.
  std::vector<pb::LossRecord> damaged = ReadLosses(dir.File("out/synth-2x2.rank1.pb.zst"));
  ASSERT_EQ(damaged.size(), 2u);
  for (const pb::LossRecord& loss : damaged) {
    EXPECT_EQ(loss.source(), pb::LOSS_SOURCE_IMPORT_SKIPPED);
    EXPECT_NE(loss.detail().find("the input " + cut + " is damaged (" + cut + ": byte offset "),
              std::string::npos)
        << loss.detail();
  }
}

}  // namespace
}  // namespace lumos::modeler
