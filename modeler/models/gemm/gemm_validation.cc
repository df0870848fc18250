#include "modeler/models/gemm/gemm_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "modeler/models/gemm/gemm_fit.h"
#include "modeler/models/gemm/gemm_roofline.h"
#include "modeler/models/gemm/gemm_table.h"

namespace lumos::modeler::models {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct Loaded {
  io::CsvTable table;
  std::vector<GemmRow> rows;
};

StatusOr<Loaded> Load(const std::string& path) {
  Loaded loaded;
  LUMOS_ASSIGN_OR_RETURN(loaded.table, io::ReadCsv(path));
  LUMOS_ASSIGN_OR_RETURN(loaded.rows, ReadGemmRows(loaded.table, Latency::kRequired));
  if (loaded.rows.empty()) return ErrorStatus("%s: no rows", path.c_str());
  return loaded;
}

// The plain roofline max(tc, tm) of the baseline.
double PlainRoofline(const GemmShape& shape, DType dtype, const GpuSpec& gpu) {
  const Roofline r =
      GemmRoofline(shape, dtype, RooflineSpec{gpu.sms, gpu.PeakFlops(dtype), gpu.hbm_bytes_per_s});
  return std::max(r.compute_ns, r.memory_ns);
}

struct Scored {
  std::vector<std::array<double, 2>> ours, surface, same, ratio;
  std::array<size_t, 6> sources{};
};

// Predicts every row of `queries` (their latencies only score) with `model`.
Status Score(const GemmModel& model, const std::vector<const GemmRow*>& queries,
             const SpecTable& specs,
             const std::map<std::tuple<int64_t, int64_t, int64_t>,
                            std::pair<const GemmRow*, const GpuSpec*>>* source,
             Scored* scored) {
  for (const GemmRow* row : queries) {
    const GpuSpec* gpu = specs.FindGpu(row->gpu);
    if (gpu == nullptr) return UnknownGpu(row->gpu, specs);
    KernelQuery query;
    query.gemm = row->shape;
    query.dtype = row->dtype;
    query.gpu = gpu;
    LUMOS_ASSIGN_OR_RETURN(Prediction ours, model.Predict(query));
    LUMOS_ASSIGN_OR_RETURN(Prediction surface, model.Predict(query, {.surface_only = true}));
    const double measured = static_cast<double>(row->latency_ns);
    scored->ours.push_back({static_cast<double>(ours.duration_ns), measured});
    scored->surface.push_back({static_cast<double>(surface.duration_ns), measured});
    ++scored->sources[static_cast<int>(ours.source)];
    if (source != nullptr) {
      const auto found = source->find({row->shape.m, row->shape.n, row->shape.k});
      const GemmRow& from = *found->second.first;
      const double t = static_cast<double>(from.latency_ns);
      scored->same.push_back({t, measured});
      const double ratio = PlainRoofline(row->shape, row->dtype, *gpu) /
                           PlainRoofline(from.shape, from.dtype, *found->second.second);
      scored->ratio.push_back({t * ratio, measured});
    }
  }
  return Status::Ok();
}

}  // namespace

ErrorStats Summarize(const std::vector<std::array<double, 2>>& pairs) {
  ErrorStats stats;
  stats.count = pairs.size();
  if (pairs.empty()) return stats;
  std::vector<double> errors;
  errors.reserve(pairs.size());
  double absolute = 0, total = 0;
  for (const auto& [predicted, measured] : pairs) {
    errors.push_back(std::fabs(predicted - measured) / measured * 100.0);
    absolute += std::fabs(predicted - measured);
    total += measured;
  }
  std::sort(errors.begin(), errors.end());
  auto quantile = [&errors](double q) {
    const size_t at = static_cast<size_t>(std::floor(q * static_cast<double>(errors.size())));
    return errors[std::min(at, errors.size() - 1)];
  };
  stats.median_percent = quantile(0.5);
  stats.p90_percent = quantile(0.9);
  stats.weighted_percent = absolute / total * 100.0;
  return stats;
}

