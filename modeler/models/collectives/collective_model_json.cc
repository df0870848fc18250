// The collective model as JSON; see collective_model_json.h.
#include "modeler/models/collectives/collective_model_json.h"

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

namespace lumos::modeler::models {
namespace {

namespace dom = ::simdjson::dom;
using io::JsonWriter;

constexpr int kDecimals = 6;
constexpr std::string_view kFormat = "lumos-collective-model";
constexpr const char* kProtocolKeys[kProtocols] = {"LL", "LL128", "Simple"};

void WriteFabric(const CollectiveFabric& f, JsonWriter* w) {
  w->BeginObject();
  w->KeyString("name", f.name);
  w->KeyUint("gpus_per_node", f.gpus_per_node);
  w->Key("intra_bandwidth_gbps");
  w->Fixed(f.intra_bandwidth_gbps, kDecimals);
  w->Key("intra_latency_us");
  w->Fixed(f.intra_latency_us, kDecimals);
  w->Key("inter_bandwidth_gbps");
  w->Fixed(f.inter_bandwidth_gbps, kDecimals);
  w->Key("inter_latency_us");
  w->Fixed(f.inter_latency_us, kDecimals);
  w->KeyBool("nvls", f.nvls);
  w->KeyBool("collnet", f.collnet);
  w->Key("gpu_clock_mhz");
  w->Fixed(f.gpu_clock_mhz, kDecimals);
  w->Key("memory_bandwidth_gbps");
  w->Fixed(f.memory_bandwidth_gbps, kDecimals);
  w->KeyUint("compute_capability", f.compute_capability);
  w->EndObject();
}

void WriteOperation(const OperationCost& op, JsonWriter* w) {
  w->BeginObject();
  w->KeyUint("points", op.points);
  w->Key("rank_counts");
  w->BeginArray();
  for (uint32_t r : op.rank_counts) w->Uint(r);
  w->EndArray();
  w->KeyUint("min_bytes", op.min_bytes);
  w->KeyUint("max_bytes", op.max_bytes);
  w->Key("rms_error");
  w->Fixed(op.rms_error, kDecimals);
  w->Key("protocols");
  w->BeginObject();
  for (int p = 0; p < kProtocols; ++p) {
    const ProtocolCost& c = op.protocol[p];
    w->Key(kProtocolKeys[p]);
    w->BeginObject();
    w->Key("base_ns");
    w->Fixed(c.base_ns, kDecimals);
    w->Key("step_ns");
    w->Fixed(c.step_ns, kDecimals);
    w->Key("local_ps_per_byte");
    w->Fixed(c.local_ps_per_byte, kDecimals);
    w->Key("link_ps_per_byte");
    w->Fixed(c.link_ps_per_byte, kDecimals);
    w->KeyUint("points", c.points);
    w->EndObject();
  }
  w->EndObject();
  w->Key("nvls");
  w->BeginObject();
  w->Key("base_ns");
  w->Fixed(op.nvls.base_ns, kDecimals);
  w->Key("efficiency");
  w->Fixed(op.nvls.efficiency, kDecimals);
  w->KeyUint("points", op.nvls.points);
  w->EndObject();
  w->EndObject();
}

// Reading: each getter names the JSON path of what is wrong.
class Reader {
 public:
  Status Object(const dom::element& e, const std::string& path, dom::object* out) {
    if (e.get_object().get(*out) != simdjson::SUCCESS) return Error(path, "is not an object");
    return Status::Ok();
  }
  Status Field(const dom::object& o, const std::string& path, std::string_view key,
               dom::element* out) {
    if (o.at_key(key).get(*out) != simdjson::SUCCESS) {
      return Error(path, "has no '" + std::string(key) + "'");
    }
    return Status::Ok();
  }
  Status Double(const dom::object& o, const std::string& path, std::string_view key, double* out) {
    dom::element e;
    LUMOS_RETURN_IF_ERROR(Field(o, path, key, &e));
    if (e.get_double().get(*out) != simdjson::SUCCESS || !std::isfinite(*out)) {
      return Error(path, std::string(key) + " is not a number");
    }
    return Status::Ok();
  }
  Status NonNegative(const dom::object& o, const std::string& path, std::string_view key,
                     double* out) {
    LUMOS_RETURN_IF_ERROR(Double(o, path, key, out));
    if (*out < 0) return Error(path, std::string(key) + " is negative");
    return Status::Ok();
  }
  template <typename T>
  Status Uint(const dom::object& o, const std::string& path, std::string_view key, T* out) {
    dom::element e;
    LUMOS_RETURN_IF_ERROR(Field(o, path, key, &e));
    uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS || v > static_cast<uint64_t>(T(~T(0)))) {
      return Error(path, std::string(key) + " is not a count");
    }
    *out = static_cast<T>(v);
    return Status::Ok();
  }
  Status Bool(const dom::object& o, const std::string& path, std::string_view key, bool* out) {
    dom::element e;
    LUMOS_RETURN_IF_ERROR(Field(o, path, key, &e));
    if (e.get_bool().get(*out) != simdjson::SUCCESS) {
      return Error(path, std::string(key) + " is not true or false");
    }
    return Status::Ok();
  }
  Status String(const dom::object& o, const std::string& path, std::string_view key,
                std::string_view* out) {
    dom::element e;
    LUMOS_RETURN_IF_ERROR(Field(o, path, key, &e));
    if (e.get_string().get(*out) != simdjson::SUCCESS) {
      return Error(path, std::string(key) + " is not a string");
    }
    return Status::Ok();
  }
  static Status Error(const std::string& path, const std::string& what) {
    return Status::Error("collective model: " + (path.empty() ? "the document" : path) + ": " +
                         what);
  }
};

Status ReadFabric(Reader& r, const dom::object& root, CollectiveFabric* f) {
  dom::element e;
  dom::object o;
  const std::string path = "fabric";
  LUMOS_RETURN_IF_ERROR(r.Field(root, "", "fabric", &e));
  LUMOS_RETURN_IF_ERROR(r.Object(e, path, &o));
  std::string_view name;
  LUMOS_RETURN_IF_ERROR(r.String(o, path, "name", &name));
  f->name = std::string(name);
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "gpus_per_node", &f->gpus_per_node));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "intra_bandwidth_gbps", &f->intra_bandwidth_gbps));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "intra_latency_us", &f->intra_latency_us));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "inter_bandwidth_gbps", &f->inter_bandwidth_gbps));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "inter_latency_us", &f->inter_latency_us));
  LUMOS_RETURN_IF_ERROR(r.Bool(o, path, "nvls", &f->nvls));
  LUMOS_RETURN_IF_ERROR(r.Bool(o, path, "collnet", &f->collnet));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "gpu_clock_mhz", &f->gpu_clock_mhz));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "memory_bandwidth_gbps", &f->memory_bandwidth_gbps));
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "compute_capability", &f->compute_capability));
  if (f->gpus_per_node == 0 || !(f->intra_bandwidth_gbps > 0)) {
    return Reader::Error(path, "gpus_per_node and intra_bandwidth_gbps must be > 0");
  }
  return Status::Ok();
}

