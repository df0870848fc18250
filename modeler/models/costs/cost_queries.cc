#include "modeler/models/costs/cost_queries.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "modeler/models/collectives/collective_costs.h"
#include "modeler/models/kernels/kernel_table.h"

namespace lumos::modeler::models {
namespace {

StatusOr<NetworkSpec> DefaultNetwork(const SpecTable& specs) {
  return specs.ResolveNetwork(kDefaultNetwork);
}

// Traced non-GEMM samples of all jobs, by GPU name and KeyName (an order that does not depend on
// the order of the jobs).
struct KernelSamplesOfKey {
  const GpuSpec* gpu = nullptr;
  KernelKey key;
  std::vector<KernelSample> samples;
};
using KernelSamplesByGpu = std::map<std::pair<std::string, std::string>, KernelSamplesOfKey>;

// One calibration per GPU and key with enough samples (fp32, as cost_inputs.h says); the others
// are said in `skipped`.
KernelModel FitKernelSamples(const KernelSamplesByGpu& samples, std::vector<std::string>* skipped) {
  KernelModel model;
  for (const auto& [name, k] : samples) {
    const std::string what = "kernels " + name.first + " " + name.second + ": ";
    if (k.samples.size() < KernelCalibration::kMinSamples) {
      skipped->push_back(what + std::to_string(k.samples.size()) + " sample(s), fewer than " +
                         std::to_string(KernelCalibration::kMinSamples) + ": not fitted");
      continue;
    }
    // Attention runs on the tensor cores in bf16 (kernel_work.h); the rest is fp32 traffic.
    const DType dtype = k.key.kind == KernelClass::kAttention ? DType::kBf16 : DType::kFp32;
    StatusOr<KernelCalibration> c = KernelCalibration::Fit(
        k.gpu->name, k.key, dtype, KernelRooflineFor(*k.gpu, dtype), k.samples);
    if (!c.ok()) {
      skipped->push_back(what + c.status().message() + ": not fitted");
      continue;
    }
    model.Add(std::move(*c));
  }
  return model;
}

// A measured kernel table (kernel_table.h's query columns, gpu in every row, and latency_us):
// each row one sample of its class on its GPU, fitted with the traced ones. A table of queries
// (no latency_us) is refused: it measures nothing.
Status AddMeasuredKernels(const io::CsvTable& table, const SpecTable& specs,
                          KernelSamplesByGpu* into) {
  const int latency = table.Column("latency_us");
  if (latency < 0) {
    return ErrorStatus(
        "%s: kernel queries (a class column without latency_us) are for costs predict; costs "
        "fit takes measured kernels (latency_us) or traces",
        table.path.c_str());
  }
  LUMOS_ASSIGN_OR_RETURN(std::vector<KernelRow> rows, ReadKernelRows(table));
  if (rows.empty()) return ErrorStatus("%s: no rows", table.path.c_str());
  for (const KernelRow& row : rows) {
    if (row.key.kind == KernelClass::kAttention) {
      return ErrorStatus(
          "%s: class attention: its work is a shape, measure it in a trace "
          "(costs fit --attention)",
          table.Where(row.row).c_str());
    }
    if (row.gpu.empty()) {
      return ErrorStatus("%s: a measured kernel needs its gpu", table.Where(row.row).c_str());
    }
    const GpuSpec* gpu = specs.FindGpu(row.gpu);
    if (gpu == nullptr) return UnknownGpu(row.gpu, specs).WithContext(table.Where(row.row));
    StatusOr<int64_t> ns = ParseMicroseconds(table.rows[row.row][static_cast<size_t>(latency)]);
    if (!ns.ok()) return ns.status().WithContext(table.Where(row.row));
    KernelSamplesOfKey& samples = (*into)[{gpu->name, KeyName(row.key)}];
    samples.gpu = gpu;
    samples.key = row.key;
    samples.samples.push_back(KernelSample{row.work, *ns});
  }
  return Status::Ok();
}

// The model's Predict of each row (kernel_table.h, ReadKernelRows), with its source.
StatusOr<PredictedTable> PredictKernelQueries(const KernelModel& model, const io::CsvTable& queries,
                                              const GpuSpec* default_gpu, const SpecTable& specs) {
  LUMOS_ASSIGN_OR_RETURN(std::vector<KernelRow> rows, ReadKernelRows(queries));
  PredictedTable out;
  for (size_t i = 0; i < queries.header.size(); ++i) {
    out.csv += (i > 0 ? "," : "") + queries.header[i];
  }
  out.csv += ",predicted_us,source\n";
  std::map<std::string, const GpuSpec*> gpus;  // Each name looked up once.
  for (const KernelRow& row : rows) {
    const GpuSpec* gpu = default_gpu;
    if (!row.gpu.empty()) {
      auto [it, inserted] = gpus.emplace(row.gpu, nullptr);
      if (inserted) it->second = specs.FindGpu(row.gpu);
      gpu = it->second;
      if (gpu == nullptr) return UnknownGpu(row.gpu, specs).WithContext(queries.Where(row.row));
    }
    if (gpu == nullptr) {
      return ErrorStatus("%s: no gpu (the row names none and no --gpu was given)",
                         queries.Where(row.row).c_str());
    }
    StatusOr<Prediction> prediction =
        model.Predict(KernelWorkQuery{row.key, row.work, row.dtype, gpu});
    if (!prediction.ok()) return prediction.status().WithContext(queries.Where(row.row));
    const std::string source = model.SourceText(*prediction);
    const std::vector<std::string>& fields = queries.rows[row.row];
    for (size_t i = 0; i < fields.size(); ++i) out.csv += (i > 0 ? "," : "") + fields[i];
    out.csv += "," + FormatMicroseconds(prediction->duration_ns) + "," + source + "\n";
    ++out.sources[static_cast<int>(prediction->source)];
    ++out.rows;
  }
  return out;
}

}  // namespace

StatusOr<CostModel> FitCostInputs(const CostInputs& inputs, const SpecTable& specs,
                                  const NetworkSpec& network, FitLog* log,
                                  std::vector<TraceCalibration>* calibrated) {
  std::vector<io::CsvTable> tables;
  tables.reserve(inputs.tables.size());
  for (const std::string& path : inputs.tables) {
    LUMOS_ASSIGN_OR_RETURN(io::CsvTable table, io::ReadCsv(path));
    tables.push_back(std::move(table));
  }
  std::vector<GemmTable> gemm;
  CollectiveFitInputs collectives;
  KernelSamplesByGpu measured_kernels;  // From measured kernel tables; traced ones join them.
  for (const io::CsvTable& table : tables) {
    LUMOS_ASSIGN_OR_RETURN(TableKind kind, DetectTableKind(table));
    switch (kind) {
      case TableKind::kGemm: {
        LUMOS_ASSIGN_OR_RETURN(std::vector<GemmRow> rows, ReadGemmRows(table, Latency::kRequired));
        if (rows.empty()) return ErrorStatus("%s: no rows", table.path.c_str());
        gemm.push_back(GemmTable{&table, std::move(rows)});
        break;
      }
      case TableKind::kCollective: {
        LUMOS_ASSIGN_OR_RETURN(std::vector<CollectiveRow> rows,
                               ReadCollectiveRows(table, Latency::kRequired));
        if (rows.empty()) return ErrorStatus("%s: no rows", table.path.c_str());
        LUMOS_RETURN_IF_ERROR(collectives.AddTable(table, rows, specs));
        break;
      }
      case TableKind::kKernel:
        LUMOS_RETURN_IF_ERROR(AddMeasuredKernels(table, specs, &measured_kernels));
        break;
    }
  }
  // Traced jobs: their collectives and GEMMs (cost_inputs.h).
  std::string nothing;  // Why the traces calibrated nothing, for the error below.
  std::vector<TracedGemms> traced_gemms;
  KernelSamplesByGpu kernel_samples = std::move(measured_kernels);
  if (!inputs.traces.empty() || calibrated != nullptr) {
    std::vector<TraceCalibration> traced;
    if (calibrated != nullptr) {
      traced = std::move(*calibrated);
    } else {
      LUMOS_ASSIGN_OR_RETURN(
          traced, ReadTraceCalibrations(inputs.traces, specs, &log->problems, inputs.unnamed_gpu,
                                        inputs.attention ? &*inputs.attention : nullptr));
    }
    for (TraceCalibration& job : traced) {
      log->notes.push_back(job.Describe());
      if (job.sized == 0 && job.gemms.empty() && job.kernel_samples.empty() && nothing.empty()) {
        nothing = log->notes.back();
      }
      for (TracedGemms& g : job.gemms) traced_gemms.push_back(std::move(g));
      if (job.gpu != nullptr) {
        for (TraceCalibration::KernelSamples& k : job.kernel_samples) {
          KernelSamplesOfKey& into = kernel_samples[{job.gpu->name, KeyName(k.key)}];
          into.gpu = job.gpu;
          into.key = k.key;
          into.samples.insert(into.samples.end(), k.samples.begin(), k.samples.end());
        }
      }
      if (job.sized == 0) continue;
      collectives.Add(*job.gpu, "job " + job.job_id, std::move(job.collectives.points));
    }
  }
  CostModel model;
  if (!gemm.empty() || !traced_gemms.empty()) {
    LUMOS_ASSIGN_OR_RETURN(model, FitCostModel(gemm, specs, traced_gemms, &log->skipped));
  }
  LUMOS_ASSIGN_OR_RETURN(model.collectives, collectives.Fit(network));
  model.kernels = FitKernelSamples(kernel_samples, &log->skipped);
  model.inputs = inputs.tables;
  model.inputs.insert(model.inputs.end(), inputs.traces.begin(), inputs.traces.end());
  if (model.gemm.calibrations().empty() && model.collectives.empty() &&
      model.kernels.calibrations().empty()) {
    if (!log->skipped.empty()) {
      return ErrorStatus("nothing to fit: %s", log->skipped.front().c_str());
    }
    if (!nothing.empty()) return ErrorStatus("nothing to fit: %s", nothing.c_str());
    // Only traces that could not be read: one of them is the error itself (as every command
    // says it), several stay named and the error says that none could be used.
    if (log->problems.size() == 1) {
      Status only = Status::Error(log->problems.front());
      log->problems.clear();
      return only;
    }
    if (!log->problems.empty()) {
      return ErrorStatus("nothing to fit: none of the %zu inputs could be read",
                         log->problems.size());
    }
    return ErrorStatus("no table or trace to fit");
  }
  return model;
}

StatusOr<CostModel> FitCostTables(const std::vector<std::string>& tables, const SpecTable& specs) {
  LUMOS_ASSIGN_OR_RETURN(NetworkSpec network, DefaultNetwork(specs));
  CostInputs inputs;
  inputs.tables = tables;
  FitLog log;
  return FitCostInputs(inputs, specs, network, &log);
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
  for (const CollectiveCalibration& c : model.collectives) {
    std::string origins;
    for (const std::string& origin : c.model.origins) {
      origins += (origins.empty() ? "" : ", ") + origin;
    }
    std::snprintf(line, sizeof(line),
                  "  collectives %s (%s between nodes): %u points fitted, %zu measurements (%zu "
                  "across nodes), from ",
                  c.gpu.c_str(), c.network.c_str(), c.FittedPoints(), c.model.measurements.size(),
                  c.MultiNodeMeasurements());
    out += line + origins + "\n";
  }
  for (const KernelCalibration& c : model.kernels.calibrations()) {
    std::snprintf(line, sizeof(line),
                  "  kernels %s %s: %u kernels, efficiency %.3f, floor %s us, median error "
                  "%.1f %%\n",
                  c.gpu().c_str(), KeyName(c.key()).c_str(), c.kernels(), c.efficiency(),
                  FormatMicroseconds(c.floor_ns()).c_str(), 100 * c.median_error());
    out += line;
  }
  return out;
}

StatusOr<PredictedTable> PredictCostQueries(const CostModel& model, const io::CsvTable& queries,
                                            const GpuSpec* default_gpu, const SpecTable& specs,
                                            const NetworkSpec* network) {
  LUMOS_ASSIGN_OR_RETURN(TableKind kind, DetectTableKind(queries));
  for (const char* column : {"predicted_us", "source"}) {
    if (queries.Column(column) >= 0) {
      return ErrorStatus("%s: already has a %s column (an output of costs predict?)",
                         queries.path.c_str(), column);
    }
  }
  if (kind == TableKind::kCollective) {
    if (network != nullptr) {
      return PredictCollectiveQueries(model.collectives, queries, default_gpu, specs, *network);
    }
    LUMOS_ASSIGN_OR_RETURN(NetworkSpec fallback, DefaultNetwork(specs));
    return PredictCollectiveQueries(model.collectives, queries, default_gpu, specs, fallback);
  }
  if (kind == TableKind::kKernel) {
    return PredictKernelQueries(model.kernels, queries, default_gpu, specs);
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
