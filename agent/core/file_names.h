// Design: how the agent names the files it writes, and how it renames them, shared by the
// runtime (the whole-run trace) and agent/control (window files). Pure functions and plain
// syscalls; any thread, never the hot path (they allocate).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/core/rank_detection.h"

namespace lumos::agent {

// `text` as one path part: bytes outside [A-Za-z0-9._-] become '_' ("a/b c" -> "a_b_c").
std::string SafeFilePart(std::string_view text);

// The trace file name: "<job>.<host>.<pid>.rank<R>.pb.zst". The "<job>." part is left out when
// the job id is unknown, and "rank<R>" reads "norank" when no launcher rank was found. '/' and
// other bytes outside [A-Za-z0-9._-] in job and host become '_' (SafeFilePart), so the name
// stays one path part; an empty host reads "unknown" (TraceHostPart).
std::string TraceFileName(const std::string& job_id, const std::string& host, uint32_t pid,
                          const RankInfo& rank);
// The host as TraceFileName writes it.
std::string TraceHostPart(const std::string& host);

// rename(2) that never replaces an existing `to`: RENAME_NOREPLACE, or link + unlink where the
// file system cannot do that (some network file systems). "" on success, else why not; with
// `error`, also the errno of the failure there (EEXIST: `to` exists; ENOENT: `from` is gone).
std::string RenameNoReplace(const std::string& from, const std::string& to, int* error = nullptr);

}  // namespace lumos::agent
