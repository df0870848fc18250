// Design: the tables `lumos-model summarize` writes (modeler/summarize/README.md has them with
// every column's meaning), one definition used for the CSV header, the NDJSON keys, the
// manifest and the tests, so the three cannot drift apart. A row is a list of typed values
// in its table's column order; a missing value is null (never a magic zero), and so is an
// empty text (CSV loaders read "" as null). Types are the
// SQL types a loader infers: BIGINT (integers: ns, bytes, counts), DOUBLE (always written with
// a decimal point, so no engine infers an integer), VARCHAR, TIMESTAMP (ISO 8601 UTC text).
// Formats: NDJSON (one JSON object per line, keys in column order, strings escaped, invalid
// UTF-8 as U+FFFD) or CSV (RFC 4180: a header line, strings always quoted with "" for a quote,
// null an empty unquoted field). Versioned by kSummaryVersion (the schema_version column and
// the manifest's summary_version): a column is only ever added at the end of its table, under
// a new version; a reader selects columns by name. Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lumos::modeler::summarize {

inline constexpr int64_t kSummaryVersion = 1;

enum class ColumnType : uint8_t { kBigint, kDouble, kVarchar, kTimestamp };
const char* ColumnTypeName(ColumnType type);  // "BIGINT", "DOUBLE", "VARCHAR", "TIMESTAMP".

struct Column {
  const char* name;
  ColumnType type;
};

enum class Table : uint8_t { kIterations, kKernels, kCollectives };
inline constexpr Table kTables[] = {Table::kIterations, Table::kKernels, Table::kCollectives};
const char* TableName(Table table);  // "iterations", "kernels", "collectives".
const std::vector<Column>& Columns(Table table);

// One cell. A Timestamp holds CLOCK_REALTIME ns.
struct Null {};
struct Timestamp {
  uint64_t realtime_ns = 0;
};
using Value = std::variant<Null, int64_t, double, std::string, Timestamp>;

template <typename T>
Value Maybe(const std::optional<T>& v) {
  if (!v) return Null{};
  return Value(*v);
}

enum class Format : uint8_t { kNdjson, kCsv };
const char* FormatExtension(Format format);  // "ndjson", "csv".

// The first line of a CSV file (column names, comma separated, newline).
std::string CsvHeader(Table table);
// One row as a line (with its newline), appended to `out`; `row` has Columns(table).size()
// values, each of its column's type or Null.
void AppendRow(Format format, Table table, const std::vector<Value>& row, std::string* out);

}  // namespace lumos::modeler::summarize
