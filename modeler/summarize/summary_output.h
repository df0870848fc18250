// Design: the directory `lumos-model summarize -o OUT` writes: one file per table
// (iterations, kernels, collectives; .ndjson or .csv: one table per row kind, as warehouses
// load them) and manifest.json (format "lumos-summary", summary_version, the row format, each
// table's file, row count and typed columns, every window with what it was made of or why it
// failed). Safety: nothing is written into OUT itself. The tables go to OUT.partial/ (an
// io::OutputSet: temporary files, synced, renamed together; SIGINT/SIGTERM remove them and the
// directory), which is renamed to OUT at the end without replacing anything (RENAME_NOREPLACE).
// An existing OUT is an error unless `force`, and even then only a summary directory (one with
// a lumos-summary manifest.json) is replaced: swapped atomically with the new one
// (RENAME_EXCHANGE), then the old one's summary files are removed (any other file keeps the old
// directory, named in the error). An existing OUT.partial is refused (another run writes it,
// or a killed one left it). Tables are streamed: a buffer per table written out every 1 MiB.
// Threading: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "modeler/io/output_file.h"
#include "modeler/summarize/summary_schema.h"

namespace lumos::modeler::summarize {

// Whether `out` may be written (before anything is read): absent, or with `force` a summary
// directory; and OUT.partial absent. The error names the path and what to do.
Status CheckOutput(const std::string& out, bool force);

class SummaryOutput {
 public:
  static StatusOr<std::unique_ptr<SummaryOutput>> Create(const std::string& out, Format format);
  SummaryOutput(const SummaryOutput&) = delete;
  SummaryOutput& operator=(const SummaryOutput&) = delete;

  Status Add(Table table, const std::vector<std::vector<Value>>& rows);
  uint64_t rows(Table table) const { return rows_[static_cast<int>(table)]; }
  Format format() const { return format_; }
  static std::string FileName(Table table, Format format);

  // Writes manifest.json (`windows_json`: the manifest's "windows" array, as JSON text), puts
  // the tables in place and OUT.partial at OUT (`force`: replacing a summary there).
  Status Commit(const std::string& windows_json, bool force);

 private:
  SummaryOutput() = default;
  Status Flush(Table table, bool all);

  std::string out_, partial_;
  Format format_ = Format::kNdjson;
  io::OutputSet set_;
  io::OutputFile* files_[3] = {};
  std::string buffers_[3];
  uint64_t rows_[3] = {};
};

}  // namespace lumos::modeler::summarize
