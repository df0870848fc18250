// Design: the CSV tables of measured costs (the columns of ../shared/data/costs/README.md) and
// of cost queries (the same columns without latency_us), read as modeler/io/csv_table.h reads
// CSV. What a table holds is told by its header, not its name: `m, n, k, dtype` make a GEMM
// table (its rows: gemm/gemm_table.h); `op, ranks, bytes` a collective table (read by the
// collective model: collectives/collective_calibration.h); `class` a table of non-GEMM kernel
// queries (kernels/kernel_table.h). Times: latency_us in the file (µs, decimals), integer ns
// inside. Threading: no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "modeler/io/csv_table.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

enum class TableKind { kGemm, kCollective, kKernel };
std::string_view TableKindName(TableKind kind);
// From the header; an error naming the file when it is neither.
StatusOr<TableKind> DetectTableKind(const io::CsvTable& table);

// Measured tables need latency_us (> 0); queries do not (a latency_us column there is ignored).
enum class Latency { kRequired, kIgnored };

// The answers to a query table (`costs predict`).
struct PredictedTable {
  std::string csv;  // Every query column as given, then predicted_us and source.
  size_t rows = 0;
  // Rows by source: SourceKind (kernel_query.h) for GEMMs and kernels, CostSource for
  // collectives.
  std::array<size_t, kSourceKindCount> sources{};
};

// µs text ("2.581") as integer ns, rounded; an error unless finite and > 0.
StatusOr<int64_t> ParseMicroseconds(std::string_view text);
// ns as µs with 3 decimals ("2581" → "2.581"), exact.
std::string FormatMicroseconds(int64_t ns);

}  // namespace lumos::modeler::models
