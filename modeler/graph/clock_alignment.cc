#include "modeler/graph/clock_alignment.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <queue>

#include "modeler/graph/collective_key.h"
#include "modeler/graph/median.h"

namespace lumos::modeler {
namespace {

struct Member {
  size_t host;
  int64_t end_ns;
};

// A clock that jumps (NTP step, a host suspended) shows as a step in the difference between
// two hosts' collective ends. Looks at up to 64 split points: the medians of the kWindow
// samples before and after each; a step larger than kMinJumpNs and than 10x the spread of
// either side is reported on `host` (the first such step).
void FindJump(const std::vector<std::pair<int64_t, int64_t>>& points, HostAlignment* host) {
  constexpr size_t kWindow = 8;
  constexpr int64_t kMinJumpNs = 1'000'000;
  if (points.size() < 2 * kWindow || host->jump_ns != 0) return;
  auto spread = [](std::vector<int64_t> v) {
    const int64_t median = MedianOf(v);
    for (int64_t& x : v) x = std::llabs(x - median);
    return MedianOf(v);
  };
  const size_t splits = points.size() - 2 * kWindow + 1;
  const size_t step = std::max<size_t>(1, splits / 64);
  for (size_t k = kWindow; k + kWindow <= points.size(); k += step) {
    std::vector<int64_t> before, after;
    for (size_t i = k - kWindow; i < k; ++i) before.push_back(points[i].second);
    for (size_t i = k; i < k + kWindow; ++i) after.push_back(points[i].second);
    const int64_t jump = MedianOf(after) - MedianOf(before);
    const int64_t noise = std::max(spread(before), spread(after));
    if (std::llabs(jump) >= kMinJumpNs && std::llabs(jump) > 10 * noise) {
      // The exact step lies between k - step and k: take the first sample past the midpoint.
      size_t at = k;
      const int64_t middle = MedianOf(before) + jump / 2;
      for (size_t i = k >= step ? k - step : 0; i < k + kWindow; ++i) {
        if ((jump > 0) == (points[i].second > middle)) {
          at = i;
          break;
        }
      }
      host->jump_ns = jump;
      host->jump_at_ns = points[at].first;
      return;
    }
  }
}

}  // namespace

ClockAlignment AlignClocks(const Job& job) {
  ClockAlignment out;
  const size_t n = job.ranks.size();
  out.rank_offset_ns.assign(n, 0);
  if (n == 0) return out;
  // Hosts: ranks with the same non-empty host name share a clock; an unnamed rank is alone.
  std::map<std::string, size_t> host_index;
  std::vector<size_t> host_of(n);
  for (size_t r = 0; r < n; ++r) {
    const std::string& name = job.ranks[r].host;
    const std::string key = name.empty() ? "\x01" + std::to_string(job.ranks[r].rank) : name;
    auto [it, added] = host_index.emplace(key, out.hosts.size());
    if (added) {
      HostAlignment h;
      h.host = name;
      out.hosts.push_back(std::move(h));
    }
    host_of[r] = it->second;
    out.hosts[it->second].ranks.push_back(job.ranks[r].rank);
  }
  const size_t hosts = out.hosts.size();
  // The members of every operation (collective_key.h), by host.
  std::map<CollectiveKey, std::vector<Member>> collectives;
  for (size_t r = 0; r < n; ++r) {
    const std::vector<schema::CollectiveEvent>& events = job.ranks[r].collectives;
    const std::vector<std::optional<CollectiveKey>> keys = CollectiveKeys(job.ranks[r]);
    for (size_t i = 0; i < events.size(); ++i) {
      if (!keys[i]) continue;
      collectives[*keys[i]].push_back(
          {host_of[r], events[i].start_ns + static_cast<int64_t>(events[i].duration_ns)});
    }
  }
  // Samples of (end on host b - end on host a) for host pairs a < b that share a collective,
  // against the collective's member on its lowest host (a star: linear in the members).
  // Samples are (time on host a, difference); kept in time order for the jump check.
  std::map<std::pair<size_t, size_t>, std::vector<std::pair<int64_t, int64_t>>> timed;
  for (const auto& [key, members] : collectives) {
    const Member* base = &members.front();
    for (const Member& m : members) {
      if (m.host < base->host) base = &m;
    }
    for (const Member& m : members) {
      if (m.host != base->host) {
        timed[{base->host, m.host}].push_back({base->end_ns, m.end_ns - base->end_ns});
      }
    }
  }
  std::map<std::pair<size_t, size_t>, std::vector<int64_t>> samples;
  for (auto& [pair, points] : timed) {
    std::sort(points.begin(), points.end());
    std::vector<int64_t>& diffs = samples[pair];
    diffs.reserve(points.size());
    for (const auto& p : points) diffs.push_back(p.second);
    FindJump(points, &out.hosts[pair.second]);
  }
  std::vector<std::vector<std::pair<size_t, int64_t>>> neighbours(hosts);
  for (const auto& [pair, diffs] : samples) {
    const int64_t median = MedianOf(diffs);  // Host b's clock runs `median` ahead of a's.
    neighbours[pair.first].push_back({pair.second, median});
    neighbours[pair.second].push_back({pair.first, -median});
    out.hosts[pair.first].collectives += diffs.size();
    out.hosts[pair.second].collectives += diffs.size();
  }
  // Breadth-first from the lowest host of each connected part: offsets along the tree.
  std::vector<bool> seen(hosts, false);
  for (size_t root = 0; root < hosts; ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    std::queue<size_t> queue;
    queue.push(root);
    while (!queue.empty()) {
      const size_t h = queue.front();
      queue.pop();
      for (const auto& [next, ahead] : neighbours[h]) {
        if (seen[next]) continue;
        seen[next] = true;
        out.hosts[next].offset_ns = out.hosts[h].offset_ns - ahead;
        queue.push(next);
      }
    }
  }
  for (size_t r = 0; r < n; ++r) out.rank_offset_ns[r] = out.hosts[host_of[r]].offset_ns;
  // Residual skew: |aligned end - aligned end of the collective's base member|, per host.
  std::vector<std::vector<int64_t>> residuals(hosts);
  for (const auto& [key, members] : collectives) {
    const Member* base = &members.front();
    for (const Member& m : members) {
      if (m.host < base->host) base = &m;
    }
    const int64_t base_end = base->end_ns + out.hosts[base->host].offset_ns;
    for (const Member& m : members) {
      if (m.host == base->host) continue;
      residuals[m.host].push_back(std::llabs(m.end_ns + out.hosts[m.host].offset_ns - base_end));
    }
  }
  for (size_t h = 0; h < hosts; ++h) out.hosts[h].residual_ns = MedianOf(residuals[h]);
  return out;
}

}  // namespace lumos::modeler
