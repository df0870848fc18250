// Design: the in-memory form of one Kineto trace on its way into a Lumos trace file. Parsing
// (kineto_events.cc, kineto_header.cc) fills it from the simdjson DOM; collectives.cc derives
// NCCL collectives and communicators from the NCCL kernels; kineto_converter.cc sorts and
// writes it. Event names are string_views into `names` (interned), strings made here live in
// `owned_strings`.
// Threading: one trace per thread.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "modeler/io/byte_source.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler::io {
class KinetoStream;
}  // namespace lumos::modeler::io

namespace lumos::modeler::kineto {

using ImportedEvent =
    std::variant<schema::KernelEvent, schema::ApiCallEvent, schema::MemcpyEvent,
                 schema::MemsetEvent, schema::SyncEvent, schema::HostRangeEvent,
                 schema::CollectiveEvent, schema::CommunicatorEvent, schema::CaptureWindowEvent,
                 schema::LossEvent, schema::GemmCallEvent>;

// A matmul or attention operator with its GEMM problem (kineto_gemm.h): the cpu_op's
// HostRangeEvent is events[event_index]; `call` is its GemmCall but for the correlation id.
struct GemmOp {
  size_t event_index = 0;
  schema::GemmCallEvent call;
};

// What collectives.cc needs from one NCCL kernel and the c10d arguments attached to it.
struct NcclKernel {
  int64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t stream_id = 0;
  uint32_t device_id = 0;
  uint64_t correlation_id = 0;
  uint32_t grid_x = 0;  // One block per NCCL channel.
  std::string_view name;
  std::string_view collective_name;  // Kineto args; empty when absent.
  std::string_view dtype;
  std::string_view pg_name;
  std::string_view pg_desc;
  bool has_in_nelems = false;
  uint64_t in_nelems = 0;
  uint32_t group_size = 0;
  bool has_pg_ranks = false;
  std::vector<int32_t> pg_ranks;
};

struct ThreadKey {
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool operator<(const ThreadKey& o) const { return std::pair(pid, tid) < std::pair(o.pid, o.tid); }
};

struct KinetoTrace {
  schema::HeaderInfo header;
  std::vector<ImportedEvent> events;
  std::vector<NcclKernel> nccl_kernels;
  std::vector<GemmOp> gemm_ops;
  std::map<ThreadKey, std::string_view> threads;           // Host threads only; ordered for output.
  int64_t start_ns = std::numeric_limits<int64_t>::max();  // Span of everything seen.
  int64_t end_ns = std::numeric_limits<int64_t>::min();
  bool fractional_us = false;  // Some time was a fractional µs: ns resolution.
  uint64_t skipped = 0;        // Events that could not be converted.
  std::string first_skip;      // Why the first of them was skipped, and where.
  // Numbers beyond the 64-bit range rewritten before parsing (kineto_numbers.h).
  size_t out_of_range_numbers = 0;
  // What is wrong with the input that the output cannot show, each naming the input; the
  // converter hands them to the caller (ConvertStats::warnings).
  std::vector<std::string> warnings;
  std::deque<std::string> owned_strings;
  // Names from the JSON, one copy each: the DOM of each batch of events is reused for the next
  // (kineto_stream.h), and kernel names repeat thousands of times.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, NameHash, std::equal_to<>> names;

  std::string_view Own(std::string s) { return owned_strings.emplace_back(std::move(s)); }
  std::string_view Intern(std::string_view s) {
    if (s.empty()) return {};
    auto it = names.find(s);
    if (it == names.end()) it = names.emplace(s).first;
    return *it;
  }
  void Extend(int64_t start, int64_t end) {
    if (start < start_ns) start_ns = start;
    if (end > end_ns) end_ns = end;
  }
};

// Parses the Kineto Chrome-trace JSON document `stream` yields, piece by piece, into `trace`:
// header facts, events, threads and NCCL kernels. Malformed events are counted in
// trace->skipped, not errors; a document that is not JSON or not a Kineto trace is an error
// naming `name`, and so are more events than the memory budget holds (kBytesPerImportedEvent).
Status ParseKinetoTrace(io::KinetoStream* stream, const std::string& name, KinetoTrace* trace);

// What one converted event costs until it is written: the event, its share of the sort's buffer
// and of the vector's growth.
inline constexpr size_t kBytesPerImportedEvent = 3 * sizeof(ImportedEvent);

// Appends one CollectiveEvent per NCCL kernel and one CommunicatorEvent per communicator
// (see collectives.cc for how communicators are identified).
void AddCollectives(KinetoTrace* trace);

}  // namespace lumos::modeler::kineto
