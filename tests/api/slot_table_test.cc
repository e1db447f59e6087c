// SlotTable with its per-thread SlotCache: the request table's allocator.
// Checks that cached indices are not live until claimed, that a double free
// changes nothing, that a thread's stock goes back to the table when it
// exits, and that concurrent threads never hand out the same index twice.
#include "dtype/slot_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

namespace {

struct Item {
  int value = 0;
};
using Table = nicq::dtype::SlotTable<Item, 4, 64>;  // 16 per chunk, 1024 in all
using Cache = nicq::dtype::SlotCache<Table, 8>;

TEST(SlotCache, ReservedIndicesAreNotLiveUntilClaimed) {
  Table table(1);
  Cache cache(table);
  const int a = cache.Alloc();
  ASSERT_GE(a, 1);
  EXPECT_NE(table.Get(a), nullptr);
  EXPECT_EQ(table.LiveCount(), 1);
  // The rest of the batch is reserved for this cache: not live, not found.
  int reserved_not_live = 0;
  for (int i = 1; i < 1 + 8; ++i)
    if (i != a && table.Get(i) == nullptr) ++reserved_not_live;
  EXPECT_EQ(reserved_not_live, 7);
  cache.Free(a);
  EXPECT_EQ(table.Get(a), nullptr);
  EXPECT_EQ(table.LiveCount(), 0);
}

TEST(SlotCache, DoubleFreeChangesNothing) {
  Table table(1);
  Cache cache(table);
  const int a = cache.Alloc(), b = cache.Alloc();
  cache.Free(a);
  cache.Free(a);  // ignored: a is not live
  // Had the second free stocked a again, two allocations would return it twice.
  const int c = cache.Alloc(), d = cache.Alloc();
  EXPECT_NE(c, d);
  EXPECT_NE(c, b);
  EXPECT_NE(d, b);
  EXPECT_EQ(table.LiveCount(), 3);
}

TEST(SlotCache, StockReturnsToTheTableWhenTheCacheEnds) {
  Table table(1);
  {
    Cache cache(table);
    for (int i = 0; i < 3; ++i) cache.Free(cache.Alloc());
  }
  // Every index of the capacity can still be allocated by another cache.
  Cache other(table);
  std::set<int> seen;
  for (int i = 0; i < Table::kCapacity - 1; ++i) {
    const int x = other.Alloc();
    ASSERT_GE(x, 1) << "allocation " << i;
    EXPECT_TRUE(seen.insert(x).second);
  }
  EXPECT_EQ(other.Alloc(), -1);
}

TEST(SlotCache, OverflowingStockGoesBackInBatches) {
  Table table(1);
  std::vector<int> live;
  {
    Cache cache(table);
    for (int i = 0; i < 40; ++i) live.push_back(cache.Alloc());
    for (int x : live) cache.Free(x);  // more than 2 batches: the excess returns
    Cache other(table);
    // The other cache finds the returned indices without new ones.
    const int y = other.Alloc();
    EXPECT_NE(std::find(live.begin(), live.end(), y), live.end());
    other.Free(y);
  }
  EXPECT_EQ(table.LiveCount(), 0);
}

TEST(SlotCache, ThreadsNeverShareAnIndex) {
  Table table(1);
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::vector<int>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&table, &got, t] {
      Cache cache(table);
      std::vector<int> mine;
      for (int round = 0; round < 50; ++round) {
        for (int i = 0; i < 4; ++i) mine.push_back(cache.Alloc());
        for (int i = 0; i < 3; ++i) {
          cache.Free(mine.back());
          mine.pop_back();
        }
        if (static_cast<int>(mine.size()) >= kEach) break;
      }
      for (int x : mine) table.Get(x)->value = t + 1;
      got[t] = mine;
    });
  for (auto& th : threads) th.join();
  std::set<int> all;
  for (int t = 0; t < kThreads; ++t)
    for (int x : got[t]) {
      EXPECT_TRUE(all.insert(x).second) << "index " << x << " handed out twice";
      EXPECT_EQ(table.Get(x)->value, t + 1);
    }
  EXPECT_EQ(table.LiveCount(), static_cast<int>(all.size()));
}

}  // namespace
