#include "modeler/models/kernels/kernel_validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler::models {
namespace {

using Pairs = std::vector<std::array<double, 2>>;

struct Sample {
  KernelKey key;
  KernelWork work;
  int64_t duration_ns = 0;
  const std::string* name = nullptr;
};

// A total order on keys, for maps and the report's order.
std::tuple<int, int, int> Order(const KernelKey& k) {
  return {static_cast<int>(k.kind), static_cast<int>(k.copy), k.pageable ? 1 : 0};
}

struct KeyLess {
  bool operator()(const KernelKey& a, const KernelKey& b) const { return Order(a) < Order(b); }
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string Cell(const ErrorStats& s) {
  if (s.count == 0) return "–";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f / %.1f / %.1f", s.median_percent, s.p90_percent,
                s.weighted_percent);
  return buf;
}

void ScorePairs(const KernelTraceSet& set, const KernelModel& model,
                const std::vector<Sample>& scored, ScaleValidation* out) {
  // (key, name) → bytes → the samples of that size.
  std::map<std::pair<std::tuple<int, int, int>, std::string>, std::map<double, std::vector<Sample>>>
      groups;
  for (const Sample& s : scored) {
    groups[{Order(s.key), *s.name}][s.work.bytes].push_back(s);
  }
  // [all, near, far] × [ours, bytes only, proportional, unchanged].
  std::array<std::array<Pairs, 4>, 3> pairs;
  Pairs repeat;
  for (const auto& [id, sizes] : groups) {
    for (const auto& [bytes, samples] : sizes) {
      for (size_t i = 1; i < samples.size(); ++i) {
        repeat.push_back({static_cast<double>(samples[0].duration_ns),
                          static_cast<double>(samples[i].duration_ns)});
      }
    }
    if (sizes.size() < 2) continue;
    ++out->names;
    struct Size {
      Sample sample;
      int64_t median_ns;
    };
    std::vector<Size> points;
    for (const auto& [bytes, samples] : sizes) {
      std::vector<double> durations;
      for (const Sample& s : samples) durations.push_back(static_cast<double>(s.duration_ns));
      points.push_back({samples.front(), std::llround(Median(durations))});
    }
    for (const Size& a : points) {
      for (const Size& b : points) {
        if (&a == &b) continue;
        MeasuredKernel m;
        m.key = a.sample.key;
        m.duration_ns = a.median_ns;
        m.gpu = set.gpu;
        m.work = a.sample.work;
        WorkFactors f;
        f.bytes = b.sample.work.bytes / a.sample.work.bytes;
        f.flops = a.sample.work.flops > 0 && b.sample.work.flops > 0
                      ? b.sample.work.flops / a.sample.work.flops
                      : f.bytes;
        StatusOr<Prediction> with_work = model.Scale(m, f, *set.gpu);
        m.work = KernelWork{};
        StatusOr<Prediction> bytes_only = model.Scale(m, f, *set.gpu);
        if (!with_work.ok() || !bytes_only.ok()) continue;
        const double measured = static_cast<double>(b.median_ns);
        const double t = static_cast<double>(a.median_ns);
        const std::array<double, 4> predicted = {static_cast<double>(with_work->duration_ns),
                                                 static_cast<double>(bytes_only->duration_ns),
                                                 t * f.bytes, t};
        const size_t bucket = f.bytes <= 4 && f.bytes >= 0.25 ? 1 : 2;
        for (size_t i = 0; i < 4; ++i) {
          pairs[0][i].push_back({predicted[i], measured});
          pairs[bucket][i].push_back({predicted[i], measured});
        }
      }
    }
  }
  ScaleErrors* rows[] = {&out->all, &out->near, &out->far};
  for (size_t r = 0; r < 3; ++r) {
    rows[r]->ours = Summarize(pairs[r][0]);
    rows[r]->bytes_only = Summarize(pairs[r][1]);
    rows[r]->proportional = Summarize(pairs[r][2]);
    rows[r]->unchanged = Summarize(pairs[r][3]);
  }
  out->repeat = Summarize(repeat);
}

}  // namespace

