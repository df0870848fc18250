// Design: NCCL's names and enums -> the schema's enums, for both NCCL routes. The profiler
// plugin gets strings from NCCL ("AllReduce", "ncclFloat32", "Ring", "LL128"); the wrappers get
// ncclDataType_t / ncclRedOp_t values. Unknown input maps to kUnspecified, never an error: a newer
// NCCL's new name only loses that one attribute. Pure functions; no allocation, safe on the hot
// path (names compare case-insensitively, a leading "nccl" ignored).
#pragma once

#include <cstdint>

#include "schema/enums.h"

namespace lumos::agent {

schema::CollectiveOp CollectiveOpFromNcclName(const char* func);
schema::DataType DataTypeFromNcclName(const char* datatype);
schema::NcclAlgorithm AlgorithmFromNcclName(const char* algorithm);
schema::NcclProtocol ProtocolFromNcclName(const char* protocol);
// ncclDataType_t and ncclRedOp_t values (ints, so this header needs no nccl.h).
schema::DataType DataTypeFromNccl(int nccl_data_type);
schema::ReduceOp ReduceOpFromNccl(int nccl_red_op);

}  // namespace lumos::agent
