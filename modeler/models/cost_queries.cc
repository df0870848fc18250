#include "modeler/models/cost_queries.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <system_error>
#include <utility>

namespace lumos::modeler::models {
namespace {

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

Status TracesNotYet(const std::string& what) {
  return ErrorStatus(
      "%s: Lumos traces carry no GEMM shapes yet, so costs fit cannot use them; fit from CSV "
      "tables (the columns of ../shared/data/costs/) for now",
      what.c_str());
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandCostInputs(const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const std::string& input : inputs) {
    struct stat st {};
    if (stat(input.c_str(), &st) != 0) {
      return ErrorStatus("%s: %s", input.c_str(),
                         errno == ENOENT ? "no such file or directory" : std::strerror(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      if (EndsWith(input, ".pb.zst")) return TracesNotYet(input);
      paths.push_back(input);
      continue;
    }
    std::vector<std::string> tables;
    bool traces = false;
    std::error_code error;
    fs::recursive_directory_iterator it(input, fs::directory_options::none, error);
    for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
      const std::string path = it->path().string();
      if (!it->is_regular_file(error)) continue;
      if (EndsWith(path, ".csv")) tables.push_back(path);
      traces |= EndsWith(path, ".pb.zst");
    }
    if (error) return ErrorStatus("%s: cannot list: %s", input.c_str(), error.message().c_str());
    if (tables.empty()) {
      if (traces) return TracesNotYet(input);
      return ErrorStatus("%s: no *.csv table inside", input.c_str());
    }
    std::sort(tables.begin(), tables.end());
    paths.insert(paths.end(), tables.begin(), tables.end());
  }
  return paths;
}

StatusOr<CostModel> FitCostTables(const std::vector<std::string>& paths, const SpecTable& specs,
                                  std::vector<std::string>* skipped) {
  std::string first_skipped;
  std::vector<CsvTable> tables;
  tables.reserve(paths.size());
  std::vector<GemmTable> gemm;
  for (const std::string& path : paths) {
    LUMOS_ASSIGN_OR_RETURN(CsvTable table, ReadCsv(path));
    tables.push_back(std::move(table));
  }
  for (const CsvTable& table : tables) {
    LUMOS_ASSIGN_OR_RETURN(TableKind kind, DetectTableKind(table));
    switch (kind) {
      case TableKind::kGemm: {
        LUMOS_ASSIGN_OR_RETURN(std::vector<GemmRow> rows, ReadGemmRows(table, Latency::kRequired));
        if (rows.empty()) return ErrorStatus("%s: no rows", table.path.c_str());
        gemm.push_back(GemmTable{&table, std::move(rows)});
        break;
      }
      case TableKind::kCollective: {
        const std::string line = table.path +
                                 ": a collective table: the collective model is not part of "
                                 "costs fit yet (GEMM tables only); skipped";
        if (first_skipped.empty()) first_skipped = line;
        if (skipped != nullptr) skipped->push_back(line);
        break;
      }
    }
  }
  if (gemm.empty()) {
    if (!first_skipped.empty()) return ErrorStatus("%s: nothing to fit", first_skipped.c_str());
    return ErrorStatus("no table to fit");
  }
  return FitCostModel(gemm, specs);
}

std::string DescribeCostModel(const CostModel& model) {
  std::string out;
  char line[256];
  for (const GemmCalibration& c : model.gemm.calibrations()) {
    std::snprintf(line, sizeof(line), "  GEMM %s %s: %zu shapes, floor %s us\n", c.gpu().c_str(),
                  std::string(DTypeName(c.dtype())).c_str(), c.points().size(),
                  FormatMicroseconds(c.floor_ns()).c_str());
    out += line;
  }
  return out;
}

StatusOr<PredictedTable> PredictCostQueries(const CostModel& model, const CsvTable& queries,
                                            const GpuSpec* default_gpu, const SpecTable& specs) {
  LUMOS_ASSIGN_OR_RETURN(TableKind kind, DetectTableKind(queries));
  if (kind != TableKind::kGemm) {
    return ErrorStatus(
        "%s: collective queries: the collective model is not part of costs "
        "predict yet (GEMM queries only)",
        queries.path.c_str());
  }
  for (const char* column : {"predicted_us", "source"}) {
    if (queries.Column(column) >= 0) {
      return ErrorStatus("%s: already has a %s column (an output of costs predict?)",
                         queries.path.c_str(), column);
    }
  }
  LUMOS_ASSIGN_OR_RETURN(std::vector<GemmRow> rows, ReadGemmRows(queries, Latency::kIgnored));
  PredictedTable out;
  for (size_t i = 0; i < queries.header.size(); ++i) {
    out.csv += (i > 0 ? "," : "") + queries.header[i];
  }
  out.csv += ",predicted_us,source\n";
  std::map<std::string, const GpuSpec*> gpus;  // Each name looked up once.
  for (const GemmRow& row : rows) {
    const GpuSpec* gpu = default_gpu;
    if (!row.gpu.empty()) {
      auto [it, inserted] = gpus.emplace(row.gpu, nullptr);
      if (inserted) it->second = specs.FindGpu(row.gpu);
      gpu = it->second;
      if (gpu == nullptr) {
        return UnknownGpu(row.gpu, specs).WithContext(queries.Where(row.row));
      }
    }
    if (gpu == nullptr) {
      return ErrorStatus("%s: no gpu (the row names none and no --gpu was given)",
                         queries.Where(row.row).c_str());
    }
    KernelQuery query;
    query.gemm = row.shape;
    query.dtype = row.dtype;
    query.gpu = gpu;
    StatusOr<Prediction> prediction = model.gemm.Predict(query);
    if (!prediction.ok()) return prediction.status().WithContext(queries.Where(row.row));
    const std::vector<std::string>& fields = queries.rows[row.row];
    for (size_t i = 0; i < fields.size(); ++i) out.csv += (i > 0 ? "," : "") + fields[i];
    out.csv += "," + FormatMicroseconds(prediction->duration_ns) + "," +
               model.gemm.SourceText(*prediction) + "\n";
    ++out.sources[static_cast<int>(prediction->source)];
    ++out.rows;
  }
  return out;
}

}  // namespace lumos::modeler::models
