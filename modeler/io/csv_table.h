// Design: the plain CSV the cost tables are written in (../shared/data/costs/README.md; their
// kinds and columns: modeler/models/query/cost_table.h). A header line, then one row per line,
// fields separated by commas, spaces around them ignored, empty lines skipped; quoted fields are
// not part of the format (no table column needs a comma). Columns may come in any order; unknown
// columns are kept. Every error names the file and line: "gemm.csv:12: m: '-3' must be a whole
// number > 0". Threading: no shared state.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace lumos::modeler::io {

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
// The file read whole (text_file.h: regular files only, size-limited), then parsed.
StatusOr<CsvTable> ReadCsv(const std::string& path);

// A cell that must be a whole number > 0 and at most `max`; the error names `column`.
StatusOr<uint64_t> ParseWholeNumber(std::string_view text, std::string_view column,
                                    uint64_t max = std::numeric_limits<int64_t>::max());

}  // namespace lumos::modeler::io
