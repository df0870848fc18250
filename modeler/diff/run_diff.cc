#include "modeler/diff/run_diff.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>

#include "modeler/io/json_writer.h"

namespace lumos::modeler::diff {
namespace {

constexpr const char* kBreakdownNames[4] = {"exposed compute", "overlapped", "exposed comm",
                                            "idle"};
constexpr const char* kBreakdownKeys[4] = {"exposed_compute", "overlapped", "exposed_comm", "idle"};
constexpr const char* kHostNames[3] = {"API calls", "syncs (blocked)", "gaps between calls"};
constexpr const char* kHostKeys[3] = {"api", "sync", "gaps"};

double PerIteration(int64_t total, uint64_t iterations) {
  return iterations > 0 ? static_cast<double>(total) / static_cast<double>(iterations) : 0.0;
}

// "12.35 ms", "81.2 us", "640 ns"; signed: "+1.20 ms", "-3 ns", "0".
std::string Time(double ns, bool sign = false) {
  char buf[64];
  const double a = std::fabs(ns);
  const char* s = !sign ? "" : ns > 0 ? "+" : ns < 0 ? "-" : "";
  if (sign && std::llround(ns) == 0) return "0";
  if (a >= 1e9) {
    std::snprintf(buf, sizeof buf, "%s%.3f s", s, a / 1e9);
  } else if (a >= 1e6) {
    std::snprintf(buf, sizeof buf, "%s%.2f ms", s, a / 1e6);
  } else if (a >= 1e3) {
    std::snprintf(buf, sizeof buf, "%s%.1f us", s, a / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%s%.0f ns", s, a);
  }
  return buf;
}

// "+12.3 %", "new", "gone", "0.0 %".
std::string Percent(double a, double b) {
  if (a == 0 && b == 0) return "0.0 %";
  if (a == 0) return "new";
  if (b == 0) return "gone";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f %%", 100.0 * (b - a) / a);
  return buf;
}

std::string Count(double v) {
  char buf[32];
  if (v == std::floor(v) && v < 1e12) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", v);
  }
  return buf;
}

std::string Bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  }
  return buf;
}

std::string Dims(const std::array<uint32_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// At most `width` characters ("…" at the end when cut).
std::string Cut(const std::string& text, size_t width) {
  if (text.size() <= width) return text;
  size_t at = width - 1;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;  // UTF-8.
  return text.substr(0, at) + "\xe2\x80\xa6";
}

std::string Pad(const std::string& text, size_t width, bool left = false) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return left ? text + fill : fill + text;
}

// A kernel's name cut to `width`, its launch and shape after it (never cut: they tell the rows
// of one name apart).
std::string ItemLabel(const ItemDiff& item, size_t width) {
  if (item.kernel == nullptr) return CollectiveLabel(*item.collective);
  const std::string full = KernelLabel(*item.kernel);
  const std::string bracket = full.substr(item.kernel->name.size());
  return Cut(item.kernel->name, width) + bracket;
}

template <typename Key, typename Stat, typename Fill>
std::vector<ItemDiff> Match(const std::map<Key, Stat>& a, const std::map<Key, Stat>& b,
                            uint64_t a_iterations, uint64_t b_iterations, const Fill& fill) {
  std::vector<ItemDiff> out;
  auto add = [&](const Key& key, const Stat* sa, const Stat* sb) {
    ItemDiff item;
    fill(key, sa, sb, &item);
    item.a_ns = PerIteration(item.a.total_ns, a_iterations);
    item.b_ns = PerIteration(item.b.total_ns, b_iterations);
    out.push_back(item);
  };
  for (const auto& [key, stat] : a) {
    auto other = b.find(key);
    add(key, &stat, other != b.end() ? &other->second : nullptr);
  }
  for (const auto& [key, stat] : b) {
    if (a.find(key) == a.end()) add(key, nullptr, &stat);
  }
  // Largest |contribution| first; ties keep key order (stable: a's keys, then b's new ones).
  std::stable_sort(out.begin(), out.end(), [](const ItemDiff& x, const ItemDiff& y) {
    return std::fabs(x.delta_ns()) > std::fabs(y.delta_ns());
  });
  return out;
}

