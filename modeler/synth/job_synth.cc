#include "modeler/synth/job_synth.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "base/memory_budget.h"
#include "modeler/io/output_file.h"
#include "modeler/trace/trace_reader.h"
#include "schema/writer/trace_file_writer.h"

namespace lumos::modeler {
namespace {

// SplitMix64: a deterministic stream from (seed, rank, repetition, index).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class RankSynth {
 public:
  RankSynth(const RankTrace& base, const SynthOptions& o, int32_t rank, uint64_t group,
            int64_t period_ns)
      : base_(base), o_(o), rank_(rank), period_(period_ns), group_(group) {
    auto max_of = [](uint64_t& m, uint64_t v) { m = std::max(m, v); };
    for (const auto& e : base.api_calls) max_of(max_id_, std::max(e.correlation_id, e.external_id));
    for (const auto& e : base.kernels) max_of(max_id_, std::max(e.correlation_id, e.external_id));
    for (const auto& e : base.memcpys) max_of(max_id_, e.correlation_id);
    for (const auto& e : base.memsets) max_of(max_id_, e.correlation_id);
    for (const auto& e : base.syncs) {
      max_of(max_id_,
             std::max({e.correlation_id, e.event_record_correlation_id, e.cuda_event_sync_id}));
    }
    for (const auto& e : base.cuda_events)
      max_of(max_id_, std::max(e.correlation_id, e.cuda_event_sync_id));
    for (const auto& e : base.collectives) {
      max_of(max_id_, e.correlation_id);
      max_of(max_seq_, e.seq_number);
    }
    for (const auto& e : base.host_ranges) {
      max_of(max_id_, e.external_id);
      if (e.name.rfind("ProfilerStep#", 0) == 0) ++steps_;
    }
    steps_ = std::max<int64_t>(steps_, 1);
    if (base.cut_short) {
      // Where the input stops: after its last event.
      auto last = [this](int64_t start) { last_start_ = std::max(last_start_, start); };
      for (const auto& e : base.api_calls) last(e.start_ns);
      for (const auto& e : base.kernels) last(e.start_ns);
      for (const auto& e : base.host_ranges) last(e.start_ns);
      for (const auto& e : base.collectives) last(e.start_ns);
      if (last_start_ == INT64_MIN) last_start_ = 0;  // No events at all.
      damage_detail_ = "the input " + base.path + " is damaged (" + base.damage +
                       "): the events after the damage are missing, how many is not known";
    }
    ++max_id_;
    ++max_seq_;
  }

