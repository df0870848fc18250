#include "modeler/import/nccl_names.h"

#include <optional>
#include <string>

#include "schema/nccl_names.h"

namespace lumos::modeler::kineto {
namespace {

using schema::CollectiveOp;
using schema::DataType;
using schema::NcclAlgorithm;
using schema::NcclProtocol;
using schema::ReduceOp;

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

NcclKernelInfo ParseNcclKernelName(std::string_view name) {
  NcclKernelInfo info;
  const std::optional<std::string_view> fields = schema::NcclKernelFields(name);
  if (!fields.has_value()) return info;
  std::string_view rest = *fields;
  bool first = true;
  while (!rest.empty()) {
    // The shared tables in turn (no token is in two of them): op, algorithm, protocol,
    // reduction, data type.
    CollectiveOp op = CollectiveOp::kUnspecified;
    NcclAlgorithm algorithm = NcclAlgorithm::kUnspecified;
    NcclProtocol protocol = NcclProtocol::kUnspecified;
    ReduceOp reduce_op = ReduceOp::kUnspecified;
    DataType data_type = DataType::kUnspecified;
    size_t matched = 0;
    if ((matched = schema::MatchNcclKernelToken(rest, &op)) != 0) {
      if (first) info.op = op;
    } else if ((matched = schema::MatchNcclKernelToken(rest, &algorithm)) != 0) {
      info.algorithm = algorithm;
    } else if ((matched = schema::MatchNcclKernelToken(rest, &protocol)) != 0) {
      info.protocol = protocol;
    } else if ((matched = schema::MatchNcclKernelToken(rest, &reduce_op)) != 0) {
      info.reduce_op = reduce_op;
    } else if ((matched = schema::MatchNcclKernelToken(rest, &data_type)) != 0) {
      info.data_type = data_type;
    }
    size_t advance = matched != 0 ? matched : rest.find('_');
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
