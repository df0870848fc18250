// `lumos-model inspect FILE|DIR|GLOB... [--json]`: what is in a set of trace files.
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "base/cli/arg_parser.h"
#include "base/cli/command_outcome.h"
#include "modeler/io/json_writer.h"
#include "modeler/tools/commands.h"
#include "modeler/trace/packet_util.h"
#include "modeler/trace/trace_set.h"
#include "modeler/trace/trace_summary.h"

namespace lumos::modeler {
namespace {

constexpr const char kDescription[] =
    "Shows, for each trace file: job, rank / world size, host, pid, producer, devices,\n"
    "CUDA/CUPTI/NCCL/driver versions, time span, packet counts per kind, streams, threads,\n"
    "communicators, how many kernels have a GEMM (or an attention) shape, loss (events dropped,\n"
    "by source) and whether the file ends cleanly;\n"
    "then, per job, which ranks are present.\n"
    "\n"
    "inputs: trace files, directories (every *.pb.zst inside, recursively) or glob patterns.";

constexpr const char kExitStatus[] =
    "exit status: 0 every file intact and closed; 1 a file is unreadable (skipped), has a\n"
    "damaged frames or no trailer (what could be read is still shown; one line on stderr per\n"
    "file), or the output could not be written; 2 bad arguments.";

// A JSON string, quoted: names and paths are bytes, not necessarily UTF-8 (a file name in
// Latin-1): invalid UTF-8 becomes U+FFFD, so the document stays valid JSON.
std::string Quoted(std::string_view s) {
  std::string out;
  io::AppendJsonString(s, &out);
  return out;
}

// UTC date and time to the µs. Times before 1970 are negative: the second is rounded down
// (floor), so the fraction stays in [0, 1) s (-0.5 s is 23:59:59.500000 of the day before).
std::string FormatTime(int64_t ns) {
  constexpr int64_t kSecond = 1000000000;
  int64_t seconds = ns / kSecond;
  int64_t fraction = ns % kSecond;
  if (fraction < 0) {
    fraction += kSecond;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  if (gmtime_r(&t, &tm) == nullptr) return std::to_string(ns) + " ns";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d %02d:%02d:%02d.%06" PRId64 " UTC",
                tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                fraction / 1000);
  return buf;
}

std::string Rank(const pb::TraceHeader& h) {
  std::string s = h.has_rank() ? std::to_string(h.rank()) : "?";
  s += " / " + (h.has_world_size() ? std::to_string(h.world_size()) : std::string("?"));
  if (h.has_local_rank()) s += " (local " + std::to_string(h.local_rank()) + ")";
  return s;
}

// The rank the agent learned from the NCCL world communicator (Trailer, 2.1), when it did.
std::string NcclRank(const TraceSummary& s) {
  const pb::Trailer& t = s.read.trailer;
  if (!s.read.has_trailer || !t.has_rank()) return "";
  return " (NCCL " + std::to_string(t.rank()) + " / " +
         (t.has_world_size() ? std::to_string(t.world_size()) : std::string("?")) + ")";
}

std::string Version(uint32_t v) {
  if (v == 0) return "-";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

void PrintText(const TraceSummary& s) {
  const pb::TraceHeader& h = s.header;
  std::printf("%s\n", s.path.c_str());
  std::printf("  job        %s   rank %s   host %s   pid %u\n",
              h.job_id().empty() ? "-" : h.job_id().c_str(), (Rank(h) + NcclRank(s)).c_str(),
              h.host_name().empty() ? "-" : h.host_name().c_str(), h.pid());
  std::printf("  producer   %s %s, schema %u.%u\n",
              std::string(EnumShortName(h.producer())).c_str(), h.agent_version().c_str(),
              h.schema_major(), h.schema_minor());
  if (!h.source_path().empty()) std::printf("  source     %s\n", h.source_path().c_str());
  for (const pb::Device& d : h.devices()) {
    std::printf("  device %-3u %s, %u SMs, %.1f GiB, sm_%u%u%s%s%s\n", d.device_id(),
                d.name().c_str(), d.sm_count(), d.memory_bytes() / double(1ull << 30),
                d.compute_major(), d.compute_minor(), d.pci_bus_id().empty() ? "" : ", pci ",
                d.pci_bus_id().c_str(), s.devices_from_trailer ? " (from the trailer)" : "");
  }
  std::printf("  versions   CUDA runtime %s, driver %s, CUPTI %s, NCCL %s\n",
              Version(h.cuda_runtime_version()).c_str(), Version(h.cuda_driver_version()).c_str(),
              h.cupti_version() == 0 ? "-" : std::to_string(h.cupti_version()).c_str(),
              h.nccl_version().empty() ? "-" : h.nccl_version().c_str());
  if (s.has_time) {
    // Monotonic clocks count from boot: shown as wall-clock time through the trace's clock
    // snapshots when it has them.
    const bool wall_clock = h.default_clock_id() == pb::CLOCK_ID_REALTIME ||
                            h.default_clock_id() == pb::CLOCK_ID_KINETO ||
                            h.default_clock_id() == pb::CLOCK_ID_CUPTI;
    const std::string clock(EnumShortName(h.default_clock_id()));
    const double span_ms = (s.last_ns - s.first_ns) / 1e6;
    if (wall_clock) {
      std::printf("  time       %s + %.3f ms (clock %s)\n", FormatTime(s.first_ns).c_str(), span_ms,
                  clock.c_str());
    } else if (s.has_realtime_offset) {
      std::printf("  time       %s + %.3f ms (clock %s, mapped to realtime by a clock snapshot)\n",
                  FormatTime(s.first_ns + s.realtime_offset_ns).c_str(), span_ms, clock.c_str());
    } else {
      std::printf("  time       %.6f s + %.3f ms (clock %s; no realtime snapshot)\n",
                  s.first_ns / 1e9, span_ms, clock.c_str());
    }
  }
  std::printf("  packets   ");
  for (const auto& [kind, count] : s.packet_counts) {
    std::printf(" %s %" PRIu64, kind.c_str(), count);
  }
  if (s.nested_driver_calls != 0) {
    std::printf("\n  calls      %" PRIu64
                " driver calls made inside runtime calls counted once, as their runtime call "
                "(an older agent recorded both)",
                s.nested_driver_calls);
  }
  std::printf("\n  streams    %zu   threads %zu   communicators %zu   nccl kernels %" PRIu64 "\n",
              s.streams.size(), s.threads.size(), s.communicators.size(), s.nccl_kernels);
  std::printf("  gemm       kernels with a GEMM shape: %" PRIu64 " of %" PRIu64 " (%" PRIu64
              " GEMM calls)\n",
              s.kernels_with_gemm_shape, s.kernels, s.gemm_calls);
  if (s.attention_calls != 0) {
    std::printf("  attention  kernels with an attention shape: %" PRIu64 " of %" PRIu64 " (%" PRIu64
                " attention calls)\n",
                s.kernels_with_attention_shape, s.kernels, s.attention_calls);
  }
  if (s.loss_by_source.empty()) {
    std::printf("  loss       none recorded\n");
  } else {
    std::printf("  loss       %" PRIu64 " events:", s.events_lost);
    for (const auto& [source, count] : s.loss_by_source) {
      std::printf(" %s %" PRIu64, source.c_str(), count);
    }
    std::printf("\n");
  }
  std::printf("  file       %" PRIu64 " bytes, %" PRIu64 " events", s.read.file_bytes,
              s.read.events);
  if (s.read.events != 0) {
    std::printf(" (%.2f bytes/event)",
                static_cast<double>(s.read.file_bytes) / static_cast<double>(s.read.events));
  }
  std::printf(", %" PRIu64 " frames, %s\n", s.read.frames,
              !s.read.damage.ok()       ? "DAMAGED (see below)"
              : s.read.closed_cleanly() ? "closed cleanly"
                                        : "no trailer (the writer did not close it: killed?)");
}

void PrintJson(const TraceSummary& s, bool last) {
  const pb::TraceHeader& h = s.header;
  std::printf("    {\"path\": %s, \"job_id\": %s, ", Quoted(s.path).c_str(),
              Quoted(h.job_id()).c_str());
  if (h.has_rank()) std::printf("\"rank\": %d, ", h.rank());
  if (h.has_world_size()) std::printf("\"world_size\": %d, ", h.world_size());
  if (h.has_local_rank()) std::printf("\"local_rank\": %d, ", h.local_rank());
  if (s.read.has_trailer && s.read.trailer.has_rank()) {
    std::printf("\"nccl_rank\": %d, ", s.read.trailer.rank());
  }
  if (s.read.has_trailer && s.read.trailer.has_world_size()) {
    std::printf("\"nccl_world_size\": %d, ", s.read.trailer.world_size());
  }
  std::printf(
      "\"host\": %s, \"pid\": %u, \"producer\": \"%s\", \"agent_version\": %s, "
      "\"schema\": \"%u.%u\",\n     \"devices\": [",
      Quoted(h.host_name()).c_str(), h.pid(), std::string(EnumShortName(h.producer())).c_str(),
      Quoted(h.agent_version()).c_str(), h.schema_major(), h.schema_minor());
  for (int i = 0; i < h.devices_size(); ++i) {
    const pb::Device& d = h.devices(i);
    std::printf("%s{\"id\": %u, \"name\": %s, \"sm_count\": %u, \"memory_bytes\": %" PRIu64
                ", \"compute\": \"%u.%u\", \"pci_bus_id\": %s}",
                i ? ", " : "", d.device_id(), Quoted(d.name()).c_str(), d.sm_count(),
                d.memory_bytes(), d.compute_major(), d.compute_minor(),
                Quoted(d.pci_bus_id()).c_str());
  }
  std::printf(
      "],\n     \"versions\": {\"cuda_runtime\": %u, \"cuda_driver\": %u, \"cupti\": %u, "
      "\"nccl\": %s},\n",
      h.cuda_runtime_version(), h.cuda_driver_version(), h.cupti_version(),
      Quoted(h.nccl_version()).c_str());
  if (s.has_time) {
    std::printf("     \"first_ns\": %" PRId64 ", \"last_ns\": %" PRId64 ", \"span_ns\": %" PRId64
                ",\n",
                s.first_ns, s.last_ns, s.last_ns - s.first_ns);
  }
  std::printf("     \"packets\": {");
  bool first = true;
  for (const auto& [kind, count] : s.packet_counts) {
    std::printf("%s\"%s\": %" PRIu64, first ? "" : ", ", kind.c_str(), count);
    first = false;
  }
  std::printf("}, \"nested_driver_calls\": %" PRIu64 ",\n     \"nccl_kernels\": %" PRIu64
              ", \"streams\": %zu, \"threads\": %zu, "
              "\"communicators\": %zu,\n     \"kernels\": %" PRIu64
              ", \"kernels_with_gemm_shape\": %" PRIu64 ", \"gemm_calls\": %" PRIu64
              ",\n     \"kernels_with_attention_shape\": %" PRIu64 ", \"attention_calls\": %" PRIu64
              ", \"events_lost\": %" PRIu64 ", \"loss\": {",
              s.nested_driver_calls, s.nccl_kernels, s.streams.size(), s.threads.size(),
              s.communicators.size(), s.kernels, s.kernels_with_gemm_shape, s.gemm_calls,
              s.kernels_with_attention_shape, s.attention_calls, s.events_lost);
  first = true;
  for (const auto& [source, count] : s.loss_by_source) {
    std::printf("%s\"%s\": %" PRIu64, first ? "" : ", ", source.c_str(), count);
    first = false;
  }
  std::string damage = "null";
  if (!s.read.damage.ok()) damage = Quoted(s.read.damage.message());
  std::printf("},\n     \"file_bytes\": %" PRIu64 ", \"events\": %" PRIu64 ", \"frames\": %" PRIu64
              ", \"closed_cleanly\": %s, \"damage\": %s}%s\n",
              s.read.file_bytes, s.read.events, s.read.frames,
              s.read.closed_cleanly() ? "true" : "false", damage.c_str(), last ? "" : ",");
}

// Per job: which ranks are present, which are missing.
struct JobRanks {
  std::set<int32_t> ranks;
  int32_t world_size = 0;
  size_t files = 0;
};

}  // namespace

int RunInspect(const Args& args) {
  bool json = false;
  std::vector<std::string> inputs;
  cli::ArgParser parser("lumos-model inspect", "FILE|DIR|GLOB... [--json]");
  parser.Description(kDescription)
      .Flag("--json", "one JSON document on stdout instead of text", &json)
      .Positionals("FILE|DIR|GLOB...", "input", 1, &inputs)
      .Epilogue(kExitStatus);
  if (std::optional<int> exit = parser.ParseOrExit(args, stdout, stderr)) return *exit;
  cli::CommandOutcome outcome("lumos-model inspect", stdout, stderr);
  std::vector<std::string> missing;  // Arguments that name nothing: one line each, exit 1.
  auto paths = ExpandTracePaths(inputs, &missing);
  for (const std::string& problem : missing) outcome.InputProblem(problem);
  if (!paths.ok()) return outcome.Fail(paths.status());

  std::vector<TraceSummary> summaries;
  std::vector<std::string> errors;
  for (const std::string& path : *paths) {
    auto summary = SummarizeTrace(path);
    if (!summary.ok()) {
      errors.push_back(summary.status().message());
      continue;
    }
    if (!summary->read.damage.ok()) {
      errors.push_back(summary->read.damage.message());
    } else if (!summary->read.has_trailer) {
      errors.push_back(path +
                       ": no trailer: the writer did not close the file (killed, or still "
                       "writing?); what it holds is shown");
    }
    summaries.push_back(std::move(summary).value());
  }

  std::map<std::string, JobRanks> jobs;
  for (const TraceSummary& s : summaries) {
    JobRanks& job = jobs[s.header.job_id()];
    ++job.files;
    if (s.header.has_rank()) job.ranks.insert(s.header.rank());
    if (s.header.has_world_size()) job.world_size = std::max(job.world_size, s.header.world_size());
  }

  if (json) {
    std::printf("{\n  \"files\": [\n");
    for (size_t i = 0; i < summaries.size(); ++i)
      PrintJson(summaries[i], i + 1 == summaries.size());
    std::printf("  ],\n  \"jobs\": [");
    bool first = true;
    for (const auto& [id, job] : jobs) {
      std::printf("%s\n    {\"job_id\": %s, \"files\": %zu, \"world_size\": %d, \"ranks\": [",
                  first ? "" : ",", Quoted(id).c_str(), job.files, job.world_size);
      bool first_rank = true;
      for (int32_t r : job.ranks) {
        std::printf("%s%d", first_rank ? "" : ", ", r);
        first_rank = false;
      }
      std::printf("]}");
      first = false;
    }
    std::printf("\n  ],\n  \"errors\": [");
    for (size_t i = 0; i < errors.size(); ++i) {
      std::printf("%s%s", i ? ", " : "", Quoted(errors[i]).c_str());
    }
    std::printf("]\n}\n");
  } else {
    for (const TraceSummary& s : summaries) PrintText(s);
    for (const auto& [id, job] : jobs) {
      std::printf("job %s: %zu file(s), ranks", id.empty() ? "(no job id)" : id.c_str(), job.files);
      if (job.ranks.empty()) std::printf(" unknown");
      for (int32_t r : job.ranks) std::printf(" %d", r);
      if (job.world_size > 0) {
        std::string missing;
        for (int32_t r = 0; r < job.world_size; ++r) {
          if (!job.ranks.count(r)) {
            missing += ' ';
            missing += std::to_string(r);
          }
        }
        std::printf(" of %d%s%s", job.world_size, missing.empty() ? " (all present)" : "; missing",
                    missing.c_str());
      }
      std::printf("\n");
    }
  }
  for (const std::string& error : errors) outcome.InputProblem(error);
  return outcome.Finish();
}

}  // namespace lumos::modeler
