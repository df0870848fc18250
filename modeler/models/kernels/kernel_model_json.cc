#include "modeler/models/kernels/kernel_model_json.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "modeler/models/kernels/kernel_class.h"

namespace lumos::modeler::models {
namespace {

namespace dom = simdjson::dom;
using io::JsonWriter;

Status Error(const std::string& path, const std::string& what) {
  return Status::Error("kernel model: " + path + ": " + what);
}

StatusOr<dom::element> Field(dom::object o, const std::string& path, const char* key) {
  dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS) return Error(path, std::string("no \"") + key + "\"");
  return e;
}

StatusOr<double> Number(dom::object o, const std::string& path, const char* key) {
  LUMOS_ASSIGN_OR_RETURN(dom::element e, Field(o, path, key));
  double x = 0;
  if (e.get_double().get(x) != simdjson::SUCCESS || !std::isfinite(x)) {
    return Error(path + "." + key, "not a number");
  }
  return x;
}

StatusOr<int64_t> Integer(dom::object o, const std::string& path, const char* key) {
  LUMOS_ASSIGN_OR_RETURN(dom::element e, Field(o, path, key));
  int64_t x = 0;
  if (e.get_int64().get(x) != simdjson::SUCCESS) return Error(path + "." + key, "not an integer");
  return x;
}

StatusOr<std::string_view> Text(dom::object o, const std::string& path, const char* key) {
  LUMOS_ASSIGN_OR_RETURN(dom::element e, Field(o, path, key));
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return Error(path + "." + key, "not a string");
  return s;
}

StatusOr<KernelCalibration> ReadCalibration(dom::element value, const std::string& path) {
  dom::object o;
  if (value.get_object().get(o) != simdjson::SUCCESS) return Error(path, "not an object");
  LUMOS_ASSIGN_OR_RETURN(std::string_view gpu, Text(o, path, "gpu"));
  LUMOS_ASSIGN_OR_RETURN(std::string_view class_name, Text(o, path, "class"));
  LUMOS_ASSIGN_OR_RETURN(std::string_view copy_name, Text(o, path, "copy"));
  LUMOS_ASSIGN_OR_RETURN(std::string_view dtype_name, Text(o, path, "dtype"));
  KernelKey key;
  const std::optional<KernelClass> kind = KernelClassFromName(class_name);
  if (!kind) return Error(path + ".class", "unknown class '" + std::string(class_name) + "'");
  key.kind = *kind;
  const std::optional<CopyKind> copy = CopyKindFromName(copy_name);
  if (!copy) return Error(path + ".copy", "unknown copy kind '" + std::string(copy_name) + "'");
  key.copy = *copy;
  LUMOS_ASSIGN_OR_RETURN(dom::element pageable, Field(o, path, "pageable"));
  if (pageable.get_bool().get(key.pageable) != simdjson::SUCCESS) {
    return Error(path + ".pageable", "not true or false");
  }
  const std::optional<DType> dtype = ParseDType(dtype_name);
  if (!dtype) return Error(path + ".dtype", "unknown dtype '" + std::string(dtype_name) + "'");
  LUMOS_ASSIGN_OR_RETURN(dom::element roofline_e, Field(o, path, "roofline"));
  dom::object r;
  const std::string rpath = path + ".roofline";
  if (roofline_e.get_object().get(r) != simdjson::SUCCESS) return Error(rpath, "not an object");
  KernelRooflineSpec spec;
  LUMOS_ASSIGN_OR_RETURN(spec.vector_flops_per_s, Number(r, rpath, "vector_flops_per_s"));
  LUMOS_ASSIGN_OR_RETURN(spec.matrix_flops_per_s, Number(r, rpath, "matrix_flops_per_s"));
  LUMOS_ASSIGN_OR_RETURN(spec.hbm_bytes_per_s, Number(r, rpath, "hbm_bytes_per_s"));
  LUMOS_ASSIGN_OR_RETURN(spec.host_bytes_per_s, Number(r, rpath, "host_bytes_per_s"));
  LUMOS_ASSIGN_OR_RETURN(spec.peer_bytes_per_s, Number(r, rpath, "peer_bytes_per_s"));
  LUMOS_ASSIGN_OR_RETURN(double efficiency, Number(o, path, "efficiency"));
  LUMOS_ASSIGN_OR_RETURN(int64_t floor_ns, Integer(o, path, "floor_ns"));
  LUMOS_ASSIGN_OR_RETURN(int64_t kernels, Integer(o, path, "kernels"));
  if (kernels < 0 || kernels > UINT32_MAX) return Error(path + ".kernels", "out of range");
  LUMOS_ASSIGN_OR_RETURN(double median_error, Number(o, path, "median_error"));
  StatusOr<KernelCalibration> c =
      KernelCalibration::FromParts(std::string(gpu), key, *dtype, spec, efficiency, floor_ns,
                                   static_cast<uint32_t>(kernels), median_error);
  if (!c.ok()) return Error(path, c.status().message());
  return c;
}

}  // namespace