Status ReadOperation(Reader& r, const dom::object& o, const std::string& path, OperationCost* op) {
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "points", &op->points));
  dom::element e;
  LUMOS_RETURN_IF_ERROR(r.Field(o, path, "rank_counts", &e));
  dom::array ranks;
  if (e.get_array().get(ranks) != simdjson::SUCCESS) {
    return Reader::Error(path, "rank_counts is not an array");
  }
  for (dom::element v : ranks) {
    uint64_t n = 0;
    if (v.get_uint64().get(n) != simdjson::SUCCESS || n == 0 || n > UINT32_MAX) {
      return Reader::Error(path, "rank_counts holds something that is not a rank count");
    }
    op->rank_counts.push_back(static_cast<uint32_t>(n));
  }
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "min_bytes", &op->min_bytes));
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "max_bytes", &op->max_bytes));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(o, path, "rms_error", &op->rms_error));
  dom::object protocols;
  LUMOS_RETURN_IF_ERROR(r.Field(o, path, "protocols", &e));
  LUMOS_RETURN_IF_ERROR(r.Object(e, path + ".protocols", &protocols));
  for (int p = 0; p < kProtocols; ++p) {
    const std::string at = path + ".protocols." + kProtocolKeys[p];
    dom::object c;
    LUMOS_RETURN_IF_ERROR(r.Field(protocols, path + ".protocols", kProtocolKeys[p], &e));
    LUMOS_RETURN_IF_ERROR(r.Object(e, at, &c));
    ProtocolCost& cost = op->protocol[p];
    LUMOS_RETURN_IF_ERROR(r.NonNegative(c, at, "base_ns", &cost.base_ns));
    LUMOS_RETURN_IF_ERROR(r.NonNegative(c, at, "step_ns", &cost.step_ns));
    LUMOS_RETURN_IF_ERROR(r.NonNegative(c, at, "local_ps_per_byte", &cost.local_ps_per_byte));
    LUMOS_RETURN_IF_ERROR(r.NonNegative(c, at, "link_ps_per_byte", &cost.link_ps_per_byte));
    LUMOS_RETURN_IF_ERROR(r.Uint(c, at, "points", &cost.points));
  }
  dom::object nvls;
  LUMOS_RETURN_IF_ERROR(r.Field(o, path, "nvls", &e));
  LUMOS_RETURN_IF_ERROR(r.Object(e, path + ".nvls", &nvls));
  LUMOS_RETURN_IF_ERROR(r.NonNegative(nvls, path + ".nvls", "base_ns", &op->nvls.base_ns));
  LUMOS_RETURN_IF_ERROR(r.Double(nvls, path + ".nvls", "efficiency", &op->nvls.efficiency));
  if (!(op->nvls.efficiency > 0)) return Reader::Error(path + ".nvls", "efficiency must be > 0");
  LUMOS_RETURN_IF_ERROR(r.Uint(nvls, path + ".nvls", "points", &op->nvls.points));
  return Status::Ok();
}

