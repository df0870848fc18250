#include "modeler/import/nccl_names.h"

#include <array>
#include <string>

namespace lumos::modeler::kineto {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;
using schema::ReduceOp;

constexpr std::array<std::string_view, 3> kKernelPrefixes = {"ncclKernel_", "ncclDevKernel_",
                                                             "ncclSymkDevKernel_"};

enum class TokenKind { kOp, kAlgorithm, kProtocol, kReduceOp, kDataType };

struct Token {
  std::string_view text;
  TokenKind kind;
  uint32_t value;  // The enum value of `kind`.
};

template <typename E>
constexpr uint32_t V(E e) {
  return static_cast<uint32_t>(e);
}

// Longer tokens first, so "ReduceScatter" wins over "Reduce" and "LL128" over "LL".
constexpr Token kTokens[] = {
    {"ReduceScatter", TokenKind::kOp, V(CollectiveOp::kReduceScatter)},
    {"AllGatherV", TokenKind::kOp, V(CollectiveOp::kAllGather)},
    {"AllReduce", TokenKind::kOp, V(CollectiveOp::kAllReduce)},
    {"AllGather", TokenKind::kOp, V(CollectiveOp::kAllGather)},
    {"Broadcast", TokenKind::kOp, V(CollectiveOp::kBroadcast)},
    {"SendRecv", TokenKind::kOp, V(CollectiveOp::kSendRecv)},
    {"AllToAll", TokenKind::kOp, V(CollectiveOp::kAllToAll)},
    {"Reduce", TokenKind::kOp, V(CollectiveOp::kReduce)},
    {"Send", TokenKind::kOp, V(CollectiveOp::kSend)},
    {"Recv", TokenKind::kOp, V(CollectiveOp::kRecv)},
    {"COLLNET_DIRECT", TokenKind::kAlgorithm, V(NcclAlgorithm::kCollnetDirect)},
    {"COLLNET_CHAIN", TokenKind::kAlgorithm, V(NcclAlgorithm::kCollnetChain)},
    // NCCL < 2.12 had a single CollNet algorithm; 2.12 renamed it CollNetChain.
    {"COLLNET", TokenKind::kAlgorithm, V(NcclAlgorithm::kCollnetChain)},
    {"NVLS_TREE", TokenKind::kAlgorithm, V(NcclAlgorithm::kNvlsTree)},
    {"NVLS", TokenKind::kAlgorithm, V(NcclAlgorithm::kNvls)},
    {"TREE", TokenKind::kAlgorithm, V(NcclAlgorithm::kTree)},
    {"RING", TokenKind::kAlgorithm, V(NcclAlgorithm::kRing)},
    {"PAT", TokenKind::kAlgorithm, V(NcclAlgorithm::kPat)},
    {"SIMPLE", TokenKind::kProtocol, V(NcclProtocol::kSimple)},
    {"LL128", TokenKind::kProtocol, V(NcclProtocol::kLl128)},
    {"LL", TokenKind::kProtocol, V(NcclProtocol::kLl)},
    // PreMulSum serves ncclAvg on floats and user scalings alike, MinMax both Min and Max:
    // neither says which reduction the user asked for.
    {"SumPostDiv", TokenKind::kReduceOp, V(ReduceOp::kAvg)},  // ncclAvg on integers only.
    {"PreMulSum", TokenKind::kReduceOp, V(ReduceOp::kUnspecified)},
    {"MinMax", TokenKind::kReduceOp, V(ReduceOp::kUnspecified)},
    {"Prod", TokenKind::kReduceOp, V(ReduceOp::kProd)},
    {"Sum", TokenKind::kReduceOp, V(ReduceOp::kSum)},
    {"Max", TokenKind::kReduceOp, V(ReduceOp::kMax)},
    {"Min", TokenKind::kReduceOp, V(ReduceOp::kMin)},
    {"Avg", TokenKind::kReduceOp, V(ReduceOp::kAvg)},
    {"__nv_bfloat16", TokenKind::kDataType, V(DataType::kBfloat16)},
    {"__nv_fp8_e4m3", TokenKind::kDataType, V(DataType::kFloat8E4m3)},
    {"__nv_fp8_e5m2", TokenKind::kDataType, V(DataType::kFloat8E5m2)},
    {"uint8_t", TokenKind::kDataType, V(DataType::kUint8)},
    {"uint32_t", TokenKind::kDataType, V(DataType::kUint32)},
    {"uint64_t", TokenKind::kDataType, V(DataType::kUint64)},
    {"int8_t", TokenKind::kDataType, V(DataType::kInt8)},
    {"int32_t", TokenKind::kDataType, V(DataType::kInt32)},
    {"int64_t", TokenKind::kDataType, V(DataType::kInt64)},
    {"double", TokenKind::kDataType, V(DataType::kFloat64)},
    {"float", TokenKind::kDataType, V(DataType::kFloat32)},
    {"half", TokenKind::kDataType, V(DataType::kFloat16)},
    {"f8e4m3", TokenKind::kDataType, V(DataType::kFloat8E4m3)},
    {"f8e5m2", TokenKind::kDataType, V(DataType::kFloat8E5m2)},
    {"bf16", TokenKind::kDataType, V(DataType::kBfloat16)},
    {"i32", TokenKind::kDataType, V(DataType::kInt32)},
    {"u32", TokenKind::kDataType, V(DataType::kUint32)},
    {"i64", TokenKind::kDataType, V(DataType::kInt64)},
    {"u64", TokenKind::kDataType, V(DataType::kUint64)},
    {"f16", TokenKind::kDataType, V(DataType::kFloat16)},
    {"f32", TokenKind::kDataType, V(DataType::kFloat32)},
    {"f64", TokenKind::kDataType, V(DataType::kFloat64)},
    {"i8", TokenKind::kDataType, V(DataType::kInt8)},
    {"u8", TokenKind::kDataType, V(DataType::kUint8)},
};

// The kernel's base name: no "void ", no parameter list or template arguments.
std::string_view BaseName(std::string_view name) {
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  size_t end = name.find_first_of("(< ");
  return end == std::string_view::npos ? name : name.substr(0, end);
}

struct ScalarType {
  std::string_view name;
  DataType type;
  uint32_t bytes;
};

constexpr ScalarType kScalarTypes[] = {
    {"Byte", DataType::kUint8, 1},
    {"Char", DataType::kInt8, 1},
    {"Short", DataType::kUnspecified, 2},
    {"Int", DataType::kInt32, 4},
    {"Long", DataType::kInt64, 8},
    {"Half", DataType::kFloat16, 2},
    {"Float", DataType::kFloat32, 4},
    {"Double", DataType::kFloat64, 8},
    {"ComplexHalf", DataType::kUnspecified, 4},
    {"ComplexFloat", DataType::kUnspecified, 8},
    {"ComplexDouble", DataType::kUnspecified, 16},
    // PyTorch sends bool tensors as ncclUint8.
    {"Bool", DataType::kUint8, 1},
    {"BFloat16", DataType::kBfloat16, 2},
    {"Float8_e5m2", DataType::kFloat8E5m2, 1},
    {"Float8_e4m3fn", DataType::kFloat8E4m3, 1},
    // The *fnuz formats differ from OCP e4m3/e5m2 (no negative zero, other bias).
    {"Float8_e5m2fnuz", DataType::kUnspecified, 1},
    {"Float8_e4m3fnuz", DataType::kUnspecified, 1},
    {"UInt16", DataType::kUnspecified, 2},
    {"UInt32", DataType::kUint32, 4},
    {"UInt64", DataType::kUint64, 8},
};

const ScalarType* FindScalarType(std::string_view name) {
  for (const ScalarType& t : kScalarTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

}  // namespace

bool IsNcclKernelName(std::string_view name) {
  std::string_view base = BaseName(name);
  for (std::string_view prefix : kKernelPrefixes) {
    if (base.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

NcclKernelInfo ParseNcclKernelName(std::string_view name) {
  NcclKernelInfo info;
  std::string_view rest = BaseName(name);
  bool known = false;
  for (std::string_view prefix : kKernelPrefixes) {
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      known = true;
      break;
    }
  }
  if (!known) return info;
  bool first = true;
  while (!rest.empty()) {
    const Token* match = nullptr;
    for (const Token& token : kTokens) {
      if (rest.substr(0, token.text.size()) == token.text &&
          (rest.size() == token.text.size() || rest[token.text.size()] == '_')) {
        match = &token;
        break;
      }
    }
    size_t advance = match != nullptr ? match->text.size() : rest.find('_');
    if (match != nullptr) {
      switch (match->kind) {
        case TokenKind::kOp:
          if (first) info.op = static_cast<CollectiveOp>(match->value);
          break;
        case TokenKind::kAlgorithm:
          info.algorithm = static_cast<NcclAlgorithm>(match->value);
          break;
        case TokenKind::kProtocol:
          info.protocol = static_cast<NcclProtocol>(match->value);
          break;
        case TokenKind::kReduceOp:
          info.reduce_op = static_cast<ReduceOp>(match->value);
          break;
        case TokenKind::kDataType:
          info.data_type = static_cast<DataType>(match->value);
          break;
      }
    }
    first = false;
    if (advance == std::string_view::npos || advance >= rest.size()) break;
    rest.remove_prefix(advance + 1);
  }
  if (!IsReduction(info.op)) {
    info.reduce_op = ReduceOp::kUnspecified;
    info.data_type = DataType::kUnspecified;
  }
  return info;
}

bool IsReduction(CollectiveOp op) {
  return op == CollectiveOp::kAllReduce || op == CollectiveOp::kReduce ||
         op == CollectiveOp::kReduceScatter;
}

CollectiveOp CollectiveOpFromPytorchName(std::string_view name) {
  // Compare without case and underscores: "_allgather_base", "all_gather", "allgather".
  std::string key;
  for (char c : name) {
    if (c == '_') continue;
    key += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  auto starts = [&](std::string_view prefix) { return key.compare(0, prefix.size(), prefix) == 0; };
  if (starts("allreduce")) return CollectiveOp::kAllReduce;
  if (starts("allgather")) return CollectiveOp::kAllGather;
  if (starts("reducescatter")) return CollectiveOp::kReduceScatter;
  if (starts("alltoall")) return CollectiveOp::kAllToAll;
  if (starts("broadcast")) return CollectiveOp::kBroadcast;
  if (key == "reduce") return CollectiveOp::kReduce;
  if (key == "send") return CollectiveOp::kSend;
  if (starts("recv")) return CollectiveOp::kRecv;  // recv, recvAnysource.
  if (key == "gather") return CollectiveOp::kGather;
  if (key == "scatter") return CollectiveOp::kScatter;
  return CollectiveOp::kUnspecified;
}

DataType DataTypeFromScalarTypeName(std::string_view name) {
  const ScalarType* t = FindScalarType(name);
  return t != nullptr ? t->type : DataType::kUnspecified;
}

uint32_t ScalarTypeBytes(std::string_view name) {
  const ScalarType* t = FindScalarType(name);
  return t != nullptr ? t->bytes : 0;
}

}  // namespace lumos::modeler::kineto
