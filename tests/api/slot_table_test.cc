// SlotTable's batch interface, the one the request table's per-thread
// stock (RequestStock, request_stock_test.cc) is built on: reserved
// indices are not live until their flag is set, indices given back are
// reserved again before new ones, the table stops at its capacity, and a
// double release by object changes nothing.
#include "dtype/slot_table.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace {

struct Item {
  int value = 0;
};
using Table = nicq::dtype::SlotTable<Item, 4, 64>;  // 16 per chunk, 1024 in all

TEST(SlotTableBatch, ReservedIndicesAreNotLiveUntilMarked) {
  Table table(1);
  int got[8];
  ASSERT_EQ(table.Reserve(got, 8), 8);
  std::set<int> distinct(got, got + 8);
  EXPECT_EQ(distinct.size(), 8u);
  for (int x : got) {
    EXPECT_GE(x, 1);
    EXPECT_EQ(table.Get(x), nullptr) << "reserved index " << x << " is live";
  }
  EXPECT_EQ(table.LiveCount(), 0);
  Item* item = table.Reserved(got[0]);
  item->value = 7;
  Table::UsedFlag(item).store(true);
  ASSERT_EQ(table.Get(got[0]), item);
  EXPECT_EQ(table.Get(got[0])->value, 7);
  EXPECT_EQ(table.LiveCount(), 1);
}

TEST(SlotTableBatch, ReleaseObjectRefusesADoubleRelease) {
  for (const bool concurrent : {true, false}) {
    Table table(1);
    int index;
    ASSERT_EQ(table.Reserve(&index, 1), 1);
    Item* item = table.Reserved(index);
    Table::UsedFlag(item).store(true);
    EXPECT_TRUE(Table::ReleaseObject(item, concurrent));
    EXPECT_EQ(table.Get(index), nullptr);
    EXPECT_FALSE(Table::ReleaseObject(item, concurrent)) << "concurrent " << concurrent;
    EXPECT_EQ(table.LiveCount(), 0);
  }
}

TEST(SlotTableBatch, UnreservedIndicesComeBackBeforeNewOnes) {
  Table table(1);
  int first[8], again[8];
  ASSERT_EQ(table.Reserve(first, 8), 8);
  table.Unreserve(first, 8);
  ASSERT_EQ(table.Reserve(again, 8), 8);
  EXPECT_EQ(std::set<int>(first, first + 8), std::set<int>(again, again + 8));
}

TEST(SlotTableBatch, ReserveStopsAtTheCapacity) {
  Table table(1);
  std::set<int> seen;
  int got[16];
  for (;;) {
    const int n = table.Reserve(got, 16);
    for (int i = 0; i < n; ++i) EXPECT_TRUE(seen.insert(got[i]).second) << got[i] << " twice";
    if (n < 16) break;
  }
  EXPECT_EQ(static_cast<int>(seen.size()), Table::kCapacity - 1);
  EXPECT_EQ(table.Reserve(got, 16), 0);
  int back = *seen.begin();
  table.Unreserve(&back, 1);
  ASSERT_EQ(table.Reserve(got, 16), 1);
  EXPECT_EQ(got[0], back);
}

}  // namespace
