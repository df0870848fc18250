// Design: turns the FILE|DIR|GLOB arguments of lumos-model commands into trace file paths.
// A directory contributes every *.pb.zst inside it (recursively); a pattern with * ? or [
// is expanded with glob(3). Results are sorted and de-duplicated so every command sees the
// ranks of a job in the same order. An argument that names nothing (a missing path, a pattern
// that matches no file, a directory without traces) is an error; given `problems`, it is noted
// there instead ("what could be read is still used", the commands' exit-status contract: each
// is one line and exit 1) and only an expansion that finds nothing at all is an error.
// Nothing unreadable is left out silently: a directory that cannot be listed (permissions, a
// path too long, an I/O error), an entry whose type cannot be read and every *.pb.zst entry
// whatever its type (FIFO, dangling link) are returned as paths too, so the command names each
// with the reason it cannot be read (TraceReader::Open) and the walk goes on past it.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace lumos::modeler {

StatusOr<std::vector<std::string>> ExpandTracePaths(const std::vector<std::string>& args,
                                                    std::vector<std::string>* problems = nullptr);

}  // namespace lumos::modeler