void WriteKernelModelJson(const KernelModel& model, JsonWriter* w) {
  w->BeginObject();
  w->KeyString("format", kKernelModelFormat);
  w->KeyInt("version", kKernelModelVersion);
  w->Key("calibrations");
  w->BeginArray(/*one_per_line=*/true);
  for (const KernelCalibration& c : model.calibrations()) {
    w->BeginObject();
    w->KeyString("gpu", c.gpu());
    w->KeyString("class", KernelClassName(c.key().kind));
    w->KeyString("copy", CopyKindName(c.key().copy));
    w->KeyBool("pageable", c.key().pageable);
    w->KeyString("dtype", DTypeName(c.dtype()));
    w->Key("roofline");
    w->BeginObject();
    const KernelRooflineSpec& s = c.spec();
    const std::pair<const char*, double> figures[] = {{"vector_flops_per_s", s.vector_flops_per_s},
                                                      {"matrix_flops_per_s", s.matrix_flops_per_s},
                                                      {"hbm_bytes_per_s", s.hbm_bytes_per_s},
                                                      {"host_bytes_per_s", s.host_bytes_per_s},
                                                      {"peer_bytes_per_s", s.peer_bytes_per_s}};
    for (const auto& [key, value] : figures) {
      w->Key(key);
      w->Fixed(value, 0);
    }
    w->EndObject();
    w->Key("efficiency");
    w->Fixed(c.efficiency(), 9);
    w->KeyInt("floor_ns", c.floor_ns());
    w->KeyInt("kernels", c.kernels());
    w->Key("median_error");
    w->Fixed(c.median_error(), 6);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

std::string KernelModelJson(const KernelModel& model) {
  std::string out;
  JsonWriter w([&out](std::string_view chunk) {
    out.append(chunk);
    return Status::Ok();
  });
  WriteKernelModelJson(model, &w);
  w.Raw("\n");
  w.Finish().IgnoreError();  // The sink cannot fail.
  return out;
}

StatusOr<KernelModel> ReadKernelModelJson(const dom::element& value) {
  dom::object root;
  if (value.get_object().get(root) != simdjson::SUCCESS) return Error("(root)", "not an object");
  LUMOS_ASSIGN_OR_RETURN(std::string_view format, Text(root, "(root)", "format"));
  if (format != kKernelModelFormat) {
    return Error("format", "'" + std::string(format) + "', not '" + kKernelModelFormat + "'");
  }
  LUMOS_ASSIGN_OR_RETURN(int64_t version, Integer(root, "(root)", "version"));
  if (version < 1 || version > kKernelModelVersion) {
    return Error("version", std::to_string(version) + " is not one this lumos-model reads (1 to " +
                                std::to_string(kKernelModelVersion) + ")");
  }
  LUMOS_ASSIGN_OR_RETURN(dom::element list_e, Field(root, "(root)", "calibrations"));
  dom::array list;
  if (list_e.get_array().get(list) != simdjson::SUCCESS) {
    return Error("calibrations", "not an array");
  }
  KernelModel model;
  size_t i = 0;
  for (dom::element e : list) {
    const std::string path = "calibrations[" + std::to_string(i++) + "]";
    LUMOS_ASSIGN_OR_RETURN(KernelCalibration c, ReadCalibration(e, path));
    if (model.Find(c.gpu(), c.key()) >= 0) {
      return Error(path, "a second calibration of " + KeyName(c.key()) + " on " + c.gpu());
    }
    model.Add(std::move(c));
  }
  return model;
}

StatusOr<KernelModel> ParseKernelModelJson(std::string_view text) {
  dom::parser parser;
  dom::element doc;
  const simdjson::padded_string padded(text);
  if (const auto error = parser.parse(padded).get(doc); error != simdjson::SUCCESS) {
    return Status::Error(std::string("kernel model: not JSON: ") + simdjson::error_message(error));
  }
  return ReadKernelModelJson(doc);
}

}  // namespace lumos::modeler::models
