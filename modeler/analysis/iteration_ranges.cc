#include "modeler/analysis/iteration_ranges.h"

#include <algorithm>

#include "modeler/analysis/iteration_analysis.h"
#include "modeler/analysis/iteration_detection.h"
#include "modeler/graph/duration_text.h"
#include "modeler/graph/median.h"

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

// Ranges as users time steps (the header's Design): each to the next one's start unless the next
// starts inside it, the last one to the end of its work.
void ExtendRanges(const ExecutionGraph& g, uint32_t r, std::vector<IterationRange>* ranges) {
  if (ranges->empty()) return;
  for (size_t i = 0; i + 1 < ranges->size(); ++i) {
    IterationRange& range = (*ranges)[i];
    range.end_ns = std::max(range.end_ns, (*ranges)[i + 1].start_ns);
  }
  // The last one: to the end of its work, where the host saw it end, i.e. the call on the range's
  // thread that was blocked until that work was done (the loop's synchronize, an .item()). With
  // no such call the host never waited for it (an asynchronous loop, a trace cut mid-step): the
  // range keeps its end, as a user's timer would.
  IterationRange& last = ranges->back();
  int64_t work_end = last.end_ns;
  for (const Processor& p : g.processors) {
    if (p.rank_index != r || !p.gpu) continue;
    for (uint32_t n : p.nodes) {
      const Node& op = g.nodes[n];
      if (op.launch == kNoNode) continue;
      const int64_t launched = g.nodes[op.launch].start_ns;
      if (launched >= last.start_ns && launched < last.end_ns) {
        work_end = std::max(work_end, op.end_ns());
      }
    }
  }
  for (const Processor& p : g.processors) {
    if (p.rank_index != r || p.gpu || p.id != last.thread_id) continue;
    for (uint32_t n : p.nodes) {
      const Node& call = g.nodes[n];
      if (call.sync != kNoNode && call.start_ns >= last.start_ns && call.start_ns < work_end &&
          call.end_ns() >= work_end) {
        last.end_ns = std::max(last.end_ns, call.end_ns());
      }
    }
  }
}

std::vector<int64_t> Lengths(const RankIterations& rank) {
  std::vector<int64_t> lengths;
  lengths.reserve(rank.ranges.size());
  for (const IterationRange& range : rank.ranges) lengths.push_back(range.end_ns - range.start_ns);
  return lengths;
}

std::string Span(size_t first, size_t end) {  // 0-based [first, end) as 1-based ordinals.
  if (end == first + 1) return "iteration " + std::to_string(first + 1);
  return "iterations " + std::to_string(first + 1) + "-" + std::to_string(end);
}

// The first iteration at or after `first` (0-based, the same ordinal on every rank) in which
// a rank's trace says it lost events (a LossRecord whose span overlaps it), or SIZE_MAX; the
// events lost from there on in `lost`. A record with no time (start 0) places nothing.
size_t FirstLossyIteration(const Job& job, const ExecutionGraph& g, const JobIterations& found,
                           size_t first, uint64_t* lost) {
  size_t lossy = SIZE_MAX;
  for (size_t r = 0; r < found.ranks.size() && r < job.ranks.size(); ++r) {
    const std::vector<IterationRange>& ranges = found.ranks[r].ranges;
    for (const schema::LossEvent& loss : job.ranks[r].losses) {
      if (loss.start_ns == 0 || loss.count == 0) continue;
      const int64_t begin = loss.start_ns + g.rank_offset_ns[r];
      const int64_t end = begin + static_cast<int64_t>(loss.duration_ns);
      for (size_t k = first; k < ranges.size(); ++k) {
        if (ranges[k].end_ns > begin && ranges[k].start_ns <= end) {
          lossy = std::min(lossy, k);
          break;
        }
      }
    }
  }
  *lost = 0;
  if (lossy == SIZE_MAX) return lossy;
  for (size_t r = 0; r < found.ranks.size() && r < job.ranks.size(); ++r) {
    const std::vector<IterationRange>& ranges = found.ranks[r].ranges;
    if (lossy >= ranges.size()) continue;
    for (const schema::LossEvent& loss : job.ranks[r].losses) {
      const int64_t end =
          loss.start_ns + g.rank_offset_ns[r] + static_cast<int64_t>(loss.duration_ns);
      if (loss.start_ns != 0 && end >= ranges[lossy].start_ns) *lost += loss.count;
    }
  }
  return lossy;
}

}  // namespace