Status ReadMeasurement(Reader& r, const dom::element& e, const std::string& path, size_t origins,
                       CollectiveMeasurement* m) {
  dom::object o;
  LUMOS_RETURN_IF_ERROR(r.Object(e, path, &o));
  std::string_view name;
  LUMOS_RETURN_IF_ERROR(r.String(o, path, "op", &name));
  const std::optional<CollectiveClass> op = ClassFromName(name);
  if (!op) return Reader::Error(path, "unknown op '" + std::string(name) + "'");
  m->op = *op;
  LUMOS_RETURN_IF_ERROR(r.String(o, path, "dtype", &name));
  const std::optional<schema::DataType> type = DataTypeFromName(name);
  if (!type) return Reader::Error(path, "unknown dtype '" + std::string(name) + "'");
  m->data_type = *type;
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "ranks", &m->ranks));
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "nodes", &m->nodes));
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "bytes", &m->bytes));
  uint64_t time_ns = 0;
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "time_ns", &time_ns));
  if (m->ranks == 0 || m->nodes == 0 || m->nodes > m->ranks || m->bytes == 0 || time_ns == 0 ||
      time_ns > INT64_MAX) {
    return Reader::Error(path, "ranks, nodes, bytes and time_ns must be > 0, nodes <= ranks");
  }
  m->time_ns = static_cast<int64_t>(time_ns);
  LUMOS_RETURN_IF_ERROR(r.String(o, path, "algorithm", &name));
  const std::optional<schema::NcclAlgorithm> algorithm = AlgorithmFromName(name);
  if (!algorithm) return Reader::Error(path, "unknown algorithm '" + std::string(name) + "'");
  m->algorithm = *algorithm;
  LUMOS_RETURN_IF_ERROR(r.String(o, path, "protocol", &name));
  const std::optional<schema::NcclProtocol> protocol = ProtocolFromName(name);
  if (!protocol) return Reader::Error(path, "unknown protocol '" + std::string(name) + "'");
  m->protocol = *protocol;
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "origin", &m->origin));
  if (m->origin >= origins) return Reader::Error(path, "origin names no origin");
  LUMOS_RETURN_IF_ERROR(r.Uint(o, path, "repeats", &m->repeats));
  return Status::Ok();
}

}  // namespace

