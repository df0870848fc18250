// Design: C++ mirrors of the enums in lumos/trace.proto, for code that must not depend on
// libprotobuf (the agent and its writer). Each list is an X-macro: X(CamelName, number); the
// proto name is PREFIX_ + UPPER_SNAKE(CamelName). tests/schema/enums_test.cc checks every list
// against the generated descriptors, so the two cannot drift apart.
#pragma once

#include <cstdint>

// One X-macro list per enum; clang-format reflows these differently on every pass.
// clang-format off

#define LUMOS_ENUM_CLOCK_ID(X) \
  X(Unspecified, 0) X(Realtime, 1) X(Monotonic, 2) X(Cupti, 3) X(MonotonicRaw, 4) X(Kineto, 5)

#define LUMOS_ENUM_PRODUCER(X) \
  X(Unspecified, 0) X(Agent, 1) X(KinetoImport, 2) X(Synthetic, 3)

#define LUMOS_ENUM_CHANNEL(X)                                                          \
  X(Unspecified, 0) X(CuptiActivity, 1) X(CuptiCallback, 2) X(NcclPlugin, 3) X(NcclWrappers, 4) \
  X(Nvtx, 5) X(Cublas, 6)

#define LUMOS_ENUM_LAUNCH_TYPE(X) X(Unspecified, 0) X(Regular, 1) X(Cooperative, 2) X(Cluster, 3)

#define LUMOS_ENUM_COPY_KIND(X) \
  X(Unspecified, 0) X(Htod, 1) X(Dtoh, 2) X(Dtod, 3) X(Htoh, 4) X(Ptop, 5)

#define LUMOS_ENUM_MEMORY_KIND(X) \
  X(Unspecified, 0) X(Pageable, 1) X(Pinned, 2) X(Device, 3) X(Array, 4) X(Managed, 5)

#define LUMOS_ENUM_SYNC_TYPE(X)                                                          \
  X(Unspecified, 0) X(EventSynchronize, 1) X(StreamWaitEvent, 2) X(StreamSynchronize, 3) \
  X(ContextSynchronize, 4)

#define LUMOS_ENUM_API_DOMAIN(X) X(Unspecified, 0) X(Runtime, 1) X(Driver, 2)

#define LUMOS_ENUM_API_KIND(X)                                                              \
  X(Unspecified, 0) X(Other, 1) X(LaunchKernel, 2) X(LaunchGraph, 3) X(Memcpy, 4)           \
  X(MemcpyAsync, 5) X(Memset, 6) X(MemsetAsync, 7) X(EventRecord, 8) X(StreamWaitEvent, 9) \
  X(EventSynchronize, 10) X(StreamSynchronize, 11) X(DeviceSynchronize, 12)                \
  X(EventQuery, 13) X(StreamQuery, 14) X(Malloc, 15) X(Free, 16)

#define LUMOS_ENUM_NVTX_KIND(X) X(Unspecified, 0) X(PushPop, 1) X(StartEnd, 2) X(Mark, 3)

#define LUMOS_ENUM_HOST_RANGE_CATEGORY(X)                                               \
  X(Unspecified, 0) X(CpuOp, 1) X(UserAnnotation, 2) X(Step, 3) X(Python, 4) \
  X(GpuAnnotation, 5) X(Other, 6)

#define LUMOS_ENUM_COLLECTIVE_OP(X)                                                          \
  X(Unspecified, 0) X(AllReduce, 1) X(AllGather, 2) X(ReduceScatter, 3) X(Broadcast, 4)     \
  X(Reduce, 5) X(AllToAll, 6) X(Send, 7) X(Recv, 8) X(SendRecv, 9) X(Gather, 10) X(Scatter, 11)

#define LUMOS_ENUM_DATA_TYPE(X)                                                            \
  X(Unspecified, 0) X(Int8, 1) X(Uint8, 2) X(Int32, 3) X(Uint32, 4) X(Int64, 5) X(Uint64, 6) \
  X(Float16, 7) X(Float32, 8) X(Float64, 9) X(Bfloat16, 10) X(Float8E4m3, 11)             \
  X(Float8E5m2, 12) X(ComplexFloat16, 13) X(ComplexBfloat16, 14) X(ComplexFloat32, 15)      \
  X(ComplexFloat64, 16) X(Float6E2m3, 17) X(Float6E3m2, 18) X(Float4E2m1, 19)

