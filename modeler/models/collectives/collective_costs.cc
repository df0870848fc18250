// The collective model in `lumos-model costs`; see collective_costs.h.
#include "modeler/models/collectives/collective_costs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_model_json.h"

namespace lumos::modeler::models {
namespace {

using schema::DataType;

std::string FabricName(const std::string& gpu, const NetworkSpec* network) {
  return network != nullptr ? gpu + " over " + network->name : gpu;
}

// A GPU's NVLink bandwidth, one direction, GB/s (the specs add both).
double NvlinkGbps(const GpuSpec& gpu) {
  return gpu.nvlink_bytes_per_s ? *gpu.nvlink_bytes_per_s / 2 / 1e9 : 0.0;
}

}  // namespace

StatusOr<CollectiveFabric> FabricFromSpecs(const GpuSpec& gpu, const NetworkSpec* network) {
  if (!gpu.nvlink_bytes_per_s || !gpu.nvlink_domain_gpus) {
    return ErrorStatus(
        "gpu %s has no %s in the specs (collectives need nvlink_gb_per_s and "
        "nvlink_domain_gpus; add them with --specs FILE)",
        gpu.name.c_str(), !gpu.nvlink_bytes_per_s ? "nvlink_gb_per_s" : "nvlink_domain_gpus");
  }
  CollectiveFabric f;
  f.name = FabricName(gpu.name, network);
  f.gpus_per_node = static_cast<uint32_t>(*gpu.nvlink_domain_gpus);
  f.intra_bandwidth_gbps = NvlinkGbps(gpu);
  if (network != nullptr) {
    f.inter_bandwidth_gbps = network->bytes_per_s / 1e9;
    f.inter_latency_us = static_cast<double>(network->latency_ns) / 1000.0;
  }
  f.nvls = gpu.nvls;
  f.collnet = false;  // No network in the specs reduces in its switches (SHARP): not modelled.
  f.gpu_clock_mhz = gpu.boost_clock_mhz.value_or(0);
  f.memory_bandwidth_gbps = gpu.hbm_bytes_per_s / 1e9;
  f.compute_capability = static_cast<uint32_t>(gpu.compute_capability.value_or(0));
  return f;
}

uint32_t CollectiveCalibration::FittedPoints() const {
  uint32_t points = 0;
  for (const OperationCost& op : model.ops) points += op.points;
  return points;
}

size_t CollectiveCalibration::MultiNodeMeasurements() const {
  return static_cast<size_t>(
      std::count_if(model.measurements.begin(), model.measurements.end(),
                    [](const CollectiveMeasurement& m) { return m.nodes > 1; }));
}

void CollectiveFitInputs::Add(const GpuSpec& gpu, std::string origin,
                              std::vector<CalibrationPoint> points) {
  auto it = std::find_if(groups_.begin(), groups_.end(),
                         [&gpu](const Group& g) { return g.gpu->name == gpu.name; });
  if (it == groups_.end()) {
    groups_.push_back(Group{&gpu, {}});
    it = groups_.end() - 1;
  }
  it->sources.push_back(Source{std::move(origin), std::move(points)});
}

Status CollectiveFitInputs::AddTable(const io::CsvTable& table,
                                     const std::vector<CollectiveRow>& rows,
                                     const SpecTable& specs) {
  // One source per GPU named in the table, as collective_calibration.h names its origins.
  std::vector<std::pair<const GpuSpec*, Source>> sources;
  std::map<std::string, size_t> by_name;
  for (const CollectiveRow& row : rows) {
    auto [it, added] = by_name.try_emplace(row.gpu, sources.size());
    if (added) {
      const GpuSpec* gpu = specs.FindGpu(row.gpu);
      if (gpu == nullptr) return UnknownGpu(row.gpu, specs).WithContext(table.Where(row.row));
      sources.emplace_back(
          gpu,
          Source{std::filesystem::path(table.path).filename().string() + " (" + row.gpu + ")", {}});
    }
    sources[it->second].second.points.push_back(PointOf(row));
  }
  for (auto& [gpu, source] : sources) {
    Add(*gpu, std::move(source.origin), std::move(source.points));
  }
  return Status::Ok();
}

StatusOr<std::vector<CollectiveCalibration>> CollectiveFitInputs::Fit(
    const NetworkSpec& network) const {
  std::vector<const Group*> groups;
  for (const Group& g : groups_) groups.push_back(&g);
  std::sort(groups.begin(), groups.end(),
            [](const Group* a, const Group* b) { return a->gpu->name < b->gpu->name; });
  std::vector<CollectiveCalibration> calibrations;
  for (const Group* group : groups) {
    const std::string& name = group->gpu->name;
    StatusOr<CollectiveFabric> fabric = FabricFromSpecs(*group->gpu, &network);
    if (!fabric.ok()) return fabric.status().WithContext(group->sources.front().origin);
    std::vector<const Source*> sources;
    for (const Source& s : group->sources) sources.push_back(&s);
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source* a, const Source* b) { return a->origin < b->origin; });
    CalibrationSet set;
    for (const Source* source : sources) {
      const auto origin = static_cast<uint32_t>(set.origins.size());
      set.origins.push_back(source->origin);
      for (CalibrationPoint p : source->points) {
        p.origin = origin;
        set.points.push_back(p);
      }
    }
    StatusOr<CollectiveModel> model = FitCollectiveModel(set, *fabric);
    if (!model.ok()) return model.status().WithContext("collectives on " + name);
    if (model->measurements.empty()) continue;  // Nothing with a size and a time.
    // As the model file holds it (parameters to 6 decimals: collective_model_json.h), so the
    // fitted model answers exactly as the file will.
    StatusOr<CollectiveModel> stored = ParseCollectiveModelJson(CollectiveModelJson(*model));
    if (!stored.ok()) return stored.status().WithContext("collectives on " + name);
    calibrations.push_back(CollectiveCalibration{name, network.name, std::move(*stored)});
  }
  return calibrations;
}

