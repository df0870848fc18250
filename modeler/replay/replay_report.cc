#include "modeler/replay/replay_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "modeler/io/json_writer.h"
#include "modeler/replay/gpu_breakdown.h"
#include "modeler/replay/iteration_bound.h"
#include "modeler/replay/stragglers.h"

namespace lumos::modeler {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

struct BusySummary {
  double mean = 0, p10 = 0, p50 = 0;
};

BusySummary Summarize(std::vector<double> bins) {
  BusySummary s;
  if (bins.empty()) return s;
  double sum = 0;
  for (double b : bins) sum += b;
  s.mean = sum / static_cast<double>(bins.size());
  std::sort(bins.begin(), bins.end());
  s.p10 = bins[bins.size() / 10];
  s.p50 = bins[bins.size() / 2];
  return s;
}

void AddBreakdown(const Breakdown& b, double weight, double sums[4]) {
  const int64_t total = b.total_ns();
  sums[0] += weight * Percent(b.exposed_compute_ns, total);
  sums[1] += weight * Percent(b.overlapped_ns, total);
  sums[2] += weight * Percent(b.exposed_comm_ns, total);
  sums[3] += weight * Percent(b.other_ns, total);
}

// A diagnostic's text with the node name it quotes cut to its first kNoteNameChars characters
// (at a UTF-8 boundary) and "…": kernel names run to hundreds. The JSON keeps it whole.
constexpr size_t kNoteNameChars = 80;

std::string NoteText(const GraphDiagnostic& d) {
  const size_t at = d.name.size() > kNoteNameChars ? d.what.find(d.name) : std::string::npos;
  if (at == std::string::npos) return d.what;
  size_t cut = kNoteNameChars;
  while (cut > 0 && (static_cast<unsigned char>(d.name[cut]) & 0xC0) == 0x80) --cut;
  return d.what.substr(0, at) + std::string(d.name.substr(0, cut)) + "…" +
         d.what.substr(at + d.name.size());
}

void PrintDiagnostic(std::FILE* out, const GraphDiagnostic& d, int64_t origin) {
  const std::string what = NoteText(d);
  if (d.rank == kWholeJob) {
    std::fprintf(out, "  %s\n", what.c_str());
  } else {
    std::fprintf(out, "  rank %u at %.3f ms: %s\n", d.rank, Ms(d.time_ns - origin), what.c_str());
  }
}

// "1 iteration", "8 iterations".
std::string Count(size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Under a count of `total` things of which `listed` were printed: how many were not.
void PrintNotListed(std::FILE* out, uint64_t total, size_t listed) {
  if (total > listed) std::fprintf(out, "  ... and %" PRIu64 " more not listed\n", total - listed);
}

// One line per named host; the ranks whose host is not recorded (each is a host of its own)
// share one line; a single host has nothing to align.
void PrintClocks(std::FILE* out, const ClockAlignment& alignment, int64_t origin) {
  const std::vector<HostAlignment>& hosts = alignment.hosts;
  std::vector<int32_t> unnamed;
  int64_t min_offset = INT64_MAX, max_offset = INT64_MIN, max_residual = 0;
  uint64_t min_collectives = UINT64_MAX, max_collectives = 0;
  std::vector<const HostAlignment*> jumps;
  for (const HostAlignment& h : hosts) {
    const std::string ranks = RankListText(h.ranks);
    if (h.jump_ns != 0) jumps.push_back(&h);
    if (hosts.size() == 1) {
      std::fprintf(out, "clock: one host (%s; %s): nothing to align\n",
                   h.host.empty() ? "name not recorded" : h.host.c_str(), ranks.c_str());
    } else if (!h.host.empty()) {
      std::fprintf(out,
                   "clock: host %s (%s): offset %+.3f ms, residual skew %.3f ms over %" PRIu64
                   " collectives\n",
                   h.host.c_str(), ranks.c_str(), Ms(h.offset_ns), Ms(h.residual_ns),
                   h.collectives);
    } else {
      unnamed.insert(unnamed.end(), h.ranks.begin(), h.ranks.end());
      min_offset = std::min(min_offset, h.offset_ns);
      max_offset = std::max(max_offset, h.offset_ns);
      max_residual = std::max(max_residual, h.residual_ns);
      min_collectives = std::min(min_collectives, h.collectives);
      max_collectives = std::max(max_collectives, h.collectives);
    }
  }
  if (!unnamed.empty()) {
    std::string collectives = std::to_string(min_collectives);
    if (max_collectives != min_collectives) collectives += "-" + std::to_string(max_collectives);
    std::fprintf(out,
                 "clock: host not recorded for %s (each aligned on its own): offset %+.3f to "
                 "%+.3f ms, residual skew <= %.3f ms over %s collectives\n",
                 RankListText(unnamed).c_str(), Ms(min_offset), Ms(max_offset), Ms(max_residual),
                 collectives.c_str());
  }
  for (const HostAlignment* h : jumps) {
    const std::string who = h->host.empty() ? RankListText(h->ranks) : "host " + h->host;
    std::fprintf(out, "  warning: %s: its clock jumps by %+.3f ms at %.3f ms\n", who.c_str(),
                 Ms(h->jump_ns), Ms(h->jump_at_ns - origin));
  }
}

// Iteration rows in the text report before it shows only the worst ones.
constexpr size_t kMaxIterationRows = 64;

const char* kBreakdownNames[4] = {"exposed compute", "overlapped", "exposed comm", "other/idle"};

}  // namespace

std::string RankListText(std::vector<int32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (i > 0) text += ",";
    text += std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

double ReplayReport::mean_abs_error() const {
  if (iterations.empty()) return 0;
  double sum = 0;
  for (const IterationReport& it : iterations) sum += std::fabs(it.error_percent());
  return sum / static_cast<double>(iterations.size());
}

double ReplayReport::max_abs_error() const {
  double max = 0;
  for (const IterationReport& it : iterations) max = std::max(max, std::fabs(it.error_percent()));
  return max;
}

void WriteTextReport(const ReplayReport& r, std::FILE* out) {
  const ExecutionGraph& g = *r.graph;
  std::fprintf(out, "job %s: %zu rank(s), %" PRIu64 " events\n", r.job_id.c_str(), r.ranks.size(),
               r.events);
  for (const std::string& w : r.warnings) std::fprintf(out, "  warning: %s\n", w.c_str());
  const GraphStats& s = g.stats;
  std::fprintf(out,
               "graph: %zu nodes on %zu processors; edges: %" PRIu64 " thread order, %" PRIu64
               " launch, %" PRIu64 " stream order, %" PRIu64 " event wait (%" PRIu64
               " inferred), %" PRIu64 " thread handoff; %zu syncs (%" PRIu64
               " inferred); %zu collectives (%" PRIu64 " incomplete)\n",
               g.nodes.size(), g.processors.size(),
               s.edges_by_kind[static_cast<int>(EdgeKind::kThreadOrder)],
               s.edges_by_kind[static_cast<int>(EdgeKind::kLaunch)],
               s.edges_by_kind[static_cast<int>(EdgeKind::kStreamOrder)],
               s.edges_by_kind[static_cast<int>(EdgeKind::kEventWait)], s.inferred_event_waits,
               s.edges_by_kind[static_cast<int>(EdgeKind::kThreadHandoff)], g.syncs.size(),
               s.inferred_syncs, g.collectives.size(), s.collectives_incomplete);
  if (s.unexplained_gpu_waits != 0) {
    std::fprintf(out,
                 "  %" PRIu64
                 " GPU ops waited %.3f ms in all after every recorded dependency "
                 "(a dependency the trace does not show)\n",
                 s.unexplained_gpu_waits, Ms(s.unexplained_gpu_wait_ns));
  }
  // The graph builder's notes (the first of each kind) belong to the graph; from
  // first_validation_diagnostic on, the diagnostics are Validate's, one per issue.
  const size_t first_issue = std::min(r.first_validation_diagnostic, g.diagnostics.size());
  for (size_t i = 0; i < first_issue; ++i) PrintDiagnostic(out, g.diagnostics[i], g.origin_ns);
  std::fprintf(out, "validation: %" PRIu64 " issue(s)\n", r.validation_issues);
  for (size_t i = first_issue; i < g.diagnostics.size(); ++i) {
    PrintDiagnostic(out, g.diagnostics[i], g.origin_ns);
  }
  PrintNotListed(out, r.validation_issues, g.diagnostics.size() - first_issue);
  PrintClocks(out, r.alignment, g.origin_ns);
  if (r.dependencies_only) {
    std::fprintf(out, "replay: recorded dependencies only (measured GPU queueing dropped)\n");
  }
  if (!r.what_ifs.empty()) {
    std::fprintf(out, "what-if:");
    for (const std::string& w : r.what_ifs) std::fprintf(out, " %s", w.c_str());
    std::fprintf(out, "\n");
  }
  if (r.not_run != 0) {
    std::fprintf(out, "replay: %" PRIu64 " node(s) never ran\n", r.not_run);
    for (const GraphDiagnostic& d : r.sim_diagnostics) {
      PrintDiagnostic(out, d, g.origin_ns);
    }
    PrintNotListed(out, r.not_run, r.sim_diagnostics.size());
  }

  std::fprintf(out, "\niterations (%s)\n", r.iteration_rule.c_str());
  int width = 24;  // The iteration column fits the longest name (detected ones are long).
  for (const IterationReport& it : r.iterations) {
    width = std::max(width, std::min(64, static_cast<int>(it.name.size())));
  }
  std::fprintf(out, "  %-6s %-*s %12s %12s %9s\n", "rank", width, "iteration", "measured ms",
               "replayed ms", r.what_ifs.empty() ? "error %" : "change %");
  auto row = [out, width](const IterationReport& it) {
    std::fprintf(out, "  %-6d %-*.64s %12.3f %12.3f %+9.2f\n", it.rank, width, it.name.c_str(),
                 Ms(it.measured_ns()), Ms(it.replayed_ns()), it.error_percent());
  };
  if (r.iterations.size() <= kMaxIterationRows) {
    for (const IterationReport& it : r.iterations) row(it);
  } else {
    // Large jobs: the rows with the largest |error| (all of them are in --json).
    std::vector<const IterationReport*> worst;
    worst.reserve(r.iterations.size());
    for (const IterationReport& it : r.iterations) worst.push_back(&it);
    std::stable_sort(worst.begin(), worst.end(), [](const auto* a, const auto* b) {
      return std::fabs(a->error_percent()) > std::fabs(b->error_percent());
    });
    for (size_t i = 0; i < kMaxIterationRows / 2; ++i) row(*worst[i]);
    std::fprintf(out, "  ... the %zu with the largest |%s| of %zu (all in --json)\n",
                 kMaxIterationRows / 2, r.what_ifs.empty() ? "error" : "change",
                 r.iterations.size());
  }
  std::fprintf(out, "  mean |%s| %.2f %%, max |%s| %.2f %%\n",
               r.what_ifs.empty() ? "error" : "change", r.mean_abs_error(),
               r.what_ifs.empty() ? "error" : "change", r.max_abs_error());
  if (r.iterations.empty()) return;

  const double weight = 1.0 / static_cast<double>(r.iterations.size());
  double measured[4] = {}, replayed[4] = {};
  std::vector<double> measured_bins, replayed_bins;
  std::map<std::string, int64_t> critical;
  int64_t critical_total = 0;
  std::map<std::string, NamedTime> kernels, collectives;
  std::set<int32_t> ranks_seen;
  for (const IterationReport& it : r.iterations) {
    ranks_seen.insert(it.rank);
    AddBreakdown(it.measured, weight, measured);
    AddBreakdown(it.replayed, weight, replayed);
    measured_bins.insert(measured_bins.end(), it.measured_busy.begin(), it.measured_busy.end());
    replayed_bins.insert(replayed_bins.end(), it.replayed_busy.begin(), it.replayed_busy.end());
    for (const CriticalItem& c : it.critical_by_class) critical[c.what] += c.ns;
    critical_total += it.critical_length_ns;
    for (const NamedTime& k : it.top_kernels) {
      NamedTime& t = kernels[k.name];
      t.name = k.name;
      t.measured_ns += k.measured_ns, t.replayed_ns += k.replayed_ns, t.count += k.count;
    }
    for (const NamedTime& k : it.top_collectives) {
      NamedTime& t = collectives[k.name];
      t.name = k.name;
      t.measured_ns += k.measured_ns, t.replayed_ns += k.replayed_ns, t.count += k.count;
    }
  }
  // What the per-iteration figures are taken over.
  const std::string over =
      Count(r.iterations.size(), "iteration") + " of " + Count(ranks_seen.size(), "rank");
  std::fprintf(out, "\nbreakdown (%% of iteration, mean over iterations)   measured  replayed\n");
  for (int i = 0; i < 4; ++i) {
    std::fprintf(out, "  %-46s %8.1f  %8.1f\n", kBreakdownNames[i], measured[i], replayed[i]);
  }
  WriteClassesText(r, over, out);
  WriteCopiesText(r, over, out);
  WriteStragglersText(r, out);
  WriteIdleText(r, over, out);
  WriteLaunchText(r, over, out);
  const BusySummary mb = Summarize(measured_bins), rb = Summarize(replayed_bins);
  std::fprintf(out,
               "\nGPU busy per 1 ms bin (%zu bins)      measured  replayed\n"
               "  mean                                %8.1f  %8.1f %%\n"
               "  median                              %8.1f  %8.1f %%\n"
               "  10th percentile                     %8.1f  %8.1f %%\n",
               measured_bins.size(), 100 * mb.mean, 100 * rb.mean, 100 * mb.p50, 100 * rb.p50,
               100 * mb.p10, 100 * rb.p10);
  std::vector<std::pair<std::string, int64_t>> by_class(critical.begin(), critical.end());
  std::stable_sort(by_class.begin(), by_class.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  // Per iteration: each iteration's path is as long as the iteration, so the mean path is the
  // mean replayed iteration, comparable with the rows above (a sum over ranks would not be).
  const double iterations = static_cast<double>(r.iterations.size());
  std::fprintf(out, "\ncritical path (replayed; mean per iteration over %s: %.3f ms)\n",
               over.c_str(), Ms(critical_total) / iterations);
  for (const auto& [what, ns] : by_class) {
    std::fprintf(out, "  %-36s %10.3f ms %6.1f %%\n", what.c_str(), Ms(ns) / iterations,
                 Percent(ns, critical_total));
  }
  const IterationReport* longest = &r.iterations.front();
  for (const IterationReport& it : r.iterations) {
    if (it.replayed_ns() > longest->replayed_ns()) longest = &it;
  }
  std::fprintf(out, "  top items (rank %d, %s):\n", longest->rank, longest->name.c_str());
  for (const CriticalItem& c : longest->critical_top) {
    std::fprintf(out, "    %10.3f ms  %.100s\n", Ms(c.ns), c.what.c_str());
  }
  WriteBoundText(r, out);
  auto print_top = [&](const char* title, const std::map<std::string, NamedTime>& m) {
    std::vector<NamedTime> v;
    v.reserve(m.size());
    for (const auto& [name, t] : m) v.push_back(t);
    std::stable_sort(v.begin(), v.end(), [](const NamedTime& a, const NamedTime& b) {
      return a.measured_ns > b.measured_ns;
    });
    if (v.size() > 10) v.resize(10);
    std::fprintf(out, "\n%s (sum over %s)\n     count  measured ms  replayed ms\n", title,
                 over.c_str());
    for (const NamedTime& t : v) {
      std::fprintf(out, "  %8" PRIu64 " %12.3f %12.3f  %.90s\n", t.count, Ms(t.measured_ns),
                   Ms(t.replayed_ns), t.name.c_str());
    }
  };
  print_top("top kernels", kernels);
  print_top("top collectives", collectives);
}

Status WriteJsonReport(const ReplayReport& r, std::FILE* file) {
  io::JsonWriter w([file](std::string_view chunk) {
    return std::fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size()
               ? Status::Ok()
               : Status::Error("write failed");
  });
  const ExecutionGraph& g = *r.graph;
  const GraphStats& s = g.stats;
  w.BeginObject(true);
  w.KeyString("job", r.job_id);
  w.Key("ranks");
  w.BeginArray();
  for (int32_t rank : r.ranks) w.Int(rank);
  w.EndArray();
  w.KeyUint("events", r.events);
  w.Key("warnings");
  w.BeginArray();
  for (const std::string& warning : r.warnings) w.String(warning);
  w.EndArray();
  w.Key("graph");
  w.BeginObject();
  w.KeyUint("nodes", g.nodes.size());
  w.KeyUint("processors", g.processors.size());
  for (int k = 0; k < kEdgeKindCount; ++k) {
    w.KeyUint(std::string(EdgeKindName(static_cast<EdgeKind>(k))) + "_edges", s.edges_by_kind[k]);
  }
  w.KeyUint("inferred_event_waits", s.inferred_event_waits);
  w.KeyUint("unmatched_waits", s.unmatched_waits);
  w.KeyUint("syncs", g.syncs.size());
  w.KeyUint("inferred_syncs", s.inferred_syncs);
  w.KeyUint("untargeted_syncs", s.untargeted_syncs);
  w.KeyUint("unlaunched_gpu_ops", s.unlaunched_gpu_ops);
  w.KeyUint("negative_slack_edges", s.negative_slack_edges);
  w.KeyInt("max_negative_slack_ns", s.max_negative_slack_ns);
  w.KeyUint("unexplained_gpu_waits", s.unexplained_gpu_waits);
  w.KeyInt("unexplained_gpu_wait_ns", s.unexplained_gpu_wait_ns);
  w.KeyUint("collectives", g.collectives.size());
  w.KeyUint("collectives_incomplete", s.collectives_incomplete);
  w.EndObject();
  w.Key("validation");
  w.BeginObject();
  w.KeyUint("issues", r.validation_issues);
  w.Key("diagnostics");
  w.BeginArray(true);
  for (const GraphDiagnostic& d : g.diagnostics) {
    w.BeginObject();
    if (d.rank != kWholeJob) {
      w.KeyUint("rank", d.rank);
      w.KeyInt("time_from_start_ns", d.time_ns - g.origin_ns);
    }
    w.KeyString("what", d.what);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Key("clock_alignment");
  w.BeginArray(true);
  for (const HostAlignment& h : r.alignment.hosts) {
    w.BeginObject();
    w.KeyString("host", h.host);
    w.Key("ranks");
    w.BeginArray();
    for (int32_t rank : h.ranks) w.Int(rank);
    w.EndArray();
    w.KeyInt("offset_ns", h.offset_ns);
    w.KeyInt("residual_skew_ns", h.residual_ns);
    w.KeyUint("collectives", h.collectives);
    if (h.jump_ns != 0) {
      w.KeyInt("clock_jump_ns", h.jump_ns);
      w.KeyInt("clock_jump_at_from_start_ns", h.jump_at_ns - g.origin_ns);
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("what_if");
  w.BeginArray();
  for (const std::string& x : r.what_ifs) w.String(x);
  w.EndArray();
  w.KeyBool("dependencies_only", r.dependencies_only);
  w.KeyUint("nodes_not_run", r.not_run);
  w.KeyString("iteration_rule", r.iteration_rule);
  w.Key("summary");
  w.BeginObject();
  w.KeyUint("iterations", r.iterations.size());
  w.Key("mean_abs_error_percent");
  w.Fixed(r.mean_abs_error(), 4);
  w.Key("max_abs_error_percent");
  w.Fixed(r.max_abs_error(), 4);
  w.EndObject();
  WriteBreakdownsJson(r, &w);
  WriteBoundJson(r, &w);
  WriteStragglersJson(r, &w);
  WriteIdleJson(r, &w);
  WriteLaunchJson(r, &w);
  auto breakdown = [&](const char* key, const Breakdown& b) {
    w.Key(key);
    w.BeginObject();
    w.KeyInt("exposed_compute_ns", b.exposed_compute_ns);
    w.KeyInt("overlapped_ns", b.overlapped_ns);
    w.KeyInt("exposed_comm_ns", b.exposed_comm_ns);
    w.KeyInt("other_ns", b.other_ns);
    w.EndObject();
  };
  auto bins = [&](const char* key, const std::vector<double>& v) {
    w.Key(key);
    w.BeginArray();
    for (double b : v) w.Fixed(b, 4);
    w.EndArray();
  };
  auto named = [&](const char* key, const std::vector<NamedTime>& v) {
    w.Key(key);
    w.BeginArray();
    for (const NamedTime& t : v) {
      w.BeginObject();
      w.KeyString("name", t.name);
      w.KeyUint("count", t.count);
      w.KeyInt("measured_ns", t.measured_ns);
      w.KeyInt("replayed_ns", t.replayed_ns);
      w.EndObject();
    }
    w.EndArray();
  };
  auto critical = [&](const char* key, const std::vector<CriticalItem>& v) {
    w.Key(key);
    w.BeginArray();
    for (const CriticalItem& c : v) {
      w.BeginObject();
      w.KeyString("what", c.what);
      w.KeyInt("ns", c.ns);
      w.EndObject();
    }
    w.EndArray();
  };
  w.Key("iterations");
  w.BeginArray(true);
  for (const IterationReport& it : r.iterations) {
    w.BeginObject();
    w.KeyInt("rank", it.rank);
    w.KeyString("name", it.name);
    w.KeyInt("measured_start_ns", it.measured_start_ns);
    w.KeyInt("measured_ns", it.measured_ns());
    w.KeyInt("replayed_start_ns", it.replayed_start_ns);
    w.KeyInt("replayed_ns", it.replayed_ns());
    w.Key("error_percent");
    w.Fixed(it.error_percent(), 4);
    breakdown("measured_breakdown", it.measured);
    breakdown("replayed_breakdown", it.replayed);
    bins("measured_gpu_busy_1ms", it.measured_busy);
    bins("replayed_gpu_busy_1ms", it.replayed_busy);
    w.Key("critical_path");
    w.BeginObject();
    w.KeyInt("length_ns", it.critical_length_ns);
    critical("by_class", it.critical_by_class);
    critical("top", it.critical_top);
    w.EndObject();
    WriteIterationBoundJson(it.bound, &w);
    named("top_kernels", it.top_kernels);
    named("top_collectives", it.top_collectives);
    w.Key("gpu_time_by_class");
    w.BeginArray();
    for (const ClassTime& c : it.gpu_classes) {
      w.BeginObject();
      w.KeyString("class", c.name);
      w.KeyUint("count", c.count);
      w.KeyInt("measured_ns", c.measured_ns);
      w.KeyInt("replayed_ns", c.replayed_ns);
      w.EndObject();
    }
    w.EndArray();
    w.Key("copies");
    w.BeginArray();
    for (const CopyTime& c : it.copies) {
      w.BeginObject();
      w.KeyString("direction", c.direction);
      w.KeyUint("count", c.count);
      w.KeyUint("bytes", c.bytes);
      w.KeyInt("measured_ns", c.measured_ns);
      w.KeyInt("replayed_ns", c.replayed_ns);
      w.EndObject();
    }
    w.EndArray();
    WriteIterationIdleJson(r, static_cast<size_t>(&it - r.iterations.data()), &w);
    WriteIterationLaunchJson(r, static_cast<size_t>(&it - r.iterations.data()), &w);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  Status status = w.Finish();
  std::fputc('\n', file);
  return status;
}

}  // namespace lumos::modeler
