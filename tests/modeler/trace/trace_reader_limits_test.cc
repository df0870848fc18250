// The reader against hostile files: a file it cannot read without blocking is refused before
// anything is read, a frame is never decompressed past the format's limit (schema/format.h),
// and whatever follows the trailer is damage, not "closed cleanly". The adversarial frames are
// made here with libzstd (tens of KB on disk, never committed).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdint>
#include <string>

#include "modeler/trace/trace_reader.h"
#include "schema/format.h"
#include "schema/writer/wire_buffer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;
using ::lumos::testing::WriteSampleTrace;
using ::lumos::testing::WriteUnclosedSampleTrace;

constexpr uint64_t kLimit = TraceReader::kMaxFrameContentBytes;

// `content` as one zstd frame; `declare`: with its content size in the frame header (what the
// writer does), else without (as a stream compressor writes it).
std::string Compress(const std::string& content, bool declare) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, declare ? 1 : 0);
  if (declare) ZSTD_CCtx_setPledgedSrcSize(cctx, content.size());
  std::string out(ZSTD_compressBound(content.size()), '\0');
  ZSTD_inBuffer in{content.data(), content.size(), 0};
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  size_t left = ZSTD_compressStream2(cctx, &o, &in, ZSTD_e_end);
  ZSTD_freeCCtx(cctx);
  EXPECT_EQ(left, 0u) << ZSTD_getErrorName(left);
  out.resize(o.pos);
  return out;
}

// A frame's content of exactly `bytes` bytes that parses: one unknown (skipped) Trace field.
std::string SkippedField(uint64_t bytes) {
  for (size_t n = 1; n <= 5; ++n) {  // Bytes of the length varint.
    const uint64_t payload = bytes - 1 - n;
    schema::WireBuffer b;
    b.EnsureRoom(2 * schema::kMaxScalarFieldBytes);
    b.PutTag(2, schema::WireType::kLength);
    b.PutVarint(payload);
    if (b.size() != 1 + n) continue;
    std::string out(reinterpret_cast<const char*>(b.data()), b.size());
    out.resize(bytes, '\0');
    return out;
  }
  ADD_FAILURE() << "no length fits " << bytes;
  return {};
}

struct Read {
  uint64_t kernels = 0;
  ReadResult result;
};

Read ReadKernels(const std::string& path) {
  Read read;
  auto reader = TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status().message();
  if (!reader.ok()) return read;
  EXPECT_TRUE((*reader)
                  ->ReadFrames(
                      [&](const FrameEvents& f) {
                        read.kernels += f.kernels.size();
                        return Status::Ok();
                      },
                      &read.result)
                  .ok());
  return read;
}

// How much `read` raises the peak resident memory, in MiB, run in a child process (so what the
// test process holds already does not count, and nothing stays behind).
template <typename Read>
int64_t PeakGrowthMiB(Read read) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    read();
    getrusage(RUSAGE_SELF, &after);
    const int64_t growth = (after.ru_maxrss - before.ru_maxrss) >> 10;  // ru_maxrss is KiB.
    _exit(write(pipe_fds[1], &growth, sizeof(growth)) == sizeof(growth) ? 0 : 1);
  }
  close(pipe_fds[1]);
  int64_t growth = -1;
  if (::read(pipe_fds[0], &growth, sizeof(growth)) != sizeof(growth)) growth = -1;
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return growth;
}

// mkfifo p.pb.zst with no writer: open(2) for reading blocked forever. Run in a child that an
// alarm ends, so a regression fails the test instead of hanging it.
TEST(TraceReaderLimitsTest, FifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.File("p.pb.zst");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);
    auto reader = TraceReader::Open(fifo);
    bool refused =
        !reader.ok() && reader.status().message() == fifo + ": not a regular file (a FIFO)";
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status) << " (blocked?)";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(TraceReaderLimitsTest, DirectoryIsNotATrace) {
  TempDir dir;
  auto reader = TraceReader::Open(dir.path());
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().message(), dir.path() + ": not a regular file (a directory)");
}

// The file after a killed writer, then one frame of `content`: read up to that frame, which
// either reads (nothing in it) or is damage at its offset.
Read AppendFrame(const TempDir& dir, const std::string& frame, uint64_t* offset) {
  WriteUnclosedSampleTrace(dir.File("good.pb.zst"), 10);
  std::string good = ReadFileBytes(dir.File("good.pb.zst"));
  *offset = good.size();
  WriteFileBytes(dir.File("bad.pb.zst"), good + frame);
  return ReadKernels(dir.File("bad.pb.zst"));
}

