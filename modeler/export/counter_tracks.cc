#include "modeler/export/counter_tracks.h"

#include <algorithm>
#include <climits>
#include <set>

#include "modeler/export/export_index.h"
#include "modeler/export/flow_linker.h"
#include "modeler/export/track_layout.h"

namespace lumos::modeler::internal {
namespace {

int64_t BinOf(int64_t t, int64_t origin) { return (t - origin) / kCounterBinNs; }
int64_t BinStart(int64_t bin, int64_t origin) { return origin + bin * kCounterBinNs; }

// "GPU busy": the share of each bin with any of `intervals` running (they may overlap).
void WriteBusy(std::vector<std::pair<int64_t, int64_t>> intervals, int64_t origin,
               CounterTrack* track) {
  std::sort(intervals.begin(), intervals.end());
  int64_t bin = -1, busy = 0, covered_to = INT64_MIN;
  for (auto [a, b] : intervals) {
    a = std::max({a, covered_to, origin});
    if (a >= b) continue;
    covered_to = b;
    while (a < b) {
      const int64_t at = BinOf(a, origin);
      if (at != bin) {
        if (bin >= 0) {
          track->Point(BinStart(bin, origin), static_cast<double>(busy) / kCounterBinNs);
          if (at > bin + 1) track->Point(BinStart(bin + 1, origin), 0);
        }
        bin = at;
        busy = 0;
      }
      const int64_t stop = std::min(b, BinStart(bin + 1, origin));
      busy += stop - a;
      a = stop;
      // The whole bins inside the interval are all busy: one point at the first of them, then on
      // from the last, instead of a step per bin (a record with a broken timestamp can span
      // decades of bins; the points are the same, equal values are written once).
      if (const int64_t last_whole = BinOf(b, origin) - 1; a < b && last_whole > bin) {
        track->Point(BinStart(bin, origin), static_cast<double>(busy) / kCounterBinNs);
        track->Point(BinStart(bin + 1, origin), 1.0);
        bin = last_whole;
        busy = kCounterBinNs;
        a = BinStart(last_whole + 1, origin);
      }
    }
  }
  if (bin >= 0) {
    track->Point(BinStart(bin, origin), static_cast<double>(busy) / kCounterBinNs);
    track->Point(BinStart(bin + 1, origin), 0);
  }
}

// "launch queue": the largest depth in each bin of +1/-1 `steps` (time, delta).
void WriteQueue(std::vector<std::pair<int64_t, int>> steps, int64_t origin, CounterTrack* track) {
  std::sort(steps.begin(), steps.end());  // At equal times ends (-1) first.
  int depth = 0, bin_max = 0;
  int64_t bin = -1;
  for (const auto& [t, delta] : steps) {
    const int64_t at = BinOf(std::max(t, origin), origin);
    if (at != bin) {
      if (bin >= 0) {
        track->Point(BinStart(bin, origin), bin_max);
        if (at > bin + 1) track->Point(BinStart(bin + 1, origin), depth);
      }
      bin = at;
      bin_max = depth;
    }
    depth += delta;
    bin_max = std::max(bin_max, depth);
  }
  if (bin >= 0) {
    track->Point(BinStart(bin, origin), bin_max);
    track->Point(BinStart(bin + 1, origin), depth);
  }
}

}  // namespace

void CounterTrack::Point(int64_t t_ns, double value) {
  if (written_ && value == last_) return;
  written_ = true;
  last_ = value;
  w_->BeginObject();
  w_->KeyString("ph", "C");
  w_->KeyString("name", name_);
  w_->KeyInt("pid", pid_);
  w_->Key("ts");
  w_->Micros(static_cast<uint64_t>(std::max<int64_t>(0, t_ns - origin_ns_)));
  w_->Key("args");
  w_->BeginObject();
  w_->Key(arg_);
  w_->Fixed(value, 3);
  w_->EndObject();
  w_->EndObject();
}

void WriteRankCounters(RankCounters counters, int64_t pid, int64_t origin_ns, io::JsonWriter* w) {
  std::vector<std::pair<int64_t, int64_t>> busy;
  std::vector<std::pair<int64_t, int>> queue;
  busy.reserve(counters.ops.size());
  queue.reserve(2 * counters.ops.size());
  for (const RankCounters::Op& op : counters.ops) {
    busy.emplace_back(op.start_ns, op.end_ns);
    queue.emplace_back(std::min(op.queued_ns, op.start_ns), 1);
    queue.emplace_back(op.end_ns, -1);
  }
  counters.ops = {};
  CounterTrack busy_track(w, "GPU busy", "share", pid, origin_ns);
  WriteBusy(std::move(busy), origin_ns, &busy_track);
  CounterTrack queue_track(w, "launch queue", "ops", pid, origin_ns);
  WriteQueue(std::move(queue), origin_ns, &queue_track);
  // Each arrival's lateness from its start to its end; where arrivals overlap (collectives of
  // two communicators on two streams), the latest-started one still running; 0 when none is.
  // One point per time, after every start and end at it.
  const std::vector<RankCounters::Arrival>& arrivals = counters.arrivals;
  std::vector<std::pair<int64_t, size_t>> starts, ends;  // (time, arrival)
  starts.reserve(arrivals.size());
  ends.reserve(arrivals.size());
  for (size_t i = 0; i < arrivals.size(); ++i) {
    if (arrivals[i].end_ns <= arrivals[i].start_ns) continue;
    starts.emplace_back(arrivals[i].start_ns, i);
    ends.emplace_back(arrivals[i].end_ns, i);
  }
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  std::set<std::pair<int64_t, size_t>> running;  // (start, arrival)
  CounterTrack late_track(w, "arrival late by", "us", pid, origin_ns);
  size_t s = 0, e = 0;
  while (s < starts.size() || e < ends.size()) {
    const int64_t t = std::min(s < starts.size() ? starts[s].first : INT64_MAX,
                               e < ends.size() ? ends[e].first : INT64_MAX);
    for (; e < ends.size() && ends[e].first == t; ++e) {
      running.erase({arrivals[ends[e].second].start_ns, ends[e].second});
    }
    for (; s < starts.size() && starts[s].first == t; ++s) running.insert(starts[s]);
    late_track.Point(t, running.empty() ? 0.0 : arrivals[running.rbegin()->second].late_us);
  }
}

void WriteExportCounters(const std::vector<FileIndex>& files,
                         const std::vector<std::vector<CollectiveInstance>>& collectives,
                         const std::vector<ProcessLayout>& layouts, int64_t origin_ns,
                         io::JsonWriter* w) {
  std::vector<RankCounters> counters(files.size());
  for (const std::vector<CollectiveInstance>& instances : collectives) {
    if (instances.size() < 2) continue;
    int64_t first = INT64_MAX;
    for (const CollectiveInstance& i : instances) first = std::min(first, i.ref->start_ns);
    for (const CollectiveInstance& i : instances) {
      counters[i.file].arrivals.push_back(
          {i.ref->start_ns, i.ref->end_ns, static_cast<double>(i.ref->start_ns - first) / 1e3});
    }
  }
  for (size_t f = 0; f < files.size(); ++f) {
    const FileIndex& file = files[f];
    RankCounters& c = counters[f];
    c.ops.reserve(file.gpu_ops.size());
    for (const GpuOpRef& op : file.gpu_ops) {
      int64_t queued = op.start_ns;
      if (auto it = file.api_by_correlation.find(op.correlation_id);
          op.correlation_id != 0 && it != file.api_by_correlation.end()) {
        queued = it->second.start_ns;
      }
      c.ops.push_back({queued, op.start_ns, op.end_ns});
    }
    WriteRankCounters(std::move(c), layouts[f].pid, origin_ns, w);
  }
}

}  // namespace lumos::modeler::internal
