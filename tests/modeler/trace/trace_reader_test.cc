// The reader against good and bad files: every intact frame comes back, and every kind of
// damage gets one message naming the file and the byte offset — never a crash or a hang.
#include "modeler/trace/trace_reader.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <random>

#include "schema/format.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;
using ::lumos::testing::WriteSampleTrace;

struct Outcome {
  bool opened = false;
  std::string open_error;
  ReadResult result;
  uint64_t kernels = 0;
};

Outcome ReadFile(const std::string& path) {
  Outcome outcome;
  auto reader = TraceReader::Open(path);
  if (!reader.ok()) {
    outcome.open_error = reader.status().message();
    return outcome;
  }
  outcome.opened = true;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext&) {
        outcome.kernels += packet.has_kernel();
        return Status::Ok();
      },
      &outcome.result);
  EXPECT_TRUE(status.ok());
  return outcome;
}

TEST(TraceReaderTest, ReadsHeaderAndEveryPacket) {
  TempDir dir;
  schema::WriterStats stats = WriteSampleTrace(dir.File("t.pb.zst"), 500);
  auto reader = TraceReader::Open(dir.File("t.pb.zst"));
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->header().job_id(), "sample-job");
  EXPECT_EQ((*reader)->header().schema_major(), schema::kSchemaMajor);
  EXPECT_EQ((*reader)->header().devices(0).name(), "NVIDIA H200");
  Outcome outcome = ReadFile(dir.File("t.pb.zst"));
  EXPECT_TRUE(outcome.result.damage.ok());
  EXPECT_EQ(outcome.kernels, 500u);
  EXPECT_EQ(outcome.result.frames, stats.frames_written);  // The trailer frame included.
  EXPECT_EQ(outcome.result.bytes_read, outcome.result.file_bytes);
}

TEST(TraceReaderTest, InternedNamesAndAbsoluteTimesResolve) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 50, /*frame_bytes=*/256);  // Many small frames.
  auto reader = TraceReader::Open(dir.File("t.pb.zst"));
  ASSERT_TRUE(reader.ok());
  ReadResult result;
  uint64_t i = 0;
  Status status = (*reader)->ReadPackets(
      [&](const pb::TracePacket& packet, const PacketContext& context) {
        if (!packet.has_kernel()) return Status::Ok();
        EXPECT_EQ(context.start_ns, static_cast<int64_t>(1000 + 1000 * i));
        EXPECT_EQ(context.String(packet.kernel().name_iid()),
                  i % 2 ? "gemm_kernel" : "elementwise_kernel");
        ++i;
        return Status::Ok();
      },
      &result);
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(i, 50u);
  EXPECT_GT(result.frames, 5u);
}

TEST(TraceReaderTest, EmptyFileIsRejected) {
  TempDir dir;
  WriteFileBytes(dir.File("empty.pb.zst"), "");
  Outcome outcome = ReadFile(dir.File("empty.pb.zst"));
  ASSERT_FALSE(outcome.opened);
  EXPECT_NE(outcome.open_error.find("empty.pb.zst: byte offset 0: file is empty"),
            std::string::npos)
      << outcome.open_error;
}

TEST(TraceReaderTest, WrongMagicIsRejectedWithAHint) {
  TempDir dir;
  WriteFileBytes(dir.File("a.json"), "{\"traceEvents\": []}");
  WriteFileBytes(dir.File("b.gz"), std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));
  WriteFileBytes(dir.File("c.bin"), std::string(100, 'x'));
  for (const char* name : {"a.json", "b.gz", "c.bin"}) {
    Outcome outcome = ReadFile(dir.File(name));
    ASSERT_FALSE(outcome.opened) << name;
    EXPECT_NE(outcome.open_error.find(std::string(name) + ": byte offset 0: not a Lumos trace"),
              std::string::npos)
        << outcome.open_error;
  }
  EXPECT_NE(ReadFile(dir.File("a.json")).open_error.find("import kineto"), std::string::npos);
}

TEST(TraceReaderTest, PlainZstdWithoutPreambleIsRejected) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 10);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  WriteFileBytes(dir.File("plain.zst"), bytes.substr(schema::kPreambleBytes));
  Outcome outcome = ReadFile(dir.File("plain.zst"));
  ASSERT_FALSE(outcome.opened);
  EXPECT_NE(outcome.open_error.find("without the Lumos preamble"), std::string::npos);
}

TEST(TraceReaderTest, NewerMajorVersionIsRejected) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 10);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  bytes[16] = static_cast<char>(schema::kSchemaMajor + 1);  // Preamble: u32 major at 16.
  WriteFileBytes(dir.File("newer.pb.zst"), bytes);
  Outcome outcome = ReadFile(dir.File("newer.pb.zst"));
  ASSERT_FALSE(outcome.opened);
  EXPECT_NE(outcome.open_error.find("newer.pb.zst: byte offset 16: schema major version " +
                                    std::to_string(schema::kSchemaMajor + 1)),
            std::string::npos)
      << outcome.open_error;
  EXPECT_NE(outcome.open_error.find("upgrade"), std::string::npos);
}

TEST(TraceReaderTest, NewerMinorVersionIsRead) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 10);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  bytes[20] = 7;  // Preamble: u32 minor at 20.
  WriteFileBytes(dir.File("minor.pb.zst"), bytes);
  Outcome outcome = ReadFile(dir.File("minor.pb.zst"));
  ASSERT_TRUE(outcome.opened) << outcome.open_error;
  EXPECT_EQ(outcome.kernels, 10u);
}

