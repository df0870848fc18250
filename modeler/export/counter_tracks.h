// Design: counter ("C") tracks for Chrome/Perfetto traces, shared by `lumos-model export` (from
// the pass-1 indexes, no graph) and `replay --timeline` (from the graph and its simulation):
//   "GPU busy"         the share of each kCounterBinNs bin with a GPU op of the rank running;
//   "launch queue"     GPU ops launched (their launch API call started) and not yet ended, the
//                      largest depth in each bin (an op with no launch counts from its start);
//   "arrival late by"  at each collective the rank took part in, how long after the first
//                      member it arrived (its op's start), µs; back to 0 at its end. Where
//                      collectives overlap (two communicators, two streams) or one starts as
//                      another ends, the latest-started one still running.
// Bins start at the trace's time origin. A point is written only where the value changes, so
// idle time costs nothing and a track has at most two points per op.
// Threading: one writer per thread.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "modeler/io/json_writer.h"

namespace lumos::modeler::internal {

struct CollectiveInstance;
struct FileIndex;
struct ProcessLayout;

inline constexpr int64_t kCounterBinNs = 100'000;

// One counter track (name, pid); its points' arg is `arg`. Points must come in time order.
class CounterTrack {
 public:
  CounterTrack(io::JsonWriter* w, const char* name, const char* arg, int64_t pid, int64_t origin_ns)
      : w_(w), name_(name), arg_(arg), pid_(pid), origin_ns_(origin_ns) {}
  void Point(int64_t t_ns, double value);

 private:
  io::JsonWriter* w_;
  const char* name_;
  const char* arg_;
  int64_t pid_, origin_ns_;
  bool written_ = false;
  double last_ = 0;
};

// A rank's counters from its GPU ops, each as (launch time or start, start, end), and its
// collective arrivals as (start, end, µs late).
struct RankCounters {
  struct Op {
    int64_t queued_ns, start_ns, end_ns;
  };
  struct Arrival {
    int64_t start_ns, end_ns;
    double late_us;
  };
  std::vector<Op> ops;
  std::vector<Arrival> arrivals;
};

// Writes the three tracks of one rank's process `pid`.
void WriteRankCounters(RankCounters counters, int64_t pid, int64_t origin_ns, io::JsonWriter* w);

// Export: every file's counters from its pass-1 index (ops joined to their launch calls by
// correlation id; arrivals from the collectives matched across files as the flows match them).
// `collectives`: GroupCollectives(files) (flow_linker.h).
void WriteExportCounters(const std::vector<FileIndex>& files,
                         const std::vector<std::vector<CollectiveInstance>>& collectives,
                         const std::vector<ProcessLayout>& layouts, int64_t origin_ns,
                         io::JsonWriter* w);

}  // namespace lumos::modeler::internal
