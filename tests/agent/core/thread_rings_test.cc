// ThreadRings: registration per thread, draining every thread's ring, drop reports with thread
// ids, arena exhaustion, rings outliving their threads, and NoDestructor.
#include "agent/core/thread_rings.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "agent/core/no_destructor.h"

namespace lumos::agent {
namespace {

constexpr uint64_t kRingBytes = uint64_t{64} * 64;  // 64 records.
constexpr uint64_t kPerThread = ThreadRings::kControlBytes + kRingBytes;

std::unique_ptr<ThreadRings> MakeRings(uint64_t arena_bytes, uint64_t ring_bytes = kRingBytes) {
  auto rings = ThreadRings::Create(arena_bytes, ring_bytes);
  EXPECT_TRUE(rings.ok()) << rings.status().message();
  return rings.ok() ? std::move(rings).value() : nullptr;
}

Record At(int64_t ns) {
  Record record{};
  record.kind = RecordKind::kNvtxRange;
  record.start_ns = ns;
  record.end_ns = ns + 1;
  return record;
}

uint32_t Tid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

TEST(ThreadRingsTest, RejectsBadSizes) {
  EXPECT_FALSE(ThreadRings::Create(1 << 20, 100).ok());               // Not whole records.
  EXPECT_FALSE(ThreadRings::Create(1 << 20, uint64_t{64} * 3).ok());  // Not a power of two.
  EXPECT_FALSE(ThreadRings::Create(1 << 20, 64).ok());                // A single record.
  EXPECT_FALSE(ThreadRings::Create(1000, kRingBytes).ok());  // No room for a control block.
}

TEST(ThreadRingsTest, RegistersEachThreadOnce) {
  auto rings = MakeRings(4 * kPerThread);
  ThreadRing* mine = rings->CurrentThreadRing();
  EXPECT_EQ(rings->CurrentThreadRing(), mine);
  EXPECT_EQ(mine->thread_id(), Tid());
  EXPECT_EQ(mine->capacity(), 64u);
  EXPECT_EQ(rings->ring_capacity(), 64u);
  ThreadRing* other = nullptr;
  uint32_t other_tid = 0;
  std::thread([&] {
    other = rings->CurrentThreadRing();
    other_tid = Tid();
  }).join();
  EXPECT_NE(other, mine);
  EXPECT_EQ(other->thread_id(), other_tid);
  EXPECT_EQ(rings->threads_with_ring(), 2u);
  EXPECT_EQ(rings->used_bytes(), 2 * kPerThread);
}

TEST(ThreadRingsTest, DrainsEveryThreadsRingAfterTheThreadsExit) {
  auto rings = MakeRings(8 * kPerThread);
  std::vector<std::thread> threads;
  std::map<uint32_t, uint32_t> pushed_by_tid;
  std::mutex mutex;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10 * (t + 1); ++i) ASSERT_TRUE(rings->Push(At(i)));
      std::lock_guard<std::mutex> lock(mutex);
      pushed_by_tid[Tid()] = 10 * (t + 1);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::map<uint32_t, uint32_t> drained_by_tid;
  std::map<uint32_t, int64_t> last_ns;
  uint64_t events = rings->DrainAll(
      [&](const ThreadRing& ring, const Record& head, const Record* ext) {
        EXPECT_EQ(ext, nullptr);
        auto [it, fresh] = last_ns.emplace(ring.thread_id(), -1);
        EXPECT_GT(head.start_ns, it->second);  // Per-thread order.
        it->second = head.start_ns;
        ++drained_by_tid[ring.thread_id()];
      },
      SIZE_MAX);
  EXPECT_EQ(events, 100u);
  EXPECT_EQ(drained_by_tid, pushed_by_tid);
  EXPECT_EQ(rings->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, SIZE_MAX), 0u);
}

TEST(ThreadRingsTest, ReportsDropsPerThreadWithTimes) {
  auto rings = MakeRings(4 * kPerThread);
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(rings->Push(At(i)));
  for (int i = 100; i < 110; ++i) EXPECT_FALSE(rings->Push(At(i)));
  EXPECT_FALSE(rings->Push(At(110), At(110)));
  EXPECT_EQ(rings->CurrentThreadRing()->drops(), 11u);
  std::vector<RingDropReport> reports = rings->CollectDrops();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].thread_id, Tid());
  EXPECT_TRUE(reports[0].has_ring);
  EXPECT_EQ(reports[0].count, 11u);
  EXPECT_EQ(reports[0].first_drop_ns, 100);
  EXPECT_EQ(reports[0].last_drop_ns, 110);
  EXPECT_TRUE(rings->CollectDrops().empty());  // Reported once.

  // Drain a few, drop again: a new report covers only the new drops.
  rings->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, 1);
  EXPECT_TRUE(rings->Push(At(200)));
  EXPECT_FALSE(rings->Push(At(300)));
  EXPECT_FALSE(rings->Push(At(301)));
  reports = rings->CollectDrops();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].count, 2u);
  EXPECT_EQ(reports[0].first_drop_ns, 300);
  EXPECT_EQ(reports[0].last_drop_ns, 301);
}

