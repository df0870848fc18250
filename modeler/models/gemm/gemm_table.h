// Design: the rows of a GEMM table (columns gpu, dtype, m, n, k, latency_us; batch optional;
// ../shared/data/costs/gemm_*.csv) or GEMM query table (the same without latency_us), as
// modeler/models/query/cost_table.h describes tables. Errors name the row and the column.
// Threading: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/io/csv_table.h"
#include "modeler/models/hardware/dtype.h"
#include "modeler/models/query/cost_table.h"
#include "modeler/models/query/kernel_query.h"

namespace lumos::modeler::models {

struct GemmRow {
  std::string gpu;  // As written; empty when the table has no gpu column.
  DType dtype = DType::kBf16;
  GemmShape shape;
  int64_t latency_ns = -1;  // -1: no latency_us column (a query).
  size_t row = 0;           // Index into CsvTable::rows.
};

// The rows of a GEMM table. `latency`: measured tables need latency_us (> 0); queries do not
// (a latency_us column there is ignored). `gpu` must be a column of measured tables.
StatusOr<std::vector<GemmRow>> ReadGemmRows(const io::CsvTable& table, Latency latency);

}  // namespace lumos::modeler::models
