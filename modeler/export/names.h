// Design: human-readable names for the exporter: enum values of trace.proto as the CamelCase
// names of schema/enums.h ("AllReduce", "Bfloat16"), copy directions in the usual CUDA
// spelling ("HtoD"), and byte counts ("4.0 MB"). Pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "schema/enums.h"
#include "schema/lumos/trace.pb.h"

namespace lumos::modeler::internal {

namespace pb = ::lumos::trace;

// NameOf(pb::CollectiveOp) etc.: the CamelCase name, or nullptr for a value this build does not
// know (a newer minor schema); callers then print the number.
#define LUMOS_INTERNAL_DECLARE_NAME_OF(type, list, proto_name, prefix) \
  const char* NameOf(pb::type value);
LUMOS_ALL_ENUMS(LUMOS_INTERNAL_DECLARE_NAME_OF)
#undef LUMOS_INTERNAL_DECLARE_NAME_OF

// "HtoD", "DtoH", "DtoD", "HtoH", "PtoP" (the spelling of the CUDA tools), or nullptr.
const char* CopyKindLabel(pb::CopyKind kind);

// The trace-event category of a framework range, after the PyTorch profiler's ("cpu_op",
// "user_annotation", "python_function", "gpu_user_annotation"; "step", "host_range").
const char* HostRangeCategoryLabel(pb::HostRangeCategory category);

// The name of a SyncEvent's slice: "Stream Wait Event", "Event Sync", ...
const char* SyncLabel(pb::SyncType type);

// "512 B", "4.0 KB", "25.2 MB", "1.5 GB": powers of 1024 (buffers are sized in them, so a
// 4 MiB copy reads "4.0 MB"), one decimal.
std::string FormatBytes(uint64_t bytes);

// The name shown on a collective's slice: "AllReduce 25.2 MB".
std::string CollectiveLabel(const pb::NcclCollective& collective);

}  // namespace lumos::modeler::internal