#define LUMOS_ENUM_REDUCE_OP(X) \
  X(Unspecified, 0) X(Sum, 1) X(Prod, 2) X(Max, 3) X(Min, 4) X(Avg, 5)

#define LUMOS_ENUM_NCCL_ALGORITHM(X)                                                           \
  X(Unspecified, 0) X(Tree, 1) X(Ring, 2) X(CollnetDirect, 3) X(CollnetChain, 4) X(Nvls, 5) \
  X(NvlsTree, 6) X(Pat, 7)

#define LUMOS_ENUM_NCCL_PROTOCOL(X) X(Unspecified, 0) X(Ll, 1) X(Ll128, 2) X(Simple, 3)

#define LUMOS_ENUM_WINDOW_TRIGGER(X) \
  X(Unspecified, 0) X(WholeRun, 1) X(Periodic, 2) X(OnDemand, 3) X(Imported, 4)

#define LUMOS_ENUM_LOSS_SOURCE(X)                                                           \
  X(Unspecified, 0) X(RingFull, 1) X(CuptiDropped, 2) X(BufferPoolEmpty, 3) X(WriteFailed, 4) \
  X(FileLimit, 5) X(ImportSkipped, 6) X(ChannelFailed, 7) X(ChannelLimit, 8)

#define LUMOS_ENUM_GEMM_API(X)                                                                \
  X(Unspecified, 0) X(CublasGemm, 1) X(CublasGemmBatched, 2) X(CublasGemmStridedBatched, 3)    \
  X(CublasGemmEx, 4) X(CublasGemmBatchedEx, 5) X(CublasGemmStridedBatchedEx, 6)              \
  X(CublasltMatmul, 7) X(FrameworkMatmul, 8) X(FrameworkAttention, 9)                       \
  X(FrameworkAttentionBackward, 10)

#define LUMOS_ENUM_GEMM_TRANSPOSE(X) X(Unspecified, 0) X(N, 1) X(T, 2) X(C, 3) X(Conjg, 4)

#define LUMOS_ENUM_GEMM_COMPUTE_TYPE(X)                                                       \
  X(Unspecified, 0) X(Float16, 1) X(Float16Pedantic, 2) X(Float32, 3) X(Float32Pedantic, 4)   \
  X(Float32FastFloat16, 5) X(Float32FastBfloat16, 6) X(Float32FastTf32, 7)                   \
  X(Float32EmulatedBf16x9, 8) X(Float64, 9) X(Float64Pedantic, 10)                           \
  X(Float64EmulatedFixedpoint, 11) X(Int32, 12) X(Int32Pedantic, 13)

#define LUMOS_ENUM_ATTENTION_MASK(X) X(Unspecified, 0) X(None, 1) X(Causal, 2) X(Tensor, 3)

#define LUMOS_ENUM_GEMM_MATH_MODE(X)                                                      \
  X(Unspecified, 0) X(Default, 1) X(TensorOp, 2) X(Pedantic, 3) X(Tf32TensorOp, 4)       \
  X(Fp32EmulatedBf16x9, 5) X(Fp64EmulatedFixedpoint, 6)

