// The file writer against real files and real processes: frames by size and time, crash
// safety under SIGKILL, the process's file size limit (RLIMIT_FSIZE), write failures (/dev/full:
// one warning, loss records carried over) and the file size limit.
#include "schema/writer/trace_file_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>

#include "modeler/trace/trace_reader.h"
#include "schema/format.h"
#include "tests/testing/sample_trace.h"

namespace lumos::schema {
namespace {

namespace pb = ::lumos::trace;
using ::lumos::testing::SampleHeader;
using ::lumos::testing::TempDir;

struct ReadBack {
  std::vector<uint64_t> kernel_correlations;
  std::vector<int64_t> kernel_starts;
  uint64_t losses = 0;
  std::map<std::string, uint64_t> losses_by_detail;
  modeler::ReadResult result;
};

ReadBack ReadKernels(const std::string& path) {
  ReadBack back;
  auto reader = modeler::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return back;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const modeler::PacketContext& context) {
        if (packet.has_kernel()) {
          back.kernel_correlations.push_back(packet.kernel().correlation_id());
          back.kernel_starts.push_back(context.start_ns);
        }
        if (packet.has_loss()) {
          back.losses += packet.loss().count();
          back.losses_by_detail[packet.loss().detail()] += packet.loss().count();
        }
        return Status::Ok();
      },
      &back.result);
  EXPECT_TRUE(status.ok());
  return back;
}

TEST(TraceFileWriterTest, WritesHeaderFirstAndFlushesBySize) {
  TempDir dir;
  WriterStats stats = ::lumos::testing::WriteSampleTrace(dir.File("t.pb.zst"), 2000, 4096);
  EXPECT_GT(stats.frames_written, 10u);  // 2000 launches + kernels at ~4 KiB a frame.
  EXPECT_EQ(stats.events, 4000u);
  ReadBack back = ReadKernels(dir.File("t.pb.zst"));
  EXPECT_TRUE(back.result.damage.ok()) << back.result.damage.message();
  EXPECT_TRUE(back.result.has_trailer);
  EXPECT_EQ(back.result.frames, stats.frames_written);
  EXPECT_EQ(back.result.trailer.packets_written() + 1 /*the trailer*/, back.result.stored_packets);
  EXPECT_EQ(back.result.trailer.events_written(), stats.events);
  EXPECT_EQ(back.result.events, stats.events);
  EXPECT_EQ(back.result.trailer.frames_written() + 1, back.result.frames);
  ASSERT_EQ(back.kernel_correlations.size(), 2000u);
  for (uint64_t i = 0; i < 2000; ++i) {
    EXPECT_EQ(back.kernel_correlations[i], i);
    EXPECT_EQ(back.kernel_starts[i], static_cast<int64_t>(1000 + 1000 * i));  // Absolute again.
  }
}

// However large frame_bytes is, a frame never holds more events than readers accept.
TEST(TraceFileWriterTest, FramesFlushByEventCountToo) {
  TempDir dir;
  WriterOptions options;
  options.frame_bytes = uint64_t{1} << 40;
  auto writer = TraceFileWriter::Create(dir.File("t.pb.zst"), SampleHeader(), options);
  ASSERT_TRUE(writer.ok());
  const uint64_t frames_after_header = (*writer)->stats().frames_written;
  for (uint64_t i = 0; i < schema::kMaxFrameEventsWritten + 10; ++i) {
    (*writer)->Add(MemsetEvent{.start_ns = static_cast<int64_t>(i), .bytes = 64});
  }
  EXPECT_EQ((*writer)->stats().frames_written, frames_after_header + 1);
  ASSERT_TRUE((*writer)->Close(0).ok());
  modeler::ReadResult result;
  auto reader = modeler::TraceReader::Open(dir.File("t.pb.zst"));
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)
                  ->ReadFrames([](const modeler::FrameEvents&) { return Status::Ok(); }, &result)
                  .ok());
  EXPECT_TRUE(result.damage.ok()) << result.damage.message();
  EXPECT_EQ(result.events, schema::kMaxFrameEventsWritten + 10);
}

