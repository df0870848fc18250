// The C++ enum mirrors in schema/enums.h and the packet field numbers in schema/format.h agree
// with trace.proto (through the generated descriptors), value by value.
#include "schema/enums.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include "schema/format.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::schema {
namespace {

// "LaunchKernel" -> "LAUNCH_KERNEL", "Float8E4m3" -> "FLOAT8_E4M3".
std::string UpperSnake(const std::string& camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    char c = camel[i];
    if (i > 0 && std::isupper(static_cast<unsigned char>(c))) out += '_';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

TEST(EnumsTest, EveryMirrorMatchesTheProto) {
  const auto* file = ::lumos::trace::Trace::descriptor()->file();
  int enums_checked = 0;
#define LUMOS_CHECK_VALUE(camel, expected)                                        \
  {                                                                               \
    const auto* value = descriptor->FindValueByName(prefix + UpperSnake(#camel)); \
    ASSERT_NE(value, nullptr) << prefix << UpperSnake(#camel);                    \
    EXPECT_EQ(value->number(), expected) << value->name();                        \
    ++values;                                                                     \
  }
#define LUMOS_CHECK_ENUM(type, list, proto_name, proto_prefix)                                \
  {                                                                                           \
    const auto* descriptor = file->FindEnumTypeByName(proto_name);                            \
    ASSERT_NE(descriptor, nullptr) << proto_name;                                             \
    std::string prefix = proto_prefix;                                                        \
    int values = 0;                                                                           \
    list(LUMOS_CHECK_VALUE);                                                                  \
    EXPECT_EQ(values, descriptor->value_count()) << proto_name << " has values not mirrored"; \
    ++enums_checked;                                                                          \
  }
  LUMOS_ALL_ENUMS(LUMOS_CHECK_ENUM)
#undef LUMOS_CHECK_ENUM
#undef LUMOS_CHECK_VALUE
  EXPECT_EQ(enums_checked, file->enum_type_count()) << "a proto enum has no C++ mirror";
}

TEST(EnumsTest, PacketFieldNumbersMatchTheProto) {
  const auto* packet = ::lumos::trace::TracePacket::descriptor();
  auto number = [&](const char* name) {
    const auto* field = packet->FindFieldByName(name);
    return field != nullptr ? static_cast<uint32_t>(field->number()) : 0u;
  };
  namespace pf = packet_field;
  EXPECT_EQ(number("start_delta_ns"), pf::kStartDeltaNs);
  EXPECT_EQ(number("kernel"), pf::kKernel);
  EXPECT_EQ(number("api_call"), pf::kApiCall);
  EXPECT_EQ(number("memcpy"), pf::kMemcpy);
  EXPECT_EQ(number("memset"), pf::kMemset);
  EXPECT_EQ(number("sync"), pf::kSync);
  EXPECT_EQ(number("cuda_event"), pf::kCudaEvent);
  EXPECT_EQ(number("nvtx"), pf::kNvtx);
  EXPECT_EQ(number("host_range"), pf::kHostRange);
  EXPECT_EQ(number("collective"), pf::kCollective);
  EXPECT_EQ(number("interned"), pf::kInterned);
  EXPECT_EQ(number("frame"), pf::kFrame);
  EXPECT_EQ(number("clock_snapshot"), pf::kClockSnapshot);
  EXPECT_EQ(number("loss"), pf::kLoss);
  EXPECT_EQ(number("clock_id"), pf::kClockId);
  EXPECT_EQ(number("header"), pf::kHeader);
  EXPECT_EQ(number("communicator"), pf::kCommunicator);
  EXPECT_EQ(number("capture_window"), pf::kCaptureWindow);
  EXPECT_EQ(number("thread"), pf::kThread);
  EXPECT_EQ(number("trailer"), pf::kTrailer);
  EXPECT_EQ(number("kernel_columns"), pf::kKernelColumns);
  EXPECT_EQ(number("api_call_columns"), pf::kApiCallColumns);
  EXPECT_EQ(number("memcpy_columns"), pf::kMemcpyColumns);
  EXPECT_EQ(number("memset_columns"), pf::kMemsetColumns);
  EXPECT_EQ(number("sync_columns"), pf::kSyncColumns);
  EXPECT_EQ(number("cuda_event_columns"), pf::kCudaEventColumns);
  EXPECT_EQ(number("nvtx_columns"), pf::kNvtxColumns);
  EXPECT_EQ(number("host_range_columns"), pf::kHostRangeColumns);
  EXPECT_EQ(number("collective_columns"), pf::kCollectiveColumns);
  EXPECT_EQ(number("gemm_call_columns"), pf::kGemmCallColumns);
  EXPECT_EQ(number("gemm_call"), pf::kGemmCall);
  EXPECT_EQ(packet->field_count(), 31);  // Update this test when a packet kind is added.
  EXPECT_EQ(kTracePacketTag, (::lumos::trace::Trace::kPacketFieldNumber << 3) | 2);
}

// Column N of every *Columns message is field N of its row message: same name (or the
// name + "_delta" for delta-coded ids, "_plus_1" for optional ranks), and every row field has
// its column. The reader and the writer rely on this correspondence.
TEST(EnumsTest, ColumnMessagesMirrorTheirRowMessages) {
  const auto* packet = ::lumos::trace::TracePacket::descriptor();
  int kinds = 0;
  // (row, columns): the nine of schema 2.0 at a fixed offset, then GEMM calls (2.2).
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (uint32_t row = packet_field::kKernel; row <= packet_field::kCollective; ++row) {
    pairs.emplace_back(row, row + packet_field::kColumnsOffset);
  }
  pairs.emplace_back(packet_field::kGemmCall, packet_field::kGemmCallColumns);
  for (const auto& [row, column] : pairs) {
    const auto* row_field = packet->FindFieldByNumber(static_cast<int>(row));
    const auto* column_field = packet->FindFieldByNumber(static_cast<int>(column));
    ASSERT_NE(row_field, nullptr);
    ASSERT_NE(column_field, nullptr);
    const auto* rows = row_field->message_type();
    const auto* columns = column_field->message_type();
    EXPECT_EQ(column_field->name(), row_field->name() + "_columns");
    ASSERT_NE(columns->FindFieldByNumber(column_field::kCount), nullptr) << columns->name();
    ASSERT_NE(columns->FindFieldByNumber(column_field::kStartDeltaNs), nullptr) << columns->name();
    EXPECT_EQ(columns->FindFieldByNumber(column_field::kCount)->name(), "count");
    EXPECT_EQ(columns->FindFieldByNumber(column_field::kStartDeltaNs)->name(), "start_delta_ns");
    for (int i = 0; i < rows->field_count(); ++i) {
      const auto* f = rows->field(i);
      const auto* c = columns->FindFieldByNumber(f->number());
      ASSERT_NE(c, nullptr) << columns->name() << " has no column " << f->number();
      EXPECT_TRUE(c->is_repeated()) << c->full_name();
      bool same_name = c->name() == f->name() || c->name() == f->name() + "_delta" ||
                       c->name() == f->name() + "_plus_1" ||
                       (f->name() == "count" && c->name() == "count_elements");
      EXPECT_TRUE(same_name) << c->full_name() << " vs " << f->full_name();
    }
    // Row fields plus count and start_delta_ns, plus has_step_number for host ranges.
    int extra = row == packet_field::kHostRange ? 3 : 2;
    EXPECT_EQ(columns->field_count(), rows->field_count() + extra) << columns->name();
    ++kinds;
  }
  EXPECT_EQ(kinds, 10);
}

}  // namespace
}  // namespace lumos::schema
