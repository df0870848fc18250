// Maps the events of a Kineto document (traceEvents) to Lumos events, one category at a time.
// The mapping table is in modeler/import/README.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_set>
#include <variant>

#include "base/memory_budget.h"
#include "modeler/import/cuda_names.h"
#include "modeler/import/kineto_fields.h"
#include "modeler/import/kineto_gemm.h"
#include "modeler/import/kineto_header.h"
#include "modeler/import/kineto_numbers.h"
#include "modeler/io/kineto_stream.h"
#include "schema/nccl_names.h"

namespace lumos::modeler::kineto {

using io::KinetoPiece;
using io::KinetoStream;
using io::PieceInfo;
namespace {

using schema::HostRangeCategory;

enum class Category {
  kKernel,
  kMemcpy,
  kMemset,
  kRuntime,
  kDriver,
  kSync,
  kCpuOp,
  kUserAnnotation,
  kGpuAnnotation,
  kPython,
  kTrace,
  kOther,
};

Category CategoryOf(std::string_view cat) {
  // Kineto before 2021 used capitalised names ("Kernel", "Runtime", "Operator").
  if (cat == "kernel" || cat == "Kernel") return Category::kKernel;
  if (cat == "gpu_memcpy" || cat == "Memcpy") return Category::kMemcpy;
  if (cat == "gpu_memset" || cat == "Memset") return Category::kMemset;
  if (cat == "cuda_runtime" || cat == "Runtime") return Category::kRuntime;
  if (cat == "cuda_driver" || cat == "Driver") return Category::kDriver;
  if (cat == "cuda_sync") return Category::kSync;
  if (cat == "cpu_op" || cat == "Operator") return Category::kCpuOp;
  if (cat == "user_annotation") return Category::kUserAnnotation;
  if (cat == "gpu_user_annotation") return Category::kGpuAnnotation;
  if (cat == "python_function") return Category::kPython;
  if (cat == "Trace") return Category::kTrace;  // The profiler's own span.
  return Category::kOther;
}

bool IsHostCategory(Category c) {
  return c == Category::kRuntime || c == Category::kDriver || c == Category::kCpuOp ||
         c == Category::kUserAnnotation || c == Category::kPython;
}

class EventMapper {
 public:
  EventMapper(KinetoTrace* trace, int64_t base_time_ns) : trace_(trace), base_(base_time_ns) {}
  void set_base(int64_t base_time_ns) { base_ = base_time_ns; }
  int64_t base() const { return base_; }

  void Map(size_t index, dom::element element) {
    index_ = index;
    dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) {
      return Skip(index, "", "not a JSON object");
    }
    EventFields f = ReadEventFields(object);
    if (!f.has_ph) return Skip(index, f.cat, "no \"ph\"");
    std::string where;
    if ((f.ph == "M" || f.ph == "X") && trace_->out_of_range_numbers != 0 &&
        FindOutOfRange(element, &where)) {
      return Skip(index, f.cat, "\"" + where + "\" is a number beyond the 64-bit range");
    }
    if (f.ph == "M") return MapMetadata(f);
    if (f.ph != "X") return;  // Flows, instants, counters: nothing the schema needs.
    int64_t start = 0, duration = 0;
    if (!f.has_name) return Skip(index, f.cat, "no name");
    if (!f.ts || !MicrosToNanos(*f.ts, &start, &trace_->fractional_us)) {
      return Skip(index, f.cat, "\"ts\" is missing or not a number in range");
    }
    if (!f.dur || !MicrosToNanos(*f.dur, &duration, &trace_->fractional_us) || duration < 0) {
      return Skip(index, f.cat, "\"dur\" is missing, negative or not a number in range");
    }
    if (__builtin_add_overflow(start, base_, &start) || start > INT64_MAX - duration) {
      return Skip(index, f.cat, "time out of range");
    }
    trace_->Extend(start, start + duration);
    Category category = CategoryOf(f.cat);
    if (IsHostCategory(category) && f.pid) ++host_pid_events_[*f.pid];
    MapTimed(f, ReadEventArgs(f), category, start, static_cast<uint64_t>(duration));
  }