TEST(ThreadRingsTest, ExhaustedArenaLeavesLateThreadsCountingDrops) {
  // Room for two rings, one more control block, and then nothing.
  auto rings = MakeRings(2 * kPerThread + ThreadRings::kControlBytes + 100);
  std::vector<uint32_t> tids;
  std::vector<bool> pushed;
  for (int t = 0; t < 5; ++t) {
    std::thread([&] {
      tids.push_back(Tid());
      pushed.push_back(rings->Push(At(1000 + t)));
      rings->Push(At(2000 + t));
    }).join();
  }
  EXPECT_EQ(pushed, (std::vector<bool>{true, true, false, false, false}));
  EXPECT_EQ(rings->threads_with_ring(), 2u);
  EXPECT_EQ(rings->threads_without_ring(), 1u);
  EXPECT_EQ(rings->threads_shared(), 2u);
  EXPECT_EQ(rings->used_bytes(), 2 * kPerThread + ThreadRings::kControlBytes);

  std::map<uint32_t, RingDropReport> by_tid;
  for (const RingDropReport& report : rings->CollectDrops()) by_tid[report.thread_id] = report;
  ASSERT_EQ(by_tid.size(), 2u);
  // The third thread has a control block: its own drops, under its own id.
  ASSERT_TRUE(by_tid.count(tids[2]));
  EXPECT_FALSE(by_tid[tids[2]].has_ring);
  EXPECT_EQ(by_tid[tids[2]].count, 2u);
  EXPECT_EQ(by_tid[tids[2]].first_drop_ns, 1002);
  EXPECT_EQ(by_tid[tids[2]].last_drop_ns, 2002);
  // The last two share thread id 0.
  ASSERT_TRUE(by_tid.count(0));
  EXPECT_FALSE(by_tid[0].has_ring);
  EXPECT_EQ(by_tid[0].count, 4u);
  uint64_t events =
      rings->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, SIZE_MAX);
  EXPECT_EQ(events, 4u);  // Two from each thread that has a ring.
}

TEST(ThreadRingsTest, SharedEntryCountsExactlyUnderContention) {
  auto rings = MakeRings(1 << 12);  // One control block, then nothing.
  std::thread([&] { rings->CurrentThreadRing(); }).join();
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) rings->Push(At(i));
    });
  }
  for (std::thread& thread : threads) thread.join();
  uint64_t shared = 0;
  for (const RingDropReport& report : rings->CollectDrops()) {
    if (report.thread_id == 0) shared = report.count;
  }
  EXPECT_EQ(shared, 4000u);
}

TEST(ThreadRingsTest, EachInstanceGetsItsOwnRing) {
  auto a = MakeRings(4 * kPerThread);
  auto b = MakeRings(4 * kPerThread);
  ThreadRing* in_a = a->CurrentThreadRing();
  ThreadRing* in_b = b->CurrentThreadRing();
  EXPECT_NE(in_a, in_b);
  ASSERT_TRUE(b->Push(At(1)));
  EXPECT_EQ(b->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, SIZE_MAX), 1u);
  EXPECT_EQ(a->DrainAll([](const ThreadRing&, const Record&, const Record*) {}, SIZE_MAX), 0u);
}

TEST(ThreadRingsTest, EnabledFlagStartsOff) {
  EnabledFlag flag;
  EXPECT_FALSE(flag.enabled());
  flag.Set(true);
  EXPECT_TRUE(flag.enabled());
}

struct CountsDestruction {
  explicit CountsDestruction(int* destroyed) : destroyed(destroyed) {}
  ~CountsDestruction() { ++*destroyed; }
  int* destroyed;
};

TEST(NoDestructorTest, NeverRunsTheDestructor) {
  int destroyed = 0;
  {
    NoDestructor<CountsDestruction> value(&destroyed);
    EXPECT_EQ(value->destroyed, &destroyed);
  }
  EXPECT_EQ(destroyed, 0);
  static NoDestructor<std::vector<int>> global(3, 7);
  EXPECT_EQ(global->size(), 3u);
  EXPECT_EQ((*global)[2], 7);
}

}  // namespace
}  // namespace lumos::agent
