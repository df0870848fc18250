// Design: how a capture window is named (issue 15): the UTC second of its coordinated start
// (TraceHeader.capture_window.start_realtime_ns, CLOCK_REALTIME) as "YYYYMMDDTHHMMSSZ", the name
// of the agent's window directories DIR/<job>/<stamp>/ (agent/control/window_output.h writes
// the same rule: fixed width, so names sort as times do, no ':'), and as an ISO 8601 timestamp
// for tables. Sub-second parts are dropped in a stamp (floor), kept to the microsecond in ISO
// text (what SQL engines' TIMESTAMP holds). Threading: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lumos::modeler {

// "20261201T233956Z" for 2026-12-01 23:39:56.xxx UTC (years 1970..9999).
std::string WindowStamp(uint64_t realtime_ns);
// "2026-12-01T23:39:56.123456Z".
std::string Iso8601Utc(uint64_t realtime_ns);
// The inverse of WindowStamp: the second in ns; nullopt unless `text` is exactly such a stamp
// (16 characters, a real calendar date from 1970, hour < 24, minute and second < 60).
std::optional<uint64_t> ParseWindowStamp(std::string_view text);

}  // namespace lumos::modeler
