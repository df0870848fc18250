#include "modeler/export/track_layout.h"

#include <gtest/gtest.h>

#include <vector>

namespace lumos::modeler::internal {
namespace {

// Lanes of `slices` given as {start, end}, in input order (packet = input index).
std::vector<uint32_t> Lanes(const std::vector<std::pair<int64_t, int64_t>>& spans) {
  std::vector<SliceKey> slices;
  for (size_t i = 0; i < spans.size(); ++i) {
    slices.push_back(SliceKey{spans[i].first, spans[i].second, static_cast<uint32_t>(i)});
  }
  std::vector<uint32_t> sorted_lanes = AssignLanes(&slices);
  std::vector<uint32_t> lanes(spans.size());
  for (size_t k = 0; k < slices.size(); ++k) lanes[slices[k].packet] = sorted_lanes[k];
  return lanes;
}

TEST(TrackLayoutTest, NestedAndSequentialSlicesShareLaneZero) {
  // Parent, child, grandchild, a sibling that starts where the child ends, a slice after all.
  EXPECT_EQ(Lanes({{0, 100}, {10, 50}, {20, 30}, {50, 60}, {100, 120}}),
            (std::vector<uint32_t>{0, 0, 0, 0, 0}));
  // Children listed before their parent, equal spans, zero-length marks anywhere.
  EXPECT_EQ(Lanes({{10, 20}, {0, 100}, {0, 100}, {100, 100}, {0, 0}, {20, 20}}),
            (std::vector<uint32_t>{0, 0, 0, 0, 0, 0}));
}

TEST(TrackLayoutTest, PartialOverlapGoesToTheFirstLaneWhereItFits) {
  EXPECT_EQ(Lanes({{0, 100}, {80, 140}}), (std::vector<uint32_t>{0, 1}));
  // A third range overlapping both lanes' open slices needs lane 2; a later one fits lane 0.
  EXPECT_EQ(Lanes({{0, 100}, {80, 140}, {90, 150}, {150, 160}}),
            (std::vector<uint32_t>{0, 1, 2, 0}));
  // A child of the overflowing range stays with it.
  EXPECT_EQ(Lanes({{0, 100}, {80, 140}, {110, 120}}), (std::vector<uint32_t>{0, 1, 0}));
  EXPECT_EQ(Lanes({{0, 100}, {80, 140}, {90, 120}}), (std::vector<uint32_t>{0, 1, 1}));
}

FileIndex IndexWith(bool has_rank, int32_t rank, std::vector<TrackKey> keys) {
  FileIndex file;
  file.path = "/traces/r" + std::to_string(rank) + ".pb.zst";
  if (has_rank) file.header.set_rank(rank);
  file.header.set_host_name("h");
  for (const TrackKey& key : keys) {
    file.track_ids.emplace(key, file.tracks.size());
    file.tracks.push_back(key);
    file.slices.push_back({SliceKey{0, 10, static_cast<uint32_t>(file.packet_track.size())}});
    file.packet_track.push_back(static_cast<uint32_t>(file.tracks.size() - 1));
  }
  return file;
}

TEST(TrackLayoutTest, PidsFollowRanksAndNeverCollide) {
  std::vector<FileIndex> files;
  files.push_back(IndexWith(true, 3, {}));
  files.push_back(IndexWith(false, 0, {}));
  files.push_back(IndexWith(true, 0, {}));
  files.push_back(IndexWith(true, 3, {}));  // The same rank twice.
  std::vector<ProcessLayout> layouts = LayoutProcesses(&files);
  EXPECT_EQ(layouts[0].pid, 4u);  // rank + 1: Perfetto reserves pid 0.
  EXPECT_EQ(layouts[1].pid, 5u);
  EXPECT_EQ(layouts[2].pid, 1u);
  EXPECT_EQ(layouts[3].pid, 6u);
  EXPECT_EQ(layouts[0].name, "rank 3 \u00b7 h");
  EXPECT_EQ(layouts[1].name, "r0.pb.zst \u00b7 h");
  EXPECT_EQ(layouts[3].name, "rank 3 \u00b7 h \u00b7 r3.pb.zst");
}

TEST(TrackLayoutTest, RowsAreOrderedAndSyntheticTidsSkipRealOnes) {
  std::vector<FileIndex> files;
  files.push_back(IndexWith(true, 0,
                            {{TrackKind::kLumos, 0, 0},
                             {TrackKind::kStream, 0, 7},
                             {TrackKind::kThread, kSyntheticTidBase, 0},  // A real thread.
                             {TrackKind::kNccl, 0, 0},
                             {TrackKind::kThread, 0, 0}}));
  files[0].thread_names[kSyntheticTidBase] = "odd";
  std::vector<ProcessLayout> layouts = LayoutProcesses(&files);
  const std::vector<OutputTrack>& rows = layouts[0].tracks;
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].name, "unknown thread");
  EXPECT_EQ(rows[1].name, "odd");
  EXPECT_EQ(rows[1].tid, kSyntheticTidBase);
  EXPECT_EQ(rows[2].name, "stream 7 (device 0)");
  EXPECT_EQ(rows[3].name, "NCCL");
  EXPECT_EQ(rows[4].name, "lumos");
  EXPECT_EQ(rows[0].tid, kSyntheticTidBase + 1);  // Thread id 0 gets a synthetic row.
  EXPECT_EQ(rows[2].tid, kSyntheticTidBase + 2);
  for (size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows[i].sort_index, i);
  // packet_track now points at rows: the lumos slice (packet 0) is on row 4.
  EXPECT_EQ(files[0].packet_track[0], 4u);
  EXPECT_EQ(files[0].packet_track[2], 1u);
}

}  // namespace
}  // namespace lumos::modeler::internal
