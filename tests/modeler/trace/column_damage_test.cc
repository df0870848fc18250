// Malformed schema-2 column packets, crafted byte by byte and appended to a good trace (without
// its trailer) as one more (well-formed zstd) frame: both ways of reading deliver every event
// before it, then stop with one message naming the file, the frame's byte offset and what is
// wrong — never a crash, a hang or a huge allocation.
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "modeler/trace/trace_reader.h"
#include "schema/format.h"
#include "schema/writer/wire_buffer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;
using schema::WireBuffer;
using schema::WireType;

std::string Bytes(const WireBuffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// A length-delimited field holding `body`.
std::string Field(uint32_t number, const std::string& body) {
  WireBuffer b;
  b.EnsureRoom(body.size() + 2 * schema::kMaxScalarFieldBytes);
  b.PutTag(number, WireType::kLength);
  b.PutVarint(body.size());
  b.PutRaw(body.data(), body.size());
  return Bytes(b);
}

std::string Varints(std::initializer_list<uint64_t> values) {
  WireBuffer b;
  b.EnsureRoom(values.size() * 10);
  for (uint64_t v : values) b.PutVarint(v);
  return Bytes(b);
}

std::string Count(uint64_t n) {
  WireBuffer b;
  b.EnsureRoom(schema::kMaxScalarFieldBytes);
  b.PutUintAlways(schema::column_field::kCount, n);
  return Bytes(b);
}

// Trace.packet entries.
std::string Packet(const std::string& body) { return Field(1, body); }
std::string FramePacket() { return Packet(Field(schema::packet_field::kFrame, "")); }
std::string KernelColumns(const std::string& body) {
  return Packet(Field(schema::packet_field::kKernelColumns, body));
}
std::string StartColumn(std::initializer_list<uint64_t> values) {
  return Field(schema::column_field::kStartDeltaNs, Varints(values));
}

// A row KernelEvent packet: start_delta_ns (zigzag-coded, as sint64 is) and duration_ns.
std::string RowKernel(uint64_t zigzag_start_delta, uint64_t duration_ns) {
  WireBuffer start, kernel;
  start.EnsureRoom(schema::kMaxScalarFieldBytes);
  start.PutTag(1, WireType::kVarint);
  start.PutVarint(zigzag_start_delta);
  kernel.EnsureRoom(schema::kMaxScalarFieldBytes);
  kernel.PutTag(1, WireType::kVarint);
  kernel.PutVarint(duration_ns);
  return Packet(Bytes(start) + Field(schema::packet_field::kKernel, Bytes(kernel)));
}

// The frame content as one zstd frame.
std::string Compress(const std::string& frame) {
  std::string compressed(ZSTD_compressBound(frame.size()), '\0');
  size_t n = ZSTD_compress(compressed.data(), compressed.size(), frame.data(), frame.size(), 1);
  compressed.resize(ZSTD_isError(n) ? 0 : n);
  return compressed;
}

struct Case {
  const char* name;
  std::string frame;  // Decompressed frame content.
  const char* expected;
};

std::vector<Case> Cases() {
  std::string eleven_ff(11, '\xff');
  return {
      {"huge count", FramePacket() + KernelColumns(Count(1'000'000'000'000) + StartColumn({1, 2})),
       "KernelColumns: start_delta_ns does not hold count (1000000000000) values"},
      {"short column",
       FramePacket() + KernelColumns(Count(3) + StartColumn({1, 2, 3}) + Field(1, Varints({5, 6}))),
       "KernelColumns: column 1 holds fewer values than count (3)"},
      {"long column",
       FramePacket() +
           KernelColumns(Count(3) + StartColumn({1, 2, 3}) + Field(1, Varints({5, 6, 7, 8}))),
       "KernelColumns: column 1 holds more values than count (3)"},
      {"overlong varint",
       FramePacket() + KernelColumns(Count(2) + Field(schema::column_field::kStartDeltaNs,
                                                      Varints({1}) + eleven_ff + Varints({0}))),
       "KernelColumns: column 41: malformed varint"},
      // Start + duration past INT64_MAX: a signed overflow wherever the modeler takes an event's
      // end (UBSan, found by lumos_kineto_import_fuzzer in the importer's own copy of the walk).
      // Start INT64_MAX - 5 is zigzag 2 * (INT64_MAX - 5) from the frame's base time 0.
      {"event ending beyond the time range",
       FramePacket() +
           KernelColumns(Count(1) + StartColumn({0xFFFFFFFFFFFFFFF4}) + Field(1, Varints({10}))),
       "KernelColumns: an event ends beyond the 64-bit time range (start 9223372036854775802 ns, "
       "duration 10 ns)"},
      {"row event ending beyond the time range", FramePacket() + RowKernel(0xFFFFFFFFFFFFFFF4, 10),
       "packet 1: the event ends beyond the 64-bit time range (start 9223372036854775802 ns, "
       "duration 10 ns)"},
      {"duration beyond the time range",
       FramePacket() +
           KernelColumns(Count(1) + StartColumn({0}) + Field(1, Varints({0x8000000000000000}))),
       "KernelColumns: an event ends beyond the 64-bit time range (start 0 ns, duration "
       "9223372036854775808 ns)"},
      {"no count", FramePacket() + KernelColumns(StartColumn({1})), "KernelColumns: no count"},
      {"unpacked column", FramePacket() + KernelColumns(Count(1) + StartColumn({1}) + "\x08\x05"),
       "KernelColumns: column 1 is not packed"},
      {"column twice",
       FramePacket() + KernelColumns(Count(1) + StartColumn({1}) + StartColumn({2})),
       "KernelColumns: column 41 appears twice"},
      {"columns before the FramePacket", KernelColumns(Count(1) + StartColumn({1})),
       "the frame does not start with a FramePacket"},
      // The start column bounds count by the packet's bytes, yet zstd RLE blocks make a 28 KB
      // file of a 900 MiB column of one-byte entries, which asked for 128 GB of KernelEvent
      // structs (crafted while fuzzing huge counts). Now at most what a writer puts in a frame:
      // 4M (the packet limit) in a 3.6 KB file still took 1.1 GB to inspect.
      {"more events than a frame may hold",
       FramePacket() +
           KernelColumns(Count(TraceReader::kMaxFrameColumnEvents + 1) +
                         Field(schema::column_field::kStartDeltaNs,
                               std::string(TraceReader::kMaxFrameColumnEvents + 1, '\0'))),
       "KernelColumns: count (1048577) is more events than the frame may still hold (1048576)"},
      // libprotobuf skips a group where FindColumns stops: the events would come out as a row.
      {"column packet behind a group field",
       FramePacket() + Packet("\x7B\x7C" + Field(schema::packet_field::kKernelColumns,
                                                 Count(1) + StartColumn({1}))),
       "packet 1: column packet with a group field (not decoded)"},
  };
}

TEST(ColumnDamageTest, EachMalformedPacketStopsWithOneMessage) {
  TempDir dir;
  // Without a trailer: a frame after the trailer is damage whatever it holds.
  ::lumos::testing::WriteUnclosedSampleTrace(dir.File("good.pb.zst"), 10);
  std::string good = ReadFileBytes(dir.File("good.pb.zst"));
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::string compressed = Compress(c.frame);
    ASSERT_FALSE(compressed.empty());
    std::string path = dir.File("bad.pb.zst");
    WriteFileBytes(path, good + compressed);
    std::string where = path + ": byte offset " + std::to_string(good.size()) + ": frame ";

    auto reader = TraceReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    uint64_t kernels = 0;
    ReadResult result;
    ASSERT_TRUE((*reader)
                    ->ReadFrames(
                        [&](const FrameEvents& f) {
                          kernels += f.kernels.size();
                          return Status::Ok();
                        },
                        &result)
                    .ok());
    EXPECT_EQ(kernels, 10u);  // Everything before the bad packet, nothing from it.
    EXPECT_NE(result.damage.message().find(where), std::string::npos) << result.damage.message();
    EXPECT_NE(result.damage.message().find(c.expected), std::string::npos)
        << result.damage.message();

    kernels = 0;
    ASSERT_TRUE((*reader)
                    ->ReadPackets(
                        [&](const pb::TracePacket& packet, const PacketContext&) {
                          kernels += packet.has_kernel();
                          return Status::Ok();
                        },
                        &result)
                    .ok());
    EXPECT_EQ(kernels, 10u);
    EXPECT_NE(result.damage.message().find(c.expected), std::string::npos)
        << result.damage.message();
  }
}