TEST(TraceFileWriterTest, MaybeFlushFlushesOldFramesOnly) {
  TempDir dir;
  WriterOptions options;
  options.frame_bytes = 1 << 30;
  options.flush_interval_ns = 1000;
  auto writer = TraceFileWriter::Create(dir.File("t.pb.zst"), SampleHeader(), options);
  ASSERT_TRUE(writer.ok());
  uint64_t frames_after_header = (*writer)->stats().frames_written;
  (*writer)->Add(KernelEvent{.start_ns = 5, .name = "k"});
  ASSERT_TRUE((*writer)->MaybeFlush(10'000).ok());  // Starts the clock.
  EXPECT_EQ((*writer)->stats().frames_written, frames_after_header);
  ASSERT_TRUE((*writer)->MaybeFlush(10'500).ok());
  EXPECT_EQ((*writer)->stats().frames_written, frames_after_header);
  ASSERT_TRUE((*writer)->MaybeFlush(11'000).ok());
  EXPECT_EQ((*writer)->stats().frames_written, frames_after_header + 1);
  ASSERT_TRUE((*writer)->Close(0).ok());
}

// A child writes frames as fast as it can and is SIGKILLed at some point: every complete
// frame must read back, in order, and the cut-off tail (if any) must be reported. The child
// says through a pipe when it has written `1 + attempt` event frames and goes on writing: the
// kill lands somewhere after those, however late the child was scheduled.
TEST(TraceFileWriterTest, KilledWriterLeavesReadablePrefix) {
  for (int attempt = 0; attempt < 6; ++attempt) {
    TempDir dir;
    std::string path = dir.File("killed.pb.zst");
    int written[2];
    ASSERT_EQ(pipe(written), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(written[0]);
      WriterOptions options;
      options.frame_bytes = 2048 + 4096 * attempt;
      auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
      if (!writer.ok()) _exit(3);
      const uint64_t said_at = (*writer)->stats().frames_written + 1 + attempt;
      for (uint64_t i = 0;; ++i) {
        (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 100),
                                   .duration_ns = 50,
                                   .correlation_id = i,
                                   .name = "k"});
        if ((*writer)->stats().frames_written == said_at &&
            write(written[1], &said_at, sizeof(said_at)) != sizeof(said_at)) {
          _exit(4);
        }
      }
    }
    close(written[1]);
    uint64_t frames_written = 0;  // Header frame included, as the reader counts.
    const ssize_t n = read(written[0], &frames_written, sizeof(frames_written));
    close(written[0]);
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_EQ(n, static_cast<ssize_t>(sizeof(frames_written)))
        << "attempt " << attempt << ": the child ended before its frames, status " << status;
    ASSERT_TRUE(WIFSIGNALED(status));

    ReadBack back = ReadKernels(path);
    EXPECT_FALSE(back.result.has_trailer);
    EXPECT_GE(back.result.frames, frames_written) << "attempt " << attempt;
    EXPECT_GT(back.kernel_correlations.size(), 0u) << "attempt " << attempt;
    for (size_t i = 0; i < back.kernel_correlations.size(); ++i) {
      ASSERT_EQ(back.kernel_correlations[i], i) << "attempt " << attempt;
    }
    if (!back.result.damage.ok()) {
      EXPECT_NE(back.result.damage.message().find("byte offset"), std::string::npos);
      EXPECT_EQ(back.result.bytes_read < back.result.file_bytes, true);
    }
  }
}

// The process's file size limit (ulimit -f): a write past it raises SIGXFSZ, which kills the
// process by default. The writer stays below it instead, keeps room for the trailer and counts
// what did not fit. The child keeps SIGXFSZ's default action, as a traced job would.
TEST(TraceFileWriterTest, ProcessFileSizeLimitCapsTheFileInsteadOfKillingTheProcess) {
  TempDir dir;
  std::string path = dir.File("limited.pb.zst");
  constexpr rlim_t kLimit = 64 * 1024;
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_DFL);
    struct rlimit limit = {kLimit, kLimit};
    setrlimit(RLIMIT_FSIZE, &limit);
    WriterOptions options;
    options.frame_bytes = 8192;
    options.zstd_level = 1;
    auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
    if (!writer.ok()) _exit(3);
    for (uint64_t i = 0; i < 200000; ++i) {
      (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 977 + (i * i) % 313),
                                 .duration_ns = i % 1000,
                                 .correlation_id = i,
                                 .name = "k"});
    }
    bool lost = (*writer)->stats().events_lost > 0;
    if (!(*writer)->Close(0).ok()) _exit(5);
    _exit(lost ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the writer should have counted lost events";
  ReadBack back = ReadKernels(path);
  EXPECT_TRUE(back.result.damage.ok()) << back.result.damage.message();
  EXPECT_TRUE(back.result.has_trailer);
  EXPECT_LE(back.result.file_bytes, kLimit);
  ASSERT_GT(back.kernel_correlations.size(), 0u);
  for (size_t i = 1; i < back.kernel_correlations.size(); ++i) {
    ASSERT_LT(back.kernel_correlations[i - 1], back.kernel_correlations[i]);
  }
  EXPECT_GT(back.losses, 0u);
  EXPECT_EQ(back.kernel_correlations.size() + back.losses, 200000u);
}

// No room for a trace at all (`ulimit -f 0`, or less than the preamble, header and trailer
// need): Create fails and leaves no file, and the process is not killed by SIGXFSZ (its first
// write, the preamble, used to raise it). The child keeps SIGXFSZ's default action.
TEST(TraceFileWriterTest, FileSizeLimitWithoutRoomForATraceFailsCreateAndLeavesNoFile) {
  for (const rlim_t limit : {rlim_t{0}, rlim_t{100}, rlim_t{TraceFileWriter::kMinFileBytes - 1}}) {
    TempDir dir;
    const std::string path = dir.File("none.pb.zst");
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      signal(SIGXFSZ, SIG_DFL);
      struct rlimit file_size = {limit, RLIM_INFINITY};
      if (setrlimit(RLIMIT_FSIZE, &file_size) != 0) _exit(2);
      auto writer = TraceFileWriter::Create(path, SampleHeader(), WriterOptions());
      if (writer.ok()) _exit(3);
      if (writer.status().message().find("RLIMIT_FSIZE") == std::string::npos) _exit(4);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << limit << ": killed by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 0) << limit;
    EXPECT_NE(access(path.c_str(), F_OK), 0) << limit << ": " << path << " was left behind";
  }
}

// The writer's descriptor, found through /proc (the tests swap it to simulate a full disk).
int DescriptorOf(const std::string& path) {
  for (int fd = 3; fd < 1024; ++fd) {
    char target[4096];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = readlink(link.c_str(), target, sizeof(target));
    if (n > 0 && std::string(target, static_cast<size_t>(n)) == path) return fd;
  }
  return -1;
}

// A full disk under every kind of flush (by time here, which the agent's writer thread uses
// most): exactly one warning line per writer, the rest counted; Close() reports the failure in
// its status and leaves the line to warned(). Runs in a child whose stderr is a file.
TEST(TraceFileWriterTest, FailedFlushesOfEveryKindWarnOnce) {
  TempDir dir;
  const std::string path = dir.File("full.pb.zst");
  const std::string err_path = dir.File("stderr");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    WriterOptions options;
    options.flush_interval_ns = 1000;
    auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
    if (!writer.ok()) _exit(3);
    const int full = open("/dev/full", O_WRONLY);
    if (full < 0 || dup2(full, DescriptorOf(path)) < 0) _exit(4);
    for (uint64_t i = 0; i < 5; ++i) {
      (*writer)->Add(KernelEvent{.start_ns = 1, .correlation_id = i, .name = "k"});
      (*writer)->MaybeFlush(1).IgnoreError();  // Starts the clock.
      if ((*writer)->MaybeFlush(1'000'000).ok()) _exit(5);
    }
    if ((*writer)->Flush().ok()) _exit(6);
    const bool close_failed = !(*writer)->Close(0).ok();
    _exit(close_failed && (*writer)->warned() ? 0 : 7);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string err = ::lumos::testing::ReadFileBytes(err_path);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
}

// A tool (log_failures off) logs nothing and learns why events were lost from CloseComplete(),
// even when the trailer made it to the file after all (space came back).
TEST(TraceFileWriterTest, WithoutLoggingCloseCompleteSaysWhyEventsWereLost) {
  TempDir dir;
  const std::string path = dir.File("quiet.pb.zst");
  const std::string err_path = dir.File("stderr");
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    WriterOptions options;
    options.frame_bytes = 256;
    options.log_failures = false;
    auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
    if (!writer.ok()) _exit(3);
    const int fd = DescriptorOf(path);
    const int saved = dup(fd);
    const int full = open("/dev/full", O_WRONLY);
    if (full < 0 || dup2(full, fd) < 0) _exit(4);
    for (uint64_t i = 0; i < 1000; ++i) {
      (*writer)->Add(KernelEvent{.start_ns = 1, .correlation_id = i, .name = "k"});
    }
    if (dup2(saved, fd) < 0) _exit(5);  // Space again: the trailer is written.
    Status complete = (*writer)->CloseComplete(0);
    _exit(!complete.ok() && complete.message().find(path) != std::string::npos &&
                  complete.message().find("No space left on device") != std::string::npos
              ? 0
              : 6);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(::lumos::testing::ReadFileBytes(err_path), "");

  WriterOptions capped;
  capped.frame_bytes = 4096;
  capped.max_file_bytes = 16 * 1024;
  capped.log_failures = false;
  auto writer = TraceFileWriter::Create(dir.File("capped.pb.zst"), SampleHeader(), capped);
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 0; i < 100000; ++i) {
    (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 1013 + (i * 7919) % 997),
                               .duration_ns = (i * 31) % 4000,
                               .correlation_id = i,
                               .name = "k"});
  }
  Status complete = (*writer)->CloseComplete(0);
  ASSERT_FALSE(complete.ok());
  EXPECT_NE(complete.message().find("does not fit under max_file_bytes"), std::string::npos)
      << complete.message();

  auto whole = TraceFileWriter::Create(dir.File("whole.pb.zst"), SampleHeader(), capped);
  ASSERT_TRUE(whole.ok());
  (*whole)->Add(KernelEvent{.start_ns = 1, .correlation_id = 1, .name = "k"});
  EXPECT_TRUE((*whole)->CloseComplete(0).ok());
}

