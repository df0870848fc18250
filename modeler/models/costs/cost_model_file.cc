// Reading a model file back (cost_model.h): simdjson's DOM, every element checked, every error
// naming the file and the element ("m.json: gemm[1].points[7]: ...").
#include <simdjson.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "modeler/io/text_file.h"
#include "modeler/models/collectives/collective_model_json.h"
#include "modeler/models/costs/cost_model.h"
#include "modeler/models/kernels/kernel_model_json.h"

namespace lumos::modeler::models {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  Status Error(const std::string& where, const std::string& what) const {
    return ErrorStatus("%s: %s%s%s", path_.c_str(), where.c_str(), where.empty() ? "" : ": ",
                       what.c_str());
  }

  StatusOr<element> Field(object o, const char* name, const std::string& where) const {
    element value;
    if (o[name].get(value) != simdjson::SUCCESS) {
      return Error(where, std::string("no \"") + name + "\"");
    }
    return value;
  }
  StatusOr<double> Number(object o, const char* name, const std::string& where) const {
    LUMOS_ASSIGN_OR_RETURN(element value, Field(o, name, where));
    double x = 0;
    if (value.get_double().get(x) != simdjson::SUCCESS || !std::isfinite(x)) {
      return Error(where, std::string("\"") + name + "\" is not a number");
    }
    return x;
  }
  StatusOr<int64_t> Integer(element value, const std::string& where) const {
    int64_t x = 0;
    if (value.get_int64().get(x) != simdjson::SUCCESS) {
      return Error(where, "not an integer");
    }
    return x;
  }
  StatusOr<std::string> String(object o, const char* name, const std::string& where) const {
    LUMOS_ASSIGN_OR_RETURN(element value, Field(o, name, where));
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) {
      return Error(where, std::string("\"") + name + "\" is not a string");
    }
    return std::string(text);
  }
  StatusOr<std::vector<double>> Numbers(element value, size_t count,
                                        const std::string& where) const {
    array list;
    if (value.get_array().get(list) != simdjson::SUCCESS || list.size() != count) {
      return Error(where, "not an array of " + std::to_string(count) + " numbers");
    }
    std::vector<double> numbers;
    for (element e : list) {
      double x = 0;
      if (e.get_double().get(x) != simdjson::SUCCESS || !std::isfinite(x)) {
        return Error(where, "not an array of numbers");
      }
      numbers.push_back(x);
    }
    return numbers;
  }

  StatusOr<GemmCalibration> Calibration(element value, const std::string& where) const {
    object o;
    if (value.get_object().get(o) != simdjson::SUCCESS) return Error(where, "not an object");
    LUMOS_ASSIGN_OR_RETURN(std::string gpu, String(o, "gpu", where));
    LUMOS_ASSIGN_OR_RETURN(std::string dtype_name, String(o, "dtype", where));
    const std::optional<DType> dtype = ParseDType(dtype_name);
    if (!dtype) return Error(where, "unknown dtype '" + dtype_name + "'");
    RooflineSpec spec;
    LUMOS_ASSIGN_OR_RETURN(double sms, Number(o, "sms", where));
    spec.sms = static_cast<int>(sms);
    LUMOS_ASSIGN_OR_RETURN(spec.peak_flops_per_s, Number(o, "peak_flops_per_s", where));
    LUMOS_ASSIGN_OR_RETURN(spec.hbm_bytes_per_s, Number(o, "hbm_bytes_per_s", where));
    LUMOS_ASSIGN_OR_RETURN(double floor_ns, Number(o, "floor_ns", where));
    LUMOS_ASSIGN_OR_RETURN(element surface_value, Field(o, "surface", where));
    object surface_object;
    if (surface_value.get_object().get(surface_object) != simdjson::SUCCESS) {
      return Error(where, "\"surface\" is not an object");
    }
    EfficiencySurface surface;
    const std::string at = where + ".surface";
    LUMOS_ASSIGN_OR_RETURN(element coefficients, Field(surface_object, "coefficients", at));
    LUMOS_ASSIGN_OR_RETURN(std::vector<double> c,
                           Numbers(coefficients, kSurfaceTerms, at + ".coefficients"));
    for (int i = 0; i < kSurfaceTerms; ++i) surface.coefficients[i] = c[i];
    LUMOS_ASSIGN_OR_RETURN(element u_value, Field(surface_object, "u_range", at));
    LUMOS_ASSIGN_OR_RETURN(std::vector<double> u, Numbers(u_value, 2, at + ".u_range"));
    LUMOS_ASSIGN_OR_RETURN(element v_value, Field(surface_object, "v_range", at));
    LUMOS_ASSIGN_OR_RETURN(std::vector<double> v, Numbers(v_value, 2, at + ".v_range"));
    surface.u_min = u[0];
    surface.u_max = u[1];
    surface.v_min = v[0];
    surface.v_max = v[1];
    LUMOS_ASSIGN_OR_RETURN(element points_value, Field(o, "points", where));
    array list;
    if (points_value.get_array().get(list) != simdjson::SUCCESS) {
      return Error(where, "\"points\" is not an array");
    }
    std::vector<GemmPoint> points;
    points.reserve(list.size());
    size_t index = 0;
    for (element e : list) {
      const std::string point_at = where + ".points[" + std::to_string(index++) + "]";
      array fields;
      if (e.get_array().get(fields) != simdjson::SUCCESS || fields.size() != 4) {
        return Error(point_at, "not [m, n, k, latency_ns]");
      }
      int64_t x[4];
      int i = 0;
      for (element field : fields) {
        LUMOS_ASSIGN_OR_RETURN(x[i], Integer(field, point_at));
        ++i;
      }
      GemmPoint point{GemmShape{x[0], x[1], x[2], 1}, x[3]};
      Status shape = CheckGemmShape(point.shape);
      if (!shape.ok()) return Error(point_at, shape.message());
      if (point.latency_ns <= 0) return Error(point_at, "latency_ns must be > 0");
      points.push_back(point);
    }
    StatusOr<GemmCalibration> calibration =
        GemmCalibration::FromParts(std::move(gpu), *dtype, spec, std::move(points),
                                   static_cast<int64_t>(std::llround(floor_ns)), surface);
    if (!calibration.ok()) return Error(where, calibration.status().message());
    return calibration;
  }

  StatusOr<CollectiveCalibration> Collectives(element value, const std::string& where) const {
    object o;
    if (value.get_object().get(o) != simdjson::SUCCESS) return Error(where, "not an object");
    CollectiveCalibration c;
    LUMOS_ASSIGN_OR_RETURN(c.gpu, String(o, "gpu", where));
    LUMOS_ASSIGN_OR_RETURN(c.network, String(o, "network", where));
    LUMOS_ASSIGN_OR_RETURN(element model, Field(o, "model", where));
    StatusOr<CollectiveModel> read = ReadCollectiveModelJson(model);
    if (!read.ok()) return Error(where, read.status().message());
    c.model = std::move(*read);
    return c;
  }

 private:
  const std::string& path_;
};

}  // namespace

