// StringTable: stable ids, lock-free look-ups across chunks and concurrent interning.
#include "agent/core/string_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace lumos::agent {
namespace {

TEST(StringTableTest, SameTextSameId) {
  StringTable table;
  EXPECT_EQ(table.size(), 0u);
  uint32_t a = table.Intern("cudaLaunchKernel");
  uint32_t b = table.Intern("cudaMemcpyAsync");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(table.Intern("cudaLaunchKernel"), a);
  EXPECT_EQ(table.Lookup(a), "cudaLaunchKernel");
  EXPECT_EQ(table.Lookup(b), "cudaMemcpyAsync");
  EXPECT_EQ(table.size(), 2u);
}

TEST(StringTableTest, UnknownIdsAreEmpty) {
  StringTable table;
  table.Intern("x");
  EXPECT_EQ(table.Lookup(0), "");
  EXPECT_EQ(table.Lookup(2), "");
  EXPECT_EQ(table.Lookup(1u << 20), "");  // A chunk never allocated.
  EXPECT_EQ(table.Lookup(UINT32_MAX), "");
  EXPECT_EQ(table.Intern(""), 2u);  // The empty string is a string like any other.
  EXPECT_EQ(table.Lookup(2), "");
}

TEST(StringTableTest, IdsSpanChunks) {
  StringTable table;
  const uint32_t count = 3 * (1u << StringTable::kChunkBits);
  for (uint32_t i = 0; i < count; ++i) {
    ASSERT_EQ(table.Intern("kernel_" + std::to_string(i)), i + 1);
  }
  for (uint32_t i = 0; i < count; i += 997) {
    EXPECT_EQ(table.Lookup(i + 1), "kernel_" + std::to_string(i));
  }
  // Long strings (no small-string storage) keep their addresses too.
  std::string long_name(300, 'k');
  uint32_t id = table.Intern(long_name);
  std::string_view view = table.Lookup(id);
  for (int i = 0; i < 100; ++i) table.Intern("more_" + std::to_string(i));
  EXPECT_EQ(view.data(), table.Lookup(id).data());
  EXPECT_EQ(view, long_name);
}

TEST(StringTableTest, ConcurrentInternAndLookup) {
  StringTable table;
  constexpr int kThreads = 4;
  constexpr int kNames = 2000;
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    // Every id handed out so far resolves to a well-formed name.
    while (!stop.load(std::memory_order_relaxed)) {
      uint32_t size = table.size();
      for (uint32_t id = 1; id <= size; id += 37) {
        ASSERT_EQ(table.Lookup(id).rfind("name_", 0), 0u);
      }
    }
  });
  std::vector<std::vector<uint32_t>> ids(kThreads);
  std::vector<std::thread> writers;
  writers.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kNames; ++i) ids[t].push_back(table.Intern("name_" + std::to_string(i)));
    });
  }
  for (std::thread& writer : writers) writer.join();
  stop.store(true);
  reader.join();
  EXPECT_EQ(table.size(), static_cast<uint32_t>(kNames));
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]);  // Same text, same id.
  for (int i = 0; i < kNames; ++i) EXPECT_EQ(table.Lookup(ids[0][i]), "name_" + std::to_string(i));
}

}  // namespace
}  // namespace lumos::agent