void ItemsJson(const std::vector<ItemDiff>& items, io::JsonWriter* w) {
  w->BeginArray(true);
  for (const ItemDiff& item : items) {
    w->BeginObject();
    if (item.kernel != nullptr) {
      const KernelKey& k = *item.kernel;
      w->KeyString("name", k.name);
      for (const char* dim : {"grid", "block"}) {
        w->Key(dim);
        w->BeginArray();
        for (uint32_t v : dim[0] == 'g' ? k.grid : k.block) w->Uint(v);
        w->EndArray();
      }
      w->Key("gemm");
      if (ShapeText(k.shape).empty()) {
        w->Null();
      } else {
        w->BeginObject();
        w->KeyUint("m", k.shape[0]);
        w->KeyUint("n", k.shape[1]);
        w->KeyUint("k", k.shape[2]);
        w->KeyUint("batch", k.shape[3]);
        w->EndObject();
      }
    } else {
      const CollectiveKey& c = *item.collective;
      w->KeyString("op", c.op);
      w->KeyUint("bytes", c.bytes);
      w->KeyUint("ranks", c.ranks);
    }
    const bool in_a = item.a.count > 0, in_b = item.b.count > 0;
    w->KeyString("status", in_a && in_b ? "both" : in_a ? "missing" : "new");
    w->KeyUint("a_count", item.a.count);
    w->KeyUint("b_count", item.b.count);
    w->KeyInt("a_total_ns", item.a.total_ns);
    w->KeyInt("b_total_ns", item.b.total_ns);
    w->Key("a_ns_per_iteration");
    w->Fixed(item.a_ns, 1);
    w->Key("b_ns_per_iteration");
    w->Fixed(item.b_ns, 1);
    w->Key("delta_ns_per_iteration");
    w->Fixed(item.delta_ns(), 1);
    if (item.collective != nullptr) {
      w->KeyUint("a_transfers", item.a_transfer.count);
      w->KeyUint("b_transfers", item.b_transfer.count);
      w->KeyInt("a_transfer_total_ns", item.a_transfer.total_ns);
      w->KeyInt("b_transfer_total_ns", item.b_transfer.total_ns);
    }
    w->EndObject();
  }
  w->EndArray();
}

void SideJson(const SideInfo& side, io::JsonWriter* w) {
  const RunProfile& p = *side.profile;
  w->BeginObject();
  w->KeyString("input", side.input);
  w->KeyString("job", p.job_id);
  w->KeyUint("files", p.files);
  w->KeyUint("ranks", p.ranks.size());
  w->KeyUint("rank_iterations", p.rank_iterations);
  w->KeyString("iteration_method", p.iteration_method);
  w->KeyString("iteration_choice", p.iteration_choice);
  w->Key("input_problems");
  w->BeginArray();
  for (const std::string& s : p.input_problems) w->String(s);
  w->EndArray();
  w->EndObject();
}

void PairJson(std::string_view key, double a, double b, io::JsonWriter* w) {
  w->Key(key);
  w->BeginObject();
  w->Key("a_ns");
  w->Fixed(a, 1);
  w->Key("b_ns");
  w->Fixed(b, 1);
  w->Key("delta_ns");
  w->Fixed(b - a, 1);
  w->EndObject();
}

std::string HostPaceText(const std::optional<HostPace>& pace) {
  if (!pace) {
    return "  host pace: not compared (fewer than " + std::to_string(kMinMatched) +
           " calls made by both runs in the same order)";
  }
  char text[256];
  std::snprintf(
      text, sizeof text,
      "  host pace: B's host took %.2f x A's time between the same calls (sum over "
      "%zu, each one's middle half %.2f-%.2f): host time that differs by more is work that "
      "changed",
      pace->ratio, pace->matched, pace->low, pace->high);
  return text;
}

}  // namespace

std::string KernelLabel(const KernelKey& key) {
  std::string s = key.name + " [grid " + Dims(key.grid) + ", block " + Dims(key.block);
  if (const std::string shape = ShapeText(key.shape); !shape.empty()) s += ", gemm " + shape;
  return s + "]";
}