  uint64_t Write(schema::TraceFileWriter* w) {
    uint64_t events = 0;
    const int64_t skew = (rank_ / std::max(1, o_.ranks_per_host)) * o_.host_skew_ns;
    for (int32_t k = 0; k < o_.iterations; ++k) {
      const int64_t shift = k * period_ + skew;
      const uint64_t ids = static_cast<uint64_t>(k) * max_id_;
      uint64_t index = 0;
      auto jitter = [&](uint64_t duration) {
        const uint64_t r = Mix(o_.seed ^ Mix(static_cast<uint64_t>(rank_) << 32 ^
                                             static_cast<uint64_t>(k) << 48 ^ index++));
        const double u = static_cast<double>(r >> 11) / static_cast<double>(1ull << 53);
        return static_cast<uint64_t>(static_cast<double>(duration) * (1.0 - o_.jitter * u));
      };
      auto id = [&](uint64_t v) { return v == 0 ? 0 : v + ids; };
      for (schema::ApiCallEvent e : base_.api_calls) {
        e.start_ns += shift;
        e.correlation_id = id(e.correlation_id);
        e.external_id = id(e.external_id);
        w->Add(e);
      }
      for (schema::KernelEvent e : base_.kernels) {
        e.start_ns += shift;
        e.duration_ns = jitter(e.duration_ns);
        e.correlation_id = id(e.correlation_id);
        e.external_id = id(e.external_id);
        w->Add(e);
      }
      for (schema::MemcpyEvent e : base_.memcpys) {
        e.start_ns += shift;
        e.duration_ns = jitter(e.duration_ns);
        e.correlation_id = id(e.correlation_id);
        w->Add(e);
      }
      for (schema::MemsetEvent e : base_.memsets) {
        e.start_ns += shift;
        e.duration_ns = jitter(e.duration_ns);
        e.correlation_id = id(e.correlation_id);
        w->Add(e);
      }
      for (schema::SyncEvent e : base_.syncs) {
        e.start_ns += shift;
        e.correlation_id = id(e.correlation_id);
        e.event_record_correlation_id = id(e.event_record_correlation_id);
        e.cuda_event_sync_id = id(e.cuda_event_sync_id);
        w->Add(e);
      }
      for (schema::CudaEventRecordEvent e : base_.cuda_events) {
        e.start_ns += shift;
        e.correlation_id = id(e.correlation_id);
        e.cuda_event_sync_id = id(e.cuda_event_sync_id);
        w->Add(e);
      }
      for (schema::HostRangeEvent e : base_.host_ranges) {
        e.start_ns += shift;
        e.external_id = id(e.external_id);
        // Steps continue: ProfilerStep#10 of repetition k becomes #(10 + k * steps).
        const int64_t step_shift = static_cast<int64_t>(k) * steps_;
        if (e.has_step_number) e.step_number += step_shift;
        constexpr std::string_view kStep = "ProfilerStep#";
        if (k > 0 && e.name.rfind(kStep, 0) == 0) {
          const long long n = std::atoll(std::string(e.name.substr(kStep.size())).c_str());
          renamed_ = std::string(kStep) + std::to_string(n + step_shift);
          e.name = renamed_;
        }
        w->Add(e);
      }
      for (schema::NvtxEvent e : base_.nvtx) {
        e.start_ns += shift;
        w->Add(e);
      }
      for (schema::CollectiveEvent e : base_.collectives) {
        e.start_ns += shift;
        e.comm_id = Comm(e.comm_id);
        e.seq_number += static_cast<uint64_t>(k) * max_seq_;
        e.correlation_id = id(e.correlation_id);
        w->Add(e);
      }
      // Each copy misses what the input missed: its LossRecords, and its damaged tail.
      for (schema::LossEvent e : base_.losses) {
        e.start_ns += shift;
        w->Add(e);
      }
      if (base_.cut_short) {
        schema::LossEvent damaged;
        damaged.start_ns = last_start_ + shift;
        damaged.source = schema::LossSource::kImportSkipped;
        damaged.count = 0;  // Unknown: the events of a damaged tail cannot be counted.
        damaged.detail = damage_detail_;
        w->Add(damaged);
      }
      events += base_.events();
    }
    for (const CommunicatorInfo& c : base_.communicators) {
      schema::CommunicatorEvent e;
      e.start_ns = skew;
      e.comm_id = Comm(c.comm_id);
      e.rank = c.rank;
      e.comm_size = c.comm_size;
      e.name = c.name;
      w->Add(e);
    }
    return events;
  }

 private:
  uint64_t Comm(uint64_t id) const { return id == 0 ? 0 : (Mix(id ^ Mix(group_)) | 1); }

  const RankTrace& base_;
  const SynthOptions& o_;
  int32_t rank_;
  int64_t period_;
  uint64_t group_;
  uint64_t max_id_ = 0;
  uint64_t max_seq_ = 0;
  int64_t steps_ = 0;               // ProfilerStep ranges in one repetition.
  std::string renamed_;             // A renamed step, alive while the writer copies it.
  int64_t last_start_ = INT64_MIN;  // Start of the input's last event (damaged input only).
  std::string damage_detail_;
};

int64_t Span(const Job& job, int64_t* begin) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  auto see = [&](int64_t start, uint64_t duration) {
    lo = std::min(lo, start);
    hi = std::max(hi, start + static_cast<int64_t>(duration));
  };
  for (const RankTrace& r : job.ranks) {
    for (const auto& e : r.api_calls) see(e.start_ns, e.duration_ns);
    for (const auto& e : r.kernels) see(e.start_ns, e.duration_ns);
    for (const auto& e : r.host_ranges) see(e.start_ns, e.duration_ns);
  }
  *begin = lo;
  return hi > lo ? hi - lo : 0;
}

std::string FormatCount(double n) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", n);
  return text;
}

}  // namespace

io::ReplacePolicy SynthReplacePolicy(bool force) {
  io::ReplacePolicy policy;
  policy.force = force;
  policy.own_trace = [](const std::string& path) {
    return TraceMadeBy(path, pb::PRODUCER_SYNTHETIC);
  };
  return policy;
}