  void Finish(const std::string& name) {
    if (duplicate_correlations_ != 0) {
      trace_->warnings.push_back(
          name + ": " + std::to_string(duplicate_correlations_) +
          " CUDA API call(s) repeat the correlation id of an earlier one (the first: id " +
          std::to_string(first_duplicate_) + " at traceEvents[" +
          std::to_string(first_duplicate_index_) +
          "]); GPU operations with those ids may be paired with the wrong call");
    }
    // The traced process is the one whose host threads did the most.
    uint64_t best = 0;
    for (const auto& [pid, count] : host_pid_events_) {
      if (count > best && pid > 0 && pid <= UINT32_MAX) {
        best = count;
        trace_->header.pid = static_cast<uint32_t>(pid);
      }
    }
    // Kineto also names GPU "threads" (streams, as pid = device); only host threads count. A
    // thread renamed during the trace (pt_main_thread → pt_autograd_0) keeps its last name.
    for (const auto& [key, name] : thread_names_) {
      if (host_pid_events_.count(key.pid) != 0) trace_->threads[key] = name;
    }
  }

 private:
  void Skip(size_t index, std::string_view cat, std::string_view why) {
    if (trace_->skipped++ == 0) {
      char where[64];
      std::snprintf(where, sizeof(where), "traceEvents[%zu]", index);
      trace_->first_skip = std::string(where) +
                           (cat.empty() ? "" : " (cat " + std::string(cat) + ")") + ": " +
                           std::string(why);
    }
  }

  void MapMetadata(const EventFields& f) {
    if (f.name != "thread_name" || !f.pid || !f.tid || *f.pid <= 0 || *f.tid <= 0 ||
        *f.pid > UINT32_MAX || *f.tid > UINT32_MAX) {
      return;
    }
    EventArgs a = ReadEventArgs(f);
    if (a.metadata_name.empty()) return;
    ThreadKey key{static_cast<uint32_t>(*f.pid), static_cast<uint32_t>(*f.tid)};
    thread_names_.emplace_back(key, trace_->Intern(ThreadNameFromKineto(a.metadata_name)));
  }

  void MapTimed(const EventFields& f, const EventArgs& a, Category category, int64_t start,
                uint64_t duration);
  void MapKernel(const EventFields& f, const EventArgs& a, int64_t start, uint64_t duration);
  void MapHostRange(const EventFields& f, const EventArgs& a, Category category, int64_t start,
                    uint64_t duration);

  // Correlation ids of the API calls so far: CUPTI gives each call its own (GPU operations
  // share one legitimately: the kernels of a CUDA graph launch).
  void SeeApiCorrelation(uint64_t id) {
    if (id == 0 || api_correlations_.insert(id).second) return;
    if (duplicate_correlations_++ == 0) {
      first_duplicate_ = id;
      first_duplicate_index_ = index_;
    }
  }

