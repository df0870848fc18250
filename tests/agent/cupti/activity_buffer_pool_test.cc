#include "agent/cupti/activity_buffer_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace lumos::agent::cupti {
namespace {

TEST(ActivityBufferPoolTest, HandsOutEveryBufferOnceThenRefusesAndCounts) {
  auto pool = ActivityBufferPool::Create(64 << 10, 3);
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  ActivityBufferPool& p = *pool.value();
  std::set<uint8_t*> taken;
  for (int i = 0; i < 3; ++i) {
    uint8_t* buffer = p.Acquire();
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 8, 0u);  // CUPTI's alignment.
    taken.insert(buffer);
  }
  EXPECT_EQ(taken.size(), 3u);
  EXPECT_EQ(p.free_buffers(), 0u);
  EXPECT_EQ(p.Acquire(), nullptr);
  EXPECT_EQ(p.Acquire(), nullptr);
  EXPECT_EQ(p.TakeRefusedRequests(), 2u);
  EXPECT_EQ(p.TakeRefusedRequests(), 0u);  // Taken means reset.
}

TEST(ActivityBufferPoolTest, CompletedBuffersDrainInCompletionOrderAndComeBack) {
  auto pool = ActivityBufferPool::Create(64 << 10, 2);
  ASSERT_TRUE(pool.ok());
  ActivityBufferPool& p = *pool.value();
  uint8_t* a = p.Acquire();
  uint8_t* b = p.Acquire();
  a[0] = 'a';
  b[0] = 'b';
  EXPECT_TRUE(p.Complete(b, 100));
  EXPECT_TRUE(p.Complete(a, 200));
  EXPECT_FALSE(p.Complete(a, 200));  // Already completed.
  std::vector<std::pair<char, size_t>> seen;
  EXPECT_EQ(p.DrainCompleted([&](const uint8_t* buffer, size_t valid) {
    seen.emplace_back(static_cast<char>(buffer[0]), valid);
  }),
            2u);
  EXPECT_EQ(seen, (std::vector<std::pair<char, size_t>>{{'b', 100}, {'a', 200}}));
  EXPECT_EQ(p.free_buffers(), 2u);
  EXPECT_NE(p.Acquire(), nullptr);
  EXPECT_EQ(p.DrainCompleted([](const uint8_t*, size_t) {}), 0u);  // Nothing completed.
}

TEST(ActivityBufferPoolTest, RejectsForeignAndMisalignedPointers) {
  auto pool = ActivityBufferPool::Create(64 << 10, 2);
  ASSERT_TRUE(pool.ok());
  ActivityBufferPool& p = *pool.value();
  uint8_t outside[16];
  EXPECT_FALSE(p.Complete(outside, 8));
  uint8_t* buffer = p.Acquire();
  EXPECT_FALSE(p.Complete(buffer + 8, 8));
  EXPECT_TRUE(p.Complete(buffer, uint64_t{1} << 40));  // Clamped to the buffer.
  p.DrainCompleted([&](const uint8_t*, size_t valid) { EXPECT_EQ(valid, 64u << 10); });
}

TEST(ActivityBufferPoolTest, RejectsBadSizes) {
  EXPECT_FALSE(ActivityBufferPool::Create(0, 4).ok());
  EXPECT_FALSE(ActivityBufferPool::Create(1001, 4).ok());
  EXPECT_FALSE(ActivityBufferPool::Create(4096, 0).ok());
}

TEST(ActivityBufferPoolTest, ConcurrentRequestsNeverShareABuffer) {
  auto pool = ActivityBufferPool::Create(64 << 10, 130);  // Three bitmap words.
  ASSERT_TRUE(pool.ok());
  ActivityBufferPool& p = *pool.value();
  std::vector<std::vector<uint8_t*>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        if (uint8_t* buffer = p.Acquire()) got[t].push_back(buffer);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<uint8_t*> all;
  size_t total = 0;
  for (const auto& list : got) {
    total += list.size();
    all.insert(list.begin(), list.end());
  }
  EXPECT_EQ(total, 130u);
  EXPECT_EQ(all.size(), 130u);
  EXPECT_EQ(p.TakeRefusedRequests(), 160u - 130u);
}

}  // namespace
}  // namespace lumos::agent::cupti