bool InCalibrationHalf(uint64_t row, uint64_t seed) { return (SplitMix64(seed + row) & 1) == 0; }

StatusOr<ValidationResult> ValidateSameGpu(const std::string& table, uint64_t seed,
                                           const SpecTable& specs) {
  LUMOS_ASSIGN_OR_RETURN(Loaded loaded, Load(table));
  GemmTable half{&loaded.table, {}};
  std::vector<const GemmRow*> test;
  for (const GemmRow& row : loaded.rows) {
    if (InCalibrationHalf(row.row, seed)) {
      half.rows.push_back(row);
    } else {
      test.push_back(&row);
    }
  }
  LUMOS_ASSIGN_OR_RETURN(GemmModel model, FitGemmTables({half}, specs));
  Scored scored;
  LUMOS_RETURN_IF_ERROR(Score(model, test, specs, nullptr, &scored));
  ValidationResult result;
  result.calibration_rows = half.rows.size();
  result.ours = Summarize(scored.ours);
  result.surface_only = Summarize(scored.surface);
  result.sources = scored.sources;
  return result;
}

StatusOr<ValidationResult> ValidateTransfer(const std::string& source, const std::string& target,
                                            const SpecTable& specs) {
  LUMOS_ASSIGN_OR_RETURN(Loaded from, Load(source));
  LUMOS_ASSIGN_OR_RETURN(Loaded to, Load(target));
  LUMOS_ASSIGN_OR_RETURN(GemmModel model,
                         FitGemmTables({GemmTable{&from.table, from.rows}}, specs));
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<const GemmRow*, const GpuSpec*>> shapes;
  for (const GemmRow& row : from.rows) {
    shapes[{row.shape.m, row.shape.n, row.shape.k}] = {&row, specs.FindGpu(row.gpu)};
  }
  std::vector<const GemmRow*> test;
  for (const GemmRow& row : to.rows) {
    if (shapes.count({row.shape.m, row.shape.n, row.shape.k}) != 0) test.push_back(&row);
  }
  if (test.empty()) return ErrorStatus("%s and %s share no shape", source.c_str(), target.c_str());
  Scored scored;
  LUMOS_RETURN_IF_ERROR(Score(model, test, specs, &shapes, &scored));
  ValidationResult result;
  result.calibration_rows = from.rows.size();
  result.ours = Summarize(scored.ours);
  result.surface_only = Summarize(scored.surface);
  result.has_baselines = true;
  result.same_time = Summarize(scored.same);
  result.roofline_ratio = Summarize(scored.ratio);
  result.sources = scored.sources;
  return result;
}

std::string ValidationMarkdown(const std::vector<ValidationResult>& results) {
  std::string out =
      "| scenario | fitted on (rows) | scored (rows) | ours: median / p90 / time-weighted % | "
      "surface only | baseline: source's time | baseline: plain roofline ratio | our sources "
      "(measured / interpolated / scaled / scaled+interp. / surface) |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|\n";
  char line[1024];
  auto cell = [](const ErrorStats& s) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.1f / %.1f / %.1f", s.median_percent, s.p90_percent,
                  s.weighted_percent);
    return std::string(text);
  };
  for (const ValidationResult& r : results) {
    std::snprintf(line, sizeof(line),
                  "| %s | %zu | %zu | %s | %s | %s | %s | %zu / %zu / %zu / %zu / %zu |\n",
                  r.name.c_str(), r.calibration_rows, r.ours.count, cell(r.ours).c_str(),
                  cell(r.surface_only).c_str(), r.has_baselines ? cell(r.same_time).c_str() : "n/a",
                  r.has_baselines ? cell(r.roofline_ratio).c_str() : "n/a", r.sources[0],
                  r.sources[1], r.sources[2], r.sources[3], r.sources[4]);
    out += line;
  }
  return out;
}

}  // namespace lumos::modeler::models