std::string CollectiveLabel(const CollectiveKey& key) {
  return key.op + " " + (key.bytes > 0 ? Bytes(key.bytes) : std::string("(bytes unknown)")) + " x" +
         std::to_string(key.ranks);
}

RunDiff CompareRuns(const SideInfo& a, const SideInfo& b) {
  RunDiff d;
  d.a = a;
  d.b = b;
  const RunProfile& pa = *a.profile;
  const RunProfile& pb = *b.profile;
  const uint64_t na = pa.rank_iterations, nb = pb.rank_iterations;
  d.a_median_ns = Median(pa.iteration_ns);
  d.b_median_ns = Median(pb.iteration_ns);
  int64_t sa = 0, sb = 0;
  for (int64_t v : pa.iteration_ns) sa += v;
  for (int64_t v : pb.iteration_ns) sb += v;
  d.a_mean_ns = PerIteration(sa, na);
  d.b_mean_ns = PerIteration(sb, nb);
  auto breakdown = [](const Breakdown& x, uint64_t n, double* out) {
    out[0] = PerIteration(x.exposed_compute_ns, n);
    out[1] = PerIteration(x.overlapped_ns, n);
    out[2] = PerIteration(x.exposed_comm_ns, n);
    out[3] = PerIteration(x.other_ns, n);
  };
  breakdown(pa.breakdown, na, d.a_breakdown);
  breakdown(pb.breakdown, nb, d.b_breakdown);
  auto host = [](const HostStat& x, uint64_t n, double* out) {
    out[0] = PerIteration(x.api_ns, n);
    out[1] = PerIteration(x.sync_ns, n);
    out[2] = PerIteration(x.gap_ns, n);
  };
  host(pa.host, na, d.a_host);
  host(pb.host, nb, d.b_host);
  d.host_pace = CompareHostPace(pa.host_calls, pb.host_calls);
  d.kernels = Match(pa.kernels, pb.kernels, na, nb,
                    [](const KernelKey& key, const TimeStat* x, const TimeStat* y, ItemDiff* item) {
                      item->kernel = &key;
                      if (x != nullptr) item->a = *x;
                      if (y != nullptr) item->b = *y;
                    });
  d.collectives = Match(pa.collectives, pb.collectives, na, nb,
                        [](const CollectiveKey& key, const CollectiveStat* x,
                           const CollectiveStat* y, ItemDiff* item) {
                          item->collective = &key;
                          if (x != nullptr) {
                            item->a = x->time;
                            item->a_transfer = x->transfer;
                          }
                          if (y != nullptr) {
                            item->b = y->time;
                            item->b_transfer = y->transfer;
                          }
                        });
  // Ranks, matched by global rank.
  std::map<int32_t, RankDiff> ranks;
  auto compute = [](const RankProfile& r) {
    return PerIteration(r.breakdown.exposed_compute_ns + r.breakdown.overlapped_ns, r.iterations);
  };
  for (const RankProfile& r : pa.ranks) {
    RankDiff& x = ranks[r.rank];
    x.rank = r.rank;
    x.a = &r;
    x.a_compute_ns = compute(r);
  }
  for (const RankProfile& r : pb.ranks) {
    RankDiff& x = ranks[r.rank];
    x.rank = r.rank;
    x.b = &r;
    x.b_compute_ns = compute(r);
  }
  std::vector<int32_t> only_a, only_b;
  for (auto& [rank, x] : ranks) {
    if (x.b == nullptr) only_a.push_back(rank);
    if (x.a == nullptr) only_b.push_back(rank);
    d.ranks.push_back(x);
  }
  std::stable_sort(d.ranks.begin(), d.ranks.end(), [](const RankDiff& x, const RankDiff& y) {
    const bool xb = x.a != nullptr && x.b != nullptr, yb = y.a != nullptr && y.b != nullptr;
    if (xb != yb) return xb;
    return std::fabs(x.delta_compute_ns()) > std::fabs(y.delta_compute_ns());
  });
  auto list = [](const std::vector<int32_t>& r) {
    std::string s;
    for (size_t i = 0; i < r.size() && i < 8; ++i) s += (i > 0 ? ", " : "") + std::to_string(r[i]);
    if (r.size() > 8) s += ", … (" + std::to_string(r.size()) + ")";
    return s;
  };
  if (!only_a.empty()) d.notes.push_back("ranks only in A: " + list(only_a));
  if (!only_b.empty()) d.notes.push_back("ranks only in B: " + list(only_b));
  if (pa.iteration_method != pb.iteration_method) {
    d.notes.push_back("iterations found differently: A " + pa.iteration_method + ", B " +
                      pb.iteration_method);
  }
  for (const SideInfo* s : {&a, &b}) {
    if (s->profile->iteration_method == "whole trace") {
      d.notes.push_back(s->label +
                        ": no iterations found (no ProfilerStep or --iteration ranges, no "
                        "repeating kernels): its whole trace is one iteration");
    }
  }
  return d;
}

