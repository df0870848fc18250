#include "modeler/models/costs/cost_model.h"

#include <cinttypes>
#include <cstdio>
#include <map>
#include <utility>

#include "modeler/models/collectives/collective_model_json.h"
#include "modeler/models/kernels/kernel_model_json.h"

namespace lumos::modeler::models {
namespace {

void AppendDouble(std::string* out, double value) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.17g", value);  // Exact round trip.
  *out += text;
}

void AppendString(std::string* out, std::string_view text) {
  *out += '"';
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      *out += '\\';
      *out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", u);
      *out += escaped;
    } else {
      *out += c;
    }
  }
  *out += '"';
}

}  // namespace

StatusOr<CostModel> FitCostModel(const std::vector<GemmTable>& tables, const SpecTable& specs,
                                 const std::vector<TracedGemms>& traced,
                                 std::vector<std::string>* skipped) {
  CostModel model;
  for (const GemmTable& table : tables) model.inputs.push_back(table.table->path);
  LUMOS_ASSIGN_OR_RETURN(model.gemm, FitGemmTables(tables, specs, traced, skipped));
  return model;
}

std::string CostModelJson(const CostModel& model) {
  std::string out = "{\n  \"format\": ";
  AppendString(&out, kCostModelFormat);
  out += ",\n  \"version\": " + std::to_string(kCostModelVersion) + ",\n";
  out += "  \"doc\": \"modeler/models/README.md (lumos-model costs)\",\n  \"inputs\": [";
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    if (i > 0) out += ", ";
    AppendString(&out, model.inputs[i]);
  }
  out += "],\n  \"gemm\": [";
  const std::vector<GemmCalibration>& calibrations = model.gemm.calibrations();
  for (size_t i = 0; i < calibrations.size(); ++i) {
    const GemmCalibration& c = calibrations[i];
    out += i > 0 ? ",\n    {" : "\n    {";
    out += "\"gpu\": ";
    AppendString(&out, c.gpu());
    out += ", \"dtype\": ";
    AppendString(&out, DTypeName(c.dtype()));
    out += ",\n     \"sms\": " + std::to_string(c.spec().sms) + ", \"peak_flops_per_s\": ";
    AppendDouble(&out, c.spec().peak_flops_per_s);
    out += ", \"hbm_bytes_per_s\": ";
    AppendDouble(&out, c.spec().hbm_bytes_per_s);
    out += ",\n     \"floor_ns\": " + std::to_string(c.floor_ns());
    out += ",\n     \"surface\": {\"coefficients\": [";
    const EfficiencySurface& s = c.surface();
    for (int t = 0; t < kSurfaceTerms; ++t) {
      if (t > 0) out += ", ";
      AppendDouble(&out, s.coefficients[t]);
    }
    out += "], \"u_range\": [";
    AppendDouble(&out, s.u_min);
    out += ", ";
    AppendDouble(&out, s.u_max);
    out += "], \"v_range\": [";
    AppendDouble(&out, s.v_min);
    out += ", ";
    AppendDouble(&out, s.v_max);
    out += "]},\n     \"points_columns\": [\"m\", \"n\", \"k\", \"latency_ns\"],";
    out += "\n     \"points\": [";
    char row[96];
    for (size_t p = 0; p < c.points().size(); ++p) {
      const GemmPoint& point = c.points()[p];
      std::snprintf(row, sizeof(row), "%s[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                    p == 0 ? "" : (p % 8 == 0 ? ",\n      " : ","), point.shape.m, point.shape.n,
                    point.shape.k, point.latency_ns);
      out += row;
    }
    out += "]}";
  }
  out += calibrations.empty() ? "],\n" : "\n  ],\n";
  out += "  \"collectives\": [";
  for (size_t i = 0; i < model.collectives.size(); ++i) {
    const CollectiveCalibration& c = model.collectives[i];
    out += i > 0 ? ",\n    {" : "\n    {";
    out += "\"gpu\": ";
    AppendString(&out, c.gpu);
    out += ", \"network\": ";
    AppendString(&out, c.network);
    out += ",\n     \"model\": ";
    std::string json = CollectiveModelJson(c.model);
    while (!json.empty() && json.back() == '\n') json.pop_back();
    out += json;
    out += "}";
  }
  out += model.collectives.empty() ? "],\n" : "\n  ],\n";
  std::string kernels = KernelModelJson(model.kernels);
  while (!kernels.empty() && kernels.back() == '\n') kernels.pop_back();
  out += "  \"kernels\": " + kernels + "\n}\n";
  return out;
}

}  // namespace lumos::modeler::models