size_t LeadingWarmup(const std::vector<int64_t>& lengths_ns) {
  const int64_t median = MedianOf(lengths_ns);
  size_t warmup = 0;
  // A length over 1.5 x the median, in integers: 2 x length > 3 x median.
  while (warmup < lengths_ns.size() / 2 && 2 * lengths_ns[warmup] > 3 * median) ++warmup;
  return warmup;
}

JobIterations FindJobIterations(const Job& job, const ExecutionGraph& g,
                                const AnalysisOptions& options) {
  JobIterations out;
  out.ranks.reserve(job.ranks.size());
  for (uint32_t r = 0; r < job.ranks.size(); ++r) {
    out.ranks.push_back(FindIterations(job, g, r, options));
    out.found = std::max(out.found, out.ranks.back().ranges.size());
  }
  const IterationChoice& choice = options.choice;
  size_t first = 0, end = out.found;
  const std::string of = " of " + std::to_string(out.found);
  switch (choice.kind) {
    case IterationChoice::Kind::kAll:
      out.choice = "all " + std::to_string(out.found) + " (--iterations all)";
      break;
    case IterationChoice::Kind::kOrdinals:
      first = std::min(choice.first - 1, out.found);
      end = choice.last == 0 ? out.found : std::min(choice.last, out.found);
      out.choice = first < end ? Span(first, end) + of : "none of " + std::to_string(out.found);
      out.choice += " (--iterations " + std::to_string(choice.first) +
                    (choice.last == choice.first ? ""
                     : choice.last == 0          ? "-"
                                                 : "-" + std::to_string(choice.last)) +
                    ")";
      break;
    case IterationChoice::Kind::kWarmupRule: {
      size_t by_rank = 0;  // The rank index with the most warm-up iterations.
      for (size_t r = 0; r < out.ranks.size(); ++r) {
        const size_t warmup = LeadingWarmup(Lengths(out.ranks[r]));
        if (warmup > first) {
          first = warmup;
          by_rank = r;
        }
      }
      // Iterations in which the trace lost events replay without them: from the first such
      // one on, they are left out too (unless nothing would be left).
      uint64_t lost = 0;
      const size_t lossy = FirstLossyIteration(job, g, out, first, &lost);
      const bool cut = lossy != SIZE_MAX && lossy > first;
      if (cut) end = lossy;
      const std::string lossy_text = cut ? "; " + Span(lossy, out.found) +
                                               " left out: the trace lost " + std::to_string(lost) +
                                               " events in them (--iterations all keeps them)"
                                         : std::string();
      if (first == 0 && cut) {
        out.choice = Span(first, end) + of + ":" + lossy_text.substr(1);
        break;
      }
      if (first == 0) {
        out.choice = out.found == 1 ? std::string("the only one")
                                    : "all " + std::to_string(out.found) +
                                          " (no leading iteration is longer than 1.5 x the "
                                          "median: no warm-up to leave out)";
        break;
      }
      const std::vector<int64_t> lengths = Lengths(out.ranks[by_rank]);
      out.choice = Span(first, end) + of + ": " + Span(0, first) + " left out as warm-up (" +
                   DurationText(lengths[0]) + (first > 1 ? ", ..." : "") +
                   ", longer than 1.5 x the median " + DurationText(MedianOf(lengths)) +
                   (out.ranks.size() > 1 ? " on rank " + std::to_string(job.ranks[by_rank].rank)
                                         : std::string()) +
                   "; --iterations all keeps them)" + lossy_text;
      break;
    }
  }
  out.first = first;
  for (RankIterations& rank : out.ranks) {
    std::vector<IterationRange>& ranges = rank.ranges;
    const size_t stop = std::min(end, ranges.size());
    if (first >= stop) {
      ranges.clear();
      continue;
    }
    ranges.erase(ranges.begin() + static_cast<std::ptrdiff_t>(stop), ranges.end());
    ranges.erase(ranges.begin(), ranges.begin() + static_cast<std::ptrdiff_t>(first));
    out.kept = std::max(out.kept, ranges.size());
  }
  return out;
}

RankIterations FindIterations(const Job& job, const ExecutionGraph& g, uint32_t r,
                              const AnalysisOptions& options) {
  RankIterations out;
  out.ranges = MarkedRanges(job.ranks[r], g.rank_offset_ns[r], options);
  if (!out.ranges.empty()) {
    ExtendRanges(g, r, &out.ranges);
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
