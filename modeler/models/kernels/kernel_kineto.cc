#include "modeler/models/kernels/kernel_kineto.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "base/memory_budget.h"
#include "modeler/io/byte_source.h"
#include "modeler/io/kineto_stream.h"
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

// An operator as read: its shapes taken from the event at once, since the document is not
// kept (io/kineto_stream.h); only those a GPU record links to become KinetoOps.
struct OpCandidate {
  std::string_view name;  // Interned in TraceEvents::names_.
  bool has_shapes = false;
  std::vector<OpInput> inputs;
};

// What one trace keeps, event by event: the operators' spans and shapes, the launches, the
// profiler steps and the GPU records. Memory follows these, not the document's text.
class TraceEvents {
 public:
  // A rough size of what is kept an event (a record's name and key, a launch's map entry, an
  // operator's shapes), to refuse a trace past the memory budget before it takes it all.
  static constexpr uint64_t kBytesPerKeptEvent = 256;

  void AddDeviceProperties(dom::object members);
  void AddEvent(dom::object o);
  size_t kept() const { return ops_.size() + launches_.size() + pending_.size(); }
  // Links records → launches → ops and classifies the kernels.
  void Finish(KinetoKernelTrace* out);

 private:
  std::string_view Intern(std::string_view s) { return *names_.emplace(s).first; }
  OpCandidate ReadOp(std::string_view name, dom::object o);

  std::unordered_set<std::string> names_;
  std::map<int64_t, std::string> devices_;      // deviceProperties: id → name.
  std::vector<OpCandidate> ops_;                // cpu_op events.
  std::map<uint32_t, NestedRanges> op_ranges_;  // Per thread.
  std::unordered_map<int64_t, Launch> launches_;
  NestedRanges steps_;
  std::vector<int64_t> step_numbers_;
  std::vector<PendingRecord> pending_;
  int64_t device_of_first_ = -1;
};

void TraceEvents::AddDeviceProperties(dom::object members) {
  dom::array properties;
  if (members["deviceProperties"].get_array().get(properties) != simdjson::SUCCESS) return;
  for (dom::element p : properties) {
    dom::object o;
    if (p.get_object().get(o) != simdjson::SUCCESS) continue;
    const std::optional<dom::element> id = Get(o, "id");
    std::optional<int64_t> n = id ? Int(*id) : std::nullopt;
    if (n) devices_[*n] = std::string(Str(o, "name"));
  }
}

OpCandidate TraceEvents::ReadOp(std::string_view name, dom::object o) {
  OpCandidate op;
  op.name = Intern(name);
  dom::object args;
  dom::array dims, types;
  if (o["args"].get_object().get(args) != simdjson::SUCCESS ||
      args["Input Dims"].get_array().get(dims) != simdjson::SUCCESS ||
      args["Input type"].get_array().get(types) != simdjson::SUCCESS ||
      dims.size() != types.size()) {
    return op;
  }
  op.has_shapes = true;
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
    op.inputs.push_back(std::move(in));
  }
  return op;
}

void TraceEvents::AddEvent(dom::object o) {
  const std::string_view cat = Str(o, "cat");
  const std::string_view name = Str(o, "name");
  const std::optional<dom::element> ts = Get(o, "ts"), dur = Get(o, "dur");
  if (!ts || !dur) return;
  const std::optional<int64_t> start = Nanos(*ts), length = Nanos(*dur);
  int64_t end = 0;
  if (!start || !length || *length < 0 || __builtin_add_overflow(*start, *length, &end)) return;
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
    if (!has_tid) return;
    op_ranges_[tid].Add(*start, end, static_cast<uint32_t>(ops_.size()));
    ops_.push_back(ReadOp(name, o));
  } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
    if (!has_tid || !has_args) return;
    const std::optional<dom::element> c = Get(args, "correlation");
    const std::optional<int64_t> correlation = c ? Int(*c) : std::nullopt;
    if (correlation) launches_[*correlation] = Launch{tid, *start, end};
  } else if (cat == "user_annotation" && name.substr(0, 13) == "ProfilerStep#") {
    int64_t number = 0;
    for (char c : name.substr(13)) {
      if (c < '0' || c > '9' || number > INT64_MAX / 10 - 10) {
        number = -1;
        break;
      }
      number = number * 10 + (c - '0');
    }
    steps_.Add(*start, end, static_cast<uint32_t>(step_numbers_.size()));
    step_numbers_.push_back(number);
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
      if (device && device_of_first_ < 0) device_of_first_ = *device;
    }
    if (cat == "kernel") {
      p.record.key.kind = KernelClass::kOther;  // Classified once its op is known.
    } else {
      p.record.key = CopyKey(name, cat == "gpu_memset");
    }
    pending_.push_back(std::move(p));
  }
}

