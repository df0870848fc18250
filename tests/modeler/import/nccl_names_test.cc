// modeler/import/nccl_names.h: kernel names parsed field by field (the spellings: schema/
// nccl_names.h, tests/schema/nccl_names_test.cc), PyTorch's collective and scalar type names.
#include "modeler/import/nccl_names.h"

#include <gtest/gtest.h>

namespace lumos::modeler::kineto {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;
using schema::ReduceOp;

TEST(NcclNamesTest, ParsesOldKernelNames) {
  NcclKernelInfo info = ParseNcclKernelName(
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(info.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(info.protocol, NcclProtocol::kLl);
  EXPECT_EQ(info.reduce_op, ReduceOp::kSum);
  EXPECT_EQ(info.data_type, DataType::kFloat32);

  info = ParseNcclKernelName("ncclKernel_ReduceScatter_TREE_LL128_Max___nv_bfloat16(x)");
  EXPECT_EQ(info.op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kTree);
  EXPECT_EQ(info.protocol, NcclProtocol::kLl128);
  EXPECT_EQ(info.reduce_op, ReduceOp::kMax);
  EXPECT_EQ(info.data_type, DataType::kBfloat16);

  info = ParseNcclKernelName("ncclKernel_Reduce_COLLNET_DIRECT_SIMPLE_Prod_uint64_t()");
  EXPECT_EQ(info.op, CollectiveOp::kReduce);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kCollnetDirect);
  EXPECT_EQ(info.protocol, NcclProtocol::kSimple);
  EXPECT_EQ(info.reduce_op, ReduceOp::kProd);
  EXPECT_EQ(info.data_type, DataType::kUint64);
}

TEST(NcclNamesTest, ParsesNewKernelNames) {
  NcclKernelInfo info =
      ParseNcclKernelName("ncclDevKernel_AllReduce_Sum_f16_NVLS_TREE_SIMPLE(ncclDevKernelArgs)");
  EXPECT_EQ(info.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(info.reduce_op, ReduceOp::kSum);
  EXPECT_EQ(info.data_type, DataType::kFloat16);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kNvlsTree);
  EXPECT_EQ(info.protocol, NcclProtocol::kSimple);

  info = ParseNcclKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(info.op, CollectiveOp::kAllGather);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(info.protocol, NcclProtocol::kLl);

  info = ParseNcclKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(info.op, CollectiveOp::kSendRecv);
  EXPECT_EQ(info.algorithm, NcclAlgorithm::kUnspecified);

  info = ParseNcclKernelName("ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_EQ(info.op, CollectiveOp::kUnspecified);
}

TEST(NcclNamesTest, IgnoresTypeAndRedopOfNonReductions) {
  // Broadcast and SendRecv kernels always say Sum/int8_t: bytes, not the user's data.
  NcclKernelInfo info = ParseNcclKernelName("ncclKernel_Broadcast_RING_LL_Sum_int8_t(x)");
  EXPECT_EQ(info.op, CollectiveOp::kBroadcast);
  EXPECT_EQ(info.reduce_op, ReduceOp::kUnspecified);
  EXPECT_EQ(info.data_type, DataType::kUnspecified);
}

TEST(NcclNamesTest, MapsPytorchCollectiveNames) {
  EXPECT_EQ(CollectiveOpFromPytorchName("allreduce"), CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpFromPytorchName("allreduce_coalesced"), CollectiveOp::kAllReduce);
  EXPECT_EQ(CollectiveOpFromPytorchName("_allgather_base"), CollectiveOp::kAllGather);
  EXPECT_EQ(CollectiveOpFromPytorchName("all_gather_into_tensor"), CollectiveOp::kAllGather);
  EXPECT_EQ(CollectiveOpFromPytorchName("_reduce_scatter_base"), CollectiveOp::kReduceScatter);
  EXPECT_EQ(CollectiveOpFromPytorchName("all_to_allv"), CollectiveOp::kAllToAll);
  EXPECT_EQ(CollectiveOpFromPytorchName("broadcast"), CollectiveOp::kBroadcast);
  EXPECT_EQ(CollectiveOpFromPytorchName("reduce"), CollectiveOp::kReduce);
  EXPECT_EQ(CollectiveOpFromPytorchName("send"), CollectiveOp::kSend);
  EXPECT_EQ(CollectiveOpFromPytorchName("recvAnysource"), CollectiveOp::kRecv);
  EXPECT_EQ(CollectiveOpFromPytorchName("gather"), CollectiveOp::kGather);
  EXPECT_EQ(CollectiveOpFromPytorchName("barrier"), CollectiveOp::kUnspecified);
  EXPECT_EQ(CollectiveOpFromPytorchName(""), CollectiveOp::kUnspecified);
}

TEST(NcclNamesTest, MapsScalarTypes) {
  EXPECT_EQ(DataTypeFromScalarTypeName("Float"), DataType::kFloat32);
  EXPECT_EQ(DataTypeFromScalarTypeName("BFloat16"), DataType::kBfloat16);
  EXPECT_EQ(DataTypeFromScalarTypeName("Long"), DataType::kInt64);
  EXPECT_EQ(DataTypeFromScalarTypeName("Float8_e4m3fn"), DataType::kFloat8E4m3);
  EXPECT_EQ(DataTypeFromScalarTypeName("Short"), DataType::kUnspecified);
  EXPECT_EQ(ScalarTypeBytes("Short"), 2u);
  EXPECT_EQ(ScalarTypeBytes("Double"), 8u);
  EXPECT_EQ(ScalarTypeBytes("Mystery"), 0u);
  EXPECT_EQ(schema::DataTypeBytes(DataType::kBfloat16), 2u);
  EXPECT_EQ(schema::DataTypeBytes(DataType::kUnspecified), 0u);
}

}  // namespace
}  // namespace lumos::modeler::kineto
