// Table kinds and µs cells of the cost tables; see cost_table.h.
#include "modeler/models/query/cost_table.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace lumos::modeler::models {

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

StatusOr<TableKind> DetectTableKind(const io::CsvTable& table) {
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

}  // namespace lumos::modeler::models
