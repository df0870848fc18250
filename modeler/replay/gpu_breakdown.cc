#include "modeler/replay/gpu_breakdown.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <map>

#include "modeler/io/json_writer.h"
#include "modeler/models/hardware/hardware_specs.h"
#include "modeler/replay/replay_report.h"

namespace lumos::modeler {
namespace {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Bytes per second of `bytes` moved in `ns`; 0 without time.
double BytesPerS(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) * 1e9 / static_cast<double>(ns) : 0.0;
}

void Add(const ClassTime& from, ClassTime* to) {
  to->name = from.name;
  to->count += from.count;
  to->measured_ns += from.measured_ns;
  to->replayed_ns += from.replayed_ns;
}

void Add(const CopyTime& from, CopyTime* to) {
  to->direction = from.direction;
  to->count += from.count;
  to->bytes += from.bytes;
  to->measured_ns += from.measured_ns;
  to->replayed_ns += from.replayed_ns;
}

std::vector<ClassTime> Sorted(const std::map<std::string_view, ClassTime>& sums) {
  std::vector<ClassTime> v;
  v.reserve(sums.size());
  for (const auto& [name, t] : sums) v.push_back(t);
  // The map is in name order, so ties stay in name order.
  std::stable_sort(v.begin(), v.end(), [](const ClassTime& a, const ClassTime& b) {
    return a.measured_ns > b.measured_ns;
  });
  return v;
}

// Sums by direction in kCopyDirections' slots (a map would order them by text).
using DirectionSums = std::array<CopyTime, kCopyDirectionCount>;

void AddToSlot(const CopyTime& c, DirectionSums* sums) {
  for (int i = 0; i < kCopyDirectionCount; ++i) {
    if (std::string_view(kCopyDirections[i]) == c.direction) return Add(c, &(*sums)[i]);
  }
}

std::vector<CopyTime> InOrder(const DirectionSums& sums) {
  std::vector<CopyTime> v;
  for (const CopyTime& c : sums) {
    if (c.count > 0) v.push_back(c);
  }
  return v;
}

int64_t MeasuredSum(const std::vector<ClassTime>& v) {
  int64_t sum = 0;
  for (const ClassTime& c : v) sum += c.measured_ns;
  return sum;
}

// The GPU spec of each rank index of the report (null: not in the built-in specs).
std::vector<const models::GpuSpec*> GpusOf(const ReplayReport& r) {
  std::vector<const models::GpuSpec*> gpus;
  gpus.reserve(r.devices.size());
  for (const std::string& device : r.devices) {
    gpus.push_back(device.empty() ? nullptr : models::SpecTable::Builtin().FindGpu(device));
  }
  return gpus;
}

const models::GpuSpec* GpuOfRank(const ReplayReport& r,
                                 const std::vector<const models::GpuSpec*>& gpus, int32_t rank) {
  for (size_t i = 0; i < r.ranks.size() && i < gpus.size(); ++i) {
    if (r.ranks[i] == rank) return gpus[i];
  }
  return nullptr;
}

// The one GPU of every rank, or null when they differ or one is unknown.
const models::GpuSpec* CommonGpu(const std::vector<const models::GpuSpec*>& gpus) {
  if (gpus.empty()) return nullptr;
  for (const models::GpuSpec* g : gpus) {
    if (g != gpus.front()) return nullptr;
  }
  return gpus.front();
}

}  // namespace

std::vector<RankClasses> SumClassesPerRank(const std::vector<IterationReport>& iterations,
                                           std::vector<ClassTime>* job) {
  std::map<int32_t, std::map<std::string_view, ClassTime>> per_rank;
  std::map<std::string_view, ClassTime> all;
  for (const IterationReport& it : iterations) {
    auto& rank = per_rank[it.rank];
    for (const ClassTime& c : it.gpu_classes) {
      Add(c, &rank[c.name]);
      Add(c, &all[c.name]);
    }
  }
  std::vector<RankClasses> out;
  out.reserve(per_rank.size());
  for (const auto& [rank, sums] : per_rank) out.push_back({rank, Sorted(sums)});
  *job = Sorted(all);
  return out;
}