// Not damage: rank columns hold rank + 1 as uint32 (0 = absent). 2^31 is what the writer writes
// for rank INT32_MAX; the decoder computed int32(2^31) - 1, a signed overflow (UBSan, found by
// lumos_trace_packets_fuzzer). Every value now maps back to the rank that was coded.
TEST(ColumnDamageTest, RankColumnsDecodeEveryValue) {
  TempDir dir;
  ::lumos::testing::WriteUnclosedSampleTrace(dir.File("good.pb.zst"), 1);
  std::string path = dir.File("ranks.pb.zst");
  std::string body = Count(4) + StartColumn({0, 0, 0, 0}) +
                     Field(8, Varints({0, 1, 0x7FFFFFFF, 0x80000000})) +  // root_rank_plus_1
                     Field(9, Varints({0x80000000}));  // peer_rank_plus_1, constant
  std::string frame = FramePacket() + Packet(Field(schema::packet_field::kCollectiveColumns, body));
  WriteFileBytes(path, ReadFileBytes(dir.File("good.pb.zst")) + Compress(frame));
  const int32_t kRoots[] = {-1, 0, INT32_MAX - 1, INT32_MAX};

  auto reader = TraceReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  std::vector<schema::CollectiveEvent> collectives;
  ReadResult result;
  ASSERT_TRUE((*reader)
                  ->ReadFrames(
                      [&](const FrameEvents& f) {
                        collectives.insert(collectives.end(), f.collectives.begin(),
                                           f.collectives.end());
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  EXPECT_TRUE(result.damage.ok()) << result.damage.message();
  ASSERT_EQ(collectives.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(collectives[i].root_rank, kRoots[i]) << i;
    EXPECT_EQ(collectives[i].peer_rank, INT32_MAX) << i;
  }

  std::vector<pb::NcclCollective> rows;
  ASSERT_TRUE((*reader)
                  ->ReadPackets(
                      [&](const pb::TracePacket& packet, const PacketContext&) {
                        if (packet.has_collective()) rows.push_back(packet.collective());
                        return Status::Ok();
                      },
                      &result)
                  .ok());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_FALSE(rows[0].has_root_rank());
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_TRUE(rows[i].has_root_rank()) << i;
    EXPECT_EQ(rows[i].root_rank(), kRoots[i]) << i;
    EXPECT_EQ(rows[i].peer_rank(), INT32_MAX) << i;
  }
}

}  // namespace
}  // namespace lumos::modeler
