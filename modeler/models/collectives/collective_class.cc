// The collective model's operations, names, message sizes and bus factors; see
// collective_class.h.
#include "modeler/models/collectives/collective_class.h"

#include <algorithm>

namespace lumos::modeler::models {

using schema::NcclAlgorithm;
using schema::NcclProtocol;

int ProtocolIndex(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLl:
      return 0;
    case NcclProtocol::kLl128:
      return 1;
    case NcclProtocol::kSimple:
      return 2;
    case NcclProtocol::kUnspecified:
      break;
  }
  return -1;
}

std::optional<CollectiveClass> ClassOf(schema::CollectiveOp op) {
  using schema::CollectiveOp;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return CollectiveClass::kAllReduce;
    case CollectiveOp::kAllGather:
      return CollectiveClass::kAllGather;
    case CollectiveOp::kReduceScatter:
      return CollectiveClass::kReduceScatter;
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter:
      return CollectiveClass::kAllToAll;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return CollectiveClass::kBroadcast;
    case CollectiveOp::kSend:
    case CollectiveOp::kRecv:
    case CollectiveOp::kSendRecv:
      return CollectiveClass::kSendRecv;
    case CollectiveOp::kUnspecified:
      break;
  }
  return std::nullopt;
}

const char* ClassName(CollectiveClass c) {
  switch (c) {
    case CollectiveClass::kAllReduce:
      return "all_reduce";
    case CollectiveClass::kAllGather:
      return "all_gather";
    case CollectiveClass::kReduceScatter:
      return "reduce_scatter";
    case CollectiveClass::kAllToAll:
      return "all_to_all";
    case CollectiveClass::kBroadcast:
      return "broadcast";
    case CollectiveClass::kSendRecv:
      return "send_recv";
  }
  return "?";
}

std::optional<CollectiveClass> ClassFromName(std::string_view name) {
  for (int c = 0; c < kCollectiveClasses; ++c) {
    if (name == ClassName(static_cast<CollectiveClass>(c))) return static_cast<CollectiveClass>(c);
  }
  return std::nullopt;
}

const char* ProtocolName(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLl:
      return "LL";
    case NcclProtocol::kLl128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
    case NcclProtocol::kUnspecified:
      break;
  }
  return "-";
}

const char* AlgorithmName(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::kRing:
      return "ring";
    case NcclAlgorithm::kTree:
      return "tree";
    case NcclAlgorithm::kNvls:
      return "nvls";
    case NcclAlgorithm::kNvlsTree:
      return "nvls_tree";
    case NcclAlgorithm::kCollnetDirect:
      return "collnet";
    case NcclAlgorithm::kCollnetChain:
      return "collnet_chain";
    case NcclAlgorithm::kPat:
      return "pat";
    case NcclAlgorithm::kUnspecified:
      break;
  }
  return "-";
}

const char* DataTypeName(schema::DataType t) {
  using schema::DataType;
  switch (t) {
    case DataType::kInt8:
      return "int8";
    case DataType::kUint8:
      return "uint8";
    case DataType::kInt32:
      return "int32";
    case DataType::kUint32:
      return "uint32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUint64:
      return "uint64";
    case DataType::kFloat16:
      return "float16";
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat64:
      return "float64";
    case DataType::kBfloat16:
      return "bfloat16";
    case DataType::kFloat8E4m3:
      return "float8_e4m3";
    case DataType::kFloat8E5m2:
      return "float8_e5m2";
    // Schema 2.2's GEMM operand types; no NCCL collective has them.
    case DataType::kComplexFloat16:
      return "complex_float16";
    case DataType::kComplexBfloat16:
      return "complex_bfloat16";
    case DataType::kComplexFloat32:
      return "complex_float32";
    case DataType::kComplexFloat64:
      return "complex_float64";
    case DataType::kFloat6E2m3:
      return "float6_e2m3";
    case DataType::kFloat6E3m2:
      return "float6_e3m2";
    case DataType::kFloat4E2m1:
      return "float4_e2m1";
    case DataType::kUnspecified:
      break;
  }
  return "-";
}

std::optional<NcclProtocol> ProtocolFromName(std::string_view name) {
  for (NcclProtocol p : {NcclProtocol::kUnspecified, NcclProtocol::kLl, NcclProtocol::kLl128,
                         NcclProtocol::kSimple}) {
    if (name == ProtocolName(p)) return p;
  }
  return std::nullopt;
}

std::optional<NcclAlgorithm> AlgorithmFromName(std::string_view name) {
  for (uint32_t a = 0; a <= static_cast<uint32_t>(NcclAlgorithm::kPat); ++a) {
    if (name == AlgorithmName(static_cast<NcclAlgorithm>(a))) return static_cast<NcclAlgorithm>(a);
  }
  return std::nullopt;
}

std::optional<schema::DataType> DataTypeFromName(std::string_view name) {
  for (uint32_t t = 0; t <= static_cast<uint32_t>(schema::DataType::kFloat8E5m2); ++t) {
    if (name == DataTypeName(static_cast<schema::DataType>(t))) {
      return static_cast<schema::DataType>(t);
    }
  }
  return std::nullopt;
}

uint64_t ModelBytes(CollectiveClass c, uint64_t record_bytes, uint32_t ranks) {
  if (c == CollectiveClass::kAllGather || c == CollectiveClass::kReduceScatter) {
    return record_bytes * std::max<uint32_t>(ranks, 1);
  }
  return record_bytes;
}

double BusBandwidthFactor(CollectiveClass c, uint32_t ranks) {
  const double n = ranks;
  switch (c) {
    case CollectiveClass::kAllReduce:
      return ranks < 2 ? 0.0 : 2 * (n - 1) / n;
    case CollectiveClass::kAllGather:
    case CollectiveClass::kReduceScatter:
    case CollectiveClass::kAllToAll:
      return ranks < 2 ? 0.0 : (n - 1) / n;
    case CollectiveClass::kBroadcast:
    case CollectiveClass::kSendRecv:
      return 1.0;
  }
  return 0.0;
}

bool NvlsCanReduce(schema::DataType type) {
  using schema::DataType;
  switch (type) {
    case DataType::kFloat16:
    case DataType::kBfloat16:
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64:
      return true;
    default:
      return false;
  }
}

}  // namespace lumos::modeler::models