void TraceEvents::Finish(KinetoKernelTrace* out) {
  for (auto& [tid, ranges] : op_ranges_) ranges.Build();
  steps_.Build();
  // Records → launches → ops; the ops kept are the linked ones only.
  std::unordered_map<uint32_t, int32_t> kept;  // Index in `ops_` → index in out->ops.
  out->records.reserve(pending_.size());
  for (PendingRecord& p : pending_) {
    KinetoGpuRecord& r = p.record;
    const auto launch = p.correlation ? launches_.find(*p.correlation) : launches_.end();
    if (launch != launches_.end()) {
      const Launch& l = launch->second;
      const int64_t step = steps_.Innermost(l.start_ns, l.start_ns);
      if (step >= 0) r.step = step_numbers_[static_cast<size_t>(step)];
      const auto ranges = op_ranges_.find(l.tid);
      const int64_t op =
          ranges == op_ranges_.end() ? -1 : ranges->second.Innermost(l.start_ns, l.end_ns);
      if (op >= 0) {
        const auto [it, added] =
            kept.emplace(static_cast<uint32_t>(op), static_cast<int32_t>(out->ops.size()));
        if (added) {
          OpCandidate& candidate = ops_[static_cast<size_t>(op)];
          KinetoOp kop;
          kop.name = std::string(candidate.name);
          kop.has_shapes = candidate.has_shapes;
          kop.inputs = std::move(candidate.inputs);
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
  const auto device = devices_.find(device_of_first_);
  if (device != devices_.end()) out->device = device->second;
}

// Reads the document `head` + the rest of `source` as a stream (io/kineto_stream.h): each batch
// of events parsed on its own and reduced to what TraceEvents keeps.
Status ParseTrace(std::string_view head, io::ByteSource* source, const std::string& name,
                  KinetoKernelTrace* out) {
  io::KinetoStream stream(head, source, name);
  dom::parser parser;  // Reused batch after batch: nothing kept points into it.
  io::PaddedText text;
  TraceEvents events;
  const uint64_t max_kept = std::max<uint64_t>(1, MemoryBudget() / TraceEvents::kBytesPerKeptEvent);
  bool whole = false;
  while (true) {
    LUMOS_ASSIGN_OR_RETURN(io::PieceInfo piece, stream.Next(&text));
    if (piece.kind == io::KinetoPiece::kEnd) break;
    dom::element root;
    if (auto error = parser.parse(text.data(), text.size(), false).get(root)) {
      if (piece.kind == io::KinetoPiece::kEvents) {
        return ErrorStatus("%s: not JSON (%s) in traceEvents[%zu..%zu], from byte %llu",
                           name.c_str(), simdjson::error_message(error), piece.first_index,
                           piece.first_index + piece.count - 1,
                           static_cast<unsigned long long>(piece.text_offset));
      }
      return ErrorStatus("%s: not JSON (%s)", name.c_str(), simdjson::error_message(error));
    }
    dom::object members;
    dom::array batch;
    if (piece.kind == io::KinetoPiece::kWhole) {
      // Not an object (an error below), or read whole: the same walk over its members.
      if (root.get_object().get(members) != simdjson::SUCCESS ||
          members["traceEvents"].get_array().get(batch) != simdjson::SUCCESS) {
        break;
      }
      events.AddDeviceProperties(members);
      whole = true;
    } else if (piece.kind == io::KinetoPiece::kMembers) {
      if (root.get_object().get(members) == simdjson::SUCCESS) events.AddDeviceProperties(members);
      continue;
    } else if (root.get_array().get(batch) != simdjson::SUCCESS) {
      continue;  // Always an array.
    }
    for (dom::element e : batch) {
      dom::object o;
      if (e.get_object().get(o) == simdjson::SUCCESS) events.AddEvent(o);
    }
    if (events.kept() > max_kept) {
      return ErrorStatus(
          "%s: more events than the memory budget of %s holds at %llu B an event (%llu)",
          name.c_str(), io::DescribeMemoryBudget().c_str(),
          static_cast<unsigned long long>(TraceEvents::kBytesPerKeptEvent),
          static_cast<unsigned long long>(max_kept));
    }
    if (whole) break;
  }
  if (!whole && !stream.saw_events_array()) {
    return ErrorStatus("%s: no traceEvents array: not a Kineto trace", name.c_str());
  }
  events.Finish(out);
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
  if (n != io::kTarBlock || !io::IsTarHeader(head.data())) {
    KinetoKernelTrace trace;
    trace.source = path;
    LUMOS_RETURN_IF_ERROR(ParseTrace(head, source.get(), path, &trace));
    traces.push_back(std::move(trace));
    return traces;
  }
  io::TarReader reader(source.get(), std::move(head));
  io::TarEntry entry;
  io::PaddedText member_bytes;  // A member as stored; its text is streamed from it.
  while (true) {
    LUMOS_ASSIGN_OR_RETURN(bool more, reader.Next(&entry));
    if (!more) break;
    if (!EndsWith(entry.name, ".json") && !EndsWith(entry.name, ".json.gz")) continue;
    KinetoKernelTrace trace;
    trace.source = path + ":" + entry.name;
    LUMOS_RETURN_IF_ERROR(reader.ReadBody(&member_bytes));
    LUMOS_ASSIGN_OR_RETURN(
        auto member, io::OpenMemorySource(member_bytes.data(), member_bytes.size(), trace.source));
    LUMOS_RETURN_IF_ERROR(ParseTrace({}, member.get(), trace.source, &trace));
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