std::string Headline(const RunDiff& d) {
  const double delta = static_cast<double>(d.b_median_ns - d.a_median_ns);
  std::string s;
  char buf[160];
  if (d.b_median_ns == d.a_median_ns) {
    s = "B is as fast as A per iteration (median " + Time(static_cast<double>(d.a_median_ns)) + ")";
  } else {
    const double pct = d.a_median_ns > 0 ? 100.0 * delta / static_cast<double>(d.a_median_ns) : 0.0;
    std::snprintf(buf, sizeof buf, "B is %+.1f %% %s per iteration (median %s vs %s, %s)", pct,
                  delta > 0 ? "slower" : "faster", Time(static_cast<double>(d.b_median_ns)).c_str(),
                  Time(static_cast<double>(d.a_median_ns)).c_str(), Time(delta, true).c_str());
    s = buf;
  }
  // What contributed most: kernels and collectives together, by |contribution|.
  std::vector<const ItemDiff*> items;
  for (const ItemDiff& i : d.kernels) items.push_back(&i);
  for (const ItemDiff& i : d.collectives) items.push_back(&i);
  std::stable_sort(items.begin(), items.end(), [](const ItemDiff* x, const ItemDiff* y) {
    return std::fabs(x->delta_ns()) > std::fabs(y->delta_ns());
  });
  std::string parts;
  for (size_t i = 0; i < items.size() && i < 3; ++i) {
    const ItemDiff& item = *items[i];
    if (std::llround(item.delta_ns()) == 0) break;
    const std::string name =
        item.kernel != nullptr ? item.kernel->name : CollectiveLabel(*item.collective);
    parts += (parts.empty() ? "" : ", ") + Time(item.delta_ns(), true) + " " +
             (item.kernel != nullptr ? "kernel " : "") + Cut(name, 48) + " (" +
             Percent(item.a_ns, item.b_ns) + ")";
  }
  // The rank whose compute changed most against the others' (the one that got slower).
  std::vector<double> deltas;
  for (const RankDiff& r : d.ranks) {
    if (r.a != nullptr && r.b != nullptr) deltas.push_back(r.delta_compute_ns());
  }
  if (deltas.size() > 1) {
    std::vector<double> sorted = deltas;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(sorted.size() / 2),
                     sorted.end());
    const double median = sorted[sorted.size() / 2];
    const RankDiff& top = d.ranks.front();
    const double beyond = top.delta_compute_ns() - median;
    if (std::fabs(beyond) > 0.01 * static_cast<double>(d.a_median_ns) && top.a != nullptr &&
        top.b != nullptr) {
      parts += (parts.empty() ? "" : "; ") + std::string("rank ") + std::to_string(top.rank) +
               " computes " + Time(top.delta_compute_ns(), true) + " per iteration (" +
               Percent(top.a_compute_ns, top.b_compute_ns) + "; median rank " + Time(median, true) +
               ")";
    }
  }
  if (!parts.empty()) s += (d.b_median_ns == d.a_median_ns ? "; inside it: " : ": ") + parts;
  return s;
}

