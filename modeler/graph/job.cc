#include "modeler/graph/job.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <type_traits>

#include "base/memory_budget.h"
#include "modeler/graph/view_cache.h"
#include "modeler/graph/window_clip.h"
#include "modeler/trace/gemm_orientation.h"
#include "modeler/trace/nested_calls.h"
#include "modeler/trace/trace_reader.h"
#include "modeler/trace/window_stamp.h"

namespace lumos::modeler {
namespace {

// Interns the names of one frame into the pool, once per distinct name (see ViewCache).
class FrameNames {
 public:
  explicit FrameNames(NamePool* pool) : pool_(pool) {}
  std::string_view Intern(std::string_view name) {
    if (name.empty()) return {};
    return cache_.Get(name, [this](std::string_view text) { return pool_->Intern(text); });
  }
  void Clear() { cache_.Clear(); }

 private:
  NamePool* pool_;
  ViewCache<std::string_view> cache_;
};

// Re-points an event's names into the pool.
template <typename Event>
void InternNames(Event* e, FrameNames* names) {
  if constexpr (requires { e->name; }) e->name = names->Intern(e->name);
  if constexpr (requires { e->domain; }) {
    if constexpr (std::is_same_v<decltype(e->domain), std::string_view>) {
      e->domain = names->Intern(e->domain);
    }
  }
}

// Copies the frame's events of one kind that `keep` accepts, names re-pointed into the pool.
template <typename Event, typename List, typename Keep>
void Append(const List& from, FrameNames* names, std::vector<Event>* to, const Keep& keep) {
  // Geometric: reserving the exact size for every frame reallocated (and copied) each time.
  if (to->capacity() < to->size() + from.size()) {
    to->reserve(std::max(to->size() + from.size(), 2 * to->capacity()));
  }
  for (const Event& e : from) {
    if (!keep(e)) continue;
    to->push_back(e);
    InternNames(&to->back(), names);
  }
}

Status ReadRank(TraceReader* reader, NamePool* pool, const LoadOptions& options, RankTrace* rank,
                std::vector<std::string>* warnings, std::vector<std::string>* problems,
                uint64_t* events_read) {
  ReadResult result;
  const uint64_t max_events = options.max_events != 0
                                  ? options.max_events
                                  : std::max<uint64_t>(1, MemoryBudget() / kBytesPerLoadedEvent);
  uint64_t rank_events = 0;
  FrameNames names(pool);
  std::optional<std::pair<int64_t, int64_t>> window_span;  // The closing CaptureWindow's.
  auto all = [](const auto&) { return true; };
  // keep_range's answer per name of the frame (its views share a pointer per interned string):
  // most ranges are framework ops that repeat (aten::add, ...), and a --iteration regex run on
  // each of them doubled the load of a 512-rank job.
  ViewCache<bool> kept;
  auto keep_other = [&options](std::string_view name) { return options.keep_range(name, false); };
  auto ranges = [&options, &kept, &keep_other](const auto& e) {
    if (!options.keep_range) return true;
    if constexpr (std::is_same_v<std::decay_t<decltype(e)>, schema::HostRangeEvent>) {
      if (e.category == schema::HostRangeCategory::kStep) return options.keep_range(e.name, true);
    }
    return kept.Get(e.name, keep_other);
  };
  Status status = reader->ReadFrames(
      [&](const FrameEvents& frame) {
        rank_events += frame.column_events() + frame.rows.size();
        if (*events_read + rank_events > max_events) {
          const std::string knob = options.max_events != 0 ? ""
                                   : MemoryBudgetWasSet()  ? " (--max-memory or "
                                                             "LUMOS_MAX_MEMORY)"
                                                           : " (half of this machine's "
                                                             "memory; LUMOS_MAX_MEMORY "
                                                             "sets it)";
          return Status::Error(
              "byte offset " + std::to_string(frame.frame_offset) + ": frame " +
              std::to_string(frame.frame_index) + " brings the job's events past " +
              std::to_string(max_events) + ", what the memory budget of " +
              FormatBytes(static_cast<double>(MemoryBudget())) + knob + " holds at " +
              std::to_string(kBytesPerLoadedEvent) + " B an event; nothing more is read");
        }
        names.Clear();  // The frame's views die with it.
        kept.Clear();
        Append(frame.kernels, &names, &rank->kernels, all);
        Append(frame.api_calls, &names, &rank->api_calls, all);
        Append(frame.memcpys, &names, &rank->memcpys, all);
        Append(frame.memsets, &names, &rank->memsets, all);
        Append(frame.syncs, &names, &rank->syncs, all);
        Append(frame.cuda_events, &names, &rank->cuda_events, all);
        Append(frame.host_ranges, &names, &rank->host_ranges, ranges);
        Append(frame.nvtx, &names, &rank->nvtx, ranges);
        Append(frame.collectives, &names, &rank->collectives, all);
        Append(frame.gemm_calls, &names, &rank->gemm_calls, all);
        for (const RowPacket& row : frame.rows) {
          if (row.packet->has_loss()) {
            const pb::LossRecord& l = row.packet->loss();
            rank->losses.push_back({row.start_ns, l.duration_ns(),
                                    static_cast<schema::LossSource>(l.source()), l.count(),
                                    l.thread_id(), pool->Intern(l.detail())});
            continue;
          }
          if (row.packet->has_capture_window() && row.packet->has_start_delta_ns()) {
            window_span = {
                row.start_ns,
                row.start_ns + static_cast<int64_t>(row.packet->capture_window().duration_ns())};
            continue;
          }
          if (!row.packet->has_communicator()) continue;
          const pb::Communicator& c = row.packet->communicator();
          rank->communicators.push_back(
              {c.comm_id(), c.rank(), c.comm_size(), pool->Intern(c.name())});
        }
        return Status::Ok();
      },
      &result);
  LUMOS_RETURN_IF_ERROR(status);
  *events_read += result.events;
  rank->nested_driver_calls = RemoveNestedDriverCalls(&rank->api_calls);
  GemmCallsToRowMajor(&rank->gemm_calls);
  if (window_span && window_span->second > window_span->first) {
    rank->outside_window = ClipToWindow(window_span->first, window_span->second, rank);
    if (rank->outside_window != 0) {
      warnings->push_back(rank->path + ": " + std::to_string(rank->outside_window) +
                          " events outside its capture window dropped (an agent before 2026-12-05 "
                          "wrote every GPU op since its last flush into a window's file)");
    }
  }
  rank->kernel_gemm = LinkKernelsToGemmCalls(rank->kernels, rank->api_calls, rank->gemm_calls);
  // A header written before the job's first context names no device: the trailer (2.4) may.
  // Every device the process could see is named: the rank's is the one its kernels ran on most.
  if (rank->device.empty() && result.has_trailer && result.trailer.devices_size() > 0) {
    std::map<uint32_t, size_t> kernels_on;
    for (const schema::KernelEvent& k : rank->kernels) ++kernels_on[k.device_id];
    uint32_t used = result.trailer.devices(0).device_id();
    size_t most = 0;
    for (const auto& [device, count] : kernels_on) {
      if (count > most) used = device, most = count;
    }
    rank->device = result.trailer.devices(0).name();
    for (const pb::Device& d : result.trailer.devices()) {
      if (d.device_id() == used) rank->device = d.name();
    }
  }
  if (result.has_trailer && result.trailer.has_rank()) {
    rank->trailer_rank = result.trailer.rank();
    rank->trailer_world_size = result.trailer.world_size();
  }
  if (!result.damage.ok()) {
    rank->cut_short = true;
    rank->damage = result.damage.message();
    // Damage after a whole trailer leaves every event of the rank; before it, the rank ends
    // early.
    warnings->push_back("rank " + std::to_string(rank->rank) +
                        (result.only_after_trailer
                             ? " has damage after its trailer (all its events are used): "
                         : result.has_trailer ? " has damaged frames (the intact ones are used): "
                                              : " is cut short: ") +
                        result.damage.message());
    problems->push_back(result.damage.message() + " (the intact frames are used)");
  } else if (!result.has_trailer) {
    warnings->push_back("rank " + std::to_string(rank->rank) + " has no trailer: " + rank->path +
                        " was not closed by its writer (killed, or still being written?)");
    problems->push_back(rank->path +
                        ": no trailer: the writer did not close the file (killed, or still "
                        "writing?); what it holds is used");
  }
  return Status::Ok();
}

// A file without a usable rank in its header: the rank its trailer gives (the agent's, from the
// NCCL world communicator), else the one it has in its largest NCCL communicator (with the whole
// job in it, that is its global rank), when free; else the next free one.
void AssignRank(RankTrace* rank, std::set<int32_t>* taken, int32_t* next_free,
                std::vector<std::string>* warnings) {
  if (rank->trailer_rank >= 0 && taken->count(rank->trailer_rank) == 0) {
    rank->rank = rank->trailer_rank;
    taken->insert(rank->rank);
    if (rank->world_size == 0) rank->world_size = rank->trailer_world_size;
    warnings->push_back(rank->path + ": rank " + std::to_string(rank->rank) +
                        " from its trailer (the NCCL world communicator)");
    return;
  }
  const CommunicatorInfo* largest = nullptr;
  for (const CommunicatorInfo& c : rank->communicators) {
    if (largest == nullptr || c.comm_size > largest->comm_size) largest = &c;
  }
  if (largest != nullptr && largest->comm_size > 0 && taken->count(largest->rank) == 0) {
    rank->rank = largest->rank;
    taken->insert(rank->rank);
    if (rank->world_size == 0) rank->world_size = static_cast<int32_t>(largest->comm_size);
    warnings->push_back(rank->path + ": no rank in the header; rank " + std::to_string(rank->rank) +
                        " from its NCCL communicator of " + std::to_string(largest->comm_size));
    return;
  }
  while (taken->count(*next_free) != 0) ++*next_free;
  rank->rank = *next_free;
  taken->insert(*next_free);
  warnings->push_back(rank->path + ": no rank in the header or communicators; taken as rank " +
                      std::to_string(rank->rank));
}

template <typename T>
void Release(std::vector<T>* v) {
  std::vector<T>().swap(*v);
}

}  // namespace

std::string_view NamePool::Intern(std::string_view text) {
  if (text.empty()) return {};
  auto it = names_.find(std::string(text));
  if (it == names_.end()) it = names_.emplace(text).first;
  return *it;
}

StatusOr<Job> LoadJob(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) return Status::Error("no trace files");
  // First pass: headers, to group by job and order by rank. Opening a file reads its first
  // frame, so the first kMaxHeldOpen readers are kept for the second pass instead of opening
  // (and decompressing) again; beyond that they are closed, so a 1000-rank job does not hold
  // 1000 descriptors.
  constexpr size_t kMaxHeldOpen = 256;
  struct FileInfo {
    std::string path;
    std::string job_id, host, device;
    // A capture window's stamp (its coordinated start, the agent's directory name); "": a whole
    // run. Not its request id: the ranks of one window asked for from several hosts (the same
    // lumos-ctl --at on each, docs/fleet-capture.md) have one per host.
    std::string window;
    bool has_rank = false;
    int32_t rank = 0, world_size = 0;
    std::unique_ptr<TraceReader> reader;  // Kept from the first pass, or null.
  };
  std::vector<FileInfo> files;
  std::map<std::string, std::vector<std::string>> jobs;  // job id -> files
  std::vector<std::string> unreadable;
  for (const std::string& path : paths) {
    StatusOr<std::unique_ptr<TraceReader>> opened = TraceReader::Open(path);
    if (!opened.ok()) {
      // One bad file does not sink the job: its rank is missing (said below), the rest replays.
      unreadable.push_back(opened.status().message());
      continue;
    }
    std::unique_ptr<TraceReader> reader = std::move(opened).value();
    const pb::TraceHeader& h = reader->header();
    std::string window;
    if (h.has_capture_window()) window = WindowStamp(h.capture_window().start_realtime_ns());
    files.push_back({path, h.job_id(), h.host_name(),
                     h.devices().empty() ? std::string() : h.devices(0).name(), std::move(window),
                     h.has_rank(), h.rank(), h.has_world_size() ? h.world_size() : 0, nullptr});
    jobs[h.job_id()].push_back(path);
    if (files.size() <= kMaxHeldOpen) files.back().reader = std::move(reader);
  }
  if (files.empty()) {
    return Status::Error(unreadable.size() == 1
                             ? unreadable.front()
                             : "no readable trace file; the first: " + unreadable.front());
  }
  if (options.job_id) {
    if (jobs.count(*options.job_id) == 0) {
      std::string list;
      for (const auto& [id, names] : jobs) list += (list.empty() ? "'" : ", '") + id + "'";
      return Status::BadArgument("no files of job '" + *options.job_id +
                                 "' in the input (jobs: " + list + ")");
    }
    std::erase_if(files, [&](const FileInfo& f) { return f.job_id != *options.job_id; });
    std::erase_if(jobs, [&](const auto& job) { return job.first != *options.job_id; });
  }
  if (jobs.size() > 1) {
    std::string list;
    for (const auto& [id, names] : jobs) {
      if (!list.empty()) list += ", ";
      list += "'" + id + "' (" + std::to_string(names.size()) + " files, e.g. " + names[0] + ")";
    }
    return Status::Error("the input holds " + std::to_string(jobs.size()) + " jobs: " + list +
                         "; choose one with --job ID");
  }
  // One process's capture windows are windows, not ranks: one window is loaded.
  std::map<std::string, size_t> windows;  // Window -> files; sorted: stamps sort as times.
  for (const FileInfo& f : files) ++windows[f.window];
  std::string window_note;
  if (options.window || windows.size() > 1) {
    std::string list;
    for (const auto& [name, count] : windows) {
      list += (list.empty() ? "" : ", ") + (name.empty() ? std::string("a whole run") : name);
    }
    std::string chosen = windows.begin()->first;
    if (options.window) {
      auto it = windows.find(*options.window);
      if (it == windows.end()) {
        return Status::BadArgument("no capture window '" + *options.window + "' of job '" +
                                   jobs.begin()->first + "' in the input (windows: " + list + ")");
      }
      chosen = it->first;
    } else {
      window_note = "the input holds " + std::to_string(windows.size()) +
                    " capture windows of job '" + jobs.begin()->first + "' (" + list +
                    "): this is the first, " + (chosen.empty() ? "the whole run" : chosen) +
                    "; choose another with --window STAMP";
    }
    std::erase_if(files, [&](const FileInfo& f) { return f.window != chosen; });
  }
  Job job;
  job.job_id = jobs.begin()->first;
  if (!window_note.empty()) job.warnings.push_back(window_note);
  for (const std::string& why : unreadable) {
    job.warnings.push_back("skipped: " + why);
    job.input_problems.push_back(why + " (skipped)");
  }
  // Two headers with one rank (a launcher that set RANK wrongly, e.g. per node): those files
  // take their rank from what they recorded instead (the trailer's NCCL rank; AssignRank), and
  // it is an error only when that cannot tell them apart (checked after reading).
  std::map<int32_t, std::vector<std::string>> claims;
  for (const FileInfo& f : files) {
    if (f.has_rank) claims[f.rank].push_back(f.path);
  }
  std::set<std::string> contested;
  for (const auto& [r, claimants] : claims) {
    if (claimants.size() < 2) continue;
    job.warnings.push_back(std::to_string(claimants.size()) + " files claim rank " +
                           std::to_string(r) + " in their headers (e.g. " + claimants[0] + " and " +
                           claimants[1] + "); their ranks come from their trailers");
    contested.insert(claimants.begin(), claimants.end());
  }
  std::set<int32_t> taken;
  for (FileInfo& f : files) {
    if (contested.count(f.path) != 0) {
      f.has_rank = false;
      f.rank = 0;
    } else if (f.has_rank) {
      taken.insert(f.rank);
    }
  }
  // Files with a rank in the header first, in rank order; the others last, so their rank can
  // come from what they recorded (the NCCL communicator) before a free one is handed out.
  std::stable_sort(files.begin(), files.end(), [](const FileInfo& a, const FileInfo& b) {
    if (a.has_rank != b.has_rank) return a.has_rank;
    return a.rank < b.rank;
  });
  if (options.on_rank_count) options.on_rank_count(files.size());
  int32_t next_free = 0;
  for (FileInfo& f : files) {
    RankTrace rank;
    rank.path = f.path;
    rank.rank = f.rank;
    rank.world_size = f.world_size;
    rank.host = f.host;
    rank.device = f.device;
    std::unique_ptr<TraceReader> reader = std::move(f.reader);
    if (reader == nullptr) {
      LUMOS_ASSIGN_OR_RETURN(reader, TraceReader::Open(f.path));
    }
    Status status = ReadRank(reader.get(), &job.names, options, &rank, &job.warnings,
                             &job.input_problems, &job.events_read);
    if (!status.ok()) return Status::Error(f.path + ": " + status.message());
    if (!f.has_rank) {
      if (contested.count(f.path) != 0 &&
          (rank.trailer_rank < 0 || taken.count(rank.trailer_rank))) {
        return Status::Error(
            f.path + ": another file claims the same rank in its header, and " +
            (rank.trailer_rank < 0
                 ? std::string("this trace has no NCCL rank in its trailer")
                 : "its trailer's rank " + std::to_string(rank.trailer_rank) + " is taken too") +
            " to tell them apart (files of two runs under one job id?)");
      }
      AssignRank(&rank, &taken, &next_free, &job.warnings);
    } else if (rank.trailer_rank >= 0 && rank.trailer_rank != rank.rank) {
      job.warnings.push_back(rank.path + ": rank " + std::to_string(rank.rank) +
                             " in the header (the launcher's), " +
                             std::to_string(rank.trailer_rank) +
                             " in the trailer (NCCL's); replayed as " + std::to_string(rank.rank));
    }
    if (options.on_rank) options.on_rank(rank, static_cast<uint32_t>(job.ranks.size()));
    if (!options.keep_events) {
      Release(&rank.kernels);
      Release(&rank.api_calls);
      Release(&rank.memcpys);
      Release(&rank.memsets);
      Release(&rank.syncs);
      Release(&rank.cuda_events);
      Release(&rank.gemm_calls);
      Release(&rank.kernel_gemm);
      rank.host_ranges.shrink_to_fit();
      rank.nvtx.shrink_to_fit();
    }
    job.ranks.push_back(std::move(rank));
  }
  const int32_t world = job.ranks.front().world_size;
  if (world > 0 && static_cast<size_t>(world) != job.ranks.size()) {
    std::string missing;
    for (int32_t r = 0; r < world; ++r) {
      if (taken.count(r) == 0) missing += (missing.empty() ? "" : " ") + std::to_string(r);
    }
    if (!missing.empty()) {
      job.warnings.push_back(
          "job '" + job.job_id + "': world size " + std::to_string(world) + ", ranks missing: " +
          missing + " (collectives they took part in are coupled among the ranks present)");
    }
  }
  return job;
}

}  // namespace lumos::modeler