int SelectCollectiveCalibration(const std::vector<CollectiveCalibration>& calibrations,
                                const GpuSpec& gpu) {
  int best = -1;
  std::tuple<bool, double, std::string> best_key;
  const double bandwidth = NvlinkGbps(gpu);
  for (size_t i = 0; i < calibrations.size(); ++i) {
    const CollectiveCalibration& c = calibrations[i];
    if (c.gpu == gpu.name) return static_cast<int>(i);
    const double ratio = bandwidth > 0 && c.model.fabric.intra_bandwidth_gbps > 0
                             ? std::abs(std::log(c.model.fabric.intra_bandwidth_gbps / bandwidth))
                             : 1e9;
    std::tuple<bool, double, std::string> key{c.model.fabric.nvls != gpu.nvls, ratio, c.gpu};
    if (best < 0 || key < best_key) {
      best = static_cast<int>(i);
      best_key = std::move(key);
    }
  }
  return best;
}

std::string CollectiveSourceText(const CollectivePrediction& p,
                                 const CollectiveCalibration* calibration) {
  const bool fitted = calibration != nullptr && p.fit >= 0;
  const std::string fit =
      fitted ? calibration->gpu + " " + ClassName(static_cast<CollectiveClass>(p.fit)) + " fit"
             : std::string();
  switch (p.source) {
    case CostSource::kMeasured:
      return "measured";
    case CostSource::kInterpolated:
      return "interpolated";
    case CostSource::kScaled:
      return "scaled from " + fit;
    case CostSource::kModelOnly:
      if (!fitted) return "model only (NCCL's constants)";
      return "model only (" + fit + "; " +
             (p.nodes > 1                                   ? "network"
              : p.algorithm == schema::NcclAlgorithm::kNvls ? "NVLS"
                                                            : "protocol") +
             " never measured)";
    case CostSource::kNone:
      break;
  }
  return "none";
}

