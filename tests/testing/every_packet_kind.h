// Test support: a trace holding every packet kind with known field values (those of the current
// schema: a GEMM call from 2.2 on, an on-demand
// capture window in the header and its packet from 2.3 on), used for the golden file of each
// released schema version (tests/data/schema_vX.Y/) and by exporters.
#pragma once

#include <string>

#include "schema/writer/trace_file_writer.h"

namespace lumos::testing {

// Writes the trace to `path` (closes it). Times start at kEveryKindBaseNs.
inline constexpr int64_t kEveryKindBaseNs = 1'700'000'000'000'000'000;
void WriteEveryPacketKind(const std::string& path);

}  // namespace lumos::testing