  KinetoTrace* trace_;
  int64_t base_;
  size_t index_ = 0;  // Of the event being mapped.
  std::unordered_set<uint64_t> api_correlations_;
  uint64_t duplicate_correlations_ = 0;
  uint64_t first_duplicate_ = 0;
  size_t first_duplicate_index_ = 0;
  std::map<int64_t, uint64_t> host_pid_events_;
  std::vector<std::pair<ThreadKey, std::string_view>> thread_names_;
};

void EventMapper::MapTimed(const EventFields& f, const EventArgs& a, Category category,
                           int64_t start, uint64_t duration) {
  // GPU records carry device and stream in args; pid and tid repeat them (pid = device).
  uint32_t device = a.device ? Id32OrZero(a.device) : Id32OrZero(f.pid);
  uint64_t stream = a.stream ? IdOrZero(a.stream) : IdOrZero(f.tid);
  switch (category) {
    case Category::kKernel:
      return MapKernel(f, a, start, duration);
    case Category::kMemcpy: {
      schema::MemcpyEvent m;
      m.start_ns = start;
      m.duration_ns = duration;
      m.correlation_id = IdOrZero(a.correlation);
      m.stream_id = stream;
      m.bytes = IdOrZero(a.bytes);
      MemcpyKinds kinds = ParseMemcpyName(f.name);
      m.copy_kind = kinds.copy;
      m.src_kind = kinds.src;
      m.dst_kind = kinds.dst;
      // Peer copies (CUPTI memcpy2) name three devices instead of one.
      m.device_id = a.in_device ? Id32OrZero(a.in_device) : device;
      m.src_device_id = Id32OrZero(a.from_device);
      m.dst_device_id = Id32OrZero(a.to_device);
      m.context_id = Id32OrZero(a.context);
      m.external_id = IdOrZero(a.external_id);
      trace_->events.emplace_back(m);
      return;
    }
    case Category::kMemset: {
      schema::MemsetEvent m;
      m.start_ns = start;
      m.duration_ns = duration;
      m.correlation_id = IdOrZero(a.correlation);
      m.stream_id = stream;
      m.bytes = IdOrZero(a.bytes);
      m.device_id = device;
      m.memory_kind = ParseMemsetName(f.name);
      m.context_id = Id32OrZero(a.context);
      m.external_id = IdOrZero(a.external_id);
      trace_->events.emplace_back(m);
      return;
    }
    case Category::kRuntime:
    case Category::kDriver: {
      schema::ApiCallEvent c;
      c.start_ns = start;
      c.duration_ns = duration;
      c.thread_id = Id32OrZero(f.tid);
      c.correlation_id = IdOrZero(a.correlation);
      c.kind = ClassifyApiName(f.name);
      c.cbid = Id32OrZero(a.cbid);
      c.name = trace_->Intern(f.name);
      c.domain =
          category == Category::kRuntime ? schema::ApiDomain::kRuntime : schema::ApiDomain::kDriver;
      c.external_id = IdOrZero(a.external_id);
      SeeApiCorrelation(c.correlation_id);
      trace_->events.emplace_back(c);
      return;
    }
    case Category::kSync: {
      schema::SyncEvent s;
      s.start_ns = start;
      s.duration_ns = duration;
      s.sync_type = SyncTypeFromKineto(!a.sync_kind.empty() ? a.sync_kind : f.name);
      s.correlation_id = IdOrZero(a.correlation);
      s.stream_id = IdOrZero(a.stream);  // -1 for event/context syncs: unknown.
      s.event_id = IdOrZero(a.wait_on_event_id);
      s.wait_on_stream_id = IdOrZero(a.wait_on_stream);
      s.event_record_correlation_id = IdOrZero(a.wait_on_event_record_corr);
      s.device_id = device;
      s.context_id = Id32OrZero(a.context);
      s.external_id = IdOrZero(a.external_id);
      trace_->events.emplace_back(s);
      return;
    }
    case Category::kTrace:
      return;  // Only widens the capture window (done by the caller).
    default:
      return MapHostRange(f, a, category, start, duration);
  }
}

void EventMapper::MapKernel(const EventFields& f, const EventArgs& a, int64_t start,
                            uint64_t duration) {
  schema::KernelEvent k;
  k.start_ns = start;
  k.duration_ns = duration;
  k.correlation_id = IdOrZero(a.correlation);
  k.stream_id = a.stream ? IdOrZero(a.stream) : IdOrZero(f.tid);
  k.name = trace_->Intern(f.name);
  k.device_id = a.device ? Id32OrZero(a.device) : Id32OrZero(f.pid);
  if (a.grid) k.grid = ReadDim3(*a.grid);
  if (a.block) k.block = ReadDim3(*a.block);
  k.registers_per_thread = Id32OrZero(a.registers);
  // Kineto writes static + dynamic shared memory as one number; it cannot be split again.
  k.static_shared_memory_bytes = Id32OrZero(a.shared_memory);
  k.context_id = Id32OrZero(a.context);
  k.external_id = IdOrZero(a.external_id);
  trace_->events.emplace_back(k);
  if (!schema::IsNcclKernelName(f.name)) return;
  NcclKernel n;
  n.start_ns = start;
  n.duration_ns = duration;
  n.stream_id = k.stream_id;
  n.device_id = k.device_id;
  n.correlation_id = k.correlation_id;
  n.grid_x = k.grid.x;
  n.name = k.name;
  n.collective_name = trace_->Intern(a.collective_name);
  n.dtype = trace_->Intern(a.dtype);
  n.pg_name = trace_->Intern(a.pg_name);
  n.pg_desc = trace_->Intern(a.pg_desc);
  n.has_in_nelems = a.in_nelems.has_value() && *a.in_nelems >= 0;
  n.in_nelems = n.has_in_nelems ? static_cast<uint64_t>(*a.in_nelems) : 0;
  n.group_size = Id32OrZero(a.group_size);
  if (a.pg_ranks) {
    n.has_pg_ranks = ReadRanks(*a.pg_ranks, &n.pg_ranks);
    if (!n.has_pg_ranks) n.pg_ranks.clear();
  }
  trace_->nccl_kernels.push_back(std::move(n));
}

void EventMapper::MapHostRange(const EventFields& f, const EventArgs& a, Category category,
                               int64_t start, uint64_t duration) {
  schema::HostRangeEvent h;
  h.start_ns = start;
  h.duration_ns = duration;
  h.name = trace_->Intern(f.name);
  h.external_id = IdOrZero(a.external_id);
  if (category == Category::kGpuAnnotation) {
    h.stream_id = a.stream ? IdOrZero(a.stream) : IdOrZero(f.tid);
    h.device_id = a.device ? Id32OrZero(a.device) : Id32OrZero(f.pid);
  } else {
    h.thread_id = Id32OrZero(f.tid);
  }
  switch (category) {
    case Category::kCpuOp: {
      h.category = HostRangeCategory::kCpuOp;
      h.sequence_number = IdOrZero(a.sequence_number);
      h.forward_thread_id = Id32OrZero(a.fwd_thread_id);
      // A matmul or attention operator recorded with its shapes (record_shapes=True).
      schema::GemmCallEvent call;
      if (a.input_dims &&
          ParseGemmOperator(f.name, *a.input_dims, a.input_types, a.concrete_inputs, &call)) {
        call.start_ns = start;
        call.duration_ns = duration;
        call.thread_id = h.thread_id;
        call.name = h.name;
        call.external_id = h.external_id;
        trace_->gemm_ops.push_back({trace_->events.size(), call});
      }
      break;
    }
    case Category::kUserAnnotation:
      h.category = HostRangeCategory::kUserAnnotation;
      break;
    case Category::kGpuAnnotation:
      h.category = HostRangeCategory::kGpuAnnotation;
      break;
    case Category::kPython:
      h.category = HostRangeCategory::kPython;
      break;
    default:
      h.category = HostRangeCategory::kOther;
      break;
  }
  // A step is a step whichever category recorded it.
  if (ParseProfilerStep(f.name, &h.has_step_number, &h.step_number)) {
    h.category = HostRangeCategory::kStep;
  }
  trace_->events.emplace_back(h);
}

}  // namespace