StatusOr<SynthResult> SynthesizeJob(const Job& base, const SynthOptions& o,
                                    const std::string& out_dir) {
  if (base.ranks.empty()) return Status::Error("the input has no ranks");
  if (o.ranks < 1 || o.iterations < 1 || o.jitter < 0 || o.jitter >= 1) {
    return Status::Error("ranks and iterations must be >= 1 and jitter in [0, 1)");
  }
  if (static_cast<size_t>(o.ranks) % base.ranks.size() != 0) {
    return Status::BadArgument("--ranks must be a multiple of the input's " +
                               std::to_string(base.ranks.size()) + " ranks");
  }
  // The output's size, known before anything is written: the input's bytes times the copies.
  // More than the file system has free is refused (--ranks 100000 --iterations 1000 wrote on
  // until the disk was full or someone killed it).
  double input_bytes = 0;
  for (const RankTrace& t : base.ranks) {
    struct stat st {};
    if (::stat(t.path.c_str(), &st) == 0) input_bytes += static_cast<double>(st.st_size);
  }
  const double copies = static_cast<double>(o.ranks) / static_cast<double>(base.ranks.size()) *
                        static_cast<double>(o.iterations);
  const double output_bytes = input_bytes * copies;
  std::string where = out_dir;
  struct statvfs fs {};
  while (::statvfs(where.c_str(), &fs) != 0 && where != "/" && where != ".") {
    const size_t slash = where.find_last_of('/', where.size() > 1 ? where.size() - 2 : 0);
    where = slash == std::string::npos ? "." : slash == 0 ? "/" : where.substr(0, slash);
  }
  const double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  if (free_bytes > 0 && output_bytes > free_bytes) {
    return Status::BadArgument(
        "--ranks " + std::to_string(o.ranks) + " --iterations " + std::to_string(o.iterations) +
        ": about " + FormatBytes(output_bytes) + " of traces (the input's " +
        FormatBytes(input_bytes) + " " + FormatCount(copies) + " times), more than the " +
        FormatBytes(free_bytes) + " free where " + out_dir + " is");
  }
  // All ranks or none: each is written to a temporary file, and all are renamed at the end.
  io::OutputSet outputs;
  LUMOS_RETURN_IF_ERROR(outputs.UseDirectory(out_dir));
  int64_t begin = 0;
  const int64_t period = Span(base, &begin) + 1'000'000;
  SynthResult result;
  const std::string job_id =
      "synth-" + std::to_string(o.ranks) + "x" + std::to_string(o.iterations);
  for (int32_t r = 0; r < o.ranks; ++r) {
    // Group g = R mod G holds ranks g, g + G, ...: consecutive ranks (one host) belong to
    // different groups, so communicators span hosts like data-parallel groups do.
    const size_t groups = static_cast<size_t>(o.ranks) / base.ranks.size();
    const RankTrace& t = base.ranks[static_cast<size_t>(r) / groups];
    schema::HeaderInfo header;
    header.agent_version = "synth";
    header.producer = schema::Producer::kSynthetic;
    header.host_name = "synth-host-" + std::to_string(r / std::max(1, o.ranks_per_host));
    header.pid = static_cast<uint32_t>(1000 + r);
    header.job_id = job_id;
    header.has_rank = header.has_world_size = true;
    header.rank = r;
    header.world_size = o.ranks;
    header.source_path = t.path;
    // The source rank's GPU, so what reads the copy (estimate, costs) knows what it ran on.
    if (!t.device.empty()) {
      schema::DeviceInfo device;
      device.name = t.device;
      header.devices.push_back(std::move(device));
    }
    header.start_time_ns = static_cast<uint64_t>(std::max<int64_t>(begin, 0));
    std::string path = out_dir;
    if (path.back() != '/') path += '/';
    path += job_id + ".rank" + std::to_string(r) + ".pb.zst";
    for (const RankTrace& input : base.ranks) {
      if (io::SameFile(path, input.path)) {
        return ErrorStatus("the output %s is the input %s: choose another -o", path.c_str(),
                           input.path.c_str());
      }
    }
    LUMOS_ASSIGN_OR_RETURN(io::OutputFile * file, outputs.Add(path, SynthReplacePolicy(o.force)));
    schema::WriterOptions options;
    options.zstd_level = o.zstd_level;
    options.header_in_own_frame = false;
    options.frame_bytes = o.frame_bytes;
    options.log_failures = false;  // Reported once, by CloseComplete().
    auto created = schema::TraceFileWriter::Create(file->write_path(), header, options);
    if (!created.ok()) return file->Reword(created.status());
    std::unique_ptr<schema::TraceFileWriter> writer = std::move(created).value();
    RankSynth synth(t, o, r, static_cast<uint64_t>(r) % groups, period);
    result.events += synth.Write(writer.get());
    LUMOS_RETURN_IF_ERROR(file->Reword(writer->CloseComplete(
        static_cast<uint64_t>(std::max<int64_t>(0, begin + period * o.iterations)))));
    LUMOS_RETURN_IF_ERROR(file->Finish());  // Closed now: one open file at a time.
    result.bytes += writer->stats().bytes_written;
    ++result.files;
  }
  LUMOS_RETURN_IF_ERROR(outputs.Commit());
  return result;
}

}  // namespace lumos::modeler
