#include "modeler/analysis/iteration_ranges.h"

#include <algorithm>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/analysis/iteration_detection.h"

namespace lumos::modeler {
namespace {

std::vector<IterationRange> MarkedRanges(const RankTrace& rank, int64_t offset,
                                         const AnalysisOptions& options) {
  std::vector<IterationRange> out;
  auto add = [&](std::string_view name, int64_t start, uint64_t duration, uint32_t thread) {
    IterationRange range;
    range.name = std::string(name);
    range.start_ns = start + offset;
    range.end_ns = start + offset + static_cast<int64_t>(duration);
    range.thread_id = thread;
    out.push_back(std::move(range));
  };
  for (const schema::HostRangeEvent& h : rank.host_ranges) {
    if (MayMarkIteration(h.name, h.category == schema::HostRangeCategory::kStep, options)) {
      add(h.name, h.start_ns, h.duration_ns, h.thread_id);
    }
  }
  for (const schema::NvtxEvent& n : rank.nvtx) {
    if (MayMarkIteration(n.name, false, options) && n.duration_ns > 0) {
      add(n.name, n.start_ns, n.duration_ns, n.thread_id);
    }
  }
  std::sort(out.begin(), out.end(), [](const IterationRange& a, const IterationRange& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.name < b.name;
  });
  return out;
}

}  // namespace

RankIterations FindIterations(const Job& job, const ExecutionGraph& g, uint32_t r,
                              const AnalysisOptions& options) {
  RankIterations out;
  out.ranges = MarkedRanges(job.ranks[r], g.rank_offset_ns[r], options);
  if (!out.ranges.empty()) {
    out.source = IterationSource::kRanges;
    return out;
  }
  const DetectedIterations detected = DetectIterations(g, r);
  for (size_t k = 0; k < detected.iterations(); ++k) {
    IterationRange range;
    range.name = "iteration " + std::to_string(k + 1) + " (detected, period " +
                 std::to_string(detected.period_kernels) + " kernels)";
    if (!detected.launches.empty()) {
      // Host boundaries, handled as a range on the launching thread.
      const Node& launch = g.nodes[detected.launches[k]];
      range.start_ns = launch.start_ns;
      range.end_ns = g.nodes[detected.launches[k + 1]].start_ns;
      range.thread_id = static_cast<uint32_t>(g.processors[launch.processor].id);
    } else {
      range.anchor_begin = detected.anchors[k];
      range.anchor_end = detected.anchors[k + 1];
      range.start_ns = g.nodes[range.anchor_begin].start_ns;
      range.end_ns = g.nodes[range.anchor_end].start_ns;
    }
    out.ranges.push_back(std::move(range));
  }
  if (!out.ranges.empty()) {
    out.source = IterationSource::kDetected;
    out.period_kernels = detected.period_kernels;
    return out;
  }
  int64_t begin = INT64_MAX, end = INT64_MIN;
  for (const Processor& p : g.processors) {
    if (p.rank_index != r) continue;
    for (uint32_t n : p.nodes) {
      begin = std::min(begin, g.nodes[n].start_ns);
      end = std::max(end, g.nodes[n].end_ns());
    }
  }
  if (begin < end) {
    IterationRange range;
    range.name = "whole trace";
    range.start_ns = begin;
    range.end_ns = end;
    out.ranges.push_back(std::move(range));
    out.source = IterationSource::kWholeTrace;
  }
  return out;
}

}  // namespace lumos::modeler
