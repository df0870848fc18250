// The collective model's validation on the measured tables; see collective_validation.h.
#include "modeler/models/collectives/collective_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "modeler/models/collectives/collective_calibration.h"
#include "modeler/models/collectives/collective_fit.h"

namespace lumos::modeler::models {
namespace {

struct Row {
  double measured;
  double predicted;
};

ErrorSummary Summarize(const std::vector<Row>& rows) {
  ErrorSummary s;
  s.rows = rows.size();
  if (rows.empty()) return s;
  std::vector<double> errors;
  double abs_sum = 0, measured_sum = 0;
  for (const Row& r : rows) {
    const double e = std::abs(r.predicted - r.measured);
    errors.push_back(e / r.measured);
    abs_sum += e;
    measured_sum += r.measured;
  }
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  s.median = n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  s.time_weighted = abs_sum / measured_sum;
  s.p90 = errors[std::min(n - 1, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1)];
  s.max = errors.back();
  return s;
}

double BusFactor(schema::CollectiveOp op, double n) {
  return op == schema::CollectiveOp::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

using RowKey = std::tuple<schema::CollectiveOp, schema::DataType, uint32_t, uint64_t>;

std::map<RowKey, const CalibrationPoint*> Index(const CalibrationSet& set) {
  std::map<RowKey, const CalibrationPoint*> index;
  for (const CalibrationPoint& p : set.points) {
    index[{p.op, p.data_type, p.ranks, p.bytes}] = &p;
  }
  return index;
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100 * fraction);
  return buf;
}

// One case: fit `calibration`, predict `test` for `target`; baselines by name.
struct Baseline {
  std::string name;
  std::function<double(const CalibrationPoint&)> time_ns;  // < 0: none for this row.
};

StatusOr<ValidationCase> RunCase(std::string name, std::string calibration_text,
                                 const CalibrationSet& calibration, const CollectiveFabric& fit_on,
                                 const std::vector<const CalibrationPoint*>& test,
                                 const CollectiveFabric& target,
                                 const std::vector<Baseline>& baselines,
                                 const std::function<bool(const CollectiveMeasurement&)>& is_test) {
  ValidationCase out;
  out.name = std::move(name);
  out.calibration = std::move(calibration_text);
  LUMOS_ASSIGN_OR_RETURN(CollectiveModel model, FitCollectiveModel(calibration, fit_on));
  out.calibration_clean =
      std::none_of(model.measurements.begin(), model.measurements.end(), is_test);
  const CollectivePredictor predictor(model, target);
  std::vector<Row> ours;
  std::map<std::string, std::vector<Row>> by_op;
  std::map<std::string, size_t> sources;
  std::vector<std::vector<Row>> base(baselines.size());
  for (const CalibrationPoint* p : test) {
    CollectiveQuery q;
    q.op = p->op;
    q.data_type = p->data_type;
    q.bytes = p->bytes;
    q.ranks = p->ranks;
    const CollectivePrediction r = predictor.Predict(q);
    if (r.duration_ns <= 0) {
      return Status::Error("validation: no prediction for a test row (" +
                           std::string(ClassName(*ClassOf(p->op))) + ")");
    }
    const Row row{static_cast<double>(p->time_ns), static_cast<double>(r.duration_ns)};
    ours.push_back(row);
    out.rows.push_back({p->op, p->data_type, p->ranks, p->bytes, p->time_ns, r});
    by_op[ClassName(*ClassOf(p->op))].push_back(row);
    ++sources[CostSourceName(r.source)];
    for (size_t b = 0; b < baselines.size(); ++b) {
      const double t = baselines[b].time_ns(*p);
      if (t > 0) base[b].push_back({row.measured, t});
    }
  }
  out.ours = Summarize(ours);
  for (size_t b = 0; b < baselines.size(); ++b) {
    out.baselines.emplace_back(baselines[b].name, Summarize(base[b]));
  }
  for (const auto& [op, rows] : by_op) out.by_op.emplace_back(op, Summarize(rows));
  for (const auto& [source, n] : sources) out.sources.emplace_back(source, n);
  return out;
}

StatusOr<ValidationCase> MoreRanks(const std::string& gpu, const CalibrationSet& table,
                                   const CollectiveFabric& fabric) {
  CalibrationSet calibration;
  calibration.origins = table.origins;
  std::vector<const CalibrationPoint*> test;
  for (const CalibrationPoint& p : table.points) {
    if (p.ranks == 2 || p.ranks == 4) calibration.points.push_back(p);
    if (p.ranks == 8) test.push_back(&p);
  }
  const auto index = Index(table);
  auto four = [index](const CalibrationPoint& p) -> const CalibrationPoint* {
    auto it = index.find({p.op, p.data_type, 4, p.bytes});
    return it == index.end() ? nullptr : it->second;
  };
  const double bw = fabric.intra_bandwidth_gbps;
  std::vector<Baseline> baselines = {
      {"4-rank time",
       [four](const CalibrationPoint& p) {
         const CalibrationPoint* f = four(p);
         return f ? static_cast<double>(f->time_ns) : -1.0;
       }},
      {"4-rank time x bus factor 8/4",
       [four](const CalibrationPoint& p) {
         const CalibrationPoint* f = four(p);
         return f ? static_cast<double>(f->time_ns) * BusFactor(p.op, 8) / BusFactor(p.op, 4)
                  : -1.0;
       }},
      {"bus bandwidth at " + std::to_string(static_cast<int>(bw)) + " GB/s",
       [bw](const CalibrationPoint& p) {
         return BusFactor(p.op, p.ranks) * static_cast<double>(p.bytes) / bw;  // B / (GB/s) = ns
       }},
  };
  return RunCase(gpu + ": fit 2 and 4 ranks, predict 8",
                 table.origins.front() +
                     ", ranks 2 and 4: " + std::to_string(calibration.points.size()) + " rows",
                 calibration, fabric, test, fabric, baselines,
                 [](const CollectiveMeasurement& m) { return m.ranks == 8; });
}

}  // namespace

CollectiveFabric H100SxmFabric() {
  CollectiveFabric f;
  f.name = "H100-SXM5-80GB (NVLink 4, NVSwitch)";
  f.gpus_per_node = 8;
  f.intra_bandwidth_gbps = 450;
  f.nvls = true;
  f.gpu_clock_mhz = 1980;
  f.memory_bandwidth_gbps = 3350;
  f.compute_capability = 90;
  return f;
}

CollectiveFabric A100SxmFabric() {
  CollectiveFabric f;
  f.name = "A100-SXM4-80GB (NVLink 3, NVSwitch)";
  f.gpus_per_node = 8;
  f.intra_bandwidth_gbps = 300;
  f.nvls = false;
  f.gpu_clock_mhz = 1410;
  f.memory_bandwidth_gbps = 2039;
  f.compute_capability = 80;
  return f;
}

StatusOr<CollectiveValidation> ValidateCollectiveModel(const std::string& h100_csv,
                                                       const std::string& a100_csv) {
  LUMOS_ASSIGN_OR_RETURN(CalibrationSet h100, ReadCollectiveTable(h100_csv));
  LUMOS_ASSIGN_OR_RETURN(CalibrationSet a100, ReadCollectiveTable(a100_csv));
  if (h100.origins.size() != 1 || a100.origins.size() != 1) {
    return Status::Error("validation: each table must hold one GPU's rows");
  }
  CollectiveValidation v;
  const CollectiveFabric h = H100SxmFabric(), a = A100SxmFabric();
  LUMOS_ASSIGN_OR_RETURN(ValidationCase h_ranks, MoreRanks("H100", h100, h));
  v.cases.push_back(std::move(h_ranks));
  LUMOS_ASSIGN_OR_RETURN(ValidationCase a_ranks, MoreRanks("A100", a100, a));
  v.cases.push_back(std::move(a_ranks));

  std::vector<const CalibrationPoint*> test;
  for (const CalibrationPoint& p : a100.points) test.push_back(&p);
  const auto index = Index(h100);
  auto same = [index](const CalibrationPoint& p) -> double {
    auto it = index.find({p.op, p.data_type, p.ranks, p.bytes});
    return it == index.end() ? -1.0 : static_cast<double>(it->second->time_ns);
  };
  const double ratio = h.intra_bandwidth_gbps / a.intra_bandwidth_gbps;
  const double bw = a.intra_bandwidth_gbps;
  std::vector<Baseline> baselines = {
      {"H100 time", same},
      {"H100 time x NVLink ratio 450/300",
       [same, ratio](const CalibrationPoint& p) {
         const double t = same(p);
         return t > 0 ? t * ratio : -1.0;
       }},
      {"bus bandwidth at 300 GB/s",
       [bw](const CalibrationPoint& p) {
         return BusFactor(p.op, p.ranks) * static_cast<double>(p.bytes) / bw;
       }},
  };
  const std::string h_origin = h100.origins.front();
  LUMOS_ASSIGN_OR_RETURN(
      ValidationCase transfer,
      RunCase("H100 -> A100: fit every H100 row, predict every A100 row",
              h_origin + ", all ranks: " + std::to_string(h100.points.size()) + " rows", h100, h,
              test, a, baselines, [&](const CollectiveMeasurement& m) {
                return m.origin >= h100.origins.size() || h100.origins[m.origin] != h_origin;
              }));
  v.cases.push_back(std::move(transfer));
  return v;
}

std::string CollectiveValidationMarkdown(const CollectiveValidation& v) {
  std::string out;
  out += "| case | predictor | rows | median error | time-weighted error | p90 | max |\n";
  out += "|---|---|---:|---:|---:|---:|---:|\n";
  auto line = [&out](const std::string& c, const std::string& who, const ErrorSummary& s) {
    out += "| " + c + " | " + who + " | " + std::to_string(s.rows) + " | " + Percent(s.median) +
           " | " + Percent(s.time_weighted) + " | " + Percent(s.p90) + " | " + Percent(s.max) +
           " |\n";
  };
  for (const ValidationCase& c : v.cases) {
    line(c.name, "**Lumos model**", c.ours);
    for (const auto& [name, s] : c.baselines) line("", name, s);
  }
  out += "\nPer operation (Lumos model):\n\n";
  out += "| case | operation | rows | median error | time-weighted error | p90 | max |\n";
  out += "|---|---|---:|---:|---:|---:|---:|\n";
  for (const ValidationCase& c : v.cases) {
    bool first = true;
    for (const auto& [op, s] : c.by_op) {
      line(first ? c.name : "", op, s);
      first = false;
    }
  }
  out += "\nCalibration and sources of the predictions:\n\n";
  out += "| case | fitted on | test rows in the fit | predictions by source |\n";
  out += "|---|---|---|---|\n";
  for (const ValidationCase& c : v.cases) {
    std::string sources;
    for (const auto& [source, n] : c.sources) {
      sources += (sources.empty() ? "" : ", ") + source + " " + std::to_string(n);
    }
    out += "| " + c.name + " | " + c.calibration + " | " +
           (c.calibration_clean ? "none" : "**some**") + " | " + sources + " |\n";
  }
  return out;
}

}  // namespace lumos::modeler::models

namespace lumos::modeler::models {

std::string CollectiveValidationRowsCsv(const CollectiveValidation& v) {
  std::string out =
      "case,op,dtype,ranks,bytes,measured_us,predicted_us,error,source,algorithm,protocol\n";
  for (size_t c = 0; c < v.cases.size(); ++c) {
    for (const ValidationRow& r : v.cases[c].rows) {
      char buf[256];
      const double measured = static_cast<double>(r.measured_ns) / 1e3;
      const double predicted = static_cast<double>(r.predicted.duration_ns) / 1e3;
      std::snprintf(buf, sizeof(buf), "%zu,%s,%s,%u,%llu,%.3f,%.3f,%+.4f,%s,%s,%s\n", c,
                    ClassName(*ClassOf(r.op)), DataTypeName(r.data_type), r.ranks,
                    static_cast<unsigned long long>(r.bytes), measured, predicted,
                    (predicted - measured) / measured, CostSourceName(r.predicted.source),
                    AlgorithmName(r.predicted.algorithm), ProtocolName(r.predicted.protocol));
      out += buf;
    }
  }
  return out;
}

}  // namespace lumos::modeler::models
