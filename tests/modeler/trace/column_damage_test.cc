// Malformed schema-2 column packets, crafted byte by byte and appended to a good trace as one
// more (well-formed zstd) frame: both ways of reading deliver every event before it, then stop
// with one message naming the file, the frame's byte offset and what is wrong — never a crash,
// a hang or a huge allocation.
#include <gtest/gtest.h>
#include <zstd.h>

#include <string>

#include "agent/writer/wire_buffer.h"
#include "modeler/trace/trace_reader.h"
#include "schema/format.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler {
namespace {

using agent::WireBuffer;
using agent::WireType;
using ::lumos::testing::ReadFileBytes;
using ::lumos::testing::TempDir;
using ::lumos::testing::WriteFileBytes;

std::string Bytes(const WireBuffer& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// A length-delimited field holding `body`.
std::string Field(uint32_t number, const std::string& body) {
  WireBuffer b;
  b.EnsureRoom(body.size() + 2 * agent::kMaxScalarFieldBytes);
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
  b.EnsureRoom(agent::kMaxScalarFieldBytes);
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
      {"no count", FramePacket() + KernelColumns(StartColumn({1})), "KernelColumns: no count"},
      {"unpacked column", FramePacket() + KernelColumns(Count(1) + StartColumn({1}) + "\x08\x05"),
       "KernelColumns: column 1 is not packed"},
      {"column twice",
       FramePacket() + KernelColumns(Count(1) + StartColumn({1}) + StartColumn({2})),
       "KernelColumns: column 41 appears twice"},
      {"columns before the FramePacket", KernelColumns(Count(1) + StartColumn({1})),
       "the frame does not start with a FramePacket"},
  };
}

TEST(ColumnDamageTest, EachMalformedPacketStopsWithOneMessage) {
  TempDir dir;
  ::lumos::testing::WriteSampleTrace(dir.File("good.pb.zst"), 10);
  std::string good = ReadFileBytes(dir.File("good.pb.zst"));
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::string compressed(ZSTD_compressBound(c.frame.size()), '\0');
    size_t n =
        ZSTD_compress(compressed.data(), compressed.size(), c.frame.data(), c.frame.size(), 1);
    ASSERT_FALSE(ZSTD_isError(n));
    compressed.resize(n);
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

}  // namespace
}  // namespace lumos::modeler
