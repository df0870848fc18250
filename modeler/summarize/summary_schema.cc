#include "modeler/summarize/summary_schema.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "modeler/io/json_writer.h"
#include "modeler/trace/window_stamp.h"

namespace lumos::modeler::summarize {
namespace {

constexpr ColumnType kB = ColumnType::kBigint;
constexpr ColumnType kD = ColumnType::kDouble;
constexpr ColumnType kV = ColumnType::kVarchar;
constexpr ColumnType kT = ColumnType::kTimestamp;

// Every table starts with these (README: "Columns").
std::vector<Column> WithCommon(std::initializer_list<Column> own) {
  std::vector<Column> columns = {{"schema_version", kB},   {"job", kV},     {"window_stamp", kV},
                                 {"window_start_utc", kT}, {"trigger", kV}, {"directory", kV}};
  columns.insert(columns.end(), own);
  return columns;
}

void AppendDouble(double v, std::string* out) {
  if (!std::isfinite(v)) {
    // Not a number a loader can type: unknown.
    return;
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.6f", v);
  out->append(text);
}

void AppendCsvString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

}  // namespace

const char* ColumnTypeName(ColumnType type) {
  switch (type) {
    case ColumnType::kBigint:
      return "BIGINT";
    case ColumnType::kDouble:
      return "DOUBLE";
    case ColumnType::kVarchar:
      return "VARCHAR";
    case ColumnType::kTimestamp:
      return "TIMESTAMP";
  }
  return "?";
}

const char* TableName(Table table) {
  switch (table) {
    case Table::kIterations:
      return "iterations";
    case Table::kKernels:
      return "kernels";
    case Table::kCollectives:
      return "collectives";
  }
  return "?";
}

const std::vector<Column>& Columns(Table table) {
  static const std::vector<Column> kIterations = WithCommon({
      {"host", kV},
      {"rank", kB},
      {"gpu", kV},
      {"iteration", kB},
      {"iteration_name", kV},
      {"start_ns", kB},
      {"duration_ns", kB},
      {"compute_exposed_ns", kB},
      {"overlapped_ns", kB},
      {"comm_exposed_ns", kB},
      {"idle_ns", kB},
      {"gpu_busy_ns", kB},
  });
  static const std::vector<Column> kKernels = WithCommon({
      {"name", kV},
      {"kernel_class", kV},
      {"grid_x", kB},
      {"grid_y", kB},
      {"grid_z", kB},
      {"block_x", kB},
      {"block_y", kB},
      {"block_z", kB},
      {"rank_count", kB},
      {"count", kB},
      {"total_ns", kB},
      {"mean_ns", kB},
      {"p50_ns", kB},
      {"p90_ns", kB},
      {"max_ns", kB},
  });
  static const std::vector<Column> kCollectives = WithCommon({
      {"op", kV},
      {"dtype", kV},
      {"bytes", kB},
      {"ranks", kB},
      {"nodes", kB},
      {"count", kB},
      {"total_ns", kB},
      {"p50_ns", kB},
      {"p90_ns", kB},
      {"max_ns", kB},
      {"algbw_gbps", kD},
      {"busbw_gbps", kD},
      {"expected_ns", kB},
      {"expected_busbw_gbps", kD},
      {"expected_source", kV},
  });
  switch (table) {
    case Table::kIterations:
      return kIterations;
    case Table::kKernels:
      return kKernels;
    case Table::kCollectives:
      return kCollectives;
  }
  return kIterations;
}

const char* FormatExtension(Format format) { return format == Format::kCsv ? "csv" : "ndjson"; }

std::string CsvHeader(Table table) {
  std::string line;
  for (const Column& c : Columns(table)) {
    if (!line.empty()) line += ',';
    line += c.name;
  }
  return line + "\n";
}

void AppendRow(Format format, Table table, const std::vector<Value>& row, std::string* out) {
  const std::vector<Column>& columns = Columns(table);
  if (format == Format::kNdjson) out->push_back('{');
  for (size_t i = 0; i < columns.size(); ++i) {
    if (i > 0) out->push_back(',');
    if (format == Format::kNdjson) {
      io::AppendJsonString(columns[i].name, out);
      out->push_back(':');
    }
    const Value& v = i < row.size() ? row[i] : Value(Null{});
    const size_t before = out->size();
    if (const auto* n = std::get_if<int64_t>(&v)) {
      out->append(std::to_string(*n));
    } else if (const auto* d = std::get_if<double>(&v)) {
      AppendDouble(*d, out);
    } else if (const auto* s = std::get_if<std::string>(&v); s != nullptr && !s->empty()) {
      // An empty text is unknown (a whole run's stamp, an unnamed host): null, which CSV
      // loaders cannot tell from "" anyway.
      if (format == Format::kNdjson) {
        io::AppendJsonString(*s, out);
      } else {
        AppendCsvString(*s, out);
      }
    } else if (const auto* t = std::get_if<Timestamp>(&v)) {
      const std::string text = Iso8601Utc(t->realtime_ns);
      if (format == Format::kNdjson) {
        io::AppendJsonString(text, out);
      } else {
        out->append(text);
      }
    }
    // Null (or a double that is not finite): nothing in CSV, null in JSON.
    if (out->size() == before && format == Format::kNdjson) out->append("null");
  }
  out->append(format == Format::kNdjson ? "}\n" : "\n");
}

}  // namespace lumos::modeler::summarize