std::string DiffText(const RunDiff& d, size_t top) {
  std::string s;
  auto line = [&s](const std::string& l) { s += l + "\n"; };
  for (const SideInfo* side : {&d.a, &d.b}) {
    const RunProfile& p = *side->profile;
    line(side->label + ": " + side->input + " (job " + p.job_id + ", " +
         std::to_string(p.ranks.size()) + " rank(s), " + std::to_string(p.rank_iterations) +
         " rank-iteration(s): " + p.iteration_method + "; " + p.iteration_choice + ")");
  }
  for (const std::string& n : d.notes) line("note: " + n);
  line("");
  line(Headline(d));
  line("");
  auto row = [&](const std::string& name, double a, double b) {
    line("  " + Pad(name, 24, true) + Pad(Time(a), 11) + Pad(Time(b), 11) +
         Pad(Time(b - a, true), 12) + Pad(Percent(a, b), 10));
  };
  line("per iteration and rank   " + Pad("A", 15) + Pad("B", 11) + Pad("B - A", 12));
  row("iteration (median)", static_cast<double>(d.a_median_ns), static_cast<double>(d.b_median_ns));
  row("iteration (mean)", d.a_mean_ns, d.b_mean_ns);
  for (int i = 0; i < 4; ++i) row(kBreakdownNames[i], d.a_breakdown[i], d.b_breakdown[i]);
  for (int i = 0; i < 3; ++i) row("host " + std::string(kHostNames[i]), d.a_host[i], d.b_host[i]);
  line(HostPaceText(d.host_pace));

  auto items = [&](const std::string& title, const std::vector<ItemDiff>& list) {
    size_t added = 0, gone = 0;
    for (const ItemDiff& i : list) {
      added += i.a.count == 0 ? 1 : 0;
      gone += i.b.count == 0 ? 1 : 0;
    }
    line("");
    line(title + " by |B - A| per iteration and rank (" + std::to_string(list.size()) + " keys, " +
         std::to_string(added) + " new in B, " + std::to_string(gone) + " missing in B; top " +
         std::to_string(std::min(top, list.size())) + ")");
    line("  " + Pad("B - A", 10) + Pad("%", 10) + Pad("A", 10) + Pad("B", 10) + Pad("A n", 8) +
         Pad("B n", 8) + Pad("A /call", 10) + Pad("B /call", 10) + "  what");
    for (size_t i = 0; i < list.size() && i < top; ++i) {
      const ItemDiff& it = list[i];
      const double an =
          PerIteration(static_cast<int64_t>(it.a.count), d.a.profile->rank_iterations);
      const double bn =
          PerIteration(static_cast<int64_t>(it.b.count), d.b.profile->rank_iterations);
      auto per_call = [](const TimeStat& t) {
        return t.count > 0 ? Time(PerIteration(t.total_ns, t.count)) : std::string("-");
      };
      line("  " + Pad(Time(it.delta_ns(), true), 10) + Pad(Percent(it.a_ns, it.b_ns), 10) +
           Pad(Time(it.a_ns), 10) + Pad(Time(it.b_ns), 10) + Pad(Count(an), 8) + Pad(Count(bn), 8) +
           Pad(per_call(it.a), 10) + Pad(per_call(it.b), 10) + "  " + ItemLabel(it, 72));
    }
  };
  items("kernels", d.kernels);
  items("collectives (time in them, waiting included)", d.collectives);

  line("");
  line("ranks by |B - A| of GPU compute per iteration (top " +
       std::to_string(std::min(top, d.ranks.size())) + " of " + std::to_string(d.ranks.size()) +
       ")");
  line("  " + Pad("rank", 6) + Pad("iter A", 11) + Pad("iter B", 11) + Pad("B - A", 11) +
       Pad("compute A", 11) + Pad("compute B", 11) + Pad("B - A", 11) + Pad("%", 9) + "  host");
  for (size_t i = 0; i < d.ranks.size() && i < top; ++i) {
    const RankDiff& r = d.ranks[i];
    auto it = [](const RankProfile* p) {
      return p != nullptr ? Time(static_cast<double>(p->median_iteration_ns)) : std::string("-");
    };
    const std::string delta_it =
        r.a != nullptr && r.b != nullptr
            ? Time(static_cast<double>(r.b->median_iteration_ns - r.a->median_iteration_ns), true)
            : std::string("-");
    const std::string& host = r.b != nullptr ? r.b->host : r.a->host;
    line("  " + Pad(std::to_string(r.rank), 6) + Pad(it(r.a), 11) + Pad(it(r.b), 11) +
         Pad(delta_it, 11) + Pad(r.a != nullptr ? Time(r.a_compute_ns) : "-", 11) +
         Pad(r.b != nullptr ? Time(r.b_compute_ns) : "-", 11) +
         Pad(r.a != nullptr && r.b != nullptr ? Time(r.delta_compute_ns(), true) : "-", 11) +
         Pad(r.a != nullptr && r.b != nullptr ? Percent(r.a_compute_ns, r.b_compute_ns)
                                              : std::string(r.a == nullptr ? "new" : "gone"),
             9) +
         "  " + host);
  }
  return s;
}