// (C++ enum, X-macro list, proto enum name, proto value prefix)
#define LUMOS_ALL_ENUMS(Y)                                               \
  Y(ClockId, LUMOS_ENUM_CLOCK_ID, "ClockId", "CLOCK_ID_")                   \
  Y(Producer, LUMOS_ENUM_PRODUCER, "Producer", "PRODUCER_")              \
  Y(Channel, LUMOS_ENUM_CHANNEL, "Channel", "CHANNEL_")                  \
  Y(LaunchType, LUMOS_ENUM_LAUNCH_TYPE, "LaunchType", "LAUNCH_TYPE_")    \
  Y(CopyKind, LUMOS_ENUM_COPY_KIND, "CopyKind", "COPY_KIND_")            \
  Y(MemoryKind, LUMOS_ENUM_MEMORY_KIND, "MemoryKind", "MEMORY_KIND_")    \
  Y(SyncType, LUMOS_ENUM_SYNC_TYPE, "SyncType", "SYNC_TYPE_")            \
  Y(ApiDomain, LUMOS_ENUM_API_DOMAIN, "ApiDomain", "API_DOMAIN_")        \
  Y(ApiKind, LUMOS_ENUM_API_KIND, "ApiKind", "API_KIND_")                \
  Y(NvtxKind, LUMOS_ENUM_NVTX_KIND, "NvtxKind", "NVTX_KIND_")            \
  Y(HostRangeCategory, LUMOS_ENUM_HOST_RANGE_CATEGORY, "HostRangeCategory", \
    "HOST_RANGE_CATEGORY_")                                              \
  Y(CollectiveOp, LUMOS_ENUM_COLLECTIVE_OP, "CollectiveOp", "COLLECTIVE_OP_") \
  Y(DataType, LUMOS_ENUM_DATA_TYPE, "DataType", "DATA_TYPE_")            \
  Y(ReduceOp, LUMOS_ENUM_REDUCE_OP, "ReduceOp", "REDUCE_OP_")            \
  Y(NcclAlgorithm, LUMOS_ENUM_NCCL_ALGORITHM, "NcclAlgorithm", "NCCL_ALGORITHM_") \
  Y(NcclProtocol, LUMOS_ENUM_NCCL_PROTOCOL, "NcclProtocol", "NCCL_PROTOCOL_") \
  Y(WindowTrigger, LUMOS_ENUM_WINDOW_TRIGGER, "WindowTrigger", "WINDOW_TRIGGER_") \
  Y(LossSource, LUMOS_ENUM_LOSS_SOURCE, "LossSource", "LOSS_SOURCE_")   \
  Y(GemmApi, LUMOS_ENUM_GEMM_API, "GemmApi", "GEMM_API_")               \
  Y(GemmTranspose, LUMOS_ENUM_GEMM_TRANSPOSE, "GemmTranspose", "GEMM_TRANSPOSE_") \
  Y(GemmComputeType, LUMOS_ENUM_GEMM_COMPUTE_TYPE, "GemmComputeType", "GEMM_COMPUTE_TYPE_") \
  Y(GemmMathMode, LUMOS_ENUM_GEMM_MATH_MODE, "GemmMathMode", "GEMM_MATH_MODE_") \
  Y(AttentionMask, LUMOS_ENUM_ATTENTION_MASK, "AttentionMask", "ATTENTION_MASK_")

// clang-format on

namespace lumos::schema {

#define LUMOS_INTERNAL_ENUM_VALUE(name, number) k##name = number,
#define LUMOS_INTERNAL_DECLARE_ENUM(type, list, proto_name, prefix) \
  enum class type : uint32_t { list(LUMOS_INTERNAL_ENUM_VALUE) };
LUMOS_ALL_ENUMS(LUMOS_INTERNAL_DECLARE_ENUM)
#undef LUMOS_INTERNAL_DECLARE_ENUM
#undef LUMOS_INTERNAL_ENUM_VALUE

// Bits per element of a data type (a complex one: both parts); 0 when unspecified.
constexpr uint32_t DataTypeBits(DataType type) {
  switch (type) {
    case DataType::kFloat4E2m1:
      return 4;
    case DataType::kFloat6E2m3:
    case DataType::kFloat6E3m2:
      return 6;
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFloat8E4m3:
    case DataType::kFloat8E5m2:
      return 8;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 16;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
    case DataType::kComplexFloat16:
    case DataType::kComplexBfloat16:
      return 32;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
    case DataType::kComplexFloat32:
      return 64;
    case DataType::kComplexFloat64:
      return 128;
    case DataType::kUnspecified:
      break;
  }
  return 0;
}

// Bytes per element (a collective's count times this is its size); 0 when unspecified or
// smaller than a byte (FP6, FP4: see DataTypeBits).
constexpr uint32_t DataTypeBytes(DataType type) {
  const uint32_t bits = DataTypeBits(type);
  return bits % 8 == 0 ? bits / 8 : 0;
}

}  // namespace lumos::schema
