// The request table's per-thread stock (src/api/request_stock.h) over a
// table of its own, and the slots that AllocRequest/FreeRequest hand out:
// a taken slot is live and the rest of its batch is not, the stock's slots
// go back to the table when the stock ends and in batches when it
// overflows, threads never hold the same index, and a double
// FreeRequest changes nothing.
#include "api/request_stock.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "api/api_internal.h"

namespace {

using nicq::api::ApiRequest;
using nicq::api::IndexOf;
using nicq::api::RequestStock;
using nicq::api::RequestTable;
constexpr int kBatch = RequestStock::kBatch;

// What FreeRequest does after resetting a slot.
void GiveBack(RequestStock& stock, ApiRequest* r) {
  ASSERT_TRUE(RequestTable::ReleaseObject(r, true));
  stock.Give(r);
}

TEST(RequestStock, TakenSlotIsLiveTheRestOfItsBatchIsNot) {
  auto table = std::make_unique<RequestTable>(1);
  RequestStock stock(*table);
  ApiRequest* r = stock.Take();
  ASSERT_NE(r, nullptr);
  const int index = IndexOf(r->handle);
  EXPECT_EQ(table->Get(index), r);
  EXPECT_EQ(table->LiveCount(), 1);
  EXPECT_EQ(stock.count(), kBatch - 1);
  int reserved_not_live = 0;
  for (int i = 1; i <= kBatch; ++i)
    if (i != index && table->Get(i) == nullptr) ++reserved_not_live;
  EXPECT_EQ(reserved_not_live, kBatch - 1);
  GiveBack(stock, r);
  EXPECT_EQ(table->Get(index), nullptr);
  EXPECT_EQ(table->LiveCount(), 0);
  EXPECT_EQ(stock.count(), kBatch);
}

TEST(RequestStock, SlotsGoBackToTheTableWhenTheStockEnds) {
  auto table = std::make_unique<RequestTable>(1);
  {
    RequestStock stock(*table);
    ApiRequest* taken[3];
    for (auto& r : taken) r = stock.Take();
    for (auto* r : taken) GiveBack(stock, r);
  }
  // The whole first batch is free again: the next reservation is it, not
  // indices after it.
  int got[kBatch];
  ASSERT_EQ(table->Reserve(got, kBatch), kBatch);
  std::set<int> expected;
  for (int i = 1; i <= kBatch; ++i) expected.insert(i);
  EXPECT_EQ(std::set<int>(got, got + kBatch), expected);
}

TEST(RequestStock, OverflowGoesBackInBatches) {
  auto table = std::make_unique<RequestTable>(1);
  std::set<int> taken;
  {
    RequestStock stock(*table);
    std::vector<ApiRequest*> live;
    for (int i = 0; i < 2 * kBatch + 1; ++i) {
      live.push_back(stock.Take());
      taken.insert(IndexOf(live.back()->handle));
    }
    for (auto* r : live) GiveBack(stock, r);
    // Past 2 * kBatch the stock handed kBatch back to the table.
    EXPECT_EQ(stock.count(), 2 * kBatch);
    int got[kBatch];
    ASSERT_EQ(table->Reserve(got, kBatch), kBatch);
    for (int x : got) EXPECT_TRUE(taken.count(x)) << "index " << x << " is new";
    table->Unreserve(got, kBatch);
  }
  EXPECT_EQ(table->LiveCount(), 0);
}

TEST(RequestStock, ThreadsNeverShareAnIndex) {
  auto table = std::make_unique<RequestTable>(1);
  // Seed the shared free list, so the threads' batches come from it.
  int seed[2 * kBatch];
  ASSERT_EQ(table->Reserve(seed, 2 * kBatch), 2 * kBatch);
  table->Unreserve(seed, 2 * kBatch);
  constexpr int kThreads = 4, kRounds = 60;
  std::vector<std::vector<int>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&table, &got, t] {
      RequestStock stock(*table);
      std::vector<ApiRequest*> mine;
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < 4; ++i) mine.push_back(stock.Take());
        for (int i = 0; i < 3; ++i) {
          GiveBack(stock, mine.back());
          mine.pop_back();
        }
      }
      for (auto* r : mine) {
        r->tag = t + 1;
        got[t].push_back(IndexOf(r->handle));
      }
    });
  for (auto& th : threads) th.join();
  std::set<int> all;
  for (int t = 0; t < kThreads; ++t)
    for (int x : got[t]) {
      EXPECT_TRUE(all.insert(x).second) << "index " << x << " handed out twice";
      ASSERT_NE(table->Get(x), nullptr);
      EXPECT_EQ(table->Get(x)->tag, t + 1);
    }
  EXPECT_EQ(all.size(), std::size_t{kThreads * kRounds});
  EXPECT_EQ(table->LiveCount(), static_cast<int>(all.size()));
}

TEST(RequestStock, DoubleFreeRequestChangesNothing) {
  const int live = nicq::api::LiveRequests();
  ApiRequest* a = nicq::api::AllocRequest();
  ApiRequest* b = nicq::api::AllocRequest();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  nicq::api::FreeRequest(a);
  nicq::api::FreeRequest(a);  // ignored: a is not live
  // Had the second free stocked a again, the next two would be one slot.
  ApiRequest* c = nicq::api::AllocRequest();
  ApiRequest* d = nicq::api::AllocRequest();
  EXPECT_NE(c, d);
  EXPECT_NE(c, b);
  EXPECT_NE(d, b);
  EXPECT_EQ(nicq::api::LiveRequests(), live + 3);
  for (ApiRequest* r : {b, c, d}) nicq::api::FreeRequest(r);
  EXPECT_EQ(nicq::api::LiveRequests(), live);
}

}  // namespace