// LossRecords are data: those in a frame that could not be written (a ring's drops, a failed
// channel) go into the next frame that is, beside the count of events the failure lost.
TEST(TraceFileWriterTest, LossRecordsOfAFailedFrameAreCarriedOver) {
  TempDir dir;
  const std::string path = dir.File("carried.pb.zst");
  auto writer = TraceFileWriter::Create(path, SampleHeader(), WriterOptions());
  ASSERT_TRUE(writer.ok());
  const int fd = DescriptorOf(path);
  ASSERT_GE(fd, 0);
  const int saved = dup(fd);
  const int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  ASSERT_GE(dup2(full, fd), 0);
  (*writer)->Add(KernelEvent{.start_ns = 5, .correlation_id = 1, .name = "k"});
  (*writer)->Add(LossEvent{6, 0, LossSource::kRingFull, 500, 9, "ring full"});
  EXPECT_FALSE((*writer)->Flush().ok());
  (*writer)->Add(LossEvent{7, 0, LossSource::kRingFull, 20, 9, "ring full"});
  EXPECT_FALSE((*writer)->Flush().ok());  // Still full: carried again, merged.
  ASSERT_GE(dup2(saved, fd), 0);          // Space again.
  (*writer)->Add(KernelEvent{.start_ns = 8, .correlation_id = 2, .name = "k"});
  ASSERT_TRUE((*writer)->Close(0).ok());
  close(saved);
  close(full);

  ReadBack read = ReadKernels(path);
  EXPECT_TRUE(read.result.damage.ok()) << read.result.damage.message();
  EXPECT_TRUE(read.result.has_trailer);
  EXPECT_EQ(read.losses_by_detail["ring full"], 520u);
  // Only the first kernel: the loss records were carried and written, not lost (they used to
  // be counted as lost as well, 3 here and in the trailer).
  EXPECT_EQ(read.losses_by_detail["frames that could not be written"], 1u);
  // The trailer sums every LossRecord written: the carried ring losses and the frame's.
  EXPECT_EQ(read.result.trailer.events_dropped(), 520u + 1u);
  EXPECT_EQ((*writer)->stats().events_lost, 1u);
  EXPECT_EQ(read.result.trailer.events_written(), 2u);  // The second kernel, the merged record.
}

