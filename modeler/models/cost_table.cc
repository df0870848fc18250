#include "modeler/models/cost_table.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "modeler/models/text_file.h"

namespace lumos::modeler::models {
namespace {

std::vector<std::string> SplitFields(std::string_view line) {
  std::vector<std::string> fields;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    fields.emplace_back(Trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

StatusOr<int64_t> WholeNumber(std::string_view text, std::string_view column) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0) {
    return ErrorStatus("%.*s: '%.*s' must be a whole number > 0", static_cast<int>(column.size()),
                       column.data(), static_cast<int>(text.size()), text.data());
  }
  return value;
}

}  // namespace

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

std::string CsvTable::Where(size_t row) const {
  return path + ":" + std::to_string(row < lines.size() ? lines[row] : 0);
}

StatusOr<CsvTable> ParseCsv(std::string_view text, std::string path) {
  CsvTable table;
  table.path = std::move(path);
  Status status = ForEachLine(text, [&](std::string_view line, size_t number) -> Status {
    if (Trim(line).empty()) return Status::Ok();
    if (line.find('"') != std::string_view::npos) {
      return ErrorStatus("%s:%zu: quoted fields are not supported", table.path.c_str(), number);
    }
    std::vector<std::string> fields = SplitFields(line);
    if (table.header.empty()) {
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].empty()) {
          return ErrorStatus("%s:%zu: column %zu of the header has no name", table.path.c_str(),
                             number, i + 1);
        }
        for (size_t j = 0; j < i; ++j) {
          if (fields[j] == fields[i]) {
            return ErrorStatus("%s:%zu: column '%s' twice in the header", table.path.c_str(),
                               number, fields[i].c_str());
          }
        }
      }
      table.header = std::move(fields);
      table.lines.push_back(number);  // lines[0]: the header, until the end.
      return Status::Ok();
    }
    if (fields.size() != table.header.size()) {
      return ErrorStatus("%s:%zu: %zu fields, the header has %zu", table.path.c_str(), number,
                         fields.size(), table.header.size());
    }
    table.rows.push_back(std::move(fields));
    table.lines.push_back(number);
    return Status::Ok();
  });
  LUMOS_RETURN_IF_ERROR(status);
  if (table.header.empty()) return ErrorStatus("%s: empty (no header line)", table.path.c_str());
  table.lines.erase(table.lines.begin());
  return table;
}

StatusOr<CsvTable> ReadCsv(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  return ParseCsv(text, path);
}

std::string_view TableKindName(TableKind kind) {
  return kind == TableKind::kGemm ? "GEMM" : "collective";
}

StatusOr<TableKind> DetectTableKind(const CsvTable& table) {
  auto has = [&table](std::initializer_list<std::string_view> names) {
    for (std::string_view name : names) {
      if (table.Column(name) < 0) return false;
    }
    return true;
  };
  if (has({"m", "n", "k", "dtype"})) return TableKind::kGemm;
  if (has({"op", "ranks", "bytes"})) return TableKind::kCollective;
  std::string header;
  for (const std::string& name : table.header) header += (header.empty() ? "" : ",") + name;
  return ErrorStatus(
      "%s: the header '%s' is neither a GEMM table (m, n, k, dtype columns) nor a collective "
      "table (op, ranks, bytes)",
      table.path.c_str(), header.c_str());
}

StatusOr<int64_t> ParseMicroseconds(std::string_view text) {
  double us = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), us);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(us) || us <= 0 ||
      us > 1e15) {
    return ErrorStatus("latency_us: '%.*s' must be a number of µs > 0",
                       static_cast<int>(text.size()), text.data());
  }
  return std::max<int64_t>(std::llround(us * 1000.0), 1);
}

std::string FormatMicroseconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  return text;
}

StatusOr<std::vector<GemmRow>> ReadGemmRows(const CsvTable& table, Latency latency) {
  const int gpu = table.Column("gpu");
  const int dtype = table.Column("dtype");
  const int m = table.Column("m");
  const int n = table.Column("n");
  const int k = table.Column("k");
  const int batch = table.Column("batch");
  const int latency_us = latency == Latency::kRequired ? table.Column("latency_us") : -1;
  if (m < 0 || n < 0 || k < 0 || dtype < 0) {
    return ErrorStatus("%s: not a GEMM table (needs m, n, k and dtype columns)",
                       table.path.c_str());
  }
  if (latency == Latency::kRequired && (latency_us < 0 || gpu < 0)) {
    return ErrorStatus("%s: a measured GEMM table needs gpu and latency_us columns",
                       table.path.c_str());
  }
  std::vector<GemmRow> rows;
  rows.reserve(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const std::vector<std::string>& f = table.rows[i];
    auto fail = [&](const Status& status) {
      return ErrorStatus("%s: %s", table.Where(i).c_str(), status.message().c_str());
    };
    GemmRow row;
    row.row = i;
    if (gpu >= 0) row.gpu = f[gpu];
    if (latency == Latency::kRequired && row.gpu.empty()) return fail(ErrorStatus("gpu: empty"));
    const std::optional<DType> parsed = ParseDType(f[dtype]);
    if (!parsed) {
      return fail(ErrorStatus("dtype: unknown '%s' (%s)", f[dtype].c_str(),
                              std::string(DTypeNames()).c_str()));
    }
    row.dtype = *parsed;
    const std::pair<int, int64_t*> dims[] = {
        {m, &row.shape.m}, {n, &row.shape.n}, {k, &row.shape.k}, {batch, &row.shape.batch}};
    for (const auto& [column, out] : dims) {
      if (column < 0) continue;
      StatusOr<int64_t> value = WholeNumber(f[column], table.header[column]);
      if (!value.ok()) return fail(value.status());
      *out = *value;
    }
    if (latency_us >= 0) {
      StatusOr<int64_t> ns = ParseMicroseconds(f[latency_us]);
      if (!ns.ok()) return fail(ns.status());
      row.latency_ns = *ns;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lumos::modeler::models