std::string DiffJson(const RunDiff& d) {
  std::string out;
  io::JsonWriter w([&out](std::string_view chunk) {
    out.append(chunk);
    return Status::Ok();
  });
  w.BeginObject(true);
  w.KeyString("format", "lumos-diff");
  w.KeyInt("diff_version", 1);
  w.Key("a");
  SideJson(d.a, &w);
  w.Key("b");
  SideJson(d.b, &w);
  w.KeyString("headline", Headline(d));
  w.Key("notes");
  w.BeginArray();
  for (const std::string& n : d.notes) w.String(n);
  w.EndArray();
  w.Key("iteration");
  w.BeginObject();
  w.KeyInt("a_median_ns", d.a_median_ns);
  w.KeyInt("b_median_ns", d.b_median_ns);
  w.KeyInt("delta_median_ns", d.b_median_ns - d.a_median_ns);
  w.Key("a_mean_ns");
  w.Fixed(d.a_mean_ns, 1);
  w.Key("b_mean_ns");
  w.Fixed(d.b_mean_ns, 1);
  w.EndObject();
  w.Key("breakdown");
  w.BeginObject();
  for (int i = 0; i < 4; ++i) PairJson(kBreakdownKeys[i], d.a_breakdown[i], d.b_breakdown[i], &w);
  w.EndObject();
  w.Key("host");
  w.BeginObject();
  for (int i = 0; i < 3; ++i) PairJson(kHostKeys[i], d.a_host[i], d.b_host[i], &w);
  w.EndObject();
  w.Key("host_pace");
  if (d.host_pace) {
    w.BeginObject();
    w.Key("ratio");
    w.Fixed(d.host_pace->ratio, 3);
    w.Key("low");
    w.Fixed(d.host_pace->low, 3);
    w.Key("high");
    w.Fixed(d.host_pace->high, 3);
    w.KeyUint("matched_gaps", d.host_pace->matched);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("kernels");
  ItemsJson(d.kernels, &w);
  w.Key("collectives");
  ItemsJson(d.collectives, &w);
  w.Key("ranks");
  w.BeginArray(true);
  for (const RankDiff& r : d.ranks) {
    w.BeginObject();
    w.KeyInt("rank", r.rank);
    w.KeyString("host", r.b != nullptr ? r.b->host : r.a->host);
    for (const auto& [key, p] : {std::pair{"a", r.a}, std::pair{"b", r.b}}) {
      w.Key(key);
      if (p == nullptr) {
        w.Null();
        continue;
      }
      w.BeginObject();
      w.KeyUint("iterations", p->iterations);
      w.KeyInt("median_iteration_ns", p->median_iteration_ns);
      w.KeyInt("iteration_total_ns", p->iteration_ns);
      w.KeyInt("compute_total_ns", p->breakdown.exposed_compute_ns + p->breakdown.overlapped_ns);
      w.KeyInt("kernel_total_ns", p->kernel_ns);
      w.KeyInt("collective_total_ns", p->collective_ns);
      w.EndObject();
    }
    w.Key("delta_compute_ns_per_iteration");
    w.Fixed(r.a != nullptr && r.b != nullptr ? r.delta_compute_ns() : 0.0, 1);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.Raw("\n");
  (void)w.Finish();
  return out;
}

}  // namespace lumos::modeler::diff