StatusOr<std::unique_ptr<CollectiveTarget>> MakeCollectiveTarget(
    const std::vector<CollectiveCalibration>& calibrations, const GpuSpec& gpu,
    const NetworkSpec& network) {
  auto target = std::make_unique<CollectiveTarget>();
  LUMOS_ASSIGN_OR_RETURN(CollectiveFabric fabric, FabricFromSpecs(gpu, &network));
  const int index = SelectCollectiveCalibration(calibrations, gpu);
  if (index >= 0) target->calibration = &calibrations[static_cast<size_t>(index)];
  if (target->calibration != nullptr && target->calibration->gpu == gpu.name) {
    // Its own GPU: the fabric it was fitted on (as stored), the query's network across nodes.
    const CollectiveModel& model = target->calibration->model;
    CollectiveFabric across = model.fabric;
    across.name = FabricName(gpu.name, &network);
    across.inter_bandwidth_gbps = fabric.inter_bandwidth_gbps;
    across.inter_latency_us = fabric.inter_latency_us;
    target->single = std::make_unique<CollectivePredictor>(model);
    target->multi = std::make_unique<CollectivePredictor>(model, across);
    target->domain = model.fabric.gpus_per_node;
    return target;
  }
  target->domain = fabric.gpus_per_node;
  const CollectiveModel* model = &target->constants;
  if (target->calibration != nullptr) {
    model = &target->calibration->model;
  } else {
    target->constants.fabric = fabric;
  }
  target->single = std::make_unique<CollectivePredictor>(*model, fabric);
  target->multi = std::make_unique<CollectivePredictor>(*model, fabric);
  return target;
}

StatusOr<PredictedTable> PredictCollectiveQueries(
    const std::vector<CollectiveCalibration>& calibrations, const io::CsvTable& queries,
    const GpuSpec* default_gpu, const SpecTable& specs, const NetworkSpec& network) {
  LUMOS_ASSIGN_OR_RETURN(std::vector<CollectiveRow> rows,
                         ReadCollectiveRows(queries, Latency::kIgnored));
  PredictedTable out;
  for (size_t i = 0; i < queries.header.size(); ++i) {
    out.csv += (i > 0 ? "," : "") + queries.header[i];
  }
  out.csv += ",predicted_us,source\n";
  std::map<std::string, const GpuSpec*> gpus;  // Each name looked up once.
  std::map<const GpuSpec*, std::unique_ptr<CollectiveTarget>> targets;
  for (const CollectiveRow& row : rows) {
    auto where = [&queries, &row] { return queries.Where(row.row); };  // For errors only.
    const GpuSpec* gpu = default_gpu;
    if (!row.gpu.empty()) {
      auto [it, inserted] = gpus.emplace(row.gpu, nullptr);
      if (inserted) it->second = specs.FindGpu(row.gpu);
      gpu = it->second;
      if (gpu == nullptr) return UnknownGpu(row.gpu, specs).WithContext(where());
    }
    if (gpu == nullptr) {
      return ErrorStatus("%s: no gpu (the row names none and no --gpu was given)", where().c_str());
    }
    std::unique_ptr<CollectiveTarget>& target = targets[gpu];
    if (target == nullptr) {
      StatusOr<std::unique_ptr<CollectiveTarget>> made =
          MakeCollectiveTarget(calibrations, *gpu, network);
      if (!made.ok()) return made.status().WithContext(where());
      target = std::move(*made);
    }
    const uint32_t fewest = (row.ranks + target->domain - 1) / target->domain;
    if (row.nodes != 0 && row.nodes < fewest) {
      return ErrorStatus(
          "%s: %u ranks on %u node(s): more than the %u GPUs of an NVLink domain "
          "of %s on each",
          where().c_str(), row.ranks, row.nodes, target->domain, gpu->name.c_str());
    }
    CollectiveQuery query;
    query.op = row.op;
    query.data_type = row.data_type;
    query.bytes = row.bytes;
    query.ranks = row.ranks;
    query.nodes = row.nodes != 0 ? row.nodes : fewest;
    const CollectivePredictor& predictor = query.nodes > 1 ? *target->multi : *target->single;
    const CollectivePrediction prediction = predictor.Predict(query);
    if (prediction.source == CostSource::kNone || prediction.duration_ns < 0) {
      return ErrorStatus("%s: the collective model cannot answer this query", where().c_str());
    }
    const std::vector<std::string>& fields = queries.rows[row.row];
    for (const std::string& field : fields) {
      out.csv += field;
      out.csv += ',';
    }
    out.csv += FormatMicroseconds(prediction.duration_ns);
    out.csv += ',';
    out.csv += CollectiveSourceText(prediction, target->calibration);
    out.csv += '\n';
    ++out.sources[static_cast<int>(prediction.source)];
    ++out.rows;
  }
  return out;
}

}  // namespace lumos::modeler::models
