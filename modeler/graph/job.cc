#include "modeler/graph/job.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <type_traits>

#include "modeler/trace/trace_reader.h"

namespace lumos::modeler {
namespace {

// Copies a frame's events of one kind, re-pointing their names into the pool.
template <typename Event, typename List>
void Append(const List& from, NamePool* names, std::vector<Event>* to) {
  to->reserve(to->size() + from.size());
  for (const Event& e : from) {
    to->push_back(e);
    if constexpr (requires { e.name; }) to->back().name = names->Intern(e.name);
    if constexpr (requires { e.domain; }) {
      if constexpr (std::is_same_v<decltype(e.domain), std::string_view>) {
        to->back().domain = names->Intern(e.domain);
      }
    }
  }
}

Status ReadRank(TraceReader* reader, NamePool* names, RankTrace* rank,
                std::vector<std::string>* warnings) {
  ReadResult result;
  Status status = reader->ReadFrames(
      [&](const FrameEvents& frame) {
        Append(frame.kernels, names, &rank->kernels);
        Append(frame.api_calls, names, &rank->api_calls);
        Append(frame.memcpys, names, &rank->memcpys);
        Append(frame.memsets, names, &rank->memsets);
        Append(frame.syncs, names, &rank->syncs);
        Append(frame.cuda_events, names, &rank->cuda_events);
        Append(frame.host_ranges, names, &rank->host_ranges);
        Append(frame.nvtx, names, &rank->nvtx);
        Append(frame.collectives, names, &rank->collectives);
        for (const RowPacket& row : frame.rows) {
          if (!row.packet->has_communicator()) continue;
          const pb::Communicator& c = row.packet->communicator();
          rank->communicators.push_back(
              {c.comm_id(), c.rank(), c.comm_size(), names->Intern(c.name())});
        }
        return Status::Ok();
      },
      &result);
  LUMOS_RETURN_IF_ERROR(status);
  if (!result.damage.ok()) {
    rank->cut_short = true;
    warnings->push_back("rank " + std::to_string(rank->rank) +
                        " is cut short: " + result.damage.message());
  }
  return Status::Ok();
}

}  // namespace

std::string_view NamePool::Intern(std::string_view text) {
  if (text.empty()) return {};
  auto it = names_.find(std::string(text));
  if (it == names_.end()) it = names_.emplace(text).first;
  return *it;
}

StatusOr<Job> LoadJob(const std::vector<std::string>& paths) {
  if (paths.empty()) return Status::Error("no trace files");
  std::vector<std::unique_ptr<TraceReader>> readers;
  std::map<std::string, std::vector<std::string>> jobs;  // job id -> files
  for (const std::string& path : paths) {
    LUMOS_ASSIGN_OR_RETURN(std::unique_ptr<TraceReader> reader, TraceReader::Open(path));
    jobs[reader->header().job_id()].push_back(path);
    readers.push_back(std::move(reader));
  }
  if (jobs.size() > 1) {
    std::string list;
    for (const auto& [id, files] : jobs) {
      if (!list.empty()) list += ", ";
      list += "'" + id + "' (" + std::to_string(files.size()) + " files, e.g. " + files[0] + ")";
    }
    return Status::Error("the input holds " + std::to_string(jobs.size()) + " jobs: " + list +
                         "; replay one job at a time");
  }

  Job job;
  job.job_id = jobs.begin()->first;
  std::set<int32_t> taken;
  for (const auto& reader : readers) {
    if (!reader->header().has_rank()) continue;
    const int32_t rank = reader->header().rank();
    if (!taken.insert(rank).second) {
      return Status::Error("two files claim rank " + std::to_string(rank) + " (one is " +
                           reader->path() + ")");
    }
  }
  int32_t next_free = 0;
  for (const auto& reader : readers) {
    RankTrace rank;
    rank.path = reader->path();
    const pb::TraceHeader& header = reader->header();
    if (header.has_rank()) {
      rank.rank = header.rank();
    } else {
      while (taken.count(next_free) != 0) ++next_free;
      rank.rank = next_free;
      taken.insert(next_free);
      job.warnings.push_back(reader->path() + ": no rank in the header; taken as rank " +
                             std::to_string(rank.rank));
    }
    rank.world_size = header.has_world_size() ? header.world_size() : 0;
    rank.host = header.host_name();
    Status status = ReadRank(reader.get(), &job.names, &rank, &job.warnings);
    if (!status.ok()) return Status::Error(reader->path() + ": " + status.message());
    job.ranks.push_back(std::move(rank));
  }
  std::sort(job.ranks.begin(), job.ranks.end(),
            [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  const int32_t world = job.ranks.front().world_size;
  if (world > 0 && static_cast<size_t>(world) != job.ranks.size()) {
    std::string missing;
    std::set<int32_t> present;
    for (const RankTrace& r : job.ranks) present.insert(r.rank);
    for (int32_t r = 0; r < world; ++r) {
      if (present.count(r) == 0) missing += (missing.empty() ? "" : " ") + std::to_string(r);
    }
    if (!missing.empty()) {
      job.warnings.push_back("job '" + job.job_id + "': world size " + std::to_string(world) +
                             ", ranks missing: " + missing +
                             " (their collectives are replayed with measured times)");
    }
  }
  return job;
}

}  // namespace lumos::modeler