namespace {

// Where a piece is, for messages.
std::string PieceWhere(const PieceInfo& piece, size_t text_size) {
  char where[160];
  switch (piece.kind) {
    case KinetoPiece::kEvents:
      std::snprintf(where, sizeof(where), "traceEvents[%zu] to [%zu], bytes %llu to %llu",
                    piece.first_index, piece.first_index + piece.count - 1,
                    static_cast<unsigned long long>(piece.text_offset) + 1,
                    static_cast<unsigned long long>(piece.text_offset) + text_size - 2);
      return where;
    case KinetoPiece::kMembers:
      return "the members outside traceEvents";
    default:
      std::snprintf(where, sizeof(where), "%zu bytes", text_size);
      return where;
  }
}

// Parses one piece in place. A number refused only for its range is made a string, so only the
// event holding it is lost (kineto_numbers.h); `first_out_of_range` gets where the first was.
Status ParsePiece(const std::string& name, const PieceInfo& piece, io::PaddedText* text,
                  dom::parser* parser, KinetoTrace* trace, std::string* first_out_of_range,
                  dom::element* root) {
  auto error = parser->parse(text->data(), text->size(), false).get(*root);
  if (error == simdjson::NUMBER_ERROR) {
    // simdjson gives no location, and refuses the whole piece for one number: find it.
    NumberScan scan = MarkOutOfRangeNumbers(text->data(), text->size());
    const bool offsets = piece.kind != KinetoPiece::kMembers;
    if (scan.malformed) {
      return Status::Error(
          name + ": not valid JSON (" + PieceWhere(piece, text->size()) + "): a malformed number" +
          (offsets ? " at byte offset " + std::to_string(piece.text_offset + scan.malformed_offset)
                   : std::string()));
    }
    if (!scan.out_of_range.empty()) {
      error = parser->parse(text->data(), text->size(), false).get(*root);
      if (trace->out_of_range_numbers == 0) {
        *first_out_of_range =
            offsets
                ? "at byte offset " +
                      std::to_string(piece.text_offset + scan.out_of_range.front()) + " of the JSON"
                : "in the members outside traceEvents";
      }
      trace->out_of_range_numbers += scan.out_of_range.size();
    }
  }
  if (error != simdjson::SUCCESS) {
    return Status::Error(name + ": not valid JSON (" + PieceWhere(piece, text->size()) +
                         "): " + simdjson::error_message(error));
  }
  return Status::Ok();
}

Status NoTraceEvents(const std::string& name, bool execution_trace) {
  if (execution_trace) {
    return ErrorStatus(
        "%s: this is a PyTorch Execution Trace (\"schema\" and \"nodes\"), not a Kineto "
        "trace; import the Kineto (torch.profiler) trace recorded with it instead",
        name.c_str());
  }
  return ErrorStatus("%s: no \"traceEvents\" array, so not a Kineto (torch.profiler) trace",
                     name.c_str());
}

// Kineto versions that write baseTimeNanoseconds after traceEvents: the events mapped before it
// was known are moved by it now.
Status ShiftTimes(const std::string& name, int64_t base, KinetoTrace* trace) {
  bool in_range = !__builtin_add_overflow(trace->end_ns, base, &trace->end_ns) &&
                  !__builtin_add_overflow(trace->start_ns, base, &trace->start_ns);
  for (ImportedEvent& event : trace->events) {
    std::visit(
        [&](auto& e) {
          in_range &= !__builtin_add_overflow(e.start_ns, base, &e.start_ns);
          // The reader refuses an event that ends beyond the range: none is written.
          if constexpr (requires { e.duration_ns; }) {
            in_range &= schema::EndsInTimeRange(e.start_ns, e.duration_ns);
          }
        },
        event);
  }
  for (NcclKernel& k : trace->nccl_kernels) {
    in_range &= !__builtin_add_overflow(k.start_ns, base, &k.start_ns);
  }
  for (GemmOp& op : trace->gemm_ops) {
    in_range &= !__builtin_add_overflow(op.call.start_ns, base, &op.call.start_ns);
    in_range &= schema::EndsInTimeRange(op.call.start_ns, op.call.duration_ns);
  }
  if (!in_range) {
    return ErrorStatus(
        "%s: baseTimeNanoseconds %lld puts the events' times beyond the 64-bit range", name.c_str(),
        static_cast<long long>(base));
  }
  return Status::Ok();
}

class EventBudget {
 public:
  EventBudget() : max_events_(std::max<uint64_t>(1, MemoryBudget() / kBytesPerImportedEvent)) {}
  Status Check(const std::string& name, const KinetoTrace& trace, size_t index) const {
    if (trace.events.size() <= max_events_) return Status::Ok();
    return Status::Error(
        name + ": traceEvents[" + std::to_string(index) + "] brings the trace's events past " +
        std::to_string(max_events_) + ", what the memory budget of " + io::DescribeMemoryBudget() +
        " holds at " + std::to_string(kBytesPerImportedEvent) + " B an event; nothing is written");
  }

