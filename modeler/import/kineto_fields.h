// Design: the raw fields of one Kineto trace event and the `args` the importer understands,
// each read in a single pass over the event's keys (events have ~8 keys and args up to ~25,
// so one pass beats a lookup per field). Values stay simdjson DOM views: nothing is copied.
// Private to modeler/import.
#pragma once

#include <cstdint>
#include <optional>
#include <string>  // schema/writer/trace_events.h uses std::string without including it.
#include <string_view>
#include <vector>

#include "modeler/import/kineto_json.h"
#include "schema/writer/trace_events.h"

namespace lumos::modeler::kineto {

struct EventFields {
  std::string_view ph, cat, name;
  std::optional<dom::element> ts, dur, args;
  bool has_ph = false, has_name = false;
  std::optional<int64_t> pid, tid;  // Numeric ones only ("Spans" and the like are not ids).
};

struct EventArgs {
  std::optional<int64_t> external_id, correlation, cbid, device, context, stream, registers,
      shared_memory, bytes, from_device, in_device, to_device, sequence_number, fwd_thread_id,
      wait_on_stream, wait_on_event_record_corr, wait_on_event_id, in_nelems, group_size;
  std::string_view sync_kind, collective_name, dtype, pg_name, pg_desc, metadata_name;
  std::optional<dom::element> grid, block, pg_ranks, input_dims, input_types, concrete_inputs;
};

EventFields ReadEventFields(dom::object event);
EventArgs ReadEventArgs(const EventFields& fields);

// [x, y, z] → Dim3 (missing entries stay 0).
schema::Dim3 ReadDim3(dom::element value);
// "[0, 1, 2]" (a string, as Kineto writes it) or a JSON array of integers.
bool ReadRanks(dom::element value, std::vector<int32_t>* ranks);
// "ProfilerStep#12" → true with 12; false for other names. A step without a number is still a
// step (has_number false).
bool ParseProfilerStep(std::string_view name, bool* has_number, int64_t* number);

}  // namespace lumos::modeler::kineto
