// Design: the rows of a table of non-GEMM kernel queries (`costs predict`), as
// modeler/models/query/cost_table.h describes tables. Threading: no shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "modeler/io/csv_table.h"
#include "modeler/models/hardware/dtype.h"
#include "modeler/models/kernels/kernel_model.h"
#include "modeler/models/kernels/kernel_work.h"

namespace lumos::modeler::models {

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
StatusOr<std::vector<KernelRow>> ReadKernelRows(const io::CsvTable& table);

}  // namespace lumos::modeler::models
