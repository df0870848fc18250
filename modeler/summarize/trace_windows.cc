#include "modeler/summarize/trace_windows.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "modeler/trace/trace_reader.h"
#include "modeler/trace/window_stamp.h"

namespace lumos::modeler::summarize {
namespace {

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

WindowSet GroupWindows(const std::vector<std::string>& paths) {
  WindowSet set;
  // (job, windowed, start, request id, trigger, directory: whole runs only) -> window.
  using Key = std::tuple<std::string, bool, uint64_t, uint64_t, int, std::string>;
  std::map<Key, TraceWindow> windows;
  for (const std::string& path : paths) {
    StatusOr<std::unique_ptr<TraceReader>> reader = TraceReader::Open(path);
    if (!reader.ok()) {
      set.problems.push_back(reader.status().message());
      continue;
    }
    const pb::TraceHeader& h = (*reader)->header();
    TraceWindow w;
    w.job = h.job_id();
    w.directory = DirectoryOf(path);
    if (h.has_capture_window()) {
      const pb::CaptureWindow& cw = h.capture_window();
      w.windowed = true;
      w.start_realtime_ns = cw.start_realtime_ns();
      w.stamp = w.start_realtime_ns != 0 ? WindowStamp(w.start_realtime_ns) : "";
      w.request_id = cw.request_id();
      w.trigger = static_cast<schema::WindowTrigger>(cw.trigger());
    }
    const Key key{w.job, w.windowed, w.start_realtime_ns, w.request_id, static_cast<int>(w.trigger),
                  // A window's ranks may sit in several directories (hosts); a whole run is
                  // one per directory. A window without a start (an agent that did not
                  // coordinate one) is told apart by its directory too.
                  w.windowed && w.start_realtime_ns != 0 ? std::string() : w.directory};
    auto [it, added] = windows.try_emplace(key, std::move(w));
    it->second.paths.push_back(path);
  }
  for (auto& [key, w] : windows) {
    std::sort(w.paths.begin(), w.paths.end());
    w.directory = DirectoryOf(w.paths.front());
    set.windows.push_back(std::move(w));
  }
  std::sort(set.windows.begin(), set.windows.end(), [](const TraceWindow& a, const TraceWindow& b) {
    return std::tie(a.job, a.stamp, a.directory, a.start_realtime_ns, a.request_id) <
           std::tie(b.job, b.stamp, b.directory, b.start_realtime_ns, b.request_id);
  });
  return set;
}

std::string WindowName(const TraceWindow& window) {
  std::string name = "job " + window.job;
  if (window.windowed && !window.stamp.empty())
    return name + " window " + window.stamp + " (" + window.directory + ")";
  return name + " (" + window.directory + ", whole run)";
}

}  // namespace lumos::modeler::summarize