// A frame may hold up to the format's limit, not a byte more, whether it declares its size
// (refused before anything is allocated) or not (decompression stops at the limit).
TEST(TraceReaderLimitsTest, FrameContentIsBoundedByTheFormat) {
  TempDir dir;
  for (bool declare : {true, false}) {
    SCOPED_TRACE(declare ? "declared size" : "no declared size");
    uint64_t offset = 0;
    Read at_limit = AppendFrame(dir, Compress(SkippedField(kLimit), declare), &offset);
    EXPECT_TRUE(at_limit.result.damage.ok()) << at_limit.result.damage.message();
    EXPECT_EQ(at_limit.kernels, 10u);

    Read over = AppendFrame(dir, Compress(SkippedField(kLimit + 1), declare), &offset);
    EXPECT_EQ(over.kernels, 10u);  // Everything before the frame.
    const std::string where = dir.File("bad.pb.zst") + ": byte offset " + std::to_string(offset);
    const std::string& message = over.result.damage.message();
    // The frame is skipped and said so; reading went on (there was nothing after it).
    EXPECT_EQ(message,
              where +
                  (declare ? ": frame 2 declares 67108865 bytes of content, more than a "
                             "frame may hold (64 MiB)"
                           : ": frame 2: decompresses to more than a frame may hold (64 MiB)") +
                  "; skipped: 2 intact frames read, no trailer (how many events were lost is "
                  "unknown)");
    EXPECT_FALSE(over.result.closed_cleanly());
  }
}

// A 30 KB zstd frame of 1 GB of zeros (the bomb, as `zstd` writes it from a pipe: no
// declared size; 1.3 GB of memory and 9 s) is damage at its offset, what came before is kept,
// and it costs no memory to find out (nothing when the size is declared, else a scratch).
std::string Bomb(bool declare) {
  // Compressed in 1 MB steps: the test never holds the gigabyte either.
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, declare ? 1 : 0);
  if (declare) ZSTD_CCtx_setPledgedSrcSize(cctx, 1'000'000'000);
  const std::string zeros(1'000'000, '\0');
  std::string bomb(1 << 20, '\0');
  size_t used = 0;
  for (int i = 0; i < 1000; ++i) {
    ZSTD_inBuffer in{zeros.data(), zeros.size(), 0};
    size_t left = 1;
    while (in.pos < in.size || (i == 999 && left != 0)) {
      if (bomb.size() - used < (64 << 10)) bomb.resize(bomb.size() * 2);
      ZSTD_outBuffer out{bomb.data() + used, bomb.size() - used, 0};
      left = ZSTD_compressStream2(cctx, &out, &in, i == 999 ? ZSTD_e_end : ZSTD_e_continue);
      EXPECT_FALSE(ZSTD_isError(left));
      if (ZSTD_isError(left)) break;
      used += out.pos;
    }
  }
  ZSTD_freeCCtx(cctx);
  bomb.resize(used);
  return bomb;
}

TEST(TraceReaderLimitsTest, DecompressionBombIsDamage) {
  TempDir dir;
  for (bool declare : {true, false}) {
    SCOPED_TRACE(declare ? "declared size" : "no declared size");
    const std::string bomb = Bomb(declare);
    ASSERT_LT(bomb.size(), 100u << 10);
    uint64_t offset = 0;
    Read read = AppendFrame(dir, bomb, &offset);
    EXPECT_EQ(read.kernels, 10u);
    const std::string expected =
        "byte offset " + std::to_string(offset) +
        (declare ? ": frame 2 declares 1000000000 bytes of content, more than a frame may hold"
                 : ": frame 2: decompresses to more than a frame may hold (64 MiB)");
    EXPECT_NE(read.result.damage.message().find(expected), std::string::npos)
        << read.result.damage.message();
    const int64_t growth = PeakGrowthMiB([&] { ReadKernels(dir.File("bad.pb.zst")); });
    EXPECT_GE(growth, 0);
    // Nothing, or a 1 MiB scratch and zstd's window (room for sanitizers; 1 GB before).
    EXPECT_LT(growth, 32) << "MiB";
  }
}

// Zeros parsed as Trace fields numbered 0, which were skipped as unknown: a frame of nothing
// read as sound.
TEST(TraceReaderLimitsTest, FieldNumberZeroIsDamage) {
  TempDir dir;
  uint64_t offset = 0;
  Read read = AppendFrame(dir, Compress(std::string(1000, '\0'), true), &offset);
  EXPECT_EQ(read.kernels, 10u);
  EXPECT_EQ(read.result.damage.message(),
            dir.File("bad.pb.zst") + ": byte offset " + std::to_string(offset) +
                ": frame 2: malformed field in Trace (field number 0); skipped: 2 intact frames "
                "read, no trailer (how many events were lost is unknown)");
}

