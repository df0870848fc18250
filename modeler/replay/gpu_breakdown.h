// Design: the replay report's GPU time by class and its copies and memsets by direction, summed
// from the iterations (IterationReport::gpu_classes, ::copies) per rank and for the job, and
// written as the text report's two tables and the JSON's two objects.
//   GPU time by class  count, measured and replayed ns and the share of the GPU op time (of the
//                      rank, of the job); the text adds the per-rank range of each class's
//                      measured time, so one slow rank shows on the job's line.
//   copies, memsets    count, bytes, measured ns, achieved bandwidth (bytes / measured ns of
//                      the ops) against the link's peak from the rank's GPU (modeler/models'
//                      built-in specs, by the trace header's device name): HtoD and DtoH the
//                      host link (one direction), DtoD half the HBM bandwidth (a copy reads
//                      and writes each byte), PtoP half the NVLink figure (NVIDIA quotes both
//                      directions), a memset the HBM bandwidth (writes only); HtoH, an unknown
//                      direction or an unknown GPU: no peak.
// Threading: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "modeler/analysis/iteration_analysis.h"

namespace lumos::modeler {

struct ReplayReport;
namespace io {
class JsonWriter;
}
namespace models {
struct GpuSpec;
}

struct RankClasses {
  int32_t rank = 0;
  std::vector<ClassTime> classes;  // Largest measured first, ties by name.
};
struct RankCopies {
  int32_t rank = 0;
  std::vector<CopyTime> copies;  // In CopyTime's direction order.
};

// Per rank (in rank order) and for the job (`job`), summed over the iterations.
std::vector<RankClasses> SumClassesPerRank(const std::vector<IterationReport>& iterations,
                                           std::vector<ClassTime>* job);
std::vector<RankCopies> SumCopiesPerRank(const std::vector<IterationReport>& iterations,
                                         std::vector<CopyTime>* job);

// The peak bandwidth of a direction's link on `gpu` (bytes/s; 0: none known) and its name.
struct LinkPeak {
  double bytes_per_s = 0;
  const char* link = "";
};
LinkPeak PeakFor(const models::GpuSpec* gpu, std::string_view direction);

// The text report's sections; `over` says what the sums are over ("40 iterations of 8 ranks").
void WriteClassesText(const ReplayReport& report, const std::string& over, std::FILE* out);
void WriteCopiesText(const ReplayReport& report, const std::string& over, std::FILE* out);
// The JSON report's "gpu_time_by_class" and "copies" members.
void WriteBreakdownsJson(const ReplayReport& report, io::JsonWriter* w);

}  // namespace lumos::modeler