StatusOr<CostModel> ParseCostModel(std::string_view json, const std::string& path) {
  Reader reader(path);
  simdjson::dom::parser parser;
  element root;
  if (auto error = parser.parse(json.data(), json.size()).get(root); error) {
    return reader.Error("", std::string("not valid JSON (") + simdjson::error_message(error) + ")");
  }
  object o;
  std::string_view format;
  if (root.get_object().get(o) != simdjson::SUCCESS ||
      o["format"].get_string().get(format) != simdjson::SUCCESS || format != kCostModelFormat) {
    return reader.Error("", std::string("not a Lumos cost model (no \"format\": \"") +
                                kCostModelFormat + "\"; write one with lumos-model costs fit)");
  }
  int64_t version = 0;
  if (o["version"].get_int64().get(version) != simdjson::SUCCESS || version < 1) {
    return reader.Error("", "no valid \"version\"");
  }
  if (version > kCostModelVersion) {
    return reader.Error("", "model version " + std::to_string(version) +
                                " is newer than this lumos-model reads (" +
                                std::to_string(kCostModelVersion) + ")");
  }
  CostModel model;
  array inputs;
  if (o["inputs"].get_array().get(inputs) == simdjson::SUCCESS) {
    for (element e : inputs) {
      std::string_view input;
      if (e.get_string().get(input) == simdjson::SUCCESS) model.inputs.emplace_back(input);
    }
  }
  array gemm;
  if (o["gemm"].get_array().get(gemm) != simdjson::SUCCESS) {
    return reader.Error("", "no \"gemm\" array");
  }
  size_t index = 0;
  for (element e : gemm) {
    LUMOS_ASSIGN_OR_RETURN(GemmCalibration c,
                           reader.Calibration(e, "gemm[" + std::to_string(index++) + "]"));
    model.gemm.Add(std::move(c));
  }
  if (version >= 2) {
    array collectives;
    if (o["collectives"].get_array().get(collectives) != simdjson::SUCCESS) {
      return reader.Error("", "no \"collectives\" array");
    }
    index = 0;
    for (element e : collectives) {
      LUMOS_ASSIGN_OR_RETURN(CollectiveCalibration c,
                             reader.Collectives(e, "collectives[" + std::to_string(index++) + "]"));
      model.collectives.push_back(std::move(c));
    }
  }
  if (version >= 3) {
    element kernels;
    if (o["kernels"].get(kernels) != simdjson::SUCCESS) {
      return reader.Error("", "no \"kernels\" object");
    }
    StatusOr<KernelModel> read = ReadKernelModelJson(kernels);
    if (!read.ok()) return reader.Error("kernels", read.status().message());
    model.kernels = std::move(*read);
  }
  return model;
}

StatusOr<CostModel> ReadCostModel(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::string json, io::ReadTextFile(path));
  return ParseCostModel(json, path);
}

}  // namespace lumos::modeler::models
