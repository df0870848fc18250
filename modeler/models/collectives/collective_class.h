// Design: the vocabulary of the collective model (collective_model.h): the operations it tells
// apart and how trace records map onto them, NCCL's protocols, the names the model file and
// tables write for operations, protocols, algorithms and data types, the message size the
// model works in and nccl-tests' bus bandwidth factor. (NCCL's own spellings, as the agent and
// the importer read them, are schema/'s NCCL name table; these are the model file's.)
// Threading: pure functions and constants.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "schema/enums.h"

namespace lumos::modeler::models {

// The operations the model tells apart. Reduce has broadcast's structure (a ring of n-1 steps
// moving the whole message), gather and scatter all-to-all's (a root exchanging with n-1
// peers), send, recv and send/recv are one point-to-point transfer.
enum class CollectiveClass : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv,
};
inline constexpr int kCollectiveClasses = 6;
inline constexpr int kProtocols = 3;  // LL, LL128, Simple (NcclProtocol minus 1).

// The index of `p` in kProtocols order; -1 for kUnspecified.
int ProtocolIndex(schema::NcclProtocol p);

std::optional<CollectiveClass> ClassOf(schema::CollectiveOp op);
const char* ClassName(CollectiveClass c);  // "all_reduce", "all_gather", ...
std::optional<CollectiveClass> ClassFromName(std::string_view name);
const char* ProtocolName(schema::NcclProtocol p);    // "LL", "LL128", "Simple", "-"
const char* AlgorithmName(schema::NcclAlgorithm a);  // "ring", "tree", "nvls", "collnet", ...
const char* DataTypeName(schema::DataType t);        // "float16", "bfloat16", "int8", ..., "-"
std::optional<schema::NcclProtocol> ProtocolFromName(std::string_view name);
std::optional<schema::NcclAlgorithm> AlgorithmFromName(std::string_view name);
std::optional<schema::DataType> DataTypeFromName(std::string_view name);

// The message size the model works in (nccl-tests' "size"), from a trace record's bytes (per
// rank, NcclCollective.bytes): all-gather's is the gathered output (ranks x the record's),
// reduce-scatter's the input (ranks x the record's output), the others' the record's.
uint64_t ModelBytes(CollectiveClass c, uint64_t record_bytes, uint32_t ranks);

// nccl-tests' bus bandwidth factor (busbw = algbw x factor, algbw = ModelBytes / time): 2(n-1)/n
// for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast, reduce
// and point-to-point; 0 for a ring op of fewer than 2 ranks (no bus traffic).
double BusBandwidthFactor(CollectiveClass c, uint32_t ranks);

// NVLS can reduce it in the switch (multimem reductions: 16-bit and wider types, not 8-bit).
bool NvlsCanReduce(schema::DataType type);

}  // namespace lumos::modeler::models
