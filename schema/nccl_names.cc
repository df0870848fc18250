#include "schema/nccl_names.h"

#include <strings.h>

#include <array>
#include <atomic>
#include <iterator>

namespace lumos::schema {
namespace {

constexpr uint8_t kApi = kNcclApiName;
constexpr uint8_t kKernel = kNcclKernelToken;
constexpr uint8_t kBoth = kNcclApiName | kNcclKernelToken;

// ncclFuncToString's names (NCCL 2.28) and the kernels' operations.
constexpr NcclName<CollectiveOp> kOps[] = {
    {"ReduceScatter", CollectiveOp::kReduceScatter, kBoth},
    {"AllGatherV", CollectiveOp::kAllGather, kKernel},
    {"AllReduce", CollectiveOp::kAllReduce, kBoth},
    {"AllGather", CollectiveOp::kAllGather, kBoth},
    {"Broadcast", CollectiveOp::kBroadcast, kBoth},
    {"SendRecv", CollectiveOp::kSendRecv, kBoth},
    {"AllToAll", CollectiveOp::kAllToAll, kKernel},
    {"AlltoAll", CollectiveOp::kAllToAll, kApi},
    {"Reduce", CollectiveOp::kReduce, kBoth},
    {"Send", CollectiveOp::kSend, kBoth},
    {"Recv", CollectiveOp::kRecv, kBoth},
    {"Gather", CollectiveOp::kGather, kApi},
    {"Scatter", CollectiveOp::kScatter, kApi},
};

// ncclDatatypeToString's names with their ncclDataType_t (ncclInt8 = 0 ... ncclFloat8e5m2 = 11,
// nccl.h 2.28: the schema's order differs), the aliases nccl.h defines, and the kernels' C++
// type names and short forms.
constexpr NcclName<DataType> kDataTypes[] = {
    {"Int8", DataType::kInt8, kApi, 0},
    {"Char", DataType::kInt8, kApi, 0},
    {"int8_t", DataType::kInt8, kKernel},
    {"i8", DataType::kInt8, kKernel},
    {"Uint8", DataType::kUint8, kApi, 1},
    {"uint8_t", DataType::kUint8, kKernel},
    {"u8", DataType::kUint8, kKernel},
    {"Int32", DataType::kInt32, kApi, 2},
    {"Int", DataType::kInt32, kApi, 2},
    {"int32_t", DataType::kInt32, kKernel},
    {"i32", DataType::kInt32, kKernel},
    {"Uint32", DataType::kUint32, kApi, 3},
    {"uint32_t", DataType::kUint32, kKernel},
    {"u32", DataType::kUint32, kKernel},
    {"Int64", DataType::kInt64, kApi, 4},
    {"int64_t", DataType::kInt64, kKernel},
    {"i64", DataType::kInt64, kKernel},
    {"Uint64", DataType::kUint64, kApi, 5},
    {"uint64_t", DataType::kUint64, kKernel},
    {"u64", DataType::kUint64, kKernel},
    {"Float16", DataType::kFloat16, kApi, 6},
    {"Half", DataType::kFloat16, kApi, 6},
    {"half", DataType::kFloat16, kKernel},
    {"f16", DataType::kFloat16, kKernel},
    {"Float32", DataType::kFloat32, kApi, 7},
    {"Float", DataType::kFloat32, kApi, 7},
    {"float", DataType::kFloat32, kKernel},
    {"f32", DataType::kFloat32, kKernel},
    {"Float64", DataType::kFloat64, kApi, 8},
    {"Double", DataType::kFloat64, kApi, 8},
    {"double", DataType::kFloat64, kKernel},
    {"f64", DataType::kFloat64, kKernel},
    {"Bfloat16", DataType::kBfloat16, kApi, 9},
    {"__nv_bfloat16", DataType::kBfloat16, kKernel},
    {"bf16", DataType::kBfloat16, kKernel},
    {"Float8e4m3", DataType::kFloat8E4m3, kApi, 10},
    {"__nv_fp8_e4m3", DataType::kFloat8E4m3, kKernel},
    {"f8e4m3", DataType::kFloat8E4m3, kKernel},
    {"Float8e5m2", DataType::kFloat8E5m2, kApi, 11},
    {"__nv_fp8_e5m2", DataType::kFloat8E5m2, kKernel},
    {"f8e5m2", DataType::kFloat8E5m2, kKernel},
};

// The profiler's algorithm names and the kernels'.
constexpr NcclName<NcclAlgorithm> kAlgorithms[] = {
    {"Tree", NcclAlgorithm::kTree, kApi},
    {"TREE", NcclAlgorithm::kTree, kKernel},
    {"Ring", NcclAlgorithm::kRing, kApi},
    {"RING", NcclAlgorithm::kRing, kKernel},
    {"CollNetDirect", NcclAlgorithm::kCollnetDirect, kApi},
    {"COLLNET_DIRECT", NcclAlgorithm::kCollnetDirect, kKernel},
    {"CollNetChain", NcclAlgorithm::kCollnetChain, kApi},
    {"COLLNET_CHAIN", NcclAlgorithm::kCollnetChain, kKernel},
    // NCCL < 2.12 had a single CollNet algorithm; 2.12 renamed it CollNetChain.
    {"COLLNET", NcclAlgorithm::kCollnetChain, kKernel},
    {"NVLSTree", NcclAlgorithm::kNvlsTree, kApi},
    {"NVLS_TREE", NcclAlgorithm::kNvlsTree, kKernel},
    {"NVLS", NcclAlgorithm::kNvls, kBoth},
    {"PAT", NcclAlgorithm::kPat, kBoth},
};

// The profiler's protocol names and the kernels'.
constexpr NcclName<NcclProtocol> kProtocols[] = {
    {"LL128", NcclProtocol::kLl128, kBoth},
    {"LL", NcclProtocol::kLl, kBoth},
    {"Simple", NcclProtocol::kSimple, kApi},
    {"SIMPLE", NcclProtocol::kSimple, kKernel},
};

// nccl.h's ncclRedOp_t (ncclSum = 0 ... ncclAvg = 4; larger values are user-created ops) and the
// kernels' reductions. PreMulSum serves ncclAvg on floats and user scalings alike, MinMax both
// Min and Max: neither says which reduction the user asked for.
constexpr NcclName<ReduceOp> kReduceOps[] = {
    {"Sum", ReduceOp::kSum, kBoth, 0},
    {"Prod", ReduceOp::kProd, kBoth, 1},
    {"Max", ReduceOp::kMax, kBoth, 2},
    {"Min", ReduceOp::kMin, kBoth, 3},
    {"Avg", ReduceOp::kAvg, kBoth, 4},
    {"SumPostDiv", ReduceOp::kAvg, kKernel},  // ncclAvg on integers only.
    {"PreMulSum", ReduceOp::kUnspecified, kKernel},
    {"MinMax", ReduceOp::kUnspecified, kKernel},
};

// ---- API names ----

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
Enum Lookup(const NcclName<Enum> (&table)[N], const char* name) {
  static_assert(N < 255, "the index is kept in 8 bits");
  if (name == nullptr) return Enum::kUnspecified;
  // One array per table (each table is its own instantiation); zero-initialized, no guard.
  static std::atomic<uint64_t> remembered[16];
  const auto address = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  std::atomic<uint64_t>& slot = remembered[(address >> 3) % std::size(remembered)];
  const char* bare = WithoutNcclPrefix(name);
  const uint64_t word = slot.load(std::memory_order_relaxed);
  if (word != 0 && (word >> 8) == address) {
    const NcclName<Enum>& entry = table[(word & 0xff) - 1];
    if (strcasecmp(bare, entry.name.data()) == 0) return entry.value;
  }
  for (size_t i = 0; i < N; ++i) {
    if ((table[i].uses & kNcclApiName) == 0 || strcasecmp(bare, table[i].name.data()) != 0) {
      continue;
    }
    if ((address >> 56) == 0) slot.store(address << 8 | (i + 1), std::memory_order_relaxed);
    return table[i].value;
  }
  return Enum::kUnspecified;
}

// ---- nccl.h values ----

// One more than the largest nccl_value of the table.
template <typename Enum, size_t N>
constexpr size_t NcclValueCount(const NcclName<Enum> (&table)[N]) {
  int largest = -1;
  for (const NcclName<Enum>& row : table) {
    if (row.nccl_value > largest) largest = row.nccl_value;
  }
  return largest < 0 ? 0 : static_cast<size_t>(largest) + 1;
}

// Whether every nccl.h value below NcclValueCount has a row, and all its rows one enum value.
template <typename Enum, size_t N>
constexpr bool NcclValuesComplete(const NcclName<Enum> (&table)[N]) {
  for (int v = 0; v < static_cast<int>(NcclValueCount(table)); ++v) {
    const NcclName<Enum>* first = nullptr;
    for (const NcclName<Enum>& row : table) {
      if (row.nccl_value != v) continue;
      if (first != nullptr && first->value != row.value) return false;
      if (first == nullptr) first = &row;
    }
    if (first == nullptr) return false;
  }
  return true;
}

// The table's enum value for each nccl.h value (the array the wrappers index).
template <size_t M, typename Enum, size_t N>
constexpr std::array<Enum, M> ByNcclValue(const NcclName<Enum> (&table)[N]) {
  std::array<Enum, M> by_value{};
  for (const NcclName<Enum>& row : table) {
    if (row.nccl_value >= 0) by_value[static_cast<size_t>(row.nccl_value)] = row.value;
  }
  return by_value;
}

static_assert(NcclValuesComplete(kDataTypes) && NcclValuesComplete(kReduceOps));
constexpr auto kDataTypeByNcclValue = ByNcclValue<NcclValueCount(kDataTypes)>(kDataTypes);
constexpr auto kReduceOpByNcclValue = ByNcclValue<NcclValueCount(kReduceOps)>(kReduceOps);
static_assert(kDataTypeByNcclValue.size() == 12 && kReduceOpByNcclValue.size() == 5);

// ---- kernel names ----

constexpr std::string_view kKernelPrefixes[] = {"ncclKernel_", "ncclDevKernel_",
                                                "ncclSymkDevKernel_"};

// The kernel's base name: no "void ", no parameter list or template arguments.
std::string_view BaseName(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  size_t end = name.find_first_of("(< ");
  return end == std::string_view::npos ? name : name.substr(0, end);
}

template <typename Enum, size_t N>
size_t MatchToken(const NcclName<Enum> (&table)[N], std::string_view fields, Enum* value) {
  for (const NcclName<Enum>& row : table) {
    if ((row.uses & kNcclKernelToken) == 0) continue;
    const std::string_view token = row.name;
    if (fields.substr(0, token.size()) == token &&
        (fields.size() == token.size() || fields[token.size()] == '_')) {
      *value = row.value;
      return token.size();
    }
  }
  return 0;
}

}  // namespace

std::span<const NcclName<CollectiveOp>> NcclCollectiveOpNames() { return kOps; }
std::span<const NcclName<DataType>> NcclDataTypeNames() { return kDataTypes; }
std::span<const NcclName<NcclAlgorithm>> NcclAlgorithmNames() { return kAlgorithms; }
std::span<const NcclName<NcclProtocol>> NcclProtocolNames() { return kProtocols; }
std::span<const NcclName<ReduceOp>> NcclReduceOpNames() { return kReduceOps; }

CollectiveOp CollectiveOpFromNcclName(const char* func) { return Lookup(kOps, func); }
DataType DataTypeFromNcclName(const char* datatype) { return Lookup(kDataTypes, datatype); }
NcclAlgorithm AlgorithmFromNcclName(const char* algorithm) {
  return Lookup(kAlgorithms, algorithm);
}
NcclProtocol ProtocolFromNcclName(const char* protocol) { return Lookup(kProtocols, protocol); }

DataType DataTypeFromNccl(int nccl_data_type) {
  if (nccl_data_type < 0 || nccl_data_type >= static_cast<int>(kDataTypeByNcclValue.size())) {
    return DataType::kUnspecified;
  }
  return kDataTypeByNcclValue[static_cast<size_t>(nccl_data_type)];
}

ReduceOp ReduceOpFromNccl(int nccl_red_op) {
  if (nccl_red_op < 0 || nccl_red_op >= static_cast<int>(kReduceOpByNcclValue.size())) {
    return ReduceOp::kUnspecified;
  }
  return kReduceOpByNcclValue[static_cast<size_t>(nccl_red_op)];
}

bool IsNcclKernelName(std::string_view name) { return NcclKernelFields(name).has_value(); }

std::optional<std::string_view> NcclKernelFields(std::string_view name) {
  std::string_view base = BaseName(name);
  for (std::string_view prefix : kKernelPrefixes) {
    if (base.substr(0, prefix.size()) == prefix) return base.substr(prefix.size());
  }
  return std::nullopt;
}

size_t MatchNcclKernelToken(std::string_view fields, CollectiveOp* value) {
  return MatchToken(kOps, fields, value);
}
size_t MatchNcclKernelToken(std::string_view fields, NcclAlgorithm* value) {
  return MatchToken(kAlgorithms, fields, value);
}
size_t MatchNcclKernelToken(std::string_view fields, NcclProtocol* value) {
  return MatchToken(kProtocols, fields, value);
}
size_t MatchNcclKernelToken(std::string_view fields, ReduceOp* value) {
  return MatchToken(kReduceOps, fields, value);
}
size_t MatchNcclKernelToken(std::string_view fields, DataType* value) {
  return MatchToken(kDataTypes, fields, value);
}

}  // namespace lumos::schema
