// Maps the events of a Kineto document (traceEvents) to Lumos events, one category at a time.
// The mapping table is in modeler/import/README.md.
#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_set>

#include "modeler/import/cuda_names.h"
#include "modeler/import/kineto_fields.h"
#include "modeler/import/kineto_gemm.h"
#include "modeler/import/kineto_header.h"
#include "modeler/import/kineto_numbers.h"
#include "schema/nccl_names.h"

namespace lumos::modeler::kineto {
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
    thread_names_.emplace_back(key, ThreadNameFromKineto(a.metadata_name));
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
      c.name = f.name;
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
  k.name = f.name;
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
  n.name = f.name;
  n.collective_name = a.collective_name;
  n.dtype = a.dtype;
  n.pg_name = a.pg_name;
  n.pg_desc = a.pg_desc;
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
  h.name = f.name;
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
        call.name = f.name;
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

Status ParseKinetoTrace(const io::PaddedText& text, const std::string& name, dom::parser* parser,
                        KinetoTrace* trace) {
  dom::element root;
  auto error = parser->parse(text.data(), text.size(), false).get(root);
  if (error == simdjson::NUMBER_ERROR) {
    // No location from simdjson, and the whole document refused for one number: find it, and
    // when it is only out of range (valid JSON), parse a copy with it made a string, so only
    // the event holding it is lost (kineto_numbers.h). The DOM keeps no view of the copy.
    io::PaddedText copy;
    copy.Append(text.data(), text.size());
    NumberScan scan = MarkOutOfRangeNumbers(copy.data(), copy.size());
    if (scan.malformed) {
      return ErrorStatus("%s: not valid JSON (%zu bytes): a malformed number at byte offset %zu",
                         name.c_str(), text.size(), scan.malformed_offset);
    }
    if (!scan.out_of_range.empty()) {
      error = parser->parse(copy.data(), copy.size(), false).get(root);
      trace->out_of_range_numbers = scan.out_of_range.size();
      trace->warnings.push_back(
          name + ": " + std::to_string(scan.out_of_range.size()) +
          " number(s) beyond the range of a 64-bit integer or a double (the first at byte offset " +
          std::to_string(scan.out_of_range.front()) +
          " of the JSON); the events holding them are not converted (counted as skipped)");
    }
  }
  if (error != simdjson::SUCCESS) {
    return ErrorStatus("%s: not valid JSON (%zu bytes): %s", name.c_str(), text.size(),
                       simdjson::error_message(error));
  }
  dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return ErrorStatus("%s: the JSON document is not an object, so not a Kineto trace",
                       name.c_str());
  }
  dom::array events;
  if (object["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    dom::element unused;
    if (object["nodes"].get(unused) == simdjson::SUCCESS &&
        object["schema"].get(unused) == simdjson::SUCCESS) {
      return ErrorStatus(
          "%s: this is a PyTorch Execution Trace (\"schema\" and \"nodes\"), not a Kineto "
          "trace; import the Kineto (torch.profiler) trace recorded with it instead",
          name.c_str());
    }
    return ErrorStatus("%s: no \"traceEvents\" array, so not a Kineto (torch.profiler) trace",
                       name.c_str());
  }
  int64_t base_time_ns = 0;
  LUMOS_RETURN_IF_ERROR(ReadTraceMetadata(object, name, trace, &base_time_ns));
  trace->events.reserve(events.size());
  EventMapper mapper(trace, base_time_ns);
  size_t index = 0;
  for (dom::element event : events) mapper.Map(index++, event);
  mapper.Finish(name);
  return Status::Ok();
}

}  // namespace lumos::modeler::kineto