// Cut the file at every byte: each cut either fails to open (inside the preamble or header
// frame) or reads a prefix of whole frames and reports the damaged tail with its offset.
TEST(TraceReaderTest, TruncationAtEveryByteIsReportedNeverFatal) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 200, /*frame_bytes=*/1024);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  uint64_t previous_kernels = 0;
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    WriteFileBytes(dir.File("cut.pb.zst"), bytes.substr(0, cut));
    Outcome outcome = ReadFile(dir.File("cut.pb.zst"));
    if (!outcome.opened) {
      EXPECT_NE(outcome.open_error.find("cut.pb.zst"), std::string::npos);
      continue;
    }
    EXPECT_GE(outcome.kernels, previous_kernels) << "cut " << cut;  // Prefixes only grow.
    previous_kernels = outcome.kernels;
    EXPECT_FALSE(outcome.result.has_trailer);
    if (outcome.result.bytes_read < cut) {
      const std::string& message = outcome.result.damage.message();
      EXPECT_NE(message.find("cut.pb.zst: byte offset " +
                             std::to_string(outcome.result.bytes_read) + ": truncated frame"),
                std::string::npos)
          << message;
    } else {
      EXPECT_TRUE(outcome.result.damage.ok());  // Cut exactly between frames.
    }
  }
  // A cut inside the last frame (events + trailer) loses at most that frame's ~30 kernels.
  EXPECT_GE(previous_kernels, 150u);
}

// Flip bytes anywhere after the header: the checksum or the parser catches it; the packets
// delivered are never more than were written.
TEST(TraceReaderTest, CorruptionIsDetectedNeverFatal) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 300, /*frame_bytes=*/2048);
  std::string bytes = ReadFileBytes(dir.File("t.pb.zst"));
  std::mt19937 random(42);
  int detected = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = bytes;
    size_t at = schema::kPreambleBytes + random() % (bad.size() - schema::kPreambleBytes);
    bad[at] = static_cast<char>(bad[at] ^ (1 + random() % 255));
    WriteFileBytes(dir.File("bad.pb.zst"), bad);
    Outcome outcome = ReadFile(dir.File("bad.pb.zst"));
    if (!outcome.opened) {
      EXPECT_NE(outcome.open_error.find("bad.pb.zst"), std::string::npos);
      ++detected;
      continue;
    }
    EXPECT_LE(outcome.kernels, 300u);
    if (!outcome.result.damage.ok()) {
      ++detected;
      EXPECT_NE(outcome.result.damage.message().find("bad.pb.zst: byte offset "),
                std::string::npos);
    }
  }
  // zstd's frame checksum catches content changes; only flips in bits zstd ignores pass.
  EXPECT_GT(detected, 280);
}

TEST(TraceReaderTest, DecompressedFileDecodesWithProtoc) {
  TempDir dir;
  WriteSampleTrace(dir.File("t.pb.zst"), 3);
  std::string command = "zstd -dcq " + dir.File("t.pb.zst") +
                        " | protoc --decode=lumos.trace.Trace -I" + LUMOS_SOURCE_DIR + "/schema " +
                        LUMOS_SOURCE_DIR + "/schema/lumos/trace.proto > " +
                        dir.File("decoded.txt") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << ReadFileBytes(dir.File("decoded.txt"));
  std::string text = ReadFileBytes(dir.File("decoded.txt"));
  EXPECT_NE(text.find("job_id: \"sample-job\""), std::string::npos) << text;
  EXPECT_NE(text.find("value: \"gemm_kernel\""), std::string::npos);
  EXPECT_NE(text.find("trailer {"), std::string::npos);
  // Schema 2: the three kernels are one column packet.
  size_t columns = text.find("kernel_columns {");
  ASSERT_NE(columns, std::string::npos) << text;
  EXPECT_NE(text.find("count: 3", columns), std::string::npos) << text;
}

// Names come from the traced program and need not be UTF-8: one Latin-1 NVTX message must
// not turn the rest of the trace into a "damaged tail" (found by the fuzzer).
TEST(TraceReaderTest, NonUtf8NamesReadBack) {
  TempDir dir;
  auto writer =
      schema::TraceFileWriter::Create(dir.File("t.pb.zst"), ::lumos::testing::SampleHeader(), {});
  ASSERT_TRUE(writer.ok());
  const std::string latin1 = "caf\xe9 \xff\xfe";
  (*writer)->Add(schema::NvtxEvent{.start_ns = 10, .duration_ns = 5, .name = latin1});
  (*writer)->Add(schema::KernelEvent{.start_ns = 20, .name = "after"});
  ASSERT_TRUE((*writer)->Close(30).ok());
  auto packets = ReadAllPackets(dir.File("t.pb.zst"));
  ASSERT_TRUE(packets.ok());
  Outcome outcome = ReadFile(dir.File("t.pb.zst"));
  EXPECT_TRUE(outcome.result.damage.ok()) << outcome.result.damage.message();
  EXPECT_TRUE(outcome.result.has_trailer);
  EXPECT_EQ(outcome.kernels, 1u);
  bool found = false;
  for (const pb::TracePacket& packet : *packets) {
    found |= packet.has_interned() && packet.interned().value() == latin1;
  }
  EXPECT_TRUE(found);
}

TEST(TraceReaderTest, MissingFileNamesThePath) {
  Outcome outcome = ReadFile("/nonexistent/x.pb.zst");
  ASSERT_FALSE(outcome.opened);
  EXPECT_NE(outcome.open_error.find("/nonexistent/x.pb.zst: cannot open"), std::string::npos);
}

}  // namespace
}  // namespace lumos::modeler
