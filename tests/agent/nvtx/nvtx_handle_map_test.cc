// NvtxHandleMap: chained handles map to ids, own handles are recognizable and never collide
// with chained ones (even small-integer handles), a full map refuses, and lookups race safely
// with additions (TSan build).
#include "agent/nvtx/nvtx_handle_map.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace lumos::agent {
namespace {

const void* Handle(uintptr_t value) { return reinterpret_cast<const void*>(value); }

TEST(NvtxHandleMapTest, ForeignHandlesMapToTheirIds) {
  NvtxHandleMap<16> map;
  EXPECT_TRUE(map.AddForeign(Handle(0x1000), 7));
  EXPECT_TRUE(map.AddForeign(Handle(3), 9));       // Small integers are handles too.
  EXPECT_TRUE(map.AddForeign(Handle(0x1000), 8));  // Already there: keeps its first id.
  auto found = map.Find(Handle(0x1000));
  EXPECT_TRUE(found.known);
  EXPECT_FALSE(found.own);
  EXPECT_EQ(found.id, 7u);
  EXPECT_EQ(map.Find(Handle(3)).id, 9u);
  EXPECT_FALSE(map.Find(Handle(4)).known);
  EXPECT_FALSE(map.Find(nullptr).known);
  EXPECT_FALSE(map.AddForeign(nullptr, 1));
}

TEST(NvtxHandleMapTest, OwnHandlesAreTheirOwnKind) {
  NvtxHandleMap<16> map;
  const void* own = map.AddOwn(5);
  ASSERT_NE(own, nullptr);
  auto found = map.Find(own);
  EXPECT_TRUE(found.known);
  EXPECT_TRUE(found.own);
  EXPECT_EQ(found.id, 5u);
  // Inside the map's storage but not an entry's address: not a handle.
  EXPECT_FALSE(map.Find(static_cast<const char*>(own) + 1).known);
  EXPECT_TRUE(map.AddForeign(Handle(1), 6));
  EXPECT_FALSE(map.Find(Handle(1)).own);
}

TEST(NvtxHandleMapTest, FullMapRefusesNewHandles) {
  NvtxHandleMap<4> map;
  EXPECT_TRUE(map.AddForeign(Handle(10), 1));
  EXPECT_TRUE(map.AddForeign(Handle(20), 2));
  EXPECT_NE(map.AddOwn(3), nullptr);
  EXPECT_TRUE(map.AddForeign(Handle(30), 4));
  EXPECT_FALSE(map.AddForeign(Handle(40), 5));
  EXPECT_EQ(map.AddOwn(6), nullptr);
  EXPECT_TRUE(map.AddForeign(Handle(20), 2));  // Present: still fine.
  for (uintptr_t key : {10, 20, 30}) EXPECT_TRUE(map.Find(Handle(key)).known) << key;
  EXPECT_FALSE(map.Find(Handle(40)).known);  // Probes stop after a full cycle.
}

TEST(NvtxHandleMapTest, LookupsRaceWithAdditions) {
  static NvtxHandleMap<1024> map;
  constexpr int kHandles = 512;
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done.load()) {
      for (uintptr_t key = 1; key <= kHandles; ++key) {
        auto found = map.Find(Handle(key * 64));
        if (found.known) {
          ASSERT_EQ(found.id, key);  // Never a key without its id.
        }
      }
    }
  });
  for (uintptr_t key = 1; key <= kHandles; ++key) {
    ASSERT_TRUE(map.AddForeign(Handle(key * 64), static_cast<uint32_t>(key)));
  }
  done = true;
  reader.join();
  for (uintptr_t key = 1; key <= kHandles; ++key) EXPECT_EQ(map.Find(Handle(key * 64)).id, key);
}

}  // namespace
}  // namespace lumos::agent
