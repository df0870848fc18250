// RecordRing: push/drain order, full-ring drops, wrap-around, two-record events, and a
// producer/consumer stress test (run under ASan/UBSan and TSan by the test command).
#include "agent/core/ring_buffer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace lumos::agent {
namespace {

// Ring memory for tests: 64-byte aligned records.
struct RingMemory {
  explicit RingMemory(uint64_t capacity)
      : slots(new Record[capacity]), ring(slots.get(), capacity) {}
  std::unique_ptr<Record[]> slots;
  RecordRing ring;
};

Record Sequenced(uint64_t seq) {
  Record record{};
  record.kind = RecordKind::kApiCall;
  record.start_ns = static_cast<int64_t>(seq);
  record.payload.api_call.stream_id = seq;
  return record;
}

Record Extension(uint64_t seq) {
  Record record{};
  record.payload.api_call_ext.external_id = seq * 10;
  return record;
}

// Drains everything; returns the sequence numbers (start_ns) in drain order.
std::vector<int64_t> DrainAll(RecordRing& ring, size_t max = SIZE_MAX) {
  std::vector<int64_t> seen;
  ring.Drain([&](const Record& head, const Record*) { seen.push_back(head.start_ns); }, max);
  return seen;
}

TEST(RecordRingTest, DrainsInPushOrder) {
  RingMemory m(8);
  EXPECT_EQ(m.ring.capacity(), 8u);
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(m.ring.TryPush(Sequenced(i)));
  EXPECT_EQ(m.ring.SizeApprox(), 5u);
  EXPECT_EQ(DrainAll(m.ring, 3), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(DrainAll(m.ring), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(m.ring.SizeApprox(), 0u);
  EXPECT_TRUE(DrainAll(m.ring).empty());
}

TEST(RecordRingTest, DropsWhenRingFull) {
  RingMemory m(4);
  uint64_t drops = 0;
  for (uint64_t i = 0; i < 10; ++i) {
    if (!m.ring.TryPush(Sequenced(i))) ++drops;
  }
  EXPECT_EQ(drops, 6u);
  EXPECT_EQ(DrainAll(m.ring), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(m.ring.TryPush(Sequenced(10)));  // Space again after the drain.
}

TEST(RecordRingTest, WrapsAround) {
  RingMemory m(8);
  uint64_t next_push = 0;
  int64_t next_expected = 0;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(m.ring.TryPush(Sequenced(next_push++)));
    for (int64_t seq : DrainAll(m.ring)) EXPECT_EQ(seq, next_expected++);
  }
  EXPECT_EQ(next_expected, 500);
}

TEST(RecordRingTest, TwoRecordEventsStayWholeAcrossTheWrap) {
  RingMemory m(4);
  ASSERT_TRUE(m.ring.TryPush(Sequenced(0)));
  ASSERT_TRUE(m.ring.TryPush(Sequenced(1)));
  ASSERT_TRUE(m.ring.TryPush(Sequenced(2)));
  EXPECT_FALSE(m.ring.TryPush(Sequenced(3), Extension(3)));  // One slot free: all or nothing.
  EXPECT_EQ(DrainAll(m.ring, 2), (std::vector<int64_t>{0, 1}));
  // Slots 3 and 0 (wrapped) hold the event.
  ASSERT_TRUE(m.ring.TryPush(Sequenced(3), Extension(3)));
  int events = 0;
  m.ring.Drain(
      [&](const Record& head, const Record* ext) {
        ++events;
        if (head.start_ns == 2) {
          EXPECT_EQ(ext, nullptr);
          EXPECT_EQ(head.flags & kRecordFlagExtended, 0);
        } else {
          EXPECT_EQ(head.start_ns, 3);
          EXPECT_NE(head.flags & kRecordFlagExtended, 0);
          ASSERT_NE(ext, nullptr);
          EXPECT_EQ(ext->kind, RecordKind::kExtension);
          EXPECT_EQ(ext->payload.api_call_ext.external_id, 30u);
        }
      },
      SIZE_MAX);
  EXPECT_EQ(events, 2);
  EXPECT_EQ(m.ring.SizeApprox(), 0u);
}

TEST(RecordRingTest, SinglePushClearsAStrayExtendedFlag) {
  RingMemory m(4);
  Record record = Sequenced(1);
  record.flags = kRecordFlagExtended | kRecordFlagHasHostTime;
  ASSERT_TRUE(m.ring.TryPush(record));
  ASSERT_TRUE(m.ring.TryPush(Sequenced(2)));
  std::vector<uint8_t> flags;
  m.ring.Drain(
      [&](const Record& head, const Record* ext) {
        EXPECT_EQ(ext, nullptr);
        flags.push_back(head.flags);
      },
      SIZE_MAX);
  EXPECT_EQ(flags, (std::vector<uint8_t>{kRecordFlagHasHostTime, 0}));
}

TEST(RecordRingTest, RingWithoutSlotsRejectsEverything) {
  RecordRing empty;
  EXPECT_EQ(empty.capacity(), 0u);
  EXPECT_FALSE(empty.TryPush(Sequenced(0)));
  EXPECT_FALSE(empty.TryPush(Sequenced(0), Extension(0)));
  EXPECT_TRUE(DrainAll(empty).empty());
  Record slots[3];
  RecordRing odd(slots, 3);  // Not a power of two.
  EXPECT_EQ(odd.capacity(), 0u);
  EXPECT_FALSE(odd.TryPush(Sequenced(0)));
  EXPECT_FALSE(RecordRing::IsValidCapacity(1));
  EXPECT_TRUE(RecordRing::IsValidCapacity(2));
}

// One producer pushes `total` sequenced events (every third one with an extension) while one
// consumer drains, concurrently or only once the producer is done (the worst a scheduler can
// do: the consumer never runs meanwhile). Returns what the consumer saw; checks order and
// integrity.
struct StressResult {
  uint64_t received = 0;
  uint64_t dropped = 0;
};

enum class Consumer { kConcurrent, kAfterProducer };

// Ring slots that `total` such events take.
constexpr uint64_t SlotsFor(uint64_t total) { return total + total / 3; }

StressResult RunStress(uint64_t capacity, uint64_t total, Consumer consumer) {
  RingMemory m(capacity);
  std::atomic<bool> done{false};
  StressResult result;
  std::thread producer([&] {
    for (uint64_t seq = 1; seq <= total; ++seq) {
      bool pushed = seq % 3 == 0 ? m.ring.TryPush(Sequenced(seq), Extension(seq))
                                 : m.ring.TryPush(Sequenced(seq));
      if (!pushed) ++result.dropped;
    }
    done.store(true, std::memory_order_release);
  });
  int64_t last = 0;
  auto consume = [&](const Record& head, const Record* ext) {
    const auto seq = static_cast<uint64_t>(head.start_ns);
    // Strictly increasing: no duplicate, no reordering.
    ASSERT_GT(head.start_ns, last);
    last = head.start_ns;
    ASSERT_EQ(head.payload.api_call.stream_id, seq);  // The payload is whole.
    ASSERT_EQ(ext != nullptr, seq % 3 == 0);
    if (ext != nullptr) {
      ASSERT_EQ(ext->payload.api_call_ext.external_id, seq * 10);
    }
    ++result.received;
  };
  if (consumer == Consumer::kAfterProducer) producer.join();
  while (!done.load(std::memory_order_acquire)) m.ring.Drain(consume, 64);
  m.ring.Drain(consume, SIZE_MAX);
  if (producer.joinable()) producer.join();
  return result;
}

// Sized to fit: every event has its slots even if the consumer never runs until the producer is
// done, so nothing is lost however the two threads are scheduled (a ring of 2^18 slots used to
// be given 200,000 events, which take 266,667 slots: on a busy core the producer could fill it
// before the consumer ran, and lost 3,392 events).
constexpr uint64_t kFitCapacity = 1 << 18;
constexpr uint64_t kFitTotal = 196'608;  // 3 * 2^16: fills the ring exactly.
static_assert(SlotsFor(kFitTotal) <= kFitCapacity);

TEST(RecordRingTest, StressSizedToFitLosesNothing) {
  StressResult result = RunStress(kFitCapacity, kFitTotal, Consumer::kConcurrent);
  EXPECT_EQ(result.dropped, 0u);
  EXPECT_EQ(result.received, kFitTotal);
}

TEST(RecordRingTest, SizedToFitHoldsEverythingWithoutAConsumer) {
  StressResult result = RunStress(kFitCapacity, kFitTotal, Consumer::kAfterProducer);
  EXPECT_EQ(result.dropped, 0u);
  EXPECT_EQ(result.received, kFitTotal);
}

TEST(RecordRingTest, StressUndersizedCountsEveryDrop) {
  constexpr uint64_t kTotal = 200'000;
  StressResult result = RunStress(/*capacity=*/64, kTotal, Consumer::kConcurrent);
  EXPECT_EQ(result.received + result.dropped, kTotal);
  EXPECT_GT(result.received, 0u);
}

}  // namespace
}  // namespace lumos::agent
