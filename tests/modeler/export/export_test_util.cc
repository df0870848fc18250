#include "tests/modeler/export/export_test_util.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "base/logging.h"
#include "schema/writer/trace_file_writer.h"
#include "tests/testing/sample_trace.h"

namespace lumos::modeler::export_test {
namespace {

namespace a = ::lumos::schema;
using schema::ApiKind;

constexpr int64_t kUs = 1000;

a::ApiCallEvent Api(int64_t start_us, uint64_t dur_ns, uint32_t thread, uint64_t corr, ApiKind kind,
                    std::string_view name, uint64_t stream) {
  a::ApiCallEvent e;
  e.start_ns = kBaseNs + start_us * kUs;
  e.duration_ns = dur_ns;
  e.thread_id = thread;
  e.correlation_id = corr;
  e.kind = kind;
  e.name = name;
  e.stream_id = stream;
  e.domain = schema::ApiDomain::kRuntime;
  return e;
}

a::KernelEvent Kernel(int64_t start_us, uint64_t dur_ns, uint64_t corr, uint64_t stream,
                      std::string_view name) {
  a::KernelEvent k;
  k.start_ns = kBaseNs + start_us * kUs;
  k.duration_ns = dur_ns;
  k.correlation_id = corr;
  k.stream_id = stream;
  k.name = name;
  k.grid = {132, 1, 1};
  k.block = {256, 1, 1};
  k.registers_per_thread = 128;
  return k;
}

a::CollectiveEvent AllReduce(int64_t host_start_us, int64_t gpu_offset_us, uint64_t gpu_dur_us) {
  a::CollectiveEvent c;
  c.start_ns = kBaseNs + host_start_us * kUs;
  c.duration_ns = 500;
  c.has_host_time = true;
  c.comm_id = kCommId;
  c.seq_number = 1;
  c.op = schema::CollectiveOp::kAllReduce;
  c.count = kAllReduceBytes / 2;
  c.data_type = schema::DataType::kBfloat16;
  c.bytes = kAllReduceBytes;
  c.stream_id = 21;
  c.gpu_start_offset_ns = gpu_offset_us * kUs;
  c.gpu_duration_ns = gpu_dur_us * kUs;
  c.algorithm = schema::NcclAlgorithm::kRing;
  c.protocol = schema::NcclProtocol::kSimple;
  c.comm_size = 2;
  return c;
}

std::unique_ptr<a::TraceFileWriter> Create(const std::string& path, int rank,
                                           const std::string& host, uint32_t pid) {
  a::HeaderInfo header = ::lumos::testing::SampleHeader(rank, 2);
  header.host_name = host;
  header.pid = pid;
  a::WriterOptions options;
  options.frame_bytes = 512;  // Several frames: interning and time bases reset in between.
  auto writer = a::TraceFileWriter::Create(path, header, options);
  LUMOS_CHECK(writer.ok());
  return std::move(writer).value();
}

void WriteRank0(const std::string& path) {
  auto w = Create(path, 0, "node-a", 4242);
  w->AddThread(a::ThreadEvent{kMainThread, "main", 4242});
  a::CaptureWindowEvent window;
  window.start_ns = kBaseNs;
  window.duration_ns = 30 * kUs;
  window.trigger = schema::WindowTrigger::kWholeRun;
  w->Add(window);

  a::NvtxEvent forward;
  forward.start_ns = kBaseNs;
  forward.duration_ns = 10 * kUs;
  forward.thread_id = kMainThread;
  forward.name = "forward";
  forward.kind = schema::NvtxKind::kPushPop;
  a::NvtxEvent layer = forward;
  layer.start_ns = kBaseNs + 1 * kUs;
  layer.duration_ns = 5 * kUs;
  layer.name = "layer1";
  layer.depth = 1;
  a::NvtxEvent async = forward;  // Starts inside forward, ends after it.
  async.start_ns = kBaseNs + 8 * kUs;
  async.duration_ns = 6 * kUs;
  async.name = "async-range";
  async.kind = schema::NvtxKind::kStartEnd;
  async.range_id = 5;
  // Children first, as an NVTX injection writes them (at pop).
  w->Add(Api(2, 500, kMainThread, 1, ApiKind::kLaunchKernel, "cudaLaunchKernel", 7));
  w->Add(layer);
  w->Add(Api(6, 300, kMainThread, 2, ApiKind::kEventRecord, "cudaEventRecord", 7));
  w->Add(forward);
  w->Add(async);

  a::ApiCallEvent wait_call =
      Api(7, 300, kWorkerThread, 3, ApiKind::kStreamWaitEvent, "cudaStreamWaitEvent", 13);
  wait_call.event_id = 55;
  w->Add(wait_call);
  a::SyncEvent wait;
  wait.start_ns = kBaseNs + 7 * kUs;
  wait.duration_ns = 300;
  wait.sync_type = schema::SyncType::kStreamWaitEvent;
  wait.correlation_id = 3;
  wait.stream_id = 13;
  wait.event_id = 55;
  wait.cuda_event_sync_id = 77;
  wait.thread_id = kWorkerThread;
  w->Add(wait);
  w->Add(Api(7, 600, kWorkerThread, 0, ApiKind::kOther, "cudaGetDevice", 0));  // Encloses the wait.
  w->Add(Api(8, 400, kWorkerThread, 4, ApiKind::kLaunchKernel, "cudaLaunchKernel", 13));
  w->Add(Api(11, 200, kWorkerThread, 5, ApiKind::kMemcpyAsync, "cudaMemcpyAsync", 13));

  w->Add(Kernel(3, 6 * kUs, 1, 7, "gemm"));
  a::CudaEventRecordEvent record;
  record.start_ns = kBaseNs + 9 * kUs;
  record.correlation_id = 2;
  record.event_id = 55;
  record.stream_id = 7;
  record.cuda_event_sync_id = 77;
  record.has_device_timestamp = true;
  w->Add(record);
  w->Add(Kernel(9, 1500, 4, 13, "relu"));
  a::MemcpyEvent copy;
  copy.start_ns = kBaseNs + 12 * kUs + 1;  // One odd ns more: ts must keep it.
  copy.duration_ns = 1 * kUs;
  copy.correlation_id = 5;
  copy.stream_id = 13;
  copy.bytes = 4 << 20;
  copy.copy_kind = schema::CopyKind::kHtod;
  copy.src_kind = schema::MemoryKind::kPinned;
  copy.dst_kind = schema::MemoryKind::kDevice;
  w->Add(copy);

  w->Add(AllReduce(15, 1, 5));
  a::LossEvent loss;
  loss.start_ns = kBaseNs + 20 * kUs;
  loss.source = schema::LossSource::kRingFull;
  loss.count = 3;
  loss.thread_id = kWorkerThread;
  loss.detail = "ring full";
  w->Add(loss);
  LUMOS_CHECK(w->Close(kBaseNs + 30 * kUs).ok());
}

void WriteRank1(const std::string& path) {
  auto w = Create(path, 1, "node-b", 4343);
  w->Add(Api(1, 200, kRank1Thread, 1, ApiKind::kLaunchKernel, "cudaLaunchKernel", 7));
  w->Add(Kernel(1, 1000, 1, 7, "gemm_rank1"));
  w->Add(AllReduce(16, 1, 4));  // GPU [17, 21] µs: the last to arrive.
  LUMOS_CHECK(w->Close(kBaseNs + 30 * kUs).ok());
}

int64_t ToNs(double us) { return std::llround(us * 1000.0); }

struct Interval {
  int64_t start, end;
};

// Slices and instants of each row, sorted by (start, longer first).
std::map<std::pair<uint32_t, uint32_t>, std::vector<Interval>> SlicesByRow(const ParsedTrace& t) {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<Interval>> rows;
  for (const Event& e : t.events) {
    if (e.ph != "X" && e.ph != "i") continue;
    rows[{e.pid, e.tid}].push_back({e.ts_ns, e.ts_ns + std::max<int64_t>(e.dur_ns, 0)});
  }
  for (auto& [row, slices] : rows) {
    std::sort(slices.begin(), slices.end(), [](const Interval& x, const Interval& y) {
      return std::tie(x.start, y.end) < std::tie(y.start, x.end);
    });
  }
  return rows;
}

}  // namespace

void WriteTwoRankScenario(const std::string& dir) {
  WriteRank0(dir + "/rank0.pb.zst");
  WriteRank1(dir + "/rank1.pb.zst");
}

const Event& ParsedTrace::Slice(const std::string& name, uint32_t pid) const {
  const Event* found = nullptr;
  int count = 0;
  for (const Event& e : events) {
    if ((e.ph == "X" || e.ph == "i") && e.name == name && e.pid == pid) {
      found = &e;
      ++count;
    }
  }
  EXPECT_EQ(count, 1) << "slices named '" << name << "' in pid " << pid;
  static const Event kNone;
  return found != nullptr ? *found : kNone;
}

std::vector<const Event*> ParsedTrace::Flows(const std::string& category) const {
  std::vector<const Event*> flows;
  for (const Event& e : events) {
    if ((e.ph == "s" || e.ph == "f") && e.cat == category) flows.push_back(&e);
  }
  return flows;
}

uint32_t ParsedTrace::Tid(uint32_t pid, const std::string& name) const {
  for (const auto& [key, row] : rows) {
    if (key.first == pid && row.name == name) return key.second;
  }
  return 0;
}

::testing::AssertionResult ParseTrace(const std::string& json, ParsedTrace* trace) {
  if (trace->parser->parse(json).get(trace->root) != simdjson::SUCCESS) {
    return ::testing::AssertionFailure() << "not valid JSON";
  }
  simdjson::dom::array events;
  if (trace->root["traceEvents"].get_array().get(events) != simdjson::SUCCESS) {
    return ::testing::AssertionFailure() << "no traceEvents array";
  }
  for (simdjson::dom::element element : events) {
    Event e;
    std::string_view text;
    if (element["ph"].get_string().get(text) != simdjson::SUCCESS) {
      return ::testing::AssertionFailure() << "event without ph: " << element;
    }
    e.ph = text;
    uint64_t number = 0;
    if (element["pid"].get_uint64().get(number) != simdjson::SUCCESS) {
      return ::testing::AssertionFailure() << "event without pid: " << element;
    }
    e.pid = static_cast<uint32_t>(number);
    if (element["tid"].get_uint64().get(number) == simdjson::SUCCESS) {
      e.tid = static_cast<uint32_t>(number);
    }
    if (element["name"].get_string().get(text) == simdjson::SUCCESS) e.name = text;
    if (element["cat"].get_string().get(text) == simdjson::SUCCESS) e.cat = text;
    if (element["bp"].get_string().get(text) == simdjson::SUCCESS) e.bp = text;
    if (element["s"].get_string().get(text) == simdjson::SUCCESS) e.scope = text;
    double us = 0;
    if (element["ts"].get_double().get(us) == simdjson::SUCCESS) e.ts_ns = ToNs(us);
    if (element["dur"].get_double().get(us) == simdjson::SUCCESS) e.dur_ns = ToNs(us);
    if (element["id"].get_uint64().get(number) == simdjson::SUCCESS) e.id = number;
    if (element["args"].get(e.args) != simdjson::SUCCESS) e.args = simdjson::dom::element();
    if (e.ph == "M") {
      if (e.name == "process_name") {
        trace->process_names[e.pid] = std::string(std::string_view(element["args"]["name"]));
      } else if (e.name == "thread_name") {
        trace->rows[{e.pid, e.tid}].name = std::string(std::string_view(element["args"]["name"]));
      } else if (e.name == "thread_sort_index") {
        trace->rows[{e.pid, e.tid}].sort_index = int64_t(element["args"]["sort_index"]);
      }
      continue;
    }
    if (e.ts_ns < 0) return ::testing::AssertionFailure() << "event without ts: " << element;
    if (e.ph == "X" && e.dur_ns < 0) {
      return ::testing::AssertionFailure() << "X event without dur: " << element;
    }
    trace->events.push_back(std::move(e));
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult RowsNest(const ParsedTrace& trace) {
  for (const auto& [row, slices] : SlicesByRow(trace)) {
    std::vector<Interval> open;
    for (const Interval& s : slices) {
      while (!open.empty() && open.back().end <= s.start) open.pop_back();
      if (!open.empty() && s.end > open.back().end) {
        return ::testing::AssertionFailure()
               << "pid " << row.first << " tid " << row.second << ": [" << s.start << ", " << s.end
               << ") starts inside [" << open.back().start << ", " << open.back().end
               << ") and ends after it";
      }
      open.push_back(s);
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult FlowsPaired(const ParsedTrace& trace) {
  std::map<uint64_t, std::vector<const Event*>> by_id;
  for (const Event& e : trace.events) {
    if (e.ph == "s" || e.ph == "f") by_id[e.id].push_back(&e);
  }
  auto rows = SlicesByRow(trace);
  auto inside_slice = [&](const Event& e) {
    for (const Interval& s : rows[{e.pid, e.tid}]) {
      if (s.start <= e.ts_ns && (e.ts_ns < s.end || s.start == s.end)) return true;
    }
    return false;
  };
  for (const auto& [id, ends] : by_id) {
    if (ends.size() != 2 || ends[0]->ph != "s" || ends[1]->ph != "f") {
      return ::testing::AssertionFailure() << "flow " << id << " is not one s then one f";
    }
    const Event& s = *ends[0];
    const Event& f = *ends[1];
    if (s.cat != f.cat || s.name != f.name || s.cat.empty()) {
      return ::testing::AssertionFailure() << "flow " << id << ": cat/name differ";
    }
    if (f.bp != "e") return ::testing::AssertionFailure() << "flow " << id << ": f without bp e";
    if (f.ts_ns < s.ts_ns) return ::testing::AssertionFailure() << "flow " << id << " goes back";
    if (!inside_slice(s) || !inside_slice(f)) {
      return ::testing::AssertionFailure() << "flow " << id << " has an end outside any slice";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult TimesHaveThreeDecimals(const std::string& json) {
  int count = 0;
  for (std::string_view key : {"\"ts\":", "\"dur\":"}) {
    for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
      size_t begin = at + key.size();
      size_t end = json.find_first_of(",}", begin);
      std::string_view value(json.data() + begin, end - begin);
      size_t dot = value.find('.');
      bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return (c >= '0' && c <= '9') || c == '.';
      });
      if (!digits || dot == 0 || dot == std::string_view::npos || value.size() - dot != 4 ||
          value.find('.', dot + 1) != std::string_view::npos) {
        return ::testing::AssertionFailure() << "time value '" << value << "'";
      }
      ++count;
    }
  }
  if (count == 0) return ::testing::AssertionFailure() << "no ts in the output";
  return ::testing::AssertionSuccess();
}

}  // namespace lumos::modeler::export_test
