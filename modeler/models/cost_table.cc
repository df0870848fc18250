#include "modeler/models/cost_table.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>

#include "modeler/models/kernel_class.h"
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

// A number ≥ 0 (an empty cell: 0).
StatusOr<double> Amount(std::string_view text, std::string_view column) {
  if (text.empty()) return 0.0;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    return ErrorStatus("%.*s: '%.*s' must be a number >= 0", static_cast<int>(column.size()),
                       column.data(), static_cast<int>(text.size()), text.data());
  }
  return value;
}

StatusOr<bool> Flag(std::string_view text, std::string_view column) {
  if (text.empty() || text == "0" || text == "false") return false;
  if (text == "1" || text == "true") return true;
  return ErrorStatus("%.*s: '%.*s' must be 0, 1, true or false", static_cast<int>(column.size()),
                     column.data(), static_cast<int>(text.size()), text.data());
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
  switch (kind) {
    case TableKind::kGemm:
      return "GEMM";
    case TableKind::kCollective:
      return "collective";
    case TableKind::kKernel:
      return "kernel";
  }
  return "?";
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
  if (has({"class"})) return TableKind::kKernel;
  std::string header;
  for (const std::string& name : table.header) header += (header.empty() ? "" : ",") + name;
  return ErrorStatus(
      "%s: the header '%s' is neither a GEMM table (m, n, k, dtype columns), a collective "
      "table (op, ranks, bytes) nor kernel queries (class)",
      table.path.c_str(), header.c_str());
}

StatusOr<uint64_t> ParseWholeNumber(std::string_view text, std::string_view column, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0) {
    return ErrorStatus("%.*s: '%.*s' must be a whole number > 0", static_cast<int>(column.size()),
                       column.data(), static_cast<int>(text.size()), text.data());
  }
  if (value > max) {
    return ErrorStatus("%.*s: %llu is more than %llu", static_cast<int>(column.size()),
                       column.data(), static_cast<unsigned long long>(value),
                       static_cast<unsigned long long>(max));
  }
  return value;
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
      StatusOr<uint64_t> value = ParseWholeNumber(f[column], table.header[column]);
      if (!value.ok()) return fail(value.status());
      *out = static_cast<int64_t>(*value);
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

StatusOr<KernelKey> ParseKernelKey(std::string_view name) {
  std::vector<std::string_view> words;
  for (size_t start = 0; start < name.size();) {
    const size_t space = name.find(' ', start);
    const size_t end = space == std::string_view::npos ? name.size() : space;
    if (end > start) words.push_back(name.substr(start, end - start));
    start = end + 1;
  }
  auto unknown = [name] {
    std::string classes;
    for (int i = 0; i < kKernelClassCount; ++i) {
      const auto kind = static_cast<KernelClass>(i);
      if (kind == KernelClass::kGemm || kind == KernelClass::kCommunication) continue;
      classes += (classes.empty() ? "" : ", ") + std::string(KernelClassName(kind));
    }
    return ErrorStatus(
        "class: unknown '%.*s' (%s; memcpy HtoD|DtoH|DtoD|PtoP|HtoH [pinned|pageable]; GEMMs "
        "are m, n, k queries, collectives op, ranks, bytes ones)",
        static_cast<int>(name.size()), name.data(), classes.c_str());
  };
  if (words.empty() || words.size() > 3) return unknown();
  const std::optional<KernelClass> kind = KernelClassFromName(words[0]);
  if (!kind || *kind == KernelClass::kGemm || *kind == KernelClass::kCommunication) {
    return unknown();
  }
  KernelKey key;
  key.kind = *kind;
  if (*kind != KernelClass::kMemcpy) {
    if (words.size() > 1) return unknown();
    return key;
  }
  if (words.size() < 2) return unknown();
  const std::optional<CopyKind> copy = CopyKindFromName(words[1]);
  if (!copy || *copy == CopyKind::kNone) return unknown();
  key.copy = *copy;
  const bool host = *copy == CopyKind::kHostToDevice || *copy == CopyKind::kDeviceToHost ||
                    *copy == CopyKind::kHostToHost;
  if (words.size() == 3) {
    if (!host || (words[2] != "pinned" && words[2] != "pageable")) return unknown();
    key.pageable = words[2] == "pageable";
  }
  return key;
}