std::vector<KernelTraceSetFiles> SharedKernelTraceSets(const std::string& dir) {
  const std::string hta = dir + "/hta-single-rank/";
  return {{"dlrm-8rank-v100", {dir + "/dlrm-8rank-v100/dlrm_kineto.tar.gz"}},
          {"hta control", {hta + "control.json.gz"}},
          {"hta rank0", {hta + "rank0.json.gz"}},
          {"hta df_index_resolver", {hta + "df_index_resolver.json.gz"}},
          {"hta nccl_data", {hta + "nccl_data.json.gz"}}};
}

StatusOr<KernelTraceSet> LoadKernelTraceSet(std::string name, const std::vector<std::string>& paths,
                                            const SpecTable& specs) {
  KernelTraceSet set;
  set.name = std::move(name);
  for (const std::string& path : paths) {
    LUMOS_ASSIGN_OR_RETURN(std::vector<KinetoKernelTrace> traces, ReadKinetoKernels(path));
    for (KinetoKernelTrace& t : traces) set.traces.push_back(std::move(t));
  }
  for (const KinetoKernelTrace& t : set.traces) {
    const GpuSpec* gpu = specs.FindGpu(t.device);
    if (gpu == nullptr) {
      return ErrorStatus("%s: device '%s' is not in the specs", t.source.c_str(), t.device.c_str());
    }
    if (set.gpu != nullptr && gpu != set.gpu) {
      return ErrorStatus("%s: %s, but the set's other traces ran on %s", t.source.c_str(),
                         gpu->name.c_str(), set.gpu->name.c_str());
    }
    set.gpu = gpu;
  }
  if (set.gpu == nullptr) return ErrorStatus("trace set %s: no traces", set.name.c_str());
  return set;
}

StatusOr<TraceSetValidation> ValidateKernelTraceSet(const KernelTraceSet& set, uint64_t seed) {
  TraceSetValidation out;
  out.name = set.name;
  out.gpu = set.gpu->name;
  const KernelRooflineSpec spec = KernelRooflineFor(*set.gpu, DType::kFp32);
  std::map<KernelKey, KeyValidation, KeyLess> keys;
  std::map<KernelKey, std::vector<KernelSample>, KeyLess> calibration;
  std::vector<Sample> scored;
  uint64_t index = 0;
  for (const KinetoKernelTrace& trace : set.traces) {
    for (const KinetoGpuRecord& r : trace.records) {
      if (r.key.kind == KernelClass::kCommunication || r.key.kind == KernelClass::kGemm) continue;
      ++out.records;
      KeyValidation& k = keys[r.key];
      k.key = r.key;
      k.class_time_ns += r.duration_ns;
      const std::optional<KernelWork> work = RecordWork(trace, r);
      if (!work || !work->known() || r.duration_ns <= 0) continue;
      ++out.samples;
      k.known_time_ns += r.duration_ns;
      if (InCalibrationHalf(index++, seed)) {
        calibration[r.key].push_back(KernelSample{*work, r.duration_ns});
      } else {
        scored.push_back(Sample{r.key, *work, r.duration_ns, &r.name});
      }
    }
  }
  std::map<KernelKey, double, KeyLess> mean_efficiency;
  for (const auto& [key, samples] : calibration) {
    KeyValidation& k = keys[key];
    k.calibration_samples = samples.size();
    double sum = 0;
    for (const KernelSample& s : samples) {
      sum += KernelRooflineOf(key, s.work, spec).time_ns / static_cast<double>(s.duration_ns);
    }
    mean_efficiency[key] = sum / static_cast<double>(samples.size());
    if (samples.size() < KernelCalibration::kMinSamples) continue;
    LUMOS_ASSIGN_OR_RETURN(KernelCalibration c,
                           KernelCalibration::Fit(set.gpu->name, key, DType::kFp32, spec, samples));
    k.calibrated = true;
    k.efficiency = c.efficiency();
    k.floor_ns = c.floor_ns();
    out.model.Add(std::move(c));
  }
  std::map<KernelKey, std::array<Pairs, 3>, KeyLess> pairs;
  for (const Sample& s : scored) {
    const KernelWorkQuery q{s.key, s.work, DType::kFp32, set.gpu};
    LUMOS_ASSIGN_OR_RETURN(Prediction ours, out.model.Predict(q));
    LUMOS_ASSIGN_OR_RETURN(Prediction roofline, out.model.Predict(q, {.roofline_only = true}));
    const double r = KernelRooflineOf(s.key, s.work, spec).time_ns;
    const auto mean = mean_efficiency.find(s.key);
    const double e = mean != mean_efficiency.end() && mean->second > 0 ? mean->second : 1.0;
    const double measured = static_cast<double>(s.duration_ns);
    std::array<Pairs, 3>& p = pairs[s.key];
    p[0].push_back({static_cast<double>(ours.duration_ns), measured});
    p[1].push_back({static_cast<double>(roofline.duration_ns), measured});
    p[2].push_back(
        {std::hypot(static_cast<double>(KernelModel::kDefaultFloorNs), r / e), measured});
  }
  for (auto& [key, k] : keys) {
    const auto p = pairs.find(key);
    if (p != pairs.end()) {
      k.ours = Summarize(p->second[0]);
      k.roofline = Summarize(p->second[1]);
      k.mean_efficiency = Summarize(p->second[2]);
    }
    out.keys.push_back(k);
  }
  ScorePairs(set, out.model, scored, &out.scale);
  return out;
}

