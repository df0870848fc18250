// Record: layout guarantees and the hot-path NVTX name helpers.
#include "agent/core/record.h"

#include <gtest/gtest.h>

#include <string>

namespace lumos::agent {
namespace {

TEST(RecordTest, IsOneZeroableCacheLine) {
  static_assert(sizeof(Record) == 64 && alignof(Record) == 64);
  Record record{};
  const auto* bytes = reinterpret_cast<const unsigned char*>(&record);
  for (size_t i = 0; i < sizeof(Record); ++i) EXPECT_EQ(bytes[i], 0) << i;
  EXPECT_EQ(record.kind, RecordKind::kInvalid);
}

TEST(RecordTest, InlineNamesCutOnCharacterBoundaries) {
  Record record{};
  SetNvtxInlineName(&record, "short");
  EXPECT_EQ(NvtxInlineName(record), "short");
  EXPECT_EQ(record.flags & kRecordFlagNameTruncated, 0);
  // 'a' + 12 two-byte characters: byte 24 continues the 12th character, which is left out.
  std::string two_byte = "a";
  for (int i = 0; i < 12; ++i) two_byte += "\xc3\xa9";
  SetNvtxInlineName(&record, two_byte.c_str());
  EXPECT_EQ(NvtxInlineName(record), two_byte.substr(0, 23));
  EXPECT_NE(record.flags & kRecordFlagNameTruncated, 0);
  // 22 ASCII bytes + a four-byte character: cut before it.
  std::string four_byte = std::string(22, 'x') + "\xf0\x9f\x98\x80" + "tail";
  SetNvtxInlineName(&record, four_byte.c_str());
  EXPECT_EQ(NvtxInlineName(record), std::string(22, 'x'));
  // A name id clears the truncation flag; the inline view is empty.
  SetNvtxNameId(&record, 9);
  EXPECT_EQ(record.flags & kRecordFlagNameTruncated, 0);
  EXPECT_EQ(NvtxInlineName(record), "");
  EXPECT_EQ(record.payload.nvtx.name.string_id, 9u);
}

}  // namespace
}  // namespace lumos::agent
