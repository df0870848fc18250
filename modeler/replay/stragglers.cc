#include "modeler/replay/stragglers.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <map>
#include <string>

#include "modeler/io/json_writer.h"
#include "modeler/replay/replay_report.h"

namespace lumos::modeler {
namespace {

// Op names by schema::CollectiveOp value; 0 (and any value this build does not know) reads
// "(op not recorded)".
#define LUMOS_INTERNAL_OP_NAME(name, number) #name,
constexpr const char* kOpNames[] = {LUMOS_ENUM_COLLECTIVE_OP(LUMOS_INTERNAL_OP_NAME)};
#undef LUMOS_INTERNAL_OP_NAME
constexpr size_t kOpCount = sizeof(kOpNames) / sizeof(kOpNames[0]);

// A send and its receive are one group, labelled by whichever record came first: both read
// "Send/Recv" (in the send's slot).
size_t OpSlot(schema::CollectiveOp op) {
  if (op == schema::CollectiveOp::kRecv) op = schema::CollectiveOp::kSend;
  const auto v = static_cast<size_t>(op);
  return v < kOpCount ? v : 0;
}

const char* OpName(size_t slot) {
  if (slot == static_cast<size_t>(schema::CollectiveOp::kSend)) return "Send/Recv";
  return slot == 0 ? "(op not recorded)" : kOpNames[slot];
}

// The ceil(q n)-th smallest of sorted `v` (nearest rank); 0 for none.
int64_t NearestRank(const std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

double LogChoose(uint64_t n, uint64_t k) {
  return std::lgamma(static_cast<double>(n) + 1) - std::lgamma(static_cast<double>(k) + 1) -
         std::lgamma(static_cast<double>(n - k) + 1);
}

double LogTerm(uint64_t n, uint64_t i, double p) {
  return LogChoose(n, i) + static_cast<double>(i) * std::log(p) +
         static_cast<double>(n - i) * std::log1p(-p);
}

// Sum of the binomial terms from `from` stepping by `step` (+1 or -1) while in [0, n], relative
// to the first: terms fall monotonically away from the mode, so the sum stops once they no
// longer change it. Returns the log of the sum.
double LogTermsFrom(uint64_t n, uint64_t from, int step, double p) {
  const double first = LogTerm(n, from, p);
  const double odds = p / (1 - p);
  double term = 1, sum = 1;
  uint64_t i = from;
  while (step > 0 ? i < n : i > 0) {
    // term(i+1)/term(i) = (n-i)/(i+1) * odds; term(i-1)/term(i) = i/(n-i+1) / odds.
    term *= step > 0 ? static_cast<double>(n - i) / static_cast<double>(i + 1) * odds
                     : static_cast<double>(i) / static_cast<double>(n - i + 1) / odds;
    i = step > 0 ? i + 1 : i - 1;
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return first + std::log(sum);
}

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }
double Us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

// The per-rank windows of the iterations, sorted by start: [start, end) measured or replayed.
struct Windows {
  std::vector<int64_t> start, end;
  int64_t Find(int64_t t) const {  // The ordinal of the latest-starting window holding t; -1.
    auto it = std::upper_bound(start.begin(), start.end(), t);
    if (it == start.begin()) return -1;
    const auto k = static_cast<size_t>(it - start.begin()) - 1;
    return t < end[k] ? static_cast<int64_t>(k) : -1;
  }
};

std::string PValueText(double log10_p) {
  char text[32];
  if (log10_p > -300) {
    std::snprintf(text, sizeof(text), "%.1e", std::pow(10.0, log10_p));
  } else {
    std::snprintf(text, sizeof(text), "1e%.0f", log10_p);
  }
  return text;
}

}  // namespace

double LogBinomialTail(uint64_t n, uint64_t k, double p) {
  if (k == 0) return 0;
  if (k > n || p <= 0) return -INFINITY;
  if (p >= 1) return 0;
  if (static_cast<double>(k) > static_cast<double>(n) * p) return LogTermsFrom(n, k, +1, p);
  // At or below the mean: 1 - P(X <= k - 1).
  const double lower = std::exp(LogTermsFrom(n, k - 1, -1, p));
  return std::log1p(-std::min(lower, 1.0));
}

double WilsonLower(uint64_t n, uint64_t k, double z) {
  if (n == 0) return 0;
  const double nn = static_cast<double>(n), phat = static_cast<double>(k) / nn, z2 = z * z;
  const double centre = phat + z2 / (2 * nn);
  const double margin = z * std::sqrt(phat * (1 - phat) / nn + z2 / (4 * nn * nn));
  return std::max(0.0, (centre - margin) / (1 + z2 / nn));
}

std::vector<GroupSkew> GroupSkews(const ExecutionGraph& graph, const SimResult* sim,
                                  int64_t tie_ns) {
  auto arrival = [&graph, sim](uint32_t n) {
    return sim != nullptr ? sim->start_ns[n] : graph.nodes[n].start_ns;
  };
  std::vector<GroupSkew> out;
  for (size_t gi = 0; gi < graph.collectives.size(); ++gi) {
    const CollectiveGroup& g = graph.collectives[gi];
    if (!g.complete || g.nodes.size() < 2) continue;
    GroupSkew s;
    s.group = static_cast<uint32_t>(gi);
    s.members = static_cast<uint32_t>(g.nodes.size());
    s.first_arrival_ns = INT64_MAX;
    s.last_arrival_ns = INT64_MIN;
    uint32_t last = kNoNode;
    bool ran = true;
    for (uint32_t n : g.nodes) {
      const int64_t a = arrival(n);
      if (a == SimResult::kNotRun) {
        ran = false;
        break;
      }
      s.first_arrival_ns = std::min(s.first_arrival_ns, a);
      if (a > s.last_arrival_ns) s.last_arrival_ns = a, last = n;
    }
    if (!ran) continue;
    s.skew_ns = s.last_arrival_ns - s.first_arrival_ns;
    uint32_t near_last = 0;
    int64_t waited = 0;
    for (uint32_t n : g.nodes) {
      if (arrival(n) >= s.last_arrival_ns - tie_ns) ++near_last;
      waited += s.last_arrival_ns - arrival(n);
    }
    if (near_last == 1) {
      s.last_rank = graph.ranks[graph.nodes[last].rank_index];
      s.waited_ns = waited;
    }
    out.push_back(s);
  }
  return out;
}

StragglerSide AnalyzeStragglerSide(const ExecutionGraph& graph, const SimResult* sim,
                                   const std::vector<IterationReport>& iterations,
                                   const StragglerOptions& options) {
  StragglerSide side;
  const bool replayed = sim != nullptr;
  const std::vector<GroupSkew> skews = GroupSkews(graph, sim, options.tie_ns);

  // By op, and for all.
  std::vector<std::vector<int64_t>> op_skews(kOpCount + 1);
  std::vector<OpSkew> ops(kOpCount + 1);
  for (const GroupSkew& s : skews) {
    const size_t slot = OpSlot(graph.collectives[s.group].op);
    for (size_t i : {slot, kOpCount}) {
      op_skews[i].push_back(s.skew_ns);
      ++ops[i].count;
      if (s.last_rank < 0) ++ops[i].tied;
      ops[i].waited_ns += s.waited_ns;
    }
  }
  for (size_t i = 0; i <= kOpCount; ++i) {
    if (ops[i].count == 0 && i < kOpCount) continue;
    std::sort(op_skews[i].begin(), op_skews[i].end());
    ops[i].op = i < kOpCount ? OpName(i) : "all";
    ops[i].p50_ns = NearestRank(op_skews[i], 0.5);
    ops[i].p90_ns = NearestRank(op_skews[i], 0.9);
    ops[i].max_ns = op_skews[i].empty() ? 0 : op_skews[i].back();
    side.by_op.push_back(ops[i]);
  }

  // The top groups by skew (ties by group index: `skews` is in group order).
  side.top = skews;
  const size_t top = std::min(options.top_groups, side.top.size());
  std::partial_sort(side.top.begin(), side.top.begin() + static_cast<std::ptrdiff_t>(top),
                    side.top.end(), [](const GroupSkew& a, const GroupSkew& b) {
                      return a.skew_ns != b.skew_ns ? a.skew_ns > b.skew_ns : a.group < b.group;
                    });
  side.top.resize(top);

  // Per rank: every rank of the graph, in rank order.
  std::map<int32_t, uint32_t> slot_of;  // Global rank -> index into side.ranks.
  for (int32_t rank : graph.ranks) slot_of.emplace(rank, 0);
  for (auto& [rank, slot] : slot_of) {
    slot = static_cast<uint32_t>(side.ranks.size());
    side.ranks.emplace_back().rank = rank;
  }
  std::vector<uint32_t> slot_of_index(graph.ranks.size());  // By rank index.
  for (size_t i = 0; i < graph.ranks.size(); ++i) slot_of_index[i] = slot_of[graph.ranks[i]];
  std::vector<Windows> windows(side.ranks.size());
  for (const IterationReport& it : iterations) {
    auto found = slot_of.find(it.rank);
    if (found == slot_of.end()) continue;
    Windows& w = windows[found->second];
    w.start.push_back(replayed ? it.replayed_start_ns : it.measured_start_ns);
    w.end.push_back(replayed ? it.replayed_end_ns : it.measured_end_ns);
  }
  for (size_t r = 0; r < windows.size(); ++r) {
    Windows& w = windows[r];
    std::vector<size_t> order(w.start.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&w](size_t a, size_t b) { return w.start[a] < w.start[b]; });
    Windows sorted;
    for (size_t i : order) sorted.start.push_back(w.start[i]), sorted.end.push_back(w.end[i]);
    w = std::move(sorted);
    side.ranks[r].waited_per_iteration_ns.assign(w.start.size(), 0);
    side.iterations = std::max<uint64_t>(side.iterations, w.start.size());
  }
  for (const GroupSkew& s : skews) {
    if (s.last_rank < 0) continue;
    for (uint32_t n : graph.collectives[s.group].nodes) {
      RankStraggling& r = side.ranks[slot_of_index[graph.nodes[n].rank_index]];
      ++r.groups;
      r.expected_last += 1.0 / static_cast<double>(s.members);
    }
    const uint32_t slot = slot_of[s.last_rank];
    RankStraggling& r = side.ranks[slot];
    ++r.last;
    r.waited_for_ns += s.waited_ns;
    const int64_t k = windows[slot].Find(s.last_arrival_ns);
    if (k >= 0) r.waited_per_iteration_ns[static_cast<size_t>(k)] += s.waited_ns;
  }
  const double log10_ranks =
      std::log10(static_cast<double>(std::max<size_t>(1, side.ranks.size())));
  for (RankStraggling& r : side.ranks) {
    const std::vector<int64_t>& per = r.waited_per_iteration_ns;
    if (!per.empty()) {
      int64_t sum = 0;
      for (int64_t ns : per) sum += ns;
      r.mean_per_iteration_ns = static_cast<double>(sum) / static_cast<double>(per.size());
      std::vector<int64_t> sorted = per;
      std::sort(sorted.begin(), sorted.end());
      r.median_per_iteration_ns = sorted[(sorted.size() - 1) / 2];
    }
    if (r.groups > 0) {
      const double p = r.expected_last / static_cast<double>(r.groups);
      const double log10_tail = LogBinomialTail(r.groups, r.last, p) / std::log(10.0);
      r.log10_p_value = std::min(0.0, log10_tail + log10_ranks);
      r.p_value = std::pow(10.0, r.log10_p_value);
      r.wilson_low = WilsonLower(r.groups, r.last);
    }
  }
  // Iteration k's most-waited-for rank.
  for (size_t k = 0; k < side.iterations; ++k) {
    int64_t best = 0;
    int best_count = 0;
    size_t best_slot = 0;
    for (size_t i = 0; i < side.ranks.size(); ++i) {
      const auto& per = side.ranks[i].waited_per_iteration_ns;
      if (k >= per.size() || per[k] <= 0) continue;
      if (per[k] > best) {
        best = per[k], best_count = 1, best_slot = i;
      } else if (per[k] == best) {
        ++best_count;
      }
    }
    if (best_count == 1) ++side.ranks[best_slot].iterations_most_waited;
  }
  // By confidence.
  side.order.resize(side.ranks.size());
  for (size_t i = 0; i < side.order.size(); ++i) side.order[i] = static_cast<uint32_t>(i);
  std::stable_sort(side.order.begin(), side.order.end(), [&side](uint32_t a, uint32_t b) {
    const RankStraggling &x = side.ranks[a], &y = side.ranks[b];
    if (x.log10_p_value != y.log10_p_value) return x.log10_p_value < y.log10_p_value;
    return x.last > y.last;  // Then rank order (stable).
  });
  for (uint32_t i : side.order) {
    const RankStraggling& r = side.ranks[i];
    const double expected_share =
        r.groups > 0 ? r.expected_last / static_cast<double>(r.groups) : 1.0;
    if (r.p_value < options.alpha && r.wilson_low > expected_share) {
      if (side.straggler < 0) side.straggler = r.rank;
      ++side.confident_ranks;
    }
  }
  return side;
}

Stragglers AnalyzeStragglers(const ExecutionGraph& graph, const SimResult& sim,
                             const std::vector<IterationReport>& iterations,
                             const StragglerOptions& options) {
  Stragglers s;
  s.computed = true;
  s.tie_ns = options.tie_ns;
  s.alpha = options.alpha;
  s.measured = AnalyzeStragglerSide(graph, nullptr, iterations, options);
  s.replayed = AnalyzeStragglerSide(graph, &sim, iterations, options);
  return s;
}

namespace {

void VerdictLine(const char* side_name, const StragglerSide& side, std::FILE* out) {
  if (side.order.empty()) return;
  const RankStraggling& r = side.ranks[side.order.front()];
  const char* is = side.straggler >= 0 ? "straggler" : "no confident straggler; most often last";
  char more[64] = "";
  if (side.confident_ranks > 1) {
    std::snprintf(more, sizeof(more), " (%" PRIu64 " more ranks qualify)",
                  side.confident_ranks - 1);
  }
  std::fprintf(out,
               "  %s: %s: rank %d%s, last in %" PRIu64 " of %" PRIu64
               " groups (expected %.1f), p %s; others waited %.3f ms for it\n",
               side_name, is, r.rank, more, r.last, r.groups, r.expected_last,
               PValueText(r.log10_p_value).c_str(), Ms(r.waited_for_ns));
}

void RankRows(const char* side_name, const StragglerSide& side, std::FILE* out) {
  for (size_t i = 0; i < side.order.size() && i < 5; ++i) {
    const RankStraggling& r = side.ranks[side.order[i]];
    char last[48];
    std::snprintf(last, sizeof(last), "%" PRIu64 "/%" PRIu64, r.last, r.groups);
    std::fprintf(
        out, "  %-8s %6d %13s %9.1f %6.3f %9s %11.3f %9.3f %9.3f %6" PRIu64 "/%" PRIu64 "\n",
        i == 0 ? side_name : "", r.rank, last, r.expected_last, r.wilson_low,
        PValueText(r.log10_p_value).c_str(), Ms(r.waited_for_ns), r.mean_per_iteration_ns / 1e6,
        Ms(r.median_per_iteration_ns), r.iterations_most_waited, side.iterations);
  }
}

const OpSkew* FindOp(const StragglerSide& side, std::string_view op) {
  for (const OpSkew& o : side.by_op) {
    if (op == o.op) return &o;
  }
  return nullptr;
}

void WriteSide(const ExecutionGraph& g, const StragglerSide& side, io::JsonWriter* w) {
  w->BeginObject();
  if (side.straggler >= 0) {
    w->KeyInt("straggler", side.straggler);
  } else {
    w->Key("straggler");
    w->Null();
  }
  w->KeyUint("confident_ranks", side.confident_ranks);
  w->KeyUint("iterations", side.iterations);
  w->Key("by_op");
  w->BeginArray(true);
  for (const OpSkew& o : side.by_op) {
    w->BeginObject();
    w->KeyString("op", o.op);
    w->KeyUint("count", o.count);
    w->KeyUint("tied", o.tied);
    w->KeyInt("skew_p50_ns", o.p50_ns);
    w->KeyInt("skew_p90_ns", o.p90_ns);
    w->KeyInt("skew_max_ns", o.max_ns);
    w->KeyInt("waited_ns", o.waited_ns);
    w->EndObject();
  }
  w->EndArray();
  w->Key("top_groups");
  w->BeginArray(true);
  for (const GroupSkew& s : side.top) {
    const CollectiveGroup& c = g.collectives[s.group];
    w->BeginObject();
    w->KeyString("op", OpName(OpSlot(c.op)));
    w->KeyUint("bytes", c.bytes);
    w->KeyUint("members", s.members);
    w->KeyUint("comm_id", c.comm_id);
    w->KeyUint("seq", c.seq_number);
    w->KeyInt("first_arrival_from_start_ns", s.first_arrival_ns - g.origin_ns);
    w->KeyInt("last_arrival_from_start_ns", s.last_arrival_ns - g.origin_ns);
    w->KeyInt("skew_ns", s.skew_ns);
    if (s.last_rank >= 0) {
      w->KeyInt("last_rank", s.last_rank);
    } else {
      w->Key("last_rank");
      w->Null();
    }
    w->KeyInt("waited_ns", s.waited_ns);
    w->EndObject();
  }
  w->EndArray();
  w->Key("ranks");
  w->BeginArray(true);
  for (uint32_t i = 0; i < side.ranks.size(); ++i) {
    const RankStraggling& r = side.ranks[i];
    w->BeginObject();
    w->KeyInt("rank", r.rank);
    w->KeyUint("groups", r.groups);
    w->KeyUint("last", r.last);
    w->Key("expected_last");
    w->Fixed(r.expected_last, 4);
    w->Key("p_value");
    w->Fixed(r.p_value, 6);
    w->Key("log10_p_value");
    w->Fixed(r.log10_p_value, 3);
    w->Key("wilson_low");
    w->Fixed(r.wilson_low, 4);
    w->KeyInt("waited_for_ns", r.waited_for_ns);
    w->Key("mean_per_iteration_ns");
    w->Fixed(r.mean_per_iteration_ns, 1);
    w->KeyInt("median_per_iteration_ns", r.median_per_iteration_ns);
    w->KeyUint("iterations_most_waited", r.iterations_most_waited);
    w->Key("waited_per_iteration_ns");
    w->BeginArray();
    for (int64_t ns : r.waited_per_iteration_ns) w->Int(ns);
    w->EndArray();
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace

void WriteStragglersText(const ReplayReport& report, std::FILE* out) {
  const Stragglers& s = report.stragglers;
  if (!s.computed || report.graph == nullptr) return;
  const StragglerSide &m = s.measured, &r = s.replayed;
  const OpSkew* all = FindOp(m, "all");
  if (all == nullptr || all->count == 0) {
    std::fprintf(out, "\nstragglers: no complete collective with 2 or more members\n");
    return;
  }
  std::fprintf(out,
               "\nstragglers (arrival: a member's GPU op start; last: latest by more than %.1f "
               "µs, else tied)\n",
               Us(s.tie_ns));
  VerdictLine("measured", m, out);
  VerdictLine("replayed", r, out);
  std::fprintf(out, "  %-20s %8s %6s | %28s | %28s\n", "skew by op", "groups", "tied",
               "measured p50/p90/max µs", "replayed p50/p90/max µs");
  for (const OpSkew& o : m.by_op) {
    const OpSkew* x = FindOp(r, o.op);
    char rep[64] = "-";
    if (x != nullptr) {
      std::snprintf(rep, sizeof(rep), "%8.1f %9.1f %9.1f", Us(x->p50_ns), Us(x->p90_ns),
                    Us(x->max_ns));
    }
    std::fprintf(out, "  %-20s %8" PRIu64 " %6" PRIu64 " | %8.1f %9.1f %9.1f | %28s\n", o.op,
                 o.count, o.tied, Us(o.p50_ns), Us(o.p90_ns), Us(o.max_ns), rep);
  }
  std::fprintf(out, "  most often last (top 5 of %zu ranks by confidence)\n", m.ranks.size());
  std::fprintf(out, "  %-8s %6s %13s %9s %6s %9s %11s %9s %9s %13s\n", "", "rank", "last/groups",
               "expected", "lo95%", "p", "waited ms", "mean/it", "median/it", "most waited");
  RankRows("measured", m, out);
  RankRows("replayed", r, out);
  std::fprintf(out, "  largest skew (measured)     skew µs  members %10s %6s %10s  last rank\n",
               "MB", "seq", "at ms");
  const ExecutionGraph& g = *report.graph;
  for (size_t i = 0; i < m.top.size() && i < 5; ++i) {
    const GroupSkew& x = m.top[i];
    const CollectiveGroup& c = g.collectives[x.group];
    char last[16] = "tied", mb[32] = "-";
    if (x.last_rank >= 0) std::snprintf(last, sizeof(last), "%d", x.last_rank);
    if (c.bytes > 0) std::snprintf(mb, sizeof(mb), "%.3f", static_cast<double>(c.bytes) / 1e6);
    std::fprintf(out, "    %-22s %11.1f %8u %10s %6" PRIu64 " %10.3f  %s\n", OpName(OpSlot(c.op)),
                 Us(x.skew_ns), x.members, mb, c.seq_number, Ms(x.last_arrival_ns - g.origin_ns),
                 last);
  }
}

void WriteStragglersJson(const ReplayReport& report, io::JsonWriter* w) {
  const Stragglers& s = report.stragglers;
  if (!s.computed || report.graph == nullptr) return;
  w->Key("stragglers");
  w->BeginObject();
  w->KeyInt("tie_ns", s.tie_ns);
  w->Key("alpha");
  w->Fixed(s.alpha, 4);
  w->Key("measured");
  WriteSide(*report.graph, s.measured, w);
  w->Key("replayed");
  WriteSide(*report.graph, s.replayed, w);
  w->EndObject();
}

}  // namespace lumos::modeler
