// modeler/export/names.h: sizes, collective labels and enum names as the timeline shows them.
#include "modeler/export/names.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace lumos::modeler::internal {
namespace {

TEST(NamesTest, BytesAndLabels) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(4096), "4.0 KB");
  EXPECT_EQ(FormatBytes(4 << 20), "4.0 MB");
  EXPECT_EQ(FormatBytes(26424115), "25.2 MB");
  EXPECT_EQ(FormatBytes((1ull << 30) - 1), "1.0 GB");  // Not "1024.0 MB".
  EXPECT_EQ(FormatBytes(UINT64_MAX), "16.0 EB");
  pb::NcclCollective c;
  c.set_op(pb::COLLECTIVE_OP_REDUCE_SCATTER);
  c.set_bytes(3 << 20);
  EXPECT_EQ(CollectiveLabel(c), "ReduceScatter 3.0 MB");
  c.set_op(static_cast<pb::CollectiveOp>(99));  // From a newer schema.
  EXPECT_EQ(CollectiveLabel(c), "Collective 3.0 MB");
  EXPECT_STREQ(NameOf(pb::DATA_TYPE_BFLOAT16), "Bfloat16");
  EXPECT_EQ(NameOf(static_cast<pb::DataType>(99)), nullptr);
  EXPECT_STREQ(CopyKindLabel(pb::COPY_KIND_DTOH), "DtoH");
}

}  // namespace
}  // namespace lumos::modeler::internal
