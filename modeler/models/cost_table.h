// Design: the CSV tables of measured costs (the columns of ../shared/data/costs/README.md) and
// of cost queries (the same columns without latency_us). Plain CSV: a header line, then one
// row per line, fields separated by commas, spaces around them ignored, empty lines skipped;
// quoted fields are not part of the format (no table column needs a comma). What a table holds
// is told by its header, not its name: `m, n, k, dtype` make a GEMM table; `op, ranks, bytes`
// a collective table (read by the collective model; recognised here so that one command takes
// both); `class` a table of non-GEMM kernel queries (below). Columns may come in any order; unknown
// columns are kept and ignored. Every error names the file and line: "gemm.csv:12: m: '-3' must be
// a whole number > 0". Times: latency_us in the file (µs, decimals), integer ns inside. Threading:
// no shared state.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/models/dtype.h"
#include "modeler/models/kernel_model.h"
#include "modeler/models/kernel_query.h"
#include "modeler/models/kernel_work.h"

namespace lumos::modeler::models {

struct CsvTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<size_t> lines;  // The line number of each row.

  // The index of column `name` in header, or -1.
  int Column(std::string_view name) const;
  // "path:line" of row `row`.
  std::string Where(size_t row) const;
};

StatusOr<CsvTable> ParseCsv(std::string_view text, std::string path);
StatusOr<CsvTable> ReadCsv(const std::string& path);

enum class TableKind { kGemm, kCollective, kKernel };
std::string_view TableKindName(TableKind kind);
// From the header; an error naming the file when it is neither.
StatusOr<TableKind> DetectTableKind(const CsvTable& table);

struct GemmRow {
  std::string gpu;  // As written; empty when the table has no gpu column.
  DType dtype = DType::kBf16;
  GemmShape shape;
  int64_t latency_ns = -1;  // -1: no latency_us column (a query).
  size_t row = 0;           // Index into CsvTable::rows.
};

enum class Latency { kRequired, kIgnored };
// The rows of a GEMM table. `latency`: measured tables need latency_us (> 0); queries do not
// (a latency_us column there is ignored). `gpu` must be a column of measured tables.
StatusOr<std::vector<GemmRow>> ReadGemmRows(const CsvTable& table, Latency latency);

// A query of the non-GEMM kernel model (kernel_model.h): columns class, dtype, bytes, flops,
// gpu optional, and for attention batch, heads, seq_q, head_dim (seq_kv, kv_heads, causal,
// backward optional), all optional columns. `class` is a kernel class as KeyName writes it
// ("elementwise", "norm", "memset", "memcpy HtoD pinned", "memcpy DtoH pageable", "memcpy DtoD";
// a host copy without pinned|pageable is pinned). The work is bytes and flops (numbers ≥ 0, an
// empty cell 0, not both 0), or for attention its shape (AttentionWork, kernel_work.h: the cells
// of bytes and flops empty then); shape cells are empty on other classes. causal and backward
// are 0|1|true|false (empty: false).
struct KernelRow {
  std::string gpu;  // As written; empty when the table has no gpu column.
  KernelKey key;
  DType dtype = DType::kFp32;
  KernelWork work;
  size_t row = 0;  // Index into CsvTable::rows.
};
// A key from its name (above); an error that lists the classes.
StatusOr<KernelKey> ParseKernelKey(std::string_view name);
// The rows of a kernel query table; errors name the row and the column.
StatusOr<std::vector<KernelRow>> ReadKernelRows(const CsvTable& table);

// The answers to a query table (`costs predict`).
struct PredictedTable {
  std::string csv;  // Every query column as given, then predicted_us and source.
  size_t rows = 0;
  // Rows by source: SourceKind (kernel_query.h) for GEMMs and kernels, CostSource for
  // collectives.
  std::array<size_t, kSourceKindCount> sources{};
};

// A cell that must be a whole number > 0 and at most `max`; the error names `column`.
StatusOr<uint64_t> ParseWholeNumber(std::string_view text, std::string_view column,
                                    uint64_t max = std::numeric_limits<int64_t>::max());
// µs text ("2.581") as integer ns, rounded; an error unless finite and > 0.
StatusOr<int64_t> ParseMicroseconds(std::string_view text);
// ns as µs with 3 decimals ("2581" → "2.581"), exact.
std::string FormatMicroseconds(int64_t ns);

}  // namespace lumos::modeler::models
