#include "agent/nccl/nccl_names.h"

#include <strings.h>

#include <atomic>
#include <cstdint>
#include <iterator>

namespace lumos::agent {
namespace {

template <typename Enum>
struct NameEntry {
  const char* name;
  Enum value;
};

// `name` without a leading "nccl" (any case), so "ncclFloat32" and "Float32" both match.
const char* WithoutNcclPrefix(const char* name) {
  return strncasecmp(name, "nccl", 4) == 0 ? name + 4 : name;
}

// NCCL hands the plugin the same string literals every time (ncclFuncToString,
// ncclDatatypeToString, its algorithm and protocol name tables), and the scan below cost a
// sixth of a collective's plugin time (strcasecmp over up to 17 names, four times). So each
// table remembers where it found a name, by the name's address: a direct-mapped array of words
// (address << 8 | index + 1), lock-free, one relaxed load. A hit is confirmed with one
// strcasecmp against the remembered entry, so an address whose text has changed (a reused
// buffer) falls back to the scan instead of giving a stale answer.
template <typename Enum, size_t N>
Enum Lookup(const NameEntry<Enum> (&table)[N], const char* name) {
  static_assert(N < 255, "the index is kept in 8 bits");
  if (name == nullptr) return Enum::kUnspecified;
  // One array per table (each table is its own instantiation); zero-initialized, no guard.
  static std::atomic<uint64_t> remembered[16];
  const auto address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  std::atomic<uint64_t>& slot = remembered[(address >> 3) % std::size(remembered)];
  const char* bare = WithoutNcclPrefix(name);
  const uint64_t word = slot.load(std::memory_order_relaxed);
  if (word != 0 && (word >> 8) == address) {
    const NameEntry<Enum>& entry = table[(word & 0xff) - 1];
    if (strcasecmp(bare, entry.name) == 0) return entry.value;
  }
  for (size_t i = 0; i < N; ++i) {
    if (strcasecmp(bare, table[i].name) != 0) continue;
    if ((address >> 56) == 0) slot.store(address << 8 | (i + 1), std::memory_order_relaxed);
    return table[i].value;
  }
  return Enum::kUnspecified;
}

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;
using schema::ReduceOp;

// ncclFuncToString's names (NCCL 2.28).
constexpr NameEntry<CollectiveOp> kOps[] = {
    {"AllReduce", CollectiveOp::kAllReduce},
    {"AllGather", CollectiveOp::kAllGather},
    {"ReduceScatter", CollectiveOp::kReduceScatter},
    {"Broadcast", CollectiveOp::kBroadcast},
    {"Reduce", CollectiveOp::kReduce},
    {"AlltoAll", CollectiveOp::kAllToAll},
    {"Send", CollectiveOp::kSend},
    {"Recv", CollectiveOp::kRecv},
    {"SendRecv", CollectiveOp::kSendRecv},
    {"Gather", CollectiveOp::kGather},
    {"Scatter", CollectiveOp::kScatter},
};

// ncclDatatypeToString's names, and the aliases nccl.h defines.
constexpr NameEntry<DataType> kDataTypes[] = {
    {"Int8", DataType::kInt8},
    {"Char", DataType::kInt8},
    {"Uint8", DataType::kUint8},
    {"Int32", DataType::kInt32},
    {"Int", DataType::kInt32},
    {"Uint32", DataType::kUint32},
    {"Int64", DataType::kInt64},
    {"Uint64", DataType::kUint64},
    {"Float16", DataType::kFloat16},
    {"Half", DataType::kFloat16},
    {"Float32", DataType::kFloat32},
    {"Float", DataType::kFloat32},
    {"Float64", DataType::kFloat64},
    {"Double", DataType::kFloat64},
    {"Bfloat16", DataType::kBfloat16},
    {"Float8e4m3", DataType::kFloat8E4m3},
    {"Float8e5m2", DataType::kFloat8E5m2},
};

constexpr NameEntry<NcclAlgorithm> kAlgorithms[] = {
    {"Tree", NcclAlgorithm::kTree},
    {"Ring", NcclAlgorithm::kRing},
    {"CollNetDirect", NcclAlgorithm::kCollnetDirect},
    {"CollNetChain", NcclAlgorithm::kCollnetChain},
    {"NVLS", NcclAlgorithm::kNvls},
    {"NVLSTree", NcclAlgorithm::kNvlsTree},
    {"PAT", NcclAlgorithm::kPat},
};

constexpr NameEntry<NcclProtocol> kProtocols[] = {
    {"LL", NcclProtocol::kLl},
    {"LL128", NcclProtocol::kLl128},
    {"Simple", NcclProtocol::kSimple},
};

}  // namespace

CollectiveOp CollectiveOpFromNcclName(const char* func) { return Lookup(kOps, func); }
DataType DataTypeFromNcclName(const char* datatype) { return Lookup(kDataTypes, datatype); }
NcclAlgorithm AlgorithmFromNcclName(const char* algorithm) {
  return Lookup(kAlgorithms, algorithm);
}
NcclProtocol ProtocolFromNcclName(const char* protocol) { return Lookup(kProtocols, protocol); }

DataType DataTypeFromNccl(int nccl_data_type) {
  // ncclInt8 = 0 ... ncclFloat8e5m2 = 11 (nccl.h, 2.28); the schema's order differs.
  constexpr DataType kByValue[] = {
      DataType::kInt8,    DataType::kUint8,    DataType::kInt32,      DataType::kUint32,
      DataType::kInt64,   DataType::kUint64,   DataType::kFloat16,    DataType::kFloat32,
      DataType::kFloat64, DataType::kBfloat16, DataType::kFloat8E4m3, DataType::kFloat8E5m2,
  };
  if (nccl_data_type < 0 || nccl_data_type >= static_cast<int>(std::size(kByValue))) {
    return DataType::kUnspecified;
  }
  return kByValue[nccl_data_type];
}

ReduceOp ReduceOpFromNccl(int nccl_red_op) {
  switch (nccl_red_op) {  // ncclSum = 0 ... ncclAvg = 4; larger values are user-created ops.
    case 0:
      return ReduceOp::kSum;
    case 1:
      return ReduceOp::kProd;
    case 2:
      return ReduceOp::kMax;
    case 3:
      return ReduceOp::kMin;
    case 4:
      return ReduceOp::kAvg;
    default:
      return ReduceOp::kUnspecified;
  }
}

}  // namespace lumos::agent