std::string KernelValidationMarkdown(const std::vector<TraceSetValidation>& results) {
  std::string md;
  char line[512];
  for (const TraceSetValidation& r : results) {
    std::snprintf(line, sizeof(line),
                  "\n**%s** (%s): %zu non-GEMM kernels, copies and memsets; %zu of known work, "
                  "half of them (seed %llu) calibrate, the other half is scored.\n\n",
                  r.name.c_str(), r.gpu.c_str(), r.records, r.samples,
                  static_cast<unsigned long long>(kValidationSeed));
    md += line;
    md +=
        "| class | time of known work | calibration kernels | fitted e, floor | ours | roofline "
        "only | class mean efficiency |\n|---|---|---|---|---|---|---|\n";
    for (const KeyValidation& k : r.keys) {
      const double share = k.class_time_ns > 0 ? 100.0 * static_cast<double>(k.known_time_ns) /
                                                     static_cast<double>(k.class_time_ns)
                                               : 0;
      char fit[64] = "–";
      if (k.calibrated) {
        std::snprintf(fit, sizeof(fit), "%.3f, %.1f µs", k.efficiency,
                      static_cast<double>(k.floor_ns) / 1000);
      }
      std::snprintf(line, sizeof(line), "| %s | %.0f %% of %.2f ms | %zu | %s | %s | %s | %s |\n",
                    KeyName(k.key).c_str(), share, static_cast<double>(k.class_time_ns) / 1e6,
                    k.calibration_samples, fit, Cell(k.ours).c_str(), Cell(k.roofline).c_str(),
                    Cell(k.mean_efficiency).c_str());
      md += line;
    }
    const ScaleValidation& s = r.scale;
    std::snprintf(line, sizeof(line),
                  "\nScale on %s: %zu kernel names at two sizes or more, %zu ordered pairs "
                  "(bytes factor within 4×: %zu, beyond: %zu); the same kernel and size again: "
                  "%zu pairs, %s.\n\n",
                  r.name.c_str(), s.names, s.all.ours.count, s.near.ours.count, s.far.ours.count,
                  s.repeat.count, Cell(s.repeat).c_str());
    md += line;
    md +=
        "| Scale pairs | ours, work known | ours, bytes factor only | proportional | unchanged "
        "|\n|---|---|---|---|---|\n";
    const std::pair<const char*, const ScaleErrors*> rows[] = {
        {"all", &s.all}, {"factor within 4×", &s.near}, {"factor beyond 4×", &s.far}};
    for (const auto& [label, e] : rows) {
      md += std::string("| ") + label + " | " + Cell(e->ours) + " | " + Cell(e->bytes_only) +
            " | " + Cell(e->proportional) + " | " + Cell(e->unchanged) + " |\n";
    }
  }
  return md;
}

}  // namespace lumos::modeler::models
