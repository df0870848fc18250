// Design: NCCL's names for the schema's enums (enums.h): collective operations, data types,
// algorithms, protocols and reduction operators, in one table per enum for both halves (the
// agent's NCCL channel, the modeler's importer and graph). NCCL spells them in two places:
//   - its API and its profiler plugin (kNcclApiName): nccl.h's names without "nccl" (ncclFloat32
//     -> "Float32", and nccl.h's aliases "Half", "Char", ...), and the strings NCCL hands its
//     profiler plugin (ncclFuncToString: "AllReduce", "AlltoAll"; its algorithm and protocol
//     tables: "CollNetDirect", "NVLSTree", "LL128", "Simple"). A data type's or reduction
//     operator's API name also carries its value in nccl.h (ncclDataType_t, ncclRedOp_t), which
//     is what the agent's wrappers get instead of a name.
//   - its device kernels' names (kNcclKernelToken), whose fields are joined by '_', in three
//     generations:
//       ncclKernel_AllReduce_RING_LL_Sum_float(...)      NCCL <= 2.18: op, algo, proto, redop, type
//       ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)     NCCL >= 2.19: op, redop, type, algo, proto
//       ncclSymkDevKernel_...                            NCCL >= 2.27 symmetric kernels
// Each row is one spelling: its enum value and where NCCL uses it (a spelling used in both places
// is one row). A spelling for something the schema cannot say maps to kUnspecified (the kernel
// "PreMulSum" serves ncclAvg on floats and user scalings alike).
// Look-ups:
//   - API names (the profiler plugin, on NCCL's threads: the agent's hot path): case-insensitive,
//     a leading "nccl" ignored, null or unknown -> kUnspecified, never an error (a newer NCCL's
//     new name only loses that one attribute); no allocation, no lock. NCCL hands the plugin the
//     same string literals every time, so each table remembers where it found a name by the
//     name's address (see nccl_names.cc).
//   - nccl.h values (the wrappers): an array built from the table at compile time, one index.
//   - kernel tokens (the importer splits a kernel name into fields and looks each one up):
//     exact, case-sensitive; the first row whose spelling the fields start with, followed by
//     '_' or their end. So a spelling that is another's prefix up to a '_' comes after it
//     ("COLLNET" after "COLLNET_DIRECT"), and no kernel token is in two tables (the importer
//     tries the tables in turn); tests/schema/nccl_names_test.cc checks both.
// Threading: any thread; the tables are constant, the address memo is relaxed atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "schema/enums.h"

namespace lumos::schema {

// Where NCCL uses a spelling: bits of NcclName::uses.
inline constexpr uint8_t kNcclApiName = 1;
inline constexpr uint8_t kNcclKernelToken = 2;

template <typename Enum>
struct NcclName {
  std::string_view name;  // A string literal (NUL-terminated).
  Enum value;
  uint8_t uses;         // kNcclApiName | kNcclKernelToken.
  int nccl_value = -1;  // An API name's value in nccl.h (ncclDataType_t, ncclRedOp_t); -1: none.
};

// The tables, every spelling of each (in the order the kernel tokens are matched).
std::span<const NcclName<CollectiveOp>> NcclCollectiveOpNames();
std::span<const NcclName<DataType>> NcclDataTypeNames();
std::span<const NcclName<NcclAlgorithm>> NcclAlgorithmNames();
std::span<const NcclName<NcclProtocol>> NcclProtocolNames();
std::span<const NcclName<ReduceOp>> NcclReduceOpNames();

// API names ("AllReduce", "ncclFloat32", "Ring", "LL128"); null or unknown: kUnspecified.
CollectiveOp CollectiveOpFromNcclName(const char* func);
DataType DataTypeFromNcclName(const char* datatype);
NcclAlgorithm AlgorithmFromNcclName(const char* algorithm);
NcclProtocol ProtocolFromNcclName(const char* protocol);
// ncclDataType_t and ncclRedOp_t values (ints, so this header needs no nccl.h); out of range (a
// user-made ncclRedOp_t): kUnspecified.
DataType DataTypeFromNccl(int nccl_data_type);
ReduceOp ReduceOpFromNccl(int nccl_red_op);

// True for NCCL device kernels (the prefixes above, optionally after "void ").
bool IsNcclKernelName(std::string_view name);
// An NCCL device kernel's fields: its name after the prefix, without a parameter list or
// template arguments ("AllReduce_Sum_f32_RING_LL"); nullopt when `name` is no NCCL kernel's.
std::optional<std::string_view> NcclKernelFields(std::string_view name);
// The kernel token `fields` starts with: its length, with its value in *value; 0 (and *value
// untouched) when none of the table's tokens is there.
size_t MatchNcclKernelToken(std::string_view fields, CollectiveOp* value);
size_t MatchNcclKernelToken(std::string_view fields, NcclAlgorithm* value);
size_t MatchNcclKernelToken(std::string_view fields, NcclProtocol* value);
size_t MatchNcclKernelToken(std::string_view fields, ReduceOp* value);
size_t MatchNcclKernelToken(std::string_view fields, DataType* value);

}  // namespace lumos::schema