 private:
  uint64_t max_events_;
};

// A document the scanner did not stream (it does not start with '{'): an error, or an object
// only simdjson sees (a byte-order mark first), mapped whole.
Status MapWholeDocument(const std::string& name, dom::element root, EventMapper* mapper,
                        KinetoTrace* trace) {
  dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return ErrorStatus("%s: the JSON document is not an object, so not a Kineto trace",
                       name.c_str());
  }
  dom::array events;
  if (object["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    dom::element unused;
    return NoTraceEvents(name, object["nodes"].get(unused) == simdjson::SUCCESS &&
                                   object["schema"].get(unused) == simdjson::SUCCESS);
  }
  int64_t base_time_ns = 0;
  LUMOS_RETURN_IF_ERROR(ReadTraceMetadata(object, name, trace, &base_time_ns));
  mapper->set_base(base_time_ns);
  const EventBudget budget;
  size_t index = 0;
  for (dom::element event : events) mapper->Map(index++, event);
  return budget.Check(name, *trace, index);
}

}  // namespace

Status ParseKinetoTrace(KinetoStream* stream, const std::string& name, KinetoTrace* trace) {
  dom::parser parser;  // Reused piece after piece: names are interned (KinetoTrace::Intern).
  io::PaddedText text;
  EventMapper mapper(trace, 0);
  const EventBudget budget;
  std::string first_out_of_range;
  bool mapped = false;  // Events mapped: a base time found later moves them.
  bool whole = false;
  while (true) {
    LUMOS_ASSIGN_OR_RETURN(PieceInfo piece, stream->Next(&text));
    if (piece.kind == KinetoPiece::kEnd) break;
    dom::element root;
    LUMOS_RETURN_IF_ERROR(
        ParsePiece(name, piece, &text, &parser, trace, &first_out_of_range, &root));
    if (piece.kind == KinetoPiece::kWhole) {
      LUMOS_RETURN_IF_ERROR(MapWholeDocument(name, root, &mapper, trace));
      whole = true;
      break;
    }
    if (piece.kind == KinetoPiece::kMembers) {
      dom::object members;
      if (root.get_object().get(members) != simdjson::SUCCESS) continue;  // Always an object.
      int64_t base_time_ns = 0;
      LUMOS_RETURN_IF_ERROR(ReadTraceMetadata(members, name, trace, &base_time_ns));
      if (base_time_ns == 0 || mapper.base() != 0) continue;
      if (mapped) LUMOS_RETURN_IF_ERROR(ShiftTimes(name, base_time_ns, trace));
      mapper.set_base(base_time_ns);
      continue;
    }
    dom::array events;
    if (root.get_array().get(events) != simdjson::SUCCESS) continue;  // Always an array.
    size_t index = piece.first_index;
    for (dom::element event : events) mapper.Map(index++, event);
    mapped = true;
    LUMOS_RETURN_IF_ERROR(budget.Check(name, *trace, index - 1));
  }
  if (!whole && !stream->saw_events_array()) {
    return NoTraceEvents(name, stream->has_member("nodes") && stream->has_member("schema"));
  }
  if (trace->out_of_range_numbers != 0) {
    trace->warnings.push_back(
        name + ": " + std::to_string(trace->out_of_range_numbers) +
        " number(s) beyond the range of a 64-bit integer or a double (the first " +
        first_out_of_range + "); the events holding them are not converted (counted as skipped)");
  }
  CheckTraceMetadata(name, trace);
  mapper.Finish(name);
  return Status::Ok();
}

}  // namespace lumos::modeler::kineto