std::vector<RankCopies> SumCopiesPerRank(const std::vector<IterationReport>& iterations,
                                         std::vector<CopyTime>* job) {
  std::map<int32_t, DirectionSums> per_rank;
  DirectionSums all{};
  for (const IterationReport& it : iterations) {
    DirectionSums& rank = per_rank[it.rank];
    for (const CopyTime& c : it.copies) {
      AddToSlot(c, &rank);
      AddToSlot(c, &all);
    }
  }
  std::vector<RankCopies> out;
  out.reserve(per_rank.size());
  for (const auto& [rank, sums] : per_rank) out.push_back({rank, InOrder(sums)});
  *job = InOrder(all);
  return out;
}

LinkPeak PeakFor(const models::GpuSpec* gpu, std::string_view direction) {
  if (gpu == nullptr) return {};
  if (direction == "HtoD" || direction == "DtoH") {
    return {gpu->host_bytes_per_s.value_or(models::kDefaultHostBytesPerS), "host link"};
  }
  if (direction == "DtoD") return {gpu->hbm_bytes_per_s / 2, "HBM read+write"};
  if (direction == "memset") return {gpu->hbm_bytes_per_s, "HBM write"};
  if (direction == "PtoP" && gpu->nvlink_bytes_per_s) {
    return {*gpu->nvlink_bytes_per_s / 2, "NVLink, one way"};
  }
  return {};
}

void WriteClassesText(const ReplayReport& r, const std::string& over, std::FILE* out) {
  std::vector<ClassTime> job;
  const std::vector<RankClasses> ranks = SumClassesPerRank(r.iterations, &job);
  if (job.empty()) return;
  const int64_t total = MeasuredSum(job);
  std::fprintf(out,
               "\nGPU time by class (GPU ops starting in an iteration, sum over %s)\n"
               "  %-34s %10s %12s %12s %7s  %s\n",
               over.c_str(), "class", "count", "measured ms", "replayed ms", "share",
               "per rank ms");
  for (const ClassTime& c : job) {
    // The spread over ranks: the least and the most any rank spent on it (0 where none ran it).
    int64_t low = INT64_MAX, high = -1;
    int32_t high_rank = 0;
    for (const RankClasses& rank : ranks) {
      int64_t ns = 0;
      for (const ClassTime& x : rank.classes) {
        if (std::string_view(x.name) == c.name) ns = x.measured_ns;
      }
      low = std::min(low, ns);
      if (ns > high) high = ns, high_rank = rank.rank;
    }
    std::fprintf(out, "  %-34s %10" PRIu64 " %12.3f %12.3f %6.1f%%  %.3f-%.3f (max rank %d)\n",
                 c.name, c.count, Ms(c.measured_ns), Ms(c.replayed_ns),
                 Percent(c.measured_ns, total), Ms(low), Ms(high), high_rank);
  }
}

void WriteCopiesText(const ReplayReport& r, const std::string& over, std::FILE* out) {
  std::vector<CopyTime> job;
  const std::vector<RankCopies> ranks = SumCopiesPerRank(r.iterations, &job);
  if (job.empty()) return;
  const std::vector<const models::GpuSpec*> gpus = GpusOf(r);
  const models::GpuSpec* common = CommonGpu(gpus);
  std::fprintf(out, "\ncopies and memsets (sum over %s; GPU %s)\n", over.c_str(),
               common != nullptr ? common->name.c_str() : "not known or mixed: no job peak");
  std::fprintf(out, "  %-31s %8s %12s %12s %9s %9s %6s  %s\n", "direction", "count", "MB",
               "measured ms", "GB/s", "peak GB/s", "peak", "slowest rank GB/s");
  for (const CopyTime& c : job) {
    const double achieved = BytesPerS(c.bytes, c.measured_ns);
    const LinkPeak peak = PeakFor(common, c.direction);
    // The rank whose copies of this direction moved slowest (bytes over their time).
    double slowest = -1;
    int32_t slowest_rank = 0;
    for (const RankCopies& rank : ranks) {
      for (const CopyTime& x : rank.copies) {
        if (std::string_view(x.direction) != c.direction || x.bytes == 0) continue;
        const double bw = BytesPerS(x.bytes, x.measured_ns);
        if (slowest < 0 || bw < slowest) slowest = bw, slowest_rank = rank.rank;
      }
    }
    char peak_text[32] = "-", share_text[16] = "-", slowest_text[48] = "-";
    if (peak.bytes_per_s > 0) {
      std::snprintf(peak_text, sizeof(peak_text), "%.1f", peak.bytes_per_s / 1e9);
      std::snprintf(share_text, sizeof(share_text), "%.0f%%", 100 * achieved / peak.bytes_per_s);
    }
    if (slowest >= 0) {
      std::snprintf(slowest_text, sizeof(slowest_text), "%.2f (rank %d)", slowest / 1e9,
                    slowest_rank);
    }
    std::fprintf(out, "  %-31s %8" PRIu64 " %12.3f %12.3f %9.2f %9s %6s  %s\n", c.direction,
                 c.count, static_cast<double>(c.bytes) / 1e6, Ms(c.measured_ns), achieved / 1e9,
                 peak_text, share_text, slowest_text);
  }
}