// The same at the size limit: the loss records of the frames dropped there reach the final
// frame, and the FILE_LIMIT record and the trailer count the other events only.
TEST(TraceFileWriterTest, LossRecordsPastTheSizeLimitAreCarriedNotCountedAsLost) {
  TempDir dir;
  const std::string path = dir.File("limit_carried.pb.zst");
  WriterOptions options;
  options.max_file_bytes = 2048;
  auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  constexpr uint64_t kKernels = 20000;
  for (uint64_t i = 0; i < kKernels; ++i) {
    (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 1013 + (i * 7919) % 997),
                               .duration_ns = (i * 31) % 4000,
                               .correlation_id = i,
                               .name = "k"});
    if (i == kKernels / 2) (*writer)->Add(LossEvent{6, 0, LossSource::kRingFull, 500, 9, "ring"});
  }
  EXPECT_FALSE((*writer)->Flush().ok());  // Past max_file_bytes: dropped, counted.
  (*writer)->Add(LossEvent{7, 0, LossSource::kRingFull, 20, 9, "ring"});
  (*writer)->Add(KernelEvent{.start_ns = 8, .correlation_id = kKernels, .name = "k"});
  ASSERT_TRUE((*writer)->Close(0).ok());
  ReadBack read = ReadKernels(path);
  EXPECT_TRUE(read.result.damage.ok()) << read.result.damage.message();
  EXPECT_TRUE(read.result.has_trailer);
  EXPECT_EQ(read.losses_by_detail["ring"], 520u);
  EXPECT_EQ(read.losses_by_detail["file size limit reached"], kKernels + 1);
  EXPECT_EQ(read.result.trailer.events_dropped(), 520u + kKernels + 1);
  EXPECT_EQ(read.result.trailer.events_written(), 1u);  // The merged loss record.
}

