#include "modeler/replay/iteration_bound.h"

#include <algorithm>
#include <cinttypes>
#include <map>

#include "modeler/io/json_writer.h"
#include "modeler/replay/replay_report.h"

namespace lumos::modeler {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Rows of the text's verdict table before the rest is summed up in one line.
constexpr size_t kMaxVerdictRows = 8;
// Ranks listed by name under the table (those whose verdict is not the most common one).
constexpr size_t kMaxOutlierRanks = 5;

}  // namespace

std::vector<RankBound> SumBoundsPerRank(const std::vector<IterationReport>& iterations) {
  std::map<int32_t, RankBound> by_rank;
  std::map<int32_t, std::map<int32_t, int64_t>> waited;  // rank -> peer -> ns
  for (const IterationReport& it : iterations) {
    RankBound& r = by_rank[it.rank];
    r.rank = it.rank;
    ++r.iterations;
    for (int k = 0; k < kBoundKindCount; ++k) r.bound.ns[k] += it.bound.ns[k];
    for (const auto& [peer, ns] : it.bound.waited_for) waited[it.rank][peer] += ns;
  }
  std::vector<RankBound> out;
  out.reserve(by_rank.size());
  for (auto& [rank, r] : by_rank) {
    for (const auto& [peer, ns] : waited[rank]) r.bound.waited_for.emplace_back(peer, ns);
    // The map is in rank order, so ties stay in rank order.
    std::stable_sort(r.bound.waited_for.begin(), r.bound.waited_for.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out.push_back(std::move(r));
  }
  DecideVerdicts(&out);
  return out;
}

namespace {

// The peer `r` waited for at least kStragglerShare of its time, or -1.
int32_t StragglerOf(const RankBound& r) {
  const int64_t total = r.bound.total_ns();
  if (r.bound.waited_for.empty() || total <= 0) return -1;
  const auto& [peer, ns] = r.bound.waited_for.front();
  return static_cast<double>(ns) >= kStragglerShare * static_cast<double>(total) ? peer : -1;
}

}  // namespace

void DecideVerdicts(std::vector<RankBound>* ranks) {
  std::map<int32_t, const RankBound*> by_rank;
  for (const RankBound& r : *ranks) by_rank[r.rank] = &r;
  for (RankBound& r : *ranks) {
    int best = 0;
    for (int k = 1; k < kBoundKindCount; ++k) {
      if (r.bound.ns[k] > r.bound.ns[best]) best = k;
    }
    r.kind = static_cast<BoundKind>(best);
    r.waited_for = StragglerOf(r);
    const int64_t peers = r.bound.ns[static_cast<int>(BoundKind::kPeers)];
    if (r.waited_for < 0 && r.kind == BoundKind::kPeers && !r.bound.waited_for.empty() &&
        2 * r.bound.waited_for.front().second >= peers) {
      r.waited_for = r.bound.waited_for.front().first;
    }
    r.straggler = r.waited_for;
    // The root: on from the peer while it waited for one of its own (no rank twice).
    std::vector<int32_t> seen = {r.rank, r.straggler};
    for (auto it = by_rank.find(r.straggler); it != by_rank.end();) {
      const int32_t next = StragglerOf(*it->second);
      if (next < 0 || std::find(seen.begin(), seen.end(), next) != seen.end()) break;
      seen.push_back(next);
      r.straggler = next;
      it = by_rank.find(next);
    }
    if (r.straggler >= 0) {
      r.verdict = "straggler rank " + std::to_string(r.straggler);
      if (r.straggler != r.waited_for)
        r.verdict += " (through rank " + std::to_string(r.waited_for) + ")";
      continue;
    }
    static constexpr const char* kVerdicts[kBoundKindCount] = {
        "host",
        "launch",
        "compute",
        "communication",
        "peers (no single rank)",
        "a dependency the trace does not show"};
    r.verdict = r.bound.total_ns() == 0 ? "no time" : kVerdicts[best];
  }
}

void WriteBoundText(const ReplayReport& report, std::FILE* out) {
  const std::vector<RankBound> ranks = SumBoundsPerRank(report.iterations);
  if (ranks.empty()) return;
  // Rows: one per verdict, most ranks first, ties by verdict text.
  std::map<std::string, std::vector<const RankBound*>> groups;
  for (const RankBound& r : ranks) groups[r.verdict].push_back(&r);
  std::vector<std::pair<std::string, std::vector<const RankBound*>>> rows(groups.begin(),
                                                                          groups.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::fprintf(out,
               "\nwhat bounds each rank's iteration (replayed: the rank's own critical path, %% of "
               "the rank's time, mean over the ranks of a row)\n");
  std::fprintf(out, "  %-38s %6s %6s %7s %6s %6s %6s  %s\n", "verdict", "host", "launch", "compute",
               "comm", "peers", "unexpl", "ranks");
  for (size_t i = 0; i < rows.size() && i < kMaxVerdictRows; ++i) {
    double share[kBoundKindCount] = {};
    std::vector<int32_t> who;
    for (const RankBound* r : rows[i].second) {
      who.push_back(r->rank);
      for (int k = 0; k < kBoundKindCount; ++k) {
        share[k] += Percent(r->bound.ns[k], r->bound.total_ns()) /
                    static_cast<double>(rows[i].second.size());
      }
    }
    std::string list = RankListText(who);
    if (list.size() > 60) list = list.substr(0, 57) + "...";
    std::fprintf(out, "  %-38.38s %6.1f %6.1f %7.1f %6.1f %6.1f %6.1f  %s\n", rows[i].first.c_str(),
                 share[0], share[1], share[2], share[3], share[4], share[5], list.c_str());
  }
  if (rows.size() > kMaxVerdictRows) {
    size_t more = 0;
    for (size_t i = kMaxVerdictRows; i < rows.size(); ++i) more += rows[i].second.size();
    std::fprintf(out, "  ... %zu more verdicts over %zu ranks (all in --json)\n",
                 rows.size() - kMaxVerdictRows, more);
  }
  // The ranks whose verdict is not the most common one, with what backs it (ms per iteration
  // and share of the rank's time): the wait for the peer of a straggler verdict, else the
  // largest kind; the largest share first.
  std::vector<const RankBound*> outliers;
  for (size_t i = 1; i < rows.size(); ++i) {
    outliers.insert(outliers.end(), rows[i].second.begin(), rows[i].second.end());
  }
  auto backing_ns = [](const RankBound* r) {
    return r->waited_for >= 0 ? r->bound.waited_for.front().second
                              : r->bound.ns[static_cast<int>(r->kind)];
  };
  auto share = [&](const RankBound* r) { return Percent(backing_ns(r), r->bound.total_ns()); };
  std::stable_sort(outliers.begin(), outliers.end(),
                   [&](const RankBound* a, const RankBound* b) { return share(a) > share(b); });
  for (size_t i = 0; i < outliers.size() && i < kMaxOutlierRanks; ++i) {
    const RankBound& r = *outliers[i];
    const double per_iteration = r.iterations > 0 ? static_cast<double>(r.iterations) : 1.0;
    std::fprintf(out, "  rank %d: %s: ", r.rank, r.verdict.c_str());
    if (r.waited_for >= 0) {
      std::fprintf(out, "waited for rank %d ", r.waited_for);
    } else {
      std::fprintf(out, "%s ", BoundKindName(r.kind));
    }
    std::fprintf(out, "%.3f ms per iteration (%.1f %%)", Ms(backing_ns(&r)) / per_iteration,
                 share(&r));
    // A straggler verdict's root as the collectives' arrivals see it (stragglers.h).
    if (r.straggler >= 0 && report.stragglers.computed) {
      for (const RankStraggling& s : report.stragglers.replayed.ranks) {
        if (s.rank != r.straggler || s.groups == 0) continue;
        std::fprintf(out,
                     "; rank %d last in %" PRIu64 " of %" PRIu64 " collectives (%.1f expected)",
                     s.rank, s.last, s.groups, s.expected_last);
      }
    }
    std::fprintf(out, "\n");
  }
  if (outliers.size() > kMaxOutlierRanks) {
    std::fprintf(out, "  ... and %zu more ranks not in the most common verdict\n",
                 outliers.size() - kMaxOutlierRanks);
  }
}

namespace {

// Each kind's "<kind>_ns" and "waited_for": [{rank, ns}].
void WriteKindsJson(const IterationBound& bound, io::JsonWriter* w) {
  for (int k = 0; k < kBoundKindCount; ++k) {
    w->KeyInt(std::string(BoundKindName(static_cast<BoundKind>(k))) + "_ns", bound.ns[k]);
  }
  w->Key("waited_for");
  w->BeginArray();
  for (const auto& [rank, ns] : bound.waited_for) {
    w->BeginObject();
    w->KeyInt("rank", rank);
    w->KeyInt("ns", ns);
    w->EndObject();
  }
  w->EndArray();
}

}  // namespace

void WriteIterationBoundJson(const IterationBound& bound, io::JsonWriter* w) {
  w->Key("bound");
  w->BeginObject();
  WriteKindsJson(bound, w);
  w->EndObject();
}

void WriteBoundJson(const ReplayReport& report, io::JsonWriter* w) {
  w->Key("bound");
  w->BeginObject();
  w->Key("kinds");
  w->BeginArray();
  for (int k = 0; k < kBoundKindCount; ++k) w->String(BoundKindName(static_cast<BoundKind>(k)));
  w->EndArray();
  w->Key("per_rank");
  w->BeginArray(true);
  for (const RankBound& r : SumBoundsPerRank(report.iterations)) {
    w->BeginObject();
    w->KeyInt("rank", r.rank);
    w->KeyString("verdict", r.verdict);
    w->KeyString("kind", BoundKindName(r.kind));
    w->KeyInt("waited_for_rank", r.waited_for);
    w->KeyInt("straggler_rank", r.straggler);
    w->KeyUint("iterations", r.iterations);
    WriteKindsJson(r.bound, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace lumos::modeler
