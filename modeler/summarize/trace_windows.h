// Design: which trace files form one capture window (issue 15). Each file's header is read
// (TraceReader::Open: the preamble and header only). Files with a header capture_window
// (schema 2.3: periodic or on-demand capture, the agent's DIR/<job>/<stamp>/ files) group by
// (job id, coordinated start start_realtime_ns, request id, trigger): every rank of one window
// shares them. Files without one (a whole run, an import, an older agent) group by (job id,
// directory): one window per job and directory. A file whose header cannot be read is a
// problem line (the command exits 1); it belongs to no window. Windows come sorted by (job,
// stamp, directory, start), files in each by path, so the output does not depend on the
// order of the arguments. Threading: pure function (file reads only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schema/enums.h"

namespace lumos::modeler::summarize {

struct TraceWindow {
  std::string job;
  bool windowed = false;           // The headers name a capture window.
  std::string stamp;               // WindowStamp(start_realtime_ns); "" for a whole run.
  uint64_t start_realtime_ns = 0;  // 0 for a whole run.
  uint64_t request_id = 0;
  schema::WindowTrigger trigger = schema::WindowTrigger::kWholeRun;
  std::string directory;           // The directory of its (first) file, as given.
  std::vector<std::string> paths;  // Sorted.
};

struct WindowSet {
  std::vector<TraceWindow> windows;
  std::vector<std::string> problems;  // "PATH: what" for each file whose header is unreadable.
};

WindowSet GroupWindows(const std::vector<std::string>& paths);

// "job gpt_synth window 20261201T233956Z (DIR)" / "job gpt_synth (DIR, whole run)": how
// messages name a window.
std::string WindowName(const TraceWindow& window);

}  // namespace lumos::modeler::summarize