// Trailer.events_dropped is the sum of every LossRecord.count in the file (schema/lumos/
// trace.proto), not only the writer's own losses: it used to be 0 here.
TEST(TraceFileWriterTest, TrailerCountsEveryLossRecord) {
  TempDir dir;
  const std::string path = dir.File("losses.pb.zst");
  WriterOptions options;
  options.frame_bytes = 4096;
  auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  uint64_t recorded = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 1013 + (i * 7919) % 997),
                               .duration_ns = (i * 31) % 4000,
                               .correlation_id = i,
                               .name = "k"});
    if (i % 5000 == 0) {
      (*writer)->Add(LossEvent{static_cast<int64_t>(i), 0, LossSource::kRingFull, i + 3, 9, "r"});
      recorded += i + 3;
    }
  }
  ASSERT_TRUE((*writer)->Close(0).ok());
  ReadBack read = ReadKernels(path);
  EXPECT_TRUE(read.result.damage.ok()) << read.result.damage.message();
  EXPECT_GT(read.result.frames, 2u);  // The records spread over several frames.
  EXPECT_EQ(read.losses, recorded);
  EXPECT_EQ(read.result.trailer.events_dropped(), recorded);
  EXPECT_EQ((*writer)->stats().events_lost, 0u);
}

TEST(TraceFileWriterTest, UnwritableDestinationIsAnError) {
  auto full = TraceFileWriter::Create("/dev/full", SampleHeader(), WriterOptions());
  EXPECT_FALSE(full.ok());
  auto missing = TraceFileWriter::Create("/nonexistent/dir/t.pb.zst", SampleHeader(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/t.pb.zst"), std::string::npos);
}

TEST(TraceFileWriterTest, MaxFileBytesStopsEventsButKeepsTrailerAndLoss) {
  TempDir dir;
  std::string path = dir.File("capped.pb.zst");
  WriterOptions options;
  options.frame_bytes = 4096;
  options.max_file_bytes = 16 * 1024;
  auto writer = TraceFileWriter::Create(path, SampleHeader(), options);
  ASSERT_TRUE(writer.ok());
  for (uint64_t i = 0; i < 100000; ++i) {
    (*writer)->Add(KernelEvent{.start_ns = static_cast<int64_t>(i * 1013 + (i * 7919) % 997),
                               .duration_ns = (i * 31) % 4000,
                               .correlation_id = i,
                               .name = "k"});
  }
  ASSERT_TRUE((*writer)->Close(0).ok());
  uint64_t lost = (*writer)->stats().events_lost;
  EXPECT_GT(lost, 0u);
  ReadBack back = ReadKernels(path);
  EXPECT_TRUE(back.result.damage.ok());
  EXPECT_TRUE(back.result.has_trailer);
  EXPECT_EQ(back.result.trailer.events_dropped(), lost);
  EXPECT_EQ(back.losses, lost);  // The FILE_LIMIT loss record says how many.
  EXPECT_EQ(back.kernel_correlations.size() + lost, 100000u);
  EXPECT_LE(back.result.file_bytes, 16u * 1024 + 512);  // Only the small final frame exceeds.
}

}  // namespace
}  // namespace lumos::schema
