// NCCL's names and enum values -> schema enums.
#include "agent/nccl/nccl_names.h"

#include <gtest/gtest.h>
#include <nccl.h>

#include <cstring>

namespace lumos::agent {
namespace {

using schema::CollectiveOp;
using schema::DataType;

TEST(NcclNameMappingTest, MapsNcclFunctionNames) {
  EXPECT_EQ(CollectiveOpFromNcclName("AllReduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpFromNcclName("AlltoAll"), CollectiveOp::kAllToAll);
  EXPECT_EQ(CollectiveOpFromNcclName("ReduceScatter"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(CollectiveOpFromNcclName("Recv"), CollectiveOp::kRecv);
  EXPECT_EQ(CollectiveOpFromNcclName("PutSignal"), CollectiveOp::kUnspecified);  // Newer NCCL.
  EXPECT_EQ(CollectiveOpFromNcclName(nullptr), CollectiveOp::kUnspecified);
}

TEST(NcclNameMappingTest, MapsDataTypeNamesWithOrWithoutPrefix) {
  EXPECT_EQ(DataTypeFromNcclName("ncclFloat32"), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromNcclName("float32"), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromNcclName("ncclBfloat16"), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromNcclName("ncclFloat8e5m2"), DataType::kFloat8E5m2);
  EXPECT_EQ(DataTypeFromNcclName("nccl"), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNcclName(""), DataType::kUnspecified);
}

TEST(NcclNameMappingTest, MapsEveryNcclDataTypeValue) {
  EXPECT_EQ(DataTypeFromNccl(ncclInt8), DataType::kInt8);
  EXPECT_EQ(DataTypeFromNccl(ncclUint32), DataType::kUint32);
  EXPECT_EQ(DataTypeFromNccl(ncclFloat16), DataType::kFloat16);
  EXPECT_EQ(DataTypeFromNccl(ncclBfloat16), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromNccl(ncclFloat8e4m3), DataType::kFloat8E4m3);
  EXPECT_EQ(DataTypeFromNccl(ncclNumTypes), DataType::kUnspecified);
  EXPECT_EQ(DataTypeFromNccl(-1), DataType::kUnspecified);
  for (int t = 0; t < ncclNumTypes; ++t) EXPECT_NE(schema::DataTypeBytes(DataTypeFromNccl(t)), 0u);
}

TEST(NcclNameMappingTest, MapsAlgorithmsProtocolsAndReduceOps) {
  EXPECT_EQ(AlgorithmFromNcclName("NVLSTree"), schema::NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(AlgorithmFromNcclName("CollNetDirect"), schema::NcclAlgorithm::kCollnetDirect);
  EXPECT_EQ(AlgorithmFromNcclName("PAT"), schema::NcclAlgorithm::kPat);
  EXPECT_EQ(ProtocolFromNcclName("LL128"), schema::NcclProtocol::kLl128);
  EXPECT_EQ(ProtocolFromNcclName("Simple"), schema::NcclProtocol::kSimple);
  EXPECT_EQ(ProtocolFromNcclName("LL"), schema::NcclProtocol::kLl);
  EXPECT_EQ(ReduceOpFromNccl(ncclAvg), schema::ReduceOp::kAvg);
  EXPECT_EQ(ReduceOpFromNccl(ncclNumOps), schema::ReduceOp::kUnspecified);  // User-made op.
}

// Lookups remember names by address (NCCL passes the same literals); a buffer whose text
// changes between calls is looked up afresh, never answered from what it said before.
TEST(NcclNameMappingTest, ARememberedAddressWithNewTextIsLookedUpAgain) {
  char reused[16] = "AllGather";
  EXPECT_EQ(CollectiveOpFromNcclName(reused), schema::CollectiveOp::kAllGather);
  EXPECT_EQ(CollectiveOpFromNcclName(reused), schema::CollectiveOp::kAllGather);  // Remembered.
  std::strcpy(reused, "Broadcast");
  EXPECT_EQ(CollectiveOpFromNcclName(reused), schema::CollectiveOp::kBroadcast);
  std::strcpy(reused, "NoSuchOp");
  EXPECT_EQ(CollectiveOpFromNcclName(reused), schema::CollectiveOp::kUnspecified);
  std::strcpy(reused, "ncclBfloat16");
  EXPECT_EQ(DataTypeFromNcclName(reused), schema::DataType::kBfloat16);
  std::strcpy(reused, "half");
  EXPECT_EQ(DataTypeFromNcclName(reused), schema::DataType::kFloat16);
}

}  // namespace
}  // namespace lumos::agent
