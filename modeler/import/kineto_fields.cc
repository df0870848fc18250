#include "modeler/import/kineto_fields.h"

#include <charconv>

namespace lumos::modeler::kineto {
namespace {

// The args read, by key. A table keeps the 30-odd keys readable and the loop a single pass.
struct IntArg {
  std::string_view key;
  std::optional<int64_t> EventArgs::*member;
};
constexpr IntArg kIntArgs[] = {
    {"External id", &EventArgs::external_id},
    {"correlation", &EventArgs::correlation},
    {"cbid", &EventArgs::cbid},
    {"device", &EventArgs::device},
    {"context", &EventArgs::context},
    {"stream", &EventArgs::stream},
    {"registers per thread", &EventArgs::registers},
    {"shared memory", &EventArgs::shared_memory},
    {"bytes", &EventArgs::bytes},
    {"fromDevice", &EventArgs::from_device},
    {"inDevice", &EventArgs::in_device},
    {"toDevice", &EventArgs::to_device},
    {"Sequence number", &EventArgs::sequence_number},
    {"Fwd thread id", &EventArgs::fwd_thread_id},
    {"wait_on_stream", &EventArgs::wait_on_stream},
    {"wait_on_cuda_event_record_corr_id", &EventArgs::wait_on_event_record_corr},
    {"wait_on_cuda_event_id", &EventArgs::wait_on_event_id},
    {"In msg nelems", &EventArgs::in_nelems},
    {"Group size", &EventArgs::group_size},
};

struct StringArg {
  std::string_view key;
  std::string_view EventArgs::*member;
};
constexpr StringArg kStringArgs[] = {
    {"cuda_sync_kind", &EventArgs::sync_kind},
    {"Collective name", &EventArgs::collective_name},
    {"dtype", &EventArgs::dtype},
    {"Process Group Name", &EventArgs::pg_name},
    {"Process Group Description", &EventArgs::pg_desc},
    {"name", &EventArgs::metadata_name},  // Of "M" (metadata) events.
};

struct ValueArg {
  std::string_view key;
  std::optional<dom::element> EventArgs::*member;
};
constexpr ValueArg kValueArgs[] = {
    {"grid", &EventArgs::grid},
    {"block", &EventArgs::block},
    {"Process Group Ranks", &EventArgs::pg_ranks},
    {"Input Dims", &EventArgs::input_dims},
    {"Input type", &EventArgs::input_types},
    {"Concrete Inputs", &EventArgs::concrete_inputs},
};

void ReadArg(std::string_view key, dom::element value, EventArgs* a) {
  for (const IntArg& arg : kIntArgs) {
    if (arg.key == key) {
      a->*arg.member = AsInt(value);
      return;
    }
  }
  for (const StringArg& arg : kStringArgs) {
    if (arg.key == key) {
      a->*arg.member = AsString(value);
      return;
    }
  }
  for (const ValueArg& arg : kValueArgs) {
    if (arg.key == key) {
      a->*arg.member = value;
      return;
    }
  }
}

}  // namespace

EventFields ReadEventFields(dom::object event) {
  EventFields f;
  for (auto [key, value] : event) {
    if (key == "ph") {
      f.ph = AsString(value);
      f.has_ph = true;
    } else if (key == "cat") {
      f.cat = AsString(value);
    } else if (key == "name") {
      f.has_name = value.get_string().get(f.name) == simdjson::SUCCESS;
    } else if (key == "ts") {
      f.ts = value;
    } else if (key == "dur") {
      f.dur = value;
    } else if (key == "pid") {
      f.pid = AsInt(value);
    } else if (key == "tid") {
      f.tid = AsInt(value);
    } else if (key == "args") {
      f.args = value;
    }
  }
  return f;
}

EventArgs ReadEventArgs(const EventFields& f) {
  EventArgs a;
  dom::object args;
  if (!f.args || f.args->get_object().get(args) != simdjson::SUCCESS) return a;
  for (auto [key, value] : args) ReadArg(key, value, &a);
  return a;
}

schema::Dim3 ReadDim3(dom::element value) {
  schema::Dim3 d;
  dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) return d;
  uint32_t* slots[3] = {&d.x, &d.y, &d.z};
  size_t i = 0;
  for (dom::element v : array) {
    if (i == 3) break;
    *slots[i++] = Id32OrZero(AsInt(v));
  }
  return d;
}

bool ReadRanks(dom::element value, std::vector<int32_t>* ranks) {
  dom::array array;
  if (value.get_array().get(array) == simdjson::SUCCESS) {
    for (dom::element v : array) {
      auto rank = AsInt(v);
      if (!rank || *rank < 0 || *rank > INT32_MAX) return false;
      ranks->push_back(static_cast<int32_t>(*rank));
    }
    return true;
  }
  std::string_view text = AsString(value);
  if (text.empty()) return false;
  int64_t current = -1;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      current = (current < 0 ? 0 : current) * 10 + (c - '0');
      if (current > INT32_MAX) return false;
    } else {
      if (current >= 0) ranks->push_back(static_cast<int32_t>(current));
      current = -1;
      if (c != '[' && c != ']' && c != ',' && c != ' ') return false;
    }
  }
  if (current >= 0) ranks->push_back(static_cast<int32_t>(current));
  return true;
}

bool ParseProfilerStep(std::string_view name, bool* has_number, int64_t* number) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  auto value = std::string_view(name).substr(kPrefix.size());
  int64_t n = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  *has_number = ec == std::errc() && end == value.data() + value.size();
  *number = *has_number ? n : 0;
  return true;
}

}  // namespace lumos::modeler::kineto