void WriteCollectiveModelJson(const CollectiveModel& model, JsonWriter* w) {
  w->BeginObject();
  w->KeyString("format", kFormat);
  w->KeyInt("version", kCollectiveModelVersion);
  w->Key("fabric");
  WriteFabric(model.fabric, w);
  w->Key("operations");
  w->BeginObject(/*one_per_line=*/true);
  for (int c = 0; c < kCollectiveClasses; ++c) {
    w->Key(ClassName(static_cast<CollectiveClass>(c)));
    WriteOperation(model.ops[c], w);
  }
  w->EndObject();
  w->Key("origins");
  w->BeginArray();
  for (const std::string& o : model.origins) w->String(o);
  w->EndArray();
  w->Key("measurements");
  w->BeginArray(/*one_per_line=*/true);
  for (const CollectiveMeasurement& m : model.measurements) {
    w->BeginObject();
    w->KeyString("op", ClassName(m.op));
    w->KeyString("dtype", DataTypeName(m.data_type));
    w->KeyUint("ranks", m.ranks);
    w->KeyUint("nodes", m.nodes);
    w->KeyUint("bytes", m.bytes);
    w->KeyInt("time_ns", m.time_ns);
    w->KeyString("algorithm", AlgorithmName(m.algorithm));
    w->KeyString("protocol", ProtocolName(m.protocol));
    w->KeyUint("origin", m.origin);
    w->KeyUint("repeats", m.repeats);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

std::string CollectiveModelJson(const CollectiveModel& model) {
  std::string out;
  JsonWriter w([&out](std::string_view chunk) {
    out.append(chunk);
    return Status::Ok();
  });
  WriteCollectiveModelJson(model, &w);
  w.Raw("\n");
  w.Finish().IgnoreError();  // The sink cannot fail.
  return out;
}

StatusOr<CollectiveModel> ReadCollectiveModelJson(const dom::element& value) {
  Reader r;
  dom::object root;
  LUMOS_RETURN_IF_ERROR(r.Object(value, "", &root));
  std::string_view format;
  LUMOS_RETURN_IF_ERROR(r.String(root, "", "format", &format));
  if (format != kFormat) {
    return Reader::Error(
        "", "format is '" + std::string(format) + "', not '" + std::string(kFormat) + "'");
  }
  uint64_t version = 0;
  LUMOS_RETURN_IF_ERROR(r.Uint(root, "", "version", &version));
  if (version == 0 || version > static_cast<uint64_t>(kCollectiveModelVersion)) {
    return Reader::Error("", "version " + std::to_string(version) +
                                 " is not one this lumos-model reads (1 to " +
                                 std::to_string(kCollectiveModelVersion) + ")");
  }
  CollectiveModel model;
  LUMOS_RETURN_IF_ERROR(ReadFabric(r, root, &model.fabric));
  dom::element e;
  dom::object operations;
  LUMOS_RETURN_IF_ERROR(r.Field(root, "", "operations", &e));
  LUMOS_RETURN_IF_ERROR(r.Object(e, "operations", &operations));
  for (int c = 0; c < kCollectiveClasses; ++c) {
    const char* name = ClassName(static_cast<CollectiveClass>(c));
    const std::string path = std::string("operations.") + name;
    dom::object o;
    LUMOS_RETURN_IF_ERROR(r.Field(operations, "operations", name, &e));
    LUMOS_RETURN_IF_ERROR(r.Object(e, path, &o));
    LUMOS_RETURN_IF_ERROR(ReadOperation(r, o, path, &model.ops[c]));
  }
  dom::array list;
  LUMOS_RETURN_IF_ERROR(r.Field(root, "", "origins", &e));
  if (e.get_array().get(list) != simdjson::SUCCESS) {
    return Reader::Error("origins", "is not an array");
  }
  for (dom::element v : list) {
    std::string_view s;
    if (v.get_string().get(s) != simdjson::SUCCESS) {
      return Reader::Error("origins", "holds something that is not a string");
    }
    model.origins.emplace_back(s);
  }
  LUMOS_RETURN_IF_ERROR(r.Field(root, "", "measurements", &e));
  if (e.get_array().get(list) != simdjson::SUCCESS) {
    return Reader::Error("measurements", "is not an array");
  }
  size_t i = 0;
  for (dom::element v : list) {
    CollectiveMeasurement m;
    LUMOS_RETURN_IF_ERROR(
        ReadMeasurement(r, v, "measurements[" + std::to_string(i) + "]", model.origins.size(), &m));
    if (!model.measurements.empty()) {
      const CollectiveMeasurement& prev = model.measurements.back();
      if (std::tie(prev.op, prev.data_type, prev.ranks, prev.nodes, prev.bytes) >=
          std::tie(m.op, m.data_type, m.ranks, m.nodes, m.bytes)) {
        return Reader::Error("measurements[" + std::to_string(i) + "]",
                             "is not after the one before it (op, dtype, ranks, nodes, bytes)");
      }
    }
    model.measurements.push_back(m);
    ++i;
  }
  return model;
}

StatusOr<CollectiveModel> ParseCollectiveModelJson(std::string_view text) {
  dom::parser parser;
  dom::element doc;
  const simdjson::padded_string padded(text);
  if (const auto error = parser.parse(padded).get(doc); error != simdjson::SUCCESS) {
    return Status::Error(std::string("collective model: not JSON: ") +
                         simdjson::error_message(error));
  }
  return ReadCollectiveModelJson(doc);
}

}  // namespace lumos::modeler::models
