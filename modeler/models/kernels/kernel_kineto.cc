#include "modeler/models/kernels/kernel_kineto.h"

#include <simdjson.h>

#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "modeler/io/byte_source.h"
#include "modeler/io/tar_reader.h"
#include "modeler/models/kernels/kernel_class.h"
#include "modeler/models/kernels/kernel_op_link.h"

namespace lumos::modeler::models {
namespace {

namespace dom = simdjson::dom;

std::optional<int64_t> Int(dom::element e) {
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) return i;
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e18) {
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

// µs (integer or fractional) → ns.
std::optional<int64_t> Nanos(dom::element e) {
  int64_t i = 0;
  if (e.get_int64().get(i) == simdjson::SUCCESS) {
    if (i > INT64_MAX / 1000 || i < INT64_MIN / 1000) return std::nullopt;
    return i * 1000;
  }
  double d = 0;
  if (e.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d) && std::fabs(d) < 9e15) {
    return std::llround(d * 1000);
  }
  return std::nullopt;
}

std::string_view Str(dom::object o, const char* key) {
  std::string_view s;
  if (o[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::optional<dom::element> Get(dom::object o, const char* key) {
  dom::element e;
  if (o[key].get(e) != simdjson::SUCCESS) return std::nullopt;
  return e;
}

// "Memcpy HtoD (Pinned -> Device)" → HtoD, pinned.
KernelKey CopyKey(std::string_view name, bool memset) {
  KernelKey key;
  if (memset) {
    key.kind = KernelClass::kMemset;
    return key;
  }
  key.kind = KernelClass::kMemcpy;
  key.copy = CopyKind::kDeviceToDevice;
  const std::pair<std::string_view, CopyKind> kinds[] = {{"HtoD", CopyKind::kHostToDevice},
                                                         {"DtoH", CopyKind::kDeviceToHost},
                                                         {"DtoD", CopyKind::kDeviceToDevice},
                                                         {"PtoP", CopyKind::kPeer},
                                                         {"HtoH", CopyKind::kHostToHost}};
  for (const auto& [text, kind] : kinds) {
    if (name.find(text) != std::string_view::npos) key.copy = kind;
  }
  key.pageable = name.find("Pageable") != std::string_view::npos;
  return key;
}

struct Launch {
  uint32_t tid = 0;
  int64_t start_ns = 0, end_ns = 0;
};

struct PendingRecord {
  KinetoGpuRecord record;
  std::optional<int64_t> correlation;
};

Status ParseTrace(const io::PaddedText& text, const std::string& source, KinetoKernelTrace* out) {
  dom::parser parser;
  dom::element doc;
  if (auto error = parser.parse(text.data(), text.size(), false).get(doc)) {
    return ErrorStatus("%s: not JSON (%s)", source.c_str(), simdjson::error_message(error));
  }
  dom::array events;
  if (doc["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    return ErrorStatus("%s: no traceEvents array: not a Kineto trace", source.c_str());
  }
  std::map<int64_t, std::string> devices;  // deviceProperties: id → name.
  dom::array properties;
  if (doc["deviceProperties"].get_array().get(properties) == simdjson::SUCCESS) {
    for (dom::element p : properties) {
      dom::object o;
      if (p.get_object().get(o) != simdjson::SUCCESS) continue;
      const std::optional<dom::element> id = Get(o, "id");
      std::optional<int64_t> n = id ? Int(*id) : std::nullopt;
      if (n) devices[*n] = std::string(Str(o, "name"));
    }
  }
  std::vector<dom::object> ops;                // cpu_op events.
  std::map<uint32_t, NestedRanges> op_ranges;  // Per thread.
  std::unordered_map<int64_t, Launch> launches;
  NestedRanges steps;
  std::vector<int64_t> step_numbers;
  std::vector<PendingRecord> pending;
  int64_t device_of_first = -1;
  for (dom::element e : events) {
    dom::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) continue;
    const std::string_view cat = Str(o, "cat");
    const std::string_view name = Str(o, "name");
    const std::optional<dom::element> ts = Get(o, "ts"), dur = Get(o, "dur");
    if (!ts || !dur) continue;
    const std::optional<int64_t> start = Nanos(*ts), length = Nanos(*dur);
    if (!start || !length || *length < 0) continue;
    // A plain value (GCC 12 sees an optional<int64_t> here as maybe uninitialised).
    int64_t tid_value = -1;
    if (const std::optional<dom::element> tid_e = Get(o, "tid")) {
      tid_value = Int(*tid_e).value_or(-1);
    }
    const bool has_tid = tid_value >= 0;
    const uint32_t tid = static_cast<uint32_t>(tid_value);
    dom::object args;
    const bool has_args = o["args"].get_object().get(args) == simdjson::SUCCESS;
    if (cat == "cpu_op") {
      if (!has_tid) continue;
      op_ranges[tid].Add(*start, *start + *length, static_cast<uint32_t>(ops.size()));
      ops.push_back(o);
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (!has_tid || !has_args) continue;
      const std::optional<dom::element> c = Get(args, "correlation");
      const std::optional<int64_t> correlation = c ? Int(*c) : std::nullopt;
      if (correlation) {
        launches[*correlation] = Launch{tid, *start, *start + *length};
      }
    } else if (cat == "user_annotation" && name.substr(0, 13) == "ProfilerStep#") {
      int64_t number = 0;
      for (char c : name.substr(13)) {
        if (c < '0' || c > '9' || number > INT64_MAX / 10 - 10) {
          number = -1;
          break;
        }
        number = number * 10 + (c - '0');
      }
      steps.Add(*start, *start + *length, static_cast<uint32_t>(step_numbers.size()));
      step_numbers.push_back(number);
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      PendingRecord p;
      p.record.name = std::string(name);
      p.record.start_ns = *start;
      p.record.duration_ns = *length;
      if (has_args) {
        const std::optional<dom::element> c = Get(args, "correlation");
        p.correlation = c ? Int(*c) : std::nullopt;
        const std::optional<dom::element> b = Get(args, "bytes");
        const std::optional<int64_t> bytes = b ? Int(*b) : std::nullopt;
        if (bytes && *bytes > 0) p.record.bytes = static_cast<uint64_t>(*bytes);
        const std::optional<dom::element> d = Get(args, "device");
        const std::optional<int64_t> device = d ? Int(*d) : std::nullopt;
        if (device && device_of_first < 0) device_of_first = *device;
      }
      if (cat == "kernel") {
        p.record.key.kind = KernelClass::kOther;  // Classified once its op is known.
      } else {
        p.record.key = CopyKey(name, cat == "gpu_memset");
      }
      pending.push_back(std::move(p));
    }
  }
  for (auto& [tid, ranges] : op_ranges) ranges.Build();
  steps.Build();
  // Records → launches → ops; the ops kept are the linked ones only.
  std::unordered_map<uint32_t, int32_t> kept;  // Index in `ops` → index in out->ops.
  out->records.reserve(pending.size());
  for (PendingRecord& p : pending) {
    KinetoGpuRecord& r = p.record;
    const auto launch = p.correlation ? launches.find(*p.correlation) : launches.end();
    if (launch != launches.end()) {
      const Launch& l = launch->second;
      const int64_t step = steps.Innermost(l.start_ns, l.start_ns);
      if (step >= 0) r.step = step_numbers[static_cast<size_t>(step)];
      const auto ranges = op_ranges.find(l.tid);
      const int64_t op =
          ranges == op_ranges.end() ? -1 : ranges->second.Innermost(l.start_ns, l.end_ns);
      if (op >= 0) {
        const auto [it, added] =
            kept.emplace(static_cast<uint32_t>(op), static_cast<int32_t>(out->ops.size()));
        if (added) {
          KinetoOp kop;
          const dom::object o = ops[static_cast<size_t>(op)];
          kop.name = std::string(Str(o, "name"));
          dom::object args;
          dom::array dims, types;
          if (o["args"].get_object().get(args) == simdjson::SUCCESS &&
              args["Input Dims"].get_array().get(dims) == simdjson::SUCCESS &&
              args["Input type"].get_array().get(types) == simdjson::SUCCESS &&
              dims.size() == types.size()) {
            kop.has_shapes = true;
            auto type = types.begin();
            for (dom::element d : dims) {
              OpInput in;
              std::string_view t;
              if ((*type).get_string().get(t) == simdjson::SUCCESS) in.type = std::string(t);
              ++type;
              dom::array sizes;
              if (d.get_array().get(sizes) == simdjson::SUCCESS) {
                for (dom::element s : sizes) {
                  const std::optional<int64_t> n = Int(s);
                  if (!n) {
                    in.type.clear();  // Not a plain shape: not a tensor we can count.
                    break;
                  }
                  in.dims.push_back(*n);
                }
              } else {
                in.type.clear();
              }
              kop.inputs.push_back(std::move(in));
            }
          }
          out->ops.push_back(std::move(kop));
        }
        r.op = it->second;
        ++out->ops[static_cast<size_t>(r.op)].gpu_records;
      }
    }
    if (r.key.kind == KernelClass::kOther) {
      r.key.kind = ClassifyKernel(
          r.name, r.op >= 0 ? std::string_view(out->ops[static_cast<size_t>(r.op)].name)
                            : std::string_view());
      if (r.key.kind == KernelClass::kMemcpy) r.key.copy = CopyKind::kDeviceToDevice;
    }
    out->records.push_back(std::move(r));
  }
  const auto device = devices.find(device_of_first);
  if (device != devices.end()) out->device = device->second;
  return Status::Ok();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

StatusOr<std::vector<KinetoKernelTrace>> ReadKinetoKernels(const std::string& path) {
  LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<io::ByteSource> source, io::OpenByteSource(path));
  std::string head(io::kTarBlock, '\0');
  LUMOS_ASSIGN_OR_RETURN(size_t n, io::ReadFully(source.get(), head.data(), head.size()));
  head.resize(n);
  std::vector<KinetoKernelTrace> traces;
  io::PaddedText text;
  if (n != io::kTarBlock || !io::IsTarHeader(head.data())) {
    text.Append(head.data(), head.size());
    LUMOS_RETURN_IF_ERROR(io::ReadRest(source.get(), &text));
    KinetoKernelTrace trace;
    trace.source = path;
    LUMOS_RETURN_IF_ERROR(ParseTrace(text, path, &trace));
    traces.push_back(std::move(trace));
    return traces;
  }
  io::TarReader reader(source.get(), std::move(head));
  io::TarEntry entry;
  io::PaddedText member;
  while (true) {
    LUMOS_ASSIGN_OR_RETURN(bool more, reader.Next(&entry));
    if (!more) break;
    if (!EndsWith(entry.name, ".json") && !EndsWith(entry.name, ".json.gz")) continue;
    KinetoKernelTrace trace;
    trace.source = path + ":" + entry.name;
    text.Resize(0);
    if (EndsWith(entry.name, ".gz")) {
      LUMOS_RETURN_IF_ERROR(reader.ReadBody(&member));
      LUMOS_RETURN_IF_ERROR(io::GunzipBuffer(member.data(), member.size(), trace.source, &text));
    } else {
      LUMOS_RETURN_IF_ERROR(reader.ReadBody(&text));
    }
    LUMOS_RETURN_IF_ERROR(ParseTrace(text, trace.source, &trace));
    traces.push_back(std::move(trace));
  }
  if (traces.empty()) return ErrorStatus("%s: the archive holds no .json trace", path.c_str());
  return traces;
}

std::optional<KernelWork> RecordWork(const KinetoKernelTrace& trace, const KinetoGpuRecord& r) {
  if (r.key.kind == KernelClass::kMemcpy || r.key.kind == KernelClass::kMemset) {
    if (r.bytes == 0) return std::nullopt;
    return KernelWork{0, static_cast<double>(r.bytes)};
  }
  if (r.op < 0) return std::nullopt;
  const KinetoOp& op = trace.ops[static_cast<size_t>(r.op)];
  if (!op.has_shapes || op.gpu_records != 1) return std::nullopt;
  return OpWork(op.name, op.inputs, r.key.kind);
}

}  // namespace lumos::modeler::models