StatusOr<std::vector<KernelRow>> ReadKernelRows(const CsvTable& table) {
  const int kind = table.Column("class");
  const int gpu = table.Column("gpu");
  const int dtype = table.Column("dtype");
  const int bytes = table.Column("bytes");
  const int flops = table.Column("flops");
  if (kind < 0 || dtype < 0 || (bytes < 0 && flops < 0)) {
    return ErrorStatus("%s: not a kernel query table (needs class, dtype and bytes or flops)",
                       table.path.c_str());
  }
  const int batch = table.Column("batch");
  const int heads = table.Column("heads");
  const int kv_heads = table.Column("kv_heads");
  const int seq_q = table.Column("seq_q");
  const int seq_kv = table.Column("seq_kv");
  const int head_dim = table.Column("head_dim");
  const int causal = table.Column("causal");
  const int backward = table.Column("backward");
  const int shape_columns[] = {batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, backward};
  std::vector<KernelRow> rows;
  rows.reserve(table.rows.size());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const std::vector<std::string>& f = table.rows[i];
    auto fail = [&](const Status& status) {
      return ErrorStatus("%s: %s", table.Where(i).c_str(), status.message().c_str());
    };
    auto cell = [&f](int column) -> std::string_view {
      return column >= 0 ? std::string_view(f[column]) : std::string_view();
    };
    KernelRow row;
    row.row = i;
    if (gpu >= 0) row.gpu = f[gpu];
    StatusOr<KernelKey> key = ParseKernelKey(f[kind]);
    if (!key.ok()) return fail(key.status());
    row.key = *key;
    const std::optional<DType> parsed = ParseDType(f[dtype]);
    if (!parsed) {
      return fail(ErrorStatus("dtype: unknown '%s' (%s)", f[dtype].c_str(),
                              std::string(DTypeNames()).c_str()));
    }
    row.dtype = *parsed;
    StatusOr<double> b = Amount(cell(bytes), "bytes");
    if (!b.ok()) return fail(b.status());
    StatusOr<double> x = Amount(cell(flops), "flops");
    if (!x.ok()) return fail(x.status());
    row.work = KernelWork{*x, *b};
    bool shaped = false;
    for (int column : shape_columns) shaped |= !cell(column).empty();
    if (shaped && row.key.kind != KernelClass::kAttention) {
      return fail(
          ErrorStatus("the attention columns (batch, heads, seq_q, ...) are for class "
                      "attention only; leave them empty on a %s row",
                      KeyName(row.key).c_str()));
    }
    if (shaped) {
      if (row.work.known()) {
        return fail(
            ErrorStatus("an attention row gives its shape or its bytes and flops, not "
                        "both"));
      }
      AttentionShape shape;
      const std::pair<int, int64_t*> required[] = {{batch, &shape.batch},
                                                   {heads, &shape.heads},
                                                   {seq_q, &shape.seq_q},
                                                   {head_dim, &shape.head_dim}};
      for (const auto& [column, out] : required) {
        if (cell(column).empty()) {
          return fail(ErrorStatus("an attention shape needs batch, heads, seq_q and head_dim"));
        }
        StatusOr<uint64_t> value = ParseWholeNumber(f[column], table.header[column]);
        if (!value.ok()) return fail(value.status());
        *out = static_cast<int64_t>(*value);
      }
      const std::pair<int, int64_t*> optional[] = {{kv_heads, &shape.kv_heads},
                                                   {seq_kv, &shape.seq_kv}};
      for (const auto& [column, out] : optional) {
        if (cell(column).empty()) continue;
        StatusOr<uint64_t> value = ParseWholeNumber(f[column], table.header[column]);
        if (!value.ok()) return fail(value.status());
        *out = static_cast<int64_t>(*value);
      }
      StatusOr<bool> is_causal = Flag(cell(causal), "causal");
      if (!is_causal.ok()) return fail(is_causal.status());
      StatusOr<bool> is_backward = Flag(cell(backward), "backward");
      if (!is_backward.ok()) return fail(is_backward.status());
      shape.causal = *is_causal;
      shape.backward = *is_backward;
      StatusOr<KernelWork> work = AttentionWork(shape, row.dtype);
      if (!work.ok()) return fail(work.status());
      row.work = *work;
    }
    if (!row.work.known()) {
      return fail(ErrorStatus("no work: give bytes or flops%s",
                              row.key.kind == KernelClass::kAttention ? " (or the shape)" : ""));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lumos::modeler::models
