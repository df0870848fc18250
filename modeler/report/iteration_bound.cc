#include "modeler/report/iteration_bound.h"

#include <algorithm>
#include <map>

#include "modeler/export/json_writer.h"
#include "modeler/report/replay_report.h"

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
    std::stable_sort(r.bound.waited_for.begin(), r.bound.waited_for.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    DecideVerdict(&r);
    out.push_back(std::move(r));
  }
  return out;
}

void DecideVerdict(RankBound* r) {
  int best = 0;
  for (int k = 1; k < kBoundKindCount; ++k) {
    if (r->bound.ns[k] > r->bound.ns[best]) best = k;
  }
  r->kind = static_cast<BoundKind>(best);
  r->straggler = -1;
  switch (r->kind) {
    case BoundKind::kHost:
      r->verdict = "host";
      break;
    case BoundKind::kLaunch:
      r->verdict = "launch";
      break;
    case BoundKind::kCompute:
      r->verdict = "compute";
      break;
    case BoundKind::kCommunication:
      r->verdict = "communication";
      break;
    case BoundKind::kPeers: {
      const int64_t peers = r->bound.ns[static_cast<int>(BoundKind::kPeers)];
      if (!r->bound.waited_for.empty() && 2 * r->bound.waited_for.front().second >= peers) {
        r->straggler = r->bound.waited_for.front().first;
        r->verdict = "straggler rank " + std::to_string(r->straggler);
      } else {
        r->verdict = "peers (no single rank)";
      }
      break;
    }
    case BoundKind::kUnexplained:
      r->verdict = "a dependency the trace does not show";
      break;
  }
  if (r->bound.total_ns() == 0) r->verdict = "no time";
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
               "\nwhat bounds each rank's iteration (replayed: the rank's own critical path, mean "
               "%% of its iterations)\n");
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
  // The ranks whose verdict is not the most common one, the largest share of their verdict's
  // kind first: what they wait for, in ms per iteration.
  std::vector<const RankBound*> outliers;
  for (size_t i = 1; i < rows.size(); ++i) {
    outliers.insert(outliers.end(), rows[i].second.begin(), rows[i].second.end());
  }
  auto share_of_kind = [](const RankBound* r) {
    return Percent(r->bound.ns[static_cast<int>(r->kind)], r->bound.total_ns());
  };
  std::stable_sort(outliers.begin(), outliers.end(), [&](const RankBound* a, const RankBound* b) {
    return share_of_kind(a) > share_of_kind(b);
  });
  for (size_t i = 0; i < outliers.size() && i < kMaxOutlierRanks; ++i) {
    const RankBound& r = *outliers[i];
    const double per_iteration = r.iterations > 0 ? static_cast<double>(r.iterations) : 1.0;
    std::fprintf(out, "  rank %d: %s, %.3f ms per iteration (%.1f %%)", r.rank, r.verdict.c_str(),
                 Ms(r.bound.ns[static_cast<int>(r.kind)]) / per_iteration, share_of_kind(&r));
    if (r.kind == BoundKind::kPeers && !r.bound.waited_for.empty()) {
      std::fprintf(out, "; waited for rank %d %.3f ms per iteration",
                   r.bound.waited_for.front().first,
                   Ms(r.bound.waited_for.front().second) / per_iteration);
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
void WriteKindsJson(const IterationBound& bound, internal::JsonWriter* w) {
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

void WriteIterationBoundJson(const IterationBound& bound, internal::JsonWriter* w) {
  w->Key("bound");
  w->BeginObject();
  WriteKindsJson(bound, w);
  w->EndObject();
}

void WriteBoundJson(const ReplayReport& report, internal::JsonWriter* w) {
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
    w->KeyInt("straggler_rank", r.straggler);
    w->KeyUint("iterations", r.iterations);
    WriteKindsJson(r.bound, w);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace lumos::modeler
