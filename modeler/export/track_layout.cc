#include "modeler/export/track_layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace lumos::modeler::internal {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// 13000 -> "13.0", 12040 -> "12.4" (CUDA's 1000 * major + 10 * minor).
std::string CudaVersion(uint32_t version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string Labels(const pb::TraceHeader& header) {
  std::vector<std::string> parts;
  if (!header.job_id().empty()) parts.push_back("job " + header.job_id());
  std::map<std::string, int> devices;  // Sorted: same header, same label.
  for (const pb::Device& device : header.devices()) {
    ++devices[device.name().empty() ? "GPU" : device.name()];
  }
  for (const auto& [name, count] : devices) {
    parts.push_back(count > 1 ? std::to_string(count) + "\u00d7 " + name : name);
  }
  if (header.cuda_runtime_version() != 0) {
    parts.push_back("CUDA " + CudaVersion(header.cuda_runtime_version()));
  }
  if (!header.nccl_version().empty()) parts.push_back("NCCL " + header.nccl_version());
  std::string labels;
  for (const std::string& part : parts) labels += (labels.empty() ? "" : ", ") + part;
  return labels;
}

std::string TrackName(const FileIndex& file, const TrackKey& key, uint32_t lane) {
  std::string name;
  switch (key.kind) {
    case TrackKind::kThread: {
      auto it = file.thread_names.find(static_cast<uint32_t>(key.a));
      if (key.a == 0) {
        name = "unknown thread";
      } else if (it != file.thread_names.end()) {
        name = it->second;
      } else {
        name = "thread " + std::to_string(key.a);
      }
      break;
    }
    case TrackKind::kStream:
      name = "stream " + std::to_string(key.b) + " (device " + std::to_string(key.a) + ")";
      break;
    case TrackKind::kNccl:
      name = "NCCL";
      break;
    case TrackKind::kLumos:
      name = "lumos";
      break;
  }
  if (lane > 0) name += " (overlap " + std::to_string(lane) + ")";
  return name;
}

// Hands out tids that no OS thread of this export uses.
class TidAllocator {
 public:
  explicit TidAllocator(std::set<uint32_t> real) : real_(std::move(real)) {}
  uint32_t Next() {
    while (real_.count(next_) != 0) ++next_;
    return next_++;
  }

 private:
  std::set<uint32_t> real_;
  uint32_t next_ = kSyntheticTidBase;
};

}  // namespace

std::vector<uint32_t> AssignLanes(std::vector<SliceKey>* slices) {
  std::sort(slices->begin(), slices->end(), [](const SliceKey& x, const SliceKey& y) {
    return std::tie(x.start_ns, y.end_ns, x.packet) < std::tie(y.start_ns, x.end_ns, y.packet);
  });
  std::vector<uint32_t> lanes(slices->size(), 0);
  std::vector<std::vector<int64_t>> open;  // Per lane: end times of the enclosing slices.
  for (size_t i = 0; i < slices->size(); ++i) {
    const SliceKey& s = (*slices)[i];
    uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == open.size()) open.emplace_back();
      std::vector<int64_t>& stack = open[lane];
      // A slice that ended at or before this start is closed (Perfetto's rule too).
      while (!stack.empty() && stack.back() <= s.start_ns) stack.pop_back();
      if (stack.empty() || s.end_ns <= stack.back()) break;
    }
    open[lane].push_back(s.end_ns);
    lanes[i] = lane;
  }
  return lanes;
}

std::vector<ProcessLayout> LayoutProcesses(std::vector<FileIndex>* files) {
  std::vector<ProcessLayout> layouts(files->size());

  // pids: rank + 1 where the rank is known and not yet taken, then fresh ones in file order.
  std::set<uint32_t> used_pids;
  std::vector<bool> by_rank(files->size(), false);
  for (size_t i = 0; i < files->size(); ++i) {
    const pb::TraceHeader& h = (*files)[i].header;
    if (!h.has_rank() || h.rank() < 0 || h.rank() >= (1 << 30)) continue;
    uint32_t pid = static_cast<uint32_t>(h.rank()) + 1;
    if (used_pids.insert(pid).second) {
      layouts[i].pid = pid;
      by_rank[i] = true;
    }
  }
  uint32_t next_pid = used_pids.empty() ? 1 : *used_pids.rbegin() + 1;
  for (size_t i = 0; i < files->size(); ++i) {
    if (!by_rank[i]) layouts[i].pid = next_pid++;
  }

  std::set<uint32_t> real_tids;
  for (const FileIndex& file : *files) {
    for (const auto& [key, id] : file.track_ids) {
      if (key.kind == TrackKind::kThread && key.a != 0)
        real_tids.insert(static_cast<uint32_t>(key.a));
    }
  }
  TidAllocator tids(std::move(real_tids));

  for (size_t i = 0; i < files->size(); ++i) {
    FileIndex& file = (*files)[i];
    ProcessLayout& layout = layouts[i];
    const pb::TraceHeader& h = file.header;
    layout.name =
        by_rank[i] || h.has_rank() ? "rank " + std::to_string(h.rank()) : BaseName(file.path);
    if (!h.host_name().empty()) layout.name += " \u00b7 " + h.host_name();
    if (h.pid() != 0) layout.name += " \u00b7 pid " + std::to_string(h.pid());
    if (h.has_rank() && !by_rank[i]) layout.name += " \u00b7 " + BaseName(file.path);
    layout.labels = Labels(h);
    layout.sort_index = layout.pid;

    // Logical track -> first output row; the map iterates in row order.
    std::vector<uint32_t> first_row(file.tracks.size(), 0);
    std::vector<std::vector<uint32_t>> lanes(file.tracks.size());
    for (const auto& [key, id] : file.track_ids) {
      lanes[id] = AssignLanes(&file.slices[id]);
      uint32_t lane_count = 1;
      for (uint32_t lane : lanes[id]) lane_count = std::max(lane_count, lane + 1);
      first_row[id] = static_cast<uint32_t>(layout.tracks.size());
      for (uint32_t lane = 0; lane < lane_count; ++lane) {
        OutputTrack row;
        bool real_thread = key.kind == TrackKind::kThread && key.a != 0 && lane == 0;
        row.tid = real_thread ? static_cast<uint32_t>(key.a) : tids.Next();
        row.name = TrackName(file, key, lane);
        row.sort_index = static_cast<uint32_t>(layout.tracks.size());
        layout.tracks.push_back(std::move(row));
      }
    }
    for (size_t id = 0; id < file.tracks.size(); ++id) {
      const std::vector<SliceKey>& slices = file.slices[id];
      for (size_t k = 0; k < slices.size(); ++k) {
        file.packet_track[slices[k].packet] = first_row[id] + lanes[id][k];
      }
    }
    // Pass 2 needs only packet_track from here on.
    std::vector<std::vector<SliceKey>>().swap(file.slices);
  }
  return layouts;
}

}  // namespace lumos::modeler::internal
