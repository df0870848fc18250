// schema/nccl_names.h against the real nccl.h (built where CUDA's nccl.h is): the table's
// ncclDataType_t and ncclRedOp_t values are nccl.h's, every one of them known.
#include <gtest/gtest.h>
#include <nccl.h>

#include "schema/nccl_names.h"

namespace lumos::schema {
namespace {

TEST(NcclValuesTest, MapsEveryNcclDataTypeValue) {
  EXPECT_EQ(DataTypeFromNccl(ncclInt8), DataType::kInt8);
  EXPECT_EQ(DataTypeFromNccl(ncclUint32), DataType::kUint32);
  EXPECT_EQ(DataTypeFromNccl(ncclFloat16), DataType::kFloat16);
  EXPECT_EQ(DataTypeFromNccl(ncclBfloat16), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromNccl(ncclFloat8e4m3), DataType::kFloat8E4m3);
  EXPECT_EQ(DataTypeFromNccl(ncclNumTypes), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNccl(-1), DataType::kUnspecified);
  for (int t = 0; t < ncclNumTypes; ++t) EXPECT_NE(DataTypeBytes(DataTypeFromNccl(t)), 0u);
}

TEST(NcclValuesTest, MapsEveryNcclReduceOpValue) {
  EXPECT_EQ(ReduceOpFromNccl(ncclSum), ReduceOp::kSum);
  EXPECT_EQ(ReduceOpFromNccl(ncclProd), ReduceOp::kProd);
  EXPECT_EQ(ReduceOpFromNccl(ncclMax), ReduceOp::kMax);
  EXPECT_EQ(ReduceOpFromNccl(ncclMin), ReduceOp::kMin);
  EXPECT_EQ(ReduceOpFromNccl(ncclAvg), ReduceOp::kAvg);
  EXPECT_EQ(ReduceOpFromNccl(ncclNumOps), ReduceOp::kUnspecified);  // User-made op.
}

// Each API name with a value is nccl.h's name for that value: "Float32" is ncclFloat32's.
TEST(NcclValuesTest, ApiNamesCarryTheirNcclValue) {
  struct Named {
    const char* name;
    int value;
  };
  const Named kNcclH[] = {
      {"Int8", ncclInt8},
      {"Char", ncclChar},
      {"Uint8", ncclUint8},
      {"Int32", ncclInt32},
      {"Int", ncclInt},
      {"Uint32", ncclUint32},
      {"Int64", ncclInt64},
      {"Uint64", ncclUint64},
      {"Float16", ncclFloat16},
      {"Half", ncclHalf},
      {"Float32", ncclFloat32},
      {"Float", ncclFloat},
      {"Float64", ncclFloat64},
      {"Double", ncclDouble},
      {"Bfloat16", ncclBfloat16},
      {"Float8e4m3", ncclFloat8e4m3},
      {"Float8e5m2", ncclFloat8e5m2},
  };
  int rows = 0;
  for (const NcclName<DataType>& row : NcclDataTypeNames()) {
    if (!(row.uses & kNcclApiName)) continue;
    ++rows;
    bool found = false;
    for (const Named& named : kNcclH) {
      if (row.name == named.name) {
        found = true;
        EXPECT_EQ(row.nccl_value, named.value) << row.name;
      }
    }
    EXPECT_TRUE(found) << row.name << " is no ncclDataType_t name";
  }
  EXPECT_EQ(rows, static_cast<int>(std::size(kNcclH)));
  const Named kRedOps[] = {
      {"Sum", ncclSum}, {"Prod", ncclProd}, {"Max", ncclMax}, {"Min", ncclMin}, {"Avg", ncclAvg}};
  for (const NcclName<ReduceOp>& row : NcclReduceOpNames()) {
    if (!(row.uses & kNcclApiName)) continue;
    bool found = false;
    for (const Named& named : kRedOps) {
      if (row.name == named.name) {
        found = true;
        EXPECT_EQ(row.nccl_value, named.value) << row.name;
      }
    }
    EXPECT_TRUE(found) << row.name << " is no ncclRedOp_t name";
  }
}

}  // namespace
}  // namespace lumos::schema
