// DetectRank: source priority (torchrun, Open MPI, SLURM), validation and the header fields.
#include "agent/core/rank_detection.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace lumos::agent {
namespace {

RankInfo Detect(std::map<std::string, std::string> env) {
  return DetectRank(MapEnvLookup(std::move(env)));
}

const std::map<std::string, std::string> kAllSources = {
    {"RANK", "5"},
    {"LOCAL_RANK", "1"},
    {"WORLD_SIZE", "8"},
    {"OMPI_COMM_WORLD_RANK", "6"},
    {"OMPI_COMM_WORLD_LOCAL_RANK", "2"},
    {"OMPI_COMM_WORLD_SIZE", "16"},
    {"SLURM_PROCID", "7"},
    {"SLURM_LOCALID", "3"},
    {"SLURM_NTASKS", "32"},
};

TEST(RankDetectionTest, NothingSetMeansUnknown) {
  RankInfo info = Detect({});
  EXPECT_FALSE(info.rank || info.local_rank || info.world_size);
  EXPECT_EQ(info.source, "");
  EXPECT_TRUE(info.warnings.empty());
}

TEST(RankDetectionTest, TorchrunBeatsMpiBeatsSlurm) {
  std::map<std::string, std::string> env = kAllSources;
  RankInfo info = Detect(env);
  EXPECT_EQ(info.source, "RANK");
  EXPECT_EQ(info.rank, 5);
  EXPECT_EQ(info.local_rank, 1);
  EXPECT_EQ(info.world_size, 8);

  env.erase("RANK");
  info = Detect(env);
  EXPECT_EQ(info.source, "OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(info.rank, 6);
  EXPECT_EQ(info.local_rank, 2);
  EXPECT_EQ(info.world_size, 16);

  env.erase("OMPI_COMM_WORLD_RANK");
  info = Detect(env);
  EXPECT_EQ(info.source, "SLURM_PROCID");
  EXPECT_EQ(info.rank, 7);
  EXPECT_EQ(info.local_rank, 3);
  EXPECT_EQ(info.world_size, 32);
  EXPECT_TRUE(info.warnings.empty());
}

TEST(RankDetectionTest, NeverMixesSources) {
  // torchrun's rank without its world size: SLURM's world size must not be borrowed.
  RankInfo info = Detect({{"RANK", "3"}, {"SLURM_PROCID", "9"}, {"SLURM_NTASKS", "32"}});
  EXPECT_EQ(info.rank, 3);
  EXPECT_FALSE(info.world_size.has_value());
  EXPECT_FALSE(info.local_rank.has_value());
}

TEST(RankDetectionTest, BadRankFallsToTheNextSource) {
  RankInfo info = Detect({{"RANK", "-1"}, {"OMPI_COMM_WORLD_RANK", "x"}, {"SLURM_PROCID", "4"}});
  EXPECT_EQ(info.rank, 4);
  EXPECT_EQ(info.source, "SLURM_PROCID");
  ASSERT_EQ(info.warnings.size(), 2u);
  EXPECT_EQ(info.warnings[0].rfind("RANK='-1': ", 0), 0u) << info.warnings[0];
  EXPECT_NE(info.warnings[0].find("using the next source (OMPI_COMM_WORLD_RANK)"),
            std::string::npos);
  EXPECT_EQ(info.warnings[1].rfind("OMPI_COMM_WORLD_RANK='x': ", 0), 0u) << info.warnings[1];

  info = Detect({{"SLURM_PROCID", "2147483648"}});
  EXPECT_FALSE(info.rank.has_value());
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_NE(info.warnings[0].find("using an unknown rank"), std::string::npos);
}

TEST(RankDetectionTest, ValidatesWorldSizeAndLocalRank) {
  RankInfo info = Detect({{"RANK", "1"}, {"WORLD_SIZE", "0"}, {"LOCAL_RANK", "z"}});
  EXPECT_EQ(info.rank, 1);
  EXPECT_FALSE(info.world_size.has_value());
  EXPECT_FALSE(info.local_rank.has_value());
  EXPECT_EQ(info.warnings.size(), 2u);

  info = Detect({{"RANK", "8"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}});
  EXPECT_EQ(info.rank, 8);
  EXPECT_FALSE(info.world_size.has_value());
  EXPECT_EQ(info.local_rank, 0);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_EQ(info.warnings[0].rfind("WORLD_SIZE='8': not above RANK=8", 0), 0u) << info.warnings[0];

  info = Detect({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}});
  EXPECT_EQ(info.world_size, 2);
  EXPECT_FALSE(info.local_rank.has_value());
  EXPECT_EQ(info.warnings.size(), 1u);
}

TEST(RankDetectionTest, FillsTheHeader) {
  schema::HeaderInfo header;
  FillHeaderRank(Detect(kAllSources), &header);
  EXPECT_TRUE(header.has_rank && header.has_local_rank && header.has_world_size);
  EXPECT_EQ(header.rank, 5);
  EXPECT_EQ(header.local_rank, 1);
  EXPECT_EQ(header.world_size, 8);
  FillHeaderRank(Detect({{"RANK", "2"}}), &header);
  EXPECT_TRUE(header.has_rank);
  EXPECT_FALSE(header.has_local_rank || header.has_world_size);
}

}  // namespace
}  // namespace lumos::agent