// Anything after the trailer's frame, even a sound frame, is damage at its offset: eight bombs
// after a valid trailer read as "closed cleanly" (and took 18 s and 1.3 GB).
TEST(TraceReaderLimitsTest, DataAfterTheTrailerIsDamage) {
  TempDir dir;
  WriteSampleTrace(dir.File("closed.pb.zst"), 10);
  const std::string closed = ReadFileBytes(dir.File("closed.pb.zst"));
  const std::string frame = Compress(SkippedField(1000), true);
  for (const std::string& tail :
       {frame, frame + frame + frame, std::string("\x50\x2a\x4d\x18\0\0\0\0", 8),
        std::string("junk")}) {
    WriteFileBytes(dir.File("after.pb.zst"), closed + tail);
    Read read = ReadKernels(dir.File("after.pb.zst"));
    EXPECT_EQ(read.kernels, 10u);
    EXPECT_TRUE(read.result.has_trailer);  // It was read: its ranks and counts still count.
    EXPECT_FALSE(read.result.closed_cleanly());
    EXPECT_EQ(read.result.bytes_read, closed.size());
    const std::string& message = read.result.damage.message();
    EXPECT_EQ(message, dir.File("after.pb.zst") + ": byte offset " + std::to_string(closed.size()) +
                           ": data after the trailer");
  }
  // A packet after the trailer in the trailer's own frame (the writer writes it last).
  auto packet = [](uint32_t field) {  // Trace.packet { field {} }
    schema::WireBuffer body;
    body.EnsureRoom(16);
    body.PutTag(field, schema::WireType::kLength);
    body.PutVarint(0);
    schema::WireBuffer b;
    b.EnsureRoom(32);
    b.PutTag(1, schema::WireType::kLength);
    b.PutVarint(body.size());
    b.PutRaw(body.data(), body.size());
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  uint64_t offset = 0;
  Read inside = AppendFrame(
      dir,
      Compress(packet(schema::packet_field::kFrame) + packet(schema::packet_field::kTrailer) +
                   packet(schema::packet_field::kCommunicator),
               true),
      &offset);
  EXPECT_EQ(inside.kernels, 10u);
  EXPECT_TRUE(inside.result.has_trailer);
  EXPECT_FALSE(inside.result.closed_cleanly());
  EXPECT_EQ(inside.result.damage.message(), dir.File("bad.pb.zst") + ": byte offset " +
                                                std::to_string(offset) +
                                                ": frame 2: data after the trailer (in its frame); "
                                                "skipped: 2 intact frames read");
  // The file itself, untouched, is clean.
  Read clean = ReadKernels(dir.File("closed.pb.zst"));
  EXPECT_TRUE(clean.result.closed_cleanly()) << clean.result.damage.message();
}

// The interned-string table was a vector indexed by iid: one InternedString of iid 2^24 in a
// 3 KB file took 400 MB. It now grows with the strings defined; the string still resolves.
TEST(TraceReaderLimitsTest, AHugeInternedIdCostsNoMemory) {
  TempDir dir;
  auto field = [](uint32_t number, schema::WireType type, const std::string& body, uint64_t v) {
    schema::WireBuffer b;
    b.EnsureRoom(body.size() + 32);
    b.PutTag(number, type);
    if (type == schema::WireType::kLength) {
      b.PutVarint(body.size());
      b.PutRaw(body.data(), body.size());
    } else {
      b.PutVarint(v);
    }
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  auto packet = [&](uint32_t number, const std::string& body) {
    return field(1, schema::WireType::kLength, field(number, schema::WireType::kLength, body, 0),
                 0);
  };
  constexpr uint64_t kIid = uint64_t{1} << 24;
  const std::string interned = field(1, schema::WireType::kVarint, "", kIid) +
                               field(2, schema::WireType::kLength, "far name", 0);
  const std::string columns =
      field(schema::column_field::kCount, schema::WireType::kVarint, "", 1) +
      field(schema::column_field::kStartDeltaNs, schema::WireType::kLength, std::string(1, '\0'),
            0) +
      field(4, schema::WireType::kLength, field(0, schema::WireType::kVarint, "", kIid).substr(1),
            0);
  uint64_t offset = 0;
  AppendFrame(dir,
              Compress(packet(schema::packet_field::kFrame, "") +
                           packet(schema::packet_field::kInterned, interned) +
                           packet(schema::packet_field::kKernelColumns, columns),
                       true),
              &offset);
  const std::string path = dir.File("bad.pb.zst");
  std::vector<std::string> names;
  Read read;
  {
    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    ASSERT_TRUE((*reader)
                    ->ReadFrames(
                        [&](const FrameEvents& f) {
                          for (const auto& k : f.kernels) names.emplace_back(k.name);
                          return Status::Ok();
                        },
                        &read.result)
                    .ok());
  }
  EXPECT_TRUE(read.result.damage.ok()) << read.result.damage.message();
  ASSERT_EQ(names.size(), 11u);
  EXPECT_EQ(names.back(), "far name");
  const int64_t growth = PeakGrowthMiB([&] { ReadKernels(path); });
  EXPECT_GE(growth, 0);
  EXPECT_LT(growth, 64) << "MiB";  // 385 before.
}

}  // namespace
}  // namespace lumos::modeler
