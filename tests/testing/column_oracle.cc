#include "tests/testing/column_oracle.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "schema/format.h"

namespace lumos::testing {
namespace {

namespace pb = ::lumos::trace;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Value i of a repeated scalar field, as a raw 64-bit pattern (signed values sign-extended).
uint64_t RawValue(const Message& m, const FieldDescriptor* f, int i) {
  const auto* r = m.GetReflection();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return static_cast<uint64_t>(static_cast<int64_t>(r->GetRepeatedInt32(m, f, i)));
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<uint64_t>(r->GetRepeatedInt64(m, f, i));
    case FieldDescriptor::CPPTYPE_UINT32:
      return r->GetRepeatedUInt32(m, f, i);
    case FieldDescriptor::CPPTYPE_UINT64:
      return r->GetRepeatedUInt64(m, f, i);
    case FieldDescriptor::CPPTYPE_BOOL:
      return r->GetRepeatedBool(m, f, i) ? 1 : 0;
    case FieldDescriptor::CPPTYPE_ENUM:
      return static_cast<uint64_t>(static_cast<int64_t>(r->GetRepeatedEnumValue(m, f, i)));
    default:
      ADD_FAILURE() << f->full_name() << " is not a scalar column";
      return 0;
  }
}

// Sets a singular scalar field of a row message; zero values stay unset (proto3) unless the
// field tracks presence.
void SetValue(Message* m, const FieldDescriptor* f, uint64_t v) {
  const auto* r = m->GetReflection();
  if (v == 0 && !f->has_presence()) return;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      r->SetInt32(m, f, static_cast<int32_t>(v));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      r->SetInt64(m, f, static_cast<int64_t>(v));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      r->SetUInt32(m, f, static_cast<uint32_t>(v));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      r->SetUInt64(m, f, v);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      r->SetBool(m, f, v != 0);
      break;
    case FieldDescriptor::CPPTYPE_ENUM:
      r->SetEnumValue(m, f, static_cast<int>(v));
      break;
    default:
      ADD_FAILURE() << f->full_name() << " is not a scalar field";
  }
}

void Expand(const pb::TracePacket& packet, const FieldDescriptor* columns_field, uint64_t base,
            pb::Trace* out) {
  const auto* packet_reflection = packet.GetReflection();
  const Message& columns = packet_reflection->GetMessage(packet, columns_field);
  const auto* cr = columns.GetReflection();
  const auto* cd = columns.GetDescriptor();
  // "kernel_columns" holds "kernel" rows (by name: the GEMM calls of 2.2 are not at the nine
  // older kinds' fixed offset).
  const std::string& columns_name = columns_field->name();
  const FieldDescriptor* row_field = pb::TracePacket::descriptor()->FindFieldByName(
      columns_name.substr(0, columns_name.size() - std::string("_columns").size()));
  ASSERT_NE(row_field, nullptr);
  uint64_t count = cr->GetUInt64(columns, cd->FindFieldByName("count"));
  const FieldDescriptor* start_field = cd->FindFieldByName("start_delta_ns");
  ASSERT_EQ(static_cast<uint64_t>(cr->FieldSize(columns, start_field)), count)
      << cd->name() << ": the start column must hold count values";
  // Absolute values per column: deltas summed, everything else as stored.
  std::vector<std::vector<uint64_t>> values(cd->field_count());
  for (int c = 0; c < cd->field_count(); ++c) {
    const FieldDescriptor* f = cd->field(c);
    if (!f->is_repeated()) continue;
    int n = cr->FieldSize(columns, f);
    if (n == 0) continue;
    // One value for count > 1: every event has it (not allowed for the start column).
    bool constant = n == 1 && count > 1 && f != start_field;
    ASSERT_TRUE(constant || static_cast<uint64_t>(n) == count) << f->full_name();
    if (f == start_field) continue;  // Needs the durations: below.
    uint64_t last = 0;
    bool delta = EndsWith(f->name(), "_delta");
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t v = RawValue(columns, f, constant ? 0 : static_cast<int>(i));
      if (delta) {
        last += v;  // Reflection already undid the zigzag of sint64.
        v = last;
      }
      values[c].push_back(v);
    }
  }
  // Starts: each the previous event's end (start + duration_ns) plus its delta.
  {
    const FieldDescriptor* duration = cd->FindFieldByName("duration_ns");
    const auto& durations = duration != nullptr ? values[duration->index()] : values[0];
    uint64_t end = base;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t start = end + RawValue(columns, start_field, static_cast<int>(i));
      values[start_field->index()].push_back(start);
      end = start + (duration != nullptr && !durations.empty() ? durations[i] : 0);
    }
  }
  const FieldDescriptor* has_step = cd->FindFieldByName("has_step_number");
  for (uint64_t i = 0; i < count; ++i) {
    pb::TracePacket* row = out->add_packet();
    Message* event = row->GetReflection()->MutableMessage(row, row_field);
    uint64_t start = 0;
    for (int c = 0; c < cd->field_count(); ++c) {
      const FieldDescriptor* f = cd->field(c);
      uint64_t v = values[c].empty() ? 0 : values[c][i];
      if (f == start_field) {
        start = v;
        continue;
      }
      if (!f->is_repeated() || f == has_step) continue;
      const FieldDescriptor* target = event->GetDescriptor()->FindFieldByNumber(f->number());
      ASSERT_NE(target, nullptr) << f->full_name();
      if (EndsWith(f->name(), "_plus_1")) {
        if (v != 0) SetValue(event, target, v - 1);
        continue;
      }
      if (has_step != nullptr && f->name() == "step_number") {
        int k = has_step->index();
        if (!values[k].empty() && values[k][i] != 0) SetValue(event, target, v);
        continue;
      }
      SetValue(event, target, v);
    }
    row->set_start_delta_ns(static_cast<int64_t>(start - base));
  }
}

}  // namespace

pb::Trace ExpandColumns(const pb::Trace& frame) {
  pb::Trace out;
  uint64_t base = 0;
  for (const pb::TracePacket& packet : frame.packet()) {
    if (packet.has_frame()) base = packet.frame().base_time_ns();
    const auto* oneof = pb::TracePacket::descriptor()->FindOneofByName("data");
    const FieldDescriptor* f = packet.GetReflection()->GetOneofFieldDescriptor(packet, oneof);
    if (f != nullptr && EndsWith(f->name(), "_columns")) {
      Expand(packet, f, base, &out);
    } else {
      *out.add_packet() = packet;
    }
  }
  return out;
}

}  // namespace lumos::testing
