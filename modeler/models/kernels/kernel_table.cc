// The rows of non-GEMM kernel query tables; see kernel_table.h.
#include "modeler/models/kernels/kernel_table.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <utility>

#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler::models {
namespace {

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

StatusOr<std::vector<KernelRow>> ReadKernelRows(const io::CsvTable& table) {
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
        StatusOr<uint64_t> value = io::ParseWholeNumber(f[column], table.header[column]);
        if (!value.ok()) return fail(value.status());
        *out = static_cast<int64_t>(*value);
      }
      const std::pair<int, int64_t*> optional[] = {{kv_heads, &shape.kv_heads},
                                                   {seq_kv, &shape.seq_kv}};
      for (const auto& [column, out] : optional) {
        if (cell(column).empty()) continue;
        StatusOr<uint64_t> value = io::ParseWholeNumber(f[column], table.header[column]);
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
