// IdMap (modeler/graph/id_map.h): the graph builder's correlation-id joins. Checked against
// std::unordered_map on the same operations, through several rehashes.
#include "modeler/graph/id_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace lumos::modeler {
namespace {

TEST(IdMapTest, AddKeepsTheFirstValueAndSetReplacesIt) {
  IdMap map;
  EXPECT_EQ(map.Find(7), IdMap::kMissing);
  map.Add(7, 1);
  map.Add(7, 2);
  EXPECT_EQ(map.Find(7), 1u);
  map.Set(7, 3);
  EXPECT_EQ(map.Find(7), 3u);
  EXPECT_EQ(map.size(), 1u);
}

TEST(IdMapTest, KeyZeroMeansNoneAndIsNeverStored) {
  IdMap map;
  map.Set(0, 5);
  map.Add(0, 6);
  EXPECT_EQ(map.size(), 0u);
  EXPECT_EQ(map.Find(0), IdMap::kMissing);
}

TEST(IdMapTest, AgreesWithUnorderedMapThroughGrowth) {
  IdMap map;
  std::unordered_map<uint64_t, uint32_t> reference;
  std::mt19937_64 random(42);
  for (uint32_t i = 0; i < 100'000; ++i) {
    // Dense ids (correlation ids count up) mixed with sparse ones, and repeats.
    const uint64_t key = (i % 3 == 0) ? random() | 1 : 1 + i / 2;
    if (i % 5 == 0) {
      map.Set(key, i);
      reference[key] = i;
    } else {
      map.Add(key, i);
      reference.emplace(key, i);
    }
  }
  EXPECT_EQ(map.size(), reference.size());
  for (const auto& [key, value] : reference) ASSERT_EQ(map.Find(key), value) << key;
  for (uint64_t key = 200'000; key < 201'000; ++key) {
    if (reference.count(key) == 0) {
      ASSERT_EQ(map.Find(key), IdMap::kMissing);
    }
  }
}

TEST(IdMapTest, ReserveKeepsEntries) {
  IdMap map;
  map.Set(3, 30);
  map.Reserve(10'000);
  EXPECT_EQ(map.Find(3), 30u);
  map.Reserve(1);  // Never shrinks.
  EXPECT_EQ(map.Find(3), 30u);
}

}  // namespace
}  // namespace lumos::modeler
