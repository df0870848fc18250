// Design: what an imported trace can tell about an NCCL operation, recovered from strings:
// the device kernel's name and the collective arguments PyTorch attaches to it. Pure
// functions, no state.
//
// A kernel name's fields (schema/nccl_names.h: its three generations, the spellings of each
// field) are matched as tokens in any order, so all three parse with the shared tables. Caveat:
// since NCCL 2.19 a kernel is only the *specialisation* that ran; it can execute other
// algorithms and protocols through its generic path, and signed-integer reductions run in the
// unsigned kernel. Non-reducing ops (Broadcast, AllGather, SendRecv) always name int8_t and Sum,
// which say nothing about the user's data, so those two fields are only taken for reductions.
// Which kernels are NCCL's at all: schema::IsNcclKernelName.
#pragma once

#include <cstdint>
#include <string_view>

#include "schema/enums.h"

namespace lumos::modeler::kineto {

struct NcclKernelInfo {
  schema::CollectiveOp op = schema::CollectiveOp::kUnspecified;
  schema::NcclAlgorithm algorithm = schema::NcclAlgorithm::kUnspecified;
  schema::NcclProtocol protocol = schema::NcclProtocol::kUnspecified;
  schema::ReduceOp reduce_op = schema::ReduceOp::kUnspecified;  // Reductions only.
  schema::DataType data_type = schema::DataType::kUnspecified;  // Reductions only.
};

// All unspecified for a name that is no NCCL kernel's (schema::IsNcclKernelName).
NcclKernelInfo ParseNcclKernelName(std::string_view name);

bool IsReduction(schema::CollectiveOp op);

// Kineto's "Collective name" argument (PyTorch c10d names: "allreduce", "_allgather_base",
// "all_to_all", "reduce_scatter_tensor_coalesced", "send", ...). kUnspecified when unknown
// (also for "barrier", which NCCL runs as an all-reduce: the kernel name says so).
schema::CollectiveOp CollectiveOpFromPytorchName(std::string_view name);

// Kineto's "dtype" argument: c10::ScalarType names ("Float", "BFloat16", "Long", ...).
schema::DataType DataTypeFromScalarTypeName(std::string_view name);
// Element size of a c10::ScalarType name, including types NCCL traffic can carry without a
// DataType of their own (Short, complex); 0 when unknown.
uint32_t ScalarTypeBytes(std::string_view name);

}  // namespace lumos::modeler::kineto
