#include "modeler/export/names.h"

#include <cstdio>

namespace lumos::modeler::internal {

#define LUMOS_INTERNAL_NAME_CASE(name, number) \
  case number:                                 \
    return #name;
#define LUMOS_INTERNAL_DEFINE_NAME_OF(type, list, proto_name, prefix)                             \
  const char* NameOf(pb::type value) {                                                            \
    switch (static_cast<int>(value)) { list(LUMOS_INTERNAL_NAME_CASE) default : return nullptr; } \
  }
LUMOS_ALL_ENUMS(LUMOS_INTERNAL_DEFINE_NAME_OF)
#undef LUMOS_INTERNAL_DEFINE_NAME_OF
#undef LUMOS_INTERNAL_NAME_CASE

const char* CopyKindLabel(pb::CopyKind kind) {
  switch (kind) {
    case pb::COPY_KIND_HTOD:
      return "HtoD";
    case pb::COPY_KIND_DTOH:
      return "DtoH";
    case pb::COPY_KIND_DTOD:
      return "DtoD";
    case pb::COPY_KIND_HTOH:
      return "HtoH";
    case pb::COPY_KIND_PTOP:
      return "PtoP";
    default:
      return nullptr;
  }
}

const char* HostRangeCategoryLabel(pb::HostRangeCategory category) {
  switch (category) {
    case pb::HOST_RANGE_CATEGORY_CPU_OP:
      return "cpu_op";
    case pb::HOST_RANGE_CATEGORY_USER_ANNOTATION:
      return "user_annotation";
    case pb::HOST_RANGE_CATEGORY_STEP:
      return "step";
    case pb::HOST_RANGE_CATEGORY_PYTHON:
      return "python_function";
    case pb::HOST_RANGE_CATEGORY_GPU_ANNOTATION:
      return "gpu_user_annotation";
    default:
      return "host_range";
  }
}

const char* SyncLabel(pb::SyncType type) {
  switch (type) {
    case pb::SYNC_TYPE_EVENT_SYNCHRONIZE:
      return "Event Sync";
    case pb::SYNC_TYPE_STREAM_WAIT_EVENT:
      return "Stream Wait Event";
    case pb::SYNC_TYPE_STREAM_SYNCHRONIZE:
      return "Stream Sync";
    case pb::SYNC_TYPE_CONTEXT_SYNCHRONIZE:
      return "Context Sync";
    default:
      return "Sync";
  }
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  size_t unit = 0;
  // Move up while the rounded value would print as 1024.0 or more.
  while (value >= 1023.95 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string CollectiveLabel(const pb::NcclCollective& collective) {
  const char* op = NameOf(collective.op());
  std::string label =
      op != nullptr && collective.op() != pb::COLLECTIVE_OP_UNSPECIFIED ? op : "Collective";
  if (collective.bytes() > 0) label += " " + FormatBytes(collective.bytes());
  return label;
}

}  // namespace lumos::modeler::internal
