// Design: where the bytes of an existing trace file go (the size report's --analyze mode).
// Reads the file with TraceReader, then re-serializes and recompresses its frames to attribute
// compressed bytes: per packet kind (the frames without that kind) and per field of the
// biggest kinds (the frames with that field cleared). Prints a table. Single-threaded; holds
// the decoded packets of the whole file in memory (fine for the traces it is meant for).
#pragma once

#include <string>

#include "base/status.h"

namespace lumos::bench {

Status AnalyzeTraceFile(const std::string& path, int zstd_level);

}  // namespace lumos::bench
