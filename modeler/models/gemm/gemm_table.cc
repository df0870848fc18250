// The rows of GEMM tables; see gemm_table.h.
#include "modeler/models/gemm/gemm_table.h"

#include <utility>

namespace lumos::modeler::models {

StatusOr<std::vector<GemmRow>> ReadGemmRows(const io::CsvTable& table, Latency latency) {
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
      StatusOr<uint64_t> value = io::ParseWholeNumber(f[column], table.header[column]);
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

}  // namespace lumos::modeler::models