void WriteBreakdownsJson(const ReplayReport& r, io::JsonWriter* w) {
  auto classes = [w](const std::vector<ClassTime>& v) {
    const int64_t total = MeasuredSum(v);
    w->BeginArray();
    for (const ClassTime& c : v) {
      w->BeginObject();
      w->KeyString("class", c.name);
      w->KeyUint("count", c.count);
      w->KeyInt("measured_ns", c.measured_ns);
      w->KeyInt("replayed_ns", c.replayed_ns);
      w->Key("share_percent");
      w->Fixed(Percent(c.measured_ns, total), 4);
      w->EndObject();
    }
    w->EndArray();
  };
  std::vector<ClassTime> job_classes;
  const std::vector<RankClasses> rank_classes = SumClassesPerRank(r.iterations, &job_classes);
  w->Key("gpu_time_by_class");
  w->BeginObject();
  w->Key("job");
  classes(job_classes);
  w->Key("per_rank");
  w->BeginArray(true);
  for (const RankClasses& rank : rank_classes) {
    w->BeginObject();
    w->KeyInt("rank", rank.rank);
    w->Key("classes");
    classes(rank.classes);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();

  const std::vector<const models::GpuSpec*> gpus = GpusOf(r);
  auto copies = [w](const std::vector<CopyTime>& v, const models::GpuSpec* gpu) {
    w->BeginArray();
    for (const CopyTime& c : v) {
      w->BeginObject();
      w->KeyString("direction", c.direction);
      w->KeyUint("count", c.count);
      w->KeyUint("bytes", c.bytes);
      w->KeyInt("measured_ns", c.measured_ns);
      w->KeyInt("replayed_ns", c.replayed_ns);
      const double achieved = BytesPerS(c.bytes, c.measured_ns);
      w->Key("bytes_per_s");
      w->Fixed(achieved, 0);
      const LinkPeak peak = PeakFor(gpu, c.direction);
      if (peak.bytes_per_s > 0) {
        w->Key("peak_bytes_per_s");
        w->Fixed(peak.bytes_per_s, 0);
        w->KeyString("peak_link", peak.link);
        w->Key("peak_percent");
        w->Fixed(100 * achieved / peak.bytes_per_s, 4);
      }
      w->EndObject();
    }
    w->EndArray();
  };
  std::vector<CopyTime> job_copies;
  const std::vector<RankCopies> rank_copies = SumCopiesPerRank(r.iterations, &job_copies);
  w->Key("copies");
  w->BeginObject();
  w->Key("job");
  copies(job_copies, CommonGpu(gpus));
  w->Key("per_rank");
  w->BeginArray(true);
  for (const RankCopies& rank : rank_copies) {
    const models::GpuSpec* gpu = GpuOfRank(r, gpus, rank.rank);
    w->BeginObject();
    w->KeyInt("rank", rank.rank);
    w->KeyString("gpu", gpu != nullptr ? gpu->name : "");
    w->Key("directions");
    copies(rank.copies, gpu);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace lumos::modeler
