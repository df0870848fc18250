// Design: turns the logical tracks of every indexed file into Chrome-trace rows.
// Perfetto draws the slices of one thread row as a stack and needs each slice to lie inside
// its parent; two ranges that partially overlap (NVTX start/end ranges, host-timed syncs that
// stick out of their API call, concurrent collectives) cannot share a row. AssignLanes() keeps
// the first-fit row for each slice (in start order, longer first) and moves a slice that would
// break nesting to an overflow row ("<track> (overlap 1)") shown right below its track.
// Ids: pid = rank + 1 (Perfetto treats pid 0 as the kernel's swapper), or a fresh pid after
// the largest rank for files without a rank or with a repeated one. Host threads keep their OS
// thread id as tid; every other row (streams, NCCL, lumos, overflow rows, thread id 0) gets a
// synthetic tid from 2'000'000'000 up, unique in the whole export and skipping every real
// thread id, so it cannot collide with an OS thread. Rows are ordered by thread_sort_index:
// host threads, GPU streams, NCCL, lumos. Everything is derived from sorted keys: deterministic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modeler/export/export_index.h"

namespace lumos::modeler::internal {

inline constexpr uint32_t kSyntheticTidBase = 2'000'000'000;

struct OutputTrack {
  uint32_t tid = 0;
  std::string name;
  uint32_t sort_index = 0;
};

struct ProcessLayout {
  uint32_t pid = 0;
  std::string name;    // "rank 3 · node-a · pid 4242"
  std::string labels;  // "job 17, 8× NVIDIA H200, CUDA 13.0, NCCL 2.28.3"
  uint32_t sort_index = 0;
  std::vector<OutputTrack> tracks;
};

// Sorts `slices` by (start, end descending, packet) and returns the lane of each slice in that
// order: lane 0 is the track itself, lane k > 0 its k-th overflow row. Within every lane, each
// slice either starts at or after the end of the previous one at its level or lies inside it.
std::vector<uint32_t> AssignLanes(std::vector<SliceKey>* slices);

// Lays out every file's rows. Rewrites each index's packet_track from logical-track ids to
// indices into the returned layouts[file].tracks, and releases the slice lists.
std::vector<ProcessLayout> LayoutProcesses(std::vector<FileIndex>* files);

}  // namespace lumos::modeler::internal
