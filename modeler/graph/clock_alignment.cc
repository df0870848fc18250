#include "modeler/graph/clock_alignment.h"

#include <algorithm>
#include <cstdlib>
#include <map>

namespace lumos::modeler {
namespace {

int64_t MedianOf(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  auto middle = v.begin() + static_cast<ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), middle, v.end());
  return *middle;
}

using Key = std::pair<uint64_t, uint64_t>;  // (comm id, seq)

std::map<Key, int64_t> CollectiveEnds(const RankTrace& rank) {
  std::map<Key, int64_t> ends;
  for (const agent::CollectiveEvent& c : rank.collectives) {
    ends[{c.comm_id, c.seq_number}] = c.start_ns + static_cast<int64_t>(c.duration_ns);
  }
  return ends;
}

}  // namespace

ClockAlignment AlignClocks(const Job& job) {
  ClockAlignment out;
  const size_t n = job.ranks.size();
  out.rank_offset_ns.assign(n, 0);
  if (n == 0) return out;
  std::vector<std::map<Key, int64_t>> ends(n);
  for (size_t r = 0; r < n; ++r) ends[r] = CollectiveEnds(job.ranks[r]);
  std::vector<std::vector<int64_t>> differences(n);  // Per rank: end - reference end.
  for (size_t r = 1; r < n; ++r) {
    for (const auto& [key, end] : ends[r]) {
      auto it = ends[0].find(key);
      if (it != ends[0].end()) differences[r].push_back(end - it->second);
    }
  }
  // Group ranks by host; an unnamed host is a host of its own per rank.
  std::map<std::string, std::vector<size_t>> hosts;
  for (size_t r = 0; r < n; ++r) {
    const std::string& host = job.ranks[r].host;
    hosts[host.empty() ? "\x01rank" + std::to_string(job.ranks[r].rank) : host].push_back(r);
  }
  for (const auto& [key, members] : hosts) {
    HostAlignment host;
    host.host = key[0] == '\x01' ? "" : key;
    std::vector<int64_t> offsets;
    bool has_reference = false;
    for (size_t r : members) {
      host.ranks.push_back(job.ranks[r].rank);
      if (r == 0) has_reference = true;
      if (!differences[r].empty()) offsets.push_back(-MedianOf(differences[r]));
      host.collectives += differences[r].size();
    }
    host.offset_ns = has_reference ? 0 : MedianOf(offsets);
    std::vector<int64_t> residuals;
    for (size_t r : members) {
      out.rank_offset_ns[r] = host.offset_ns;
      for (int64_t d : differences[r]) residuals.push_back(std::llabs(d + host.offset_ns));
    }
    host.residual_ns = MedianOf(residuals);
    out.hosts.push_back(std::move(host));
  }
  return out;
}

}  // namespace lumos::modeler
