// Unit tests: tag layout, the order-preserving post queue, bsend accounting.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "p2p/bsend_buffer.h"
#include "runtime/runtime.h"
#include "transport/post_queue.h"
#include "transport/tag.h"

namespace nicq {
namespace {

using namespace transport;

TEST(TagLayout, RoundTripsEveryField) {
  const std::uint32_t ctxs[] = {0, 1, 4, 12345, kMaxContextId};
  const std::uint32_t srcs[] = {0, 1, 77, (1u << kSrcBits) - 1};
  const std::uint32_t tags[] = {0, 1, 32767, 1u << 23, std::uint32_t(kMaxUserTag)};
  for (Proto p : {Proto::kEager, Proto::kEagerSync, Proto::kRts, Proto::kAck, Proto::kFin})
    for (auto c : ctxs)
      for (auto s : srcs)
        for (auto t : tags) {
          std::uint64_t w = PackTag(p, c, s, t);
          EXPECT_EQ(TagProto(w), p);
          EXPECT_EQ(TagCtx(w), c);
          EXPECT_EQ(TagSrc(w), int(s));
          EXPECT_EQ(TagUser(w), int(t));
        }
}

TEST(TagLayout, UpperBoundMeetsMpiMinimum) {
  EXPECT_GE(rt::TagUpperBound(), 32767);
  EXPECT_GE(rt::TagUpperBound(), 1 << 23);
  EXPECT_EQ(rt::TagUpperBound(), kMaxUserTag);
}

TEST(TagLayout, DataWordRoundTrips) {
  std::uint64_t d = PackData(0xdeadbeef, 0x12345678);
  EXPECT_EQ(DataSeq(d), 0xdeadbeefu);
  EXPECT_EQ(DataToken(d), 0x12345678u);
}

TEST(Matching, ExactAndWildcards) {
  const std::uint64_t msg = PackTag(Proto::kRts, 8, 3, 42);
  EXPECT_TRUE(Matches(MakeMatch(8, 3, 42), msg));  // protocol bits are ignored
  EXPECT_FALSE(Matches(MakeMatch(8, 3, 43), msg));
  EXPECT_FALSE(Matches(MakeMatch(8, 4, 42), msg));
  EXPECT_FALSE(Matches(MakeMatch(12, 3, 42), msg));  // other communicator
  EXPECT_TRUE(Matches(MakeMatch(8, -1, 42), msg));   // MPI_ANY_SOURCE
  EXPECT_TRUE(Matches(MakeMatch(8, 3, -1), msg));    // MPI_ANY_TAG
  EXPECT_TRUE(Matches(MakeMatch(8, -1, -1), msg));
  EXPECT_FALSE(Matches(MakeMatch(9, -1, -1), msg));  // wildcards never cross contexts
}

struct Item {
  int id = 0;
  Item* next_post = nullptr;
};

// A fake provider with `room` free slots.
struct FakeProvider {
  int room = 0;
  std::vector<int> posted;
  Status Post(Item* x) {
    if (room == 0) return Error(Code::kAgain, "");
    --room;
    posted.push_back(x->id);
    return Status::Ok();
  }
};

TEST(PostQueue, KeepsOrderAcrossEagain) {
  PostQueue<Item, &Item::next_post> q;
  FakeProvider prov;
  prov.room = 3;
  std::vector<Item> items(10);
  auto post = [&](Item* x) { return prov.Post(x); };
  auto fail = [&](Item*, const Status&) { FAIL() << "no errors expected"; };
  for (int i = 0; i < 10; ++i) {
    items[i].id = i;
    q.Submit(&items[i], post, fail);
    if (i == 5) prov.room = 100;  // room appears, but 3..5 are still queued
  }
  // Items 6.. must not overtake the queued 3..5.
  EXPECT_EQ(prov.posted, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(q.size(), 7u);
  EXPECT_EQ(q.Drain(post, fail), 7u);
  EXPECT_EQ(prov.posted, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(q.empty());
}

TEST(PostQueue, ErrorsDropOnlyTheFailedPost) {
  PostQueue<Item, &Item::next_post> q;
  std::vector<Item> items(4);
  std::vector<int> posted, failed;
  bool full = true;
  auto post = [&](Item* x) {
    if (full) return Error(Code::kAgain, "");
    if (x->id == 1) return Error(Code::kProcFailed, "dead");
    posted.push_back(x->id);
    return Status::Ok();
  };
  auto fail = [&](Item* x, const Status& s) {
    EXPECT_EQ(s.code(), Code::kProcFailed);
    failed.push_back(x->id);
  };
  for (int i = 0; i < 4; ++i) {
    items[i].id = i;
    q.Submit(&items[i], post, fail);
  }
  full = false;
  q.Drain(post, fail);
  EXPECT_EQ(posted, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(failed, (std::vector<int>{1}));
}

TEST(PostQueue, ManyQueuedPostsAllocateNothing) {
  PostQueue<Item, &Item::next_post> q;
  std::vector<Item> items(100000);
  int n = 0;
  auto full = [](Item*) { return Error(Code::kAgain, ""); };
  auto fail = [](Item*, const Status&) {};
  for (auto& it : items) {
    it.id = n++;
    q.Submit(&it, full, fail);
  }
  EXPECT_EQ(q.size(), items.size());
  int expect = 0;
  bool in_order = true;
  q.Drain(
      [&](Item* x) {
        in_order &= x->id == expect++;
        return Status::Ok();
      },
      fail);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expect, 100000);
}

TEST(BsendBuffer, MpiAccountingFitsExactly) {
  constexpr std::size_t kMsg = 1000, kN = 8;
  static_assert(p2p::BsendBuffer::kOverhead == rt::kBsendOverhead);
  std::vector<std::uint8_t> mem(kN * (kMsg + rt::kBsendOverhead));
  p2p::BsendBuffer b;
  b.Attach(mem.data(), mem.size());
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < kN; ++i) {
    void* p = b.Alloc(kMsg);
    ASSERT_NE(p, nullptr) << "message " << i;
    blocks.push_back(p);
  }
  EXPECT_EQ(b.Alloc(1), nullptr);
  b.Free(blocks[3]);
  b.Free(blocks[4]);
  EXPECT_NE(b.Alloc(2 * kMsg + rt::kBsendOverhead), nullptr);  // freed neighbours coalesce
  EXPECT_EQ(b.blocks_in_use(), kN - 1);
}

TEST(BsendBuffer, AutomaticModeNeverRunsOut) {
  p2p::BsendBuffer b;
  int marker = 0;
  b.AttachAutomatic(&marker);
  EXPECT_TRUE(b.attached());
  std::vector<void*> blocks;
  for (std::size_t n : {std::size_t{0}, std::size_t{10}, std::size_t{1} << 20}) {
    void* p = b.Alloc(n);
    ASSERT_NE(p, nullptr) << n << " bytes";
    if (n) std::memset(p, 1, n);
    blocks.push_back(p);
  }
  EXPECT_EQ(b.blocks_in_use(), 3u);
  for (void* p : blocks) b.Free(p);
  EXPECT_EQ(b.blocks_in_use(), 0u);
  void* back = nullptr;
  std::size_t size = 1;
  b.Detach(&back, &size);
  EXPECT_EQ(back, &marker);  // MPI_Buffer_detach hands MPI_BUFFER_AUTOMATIC back
  EXPECT_EQ(size, 0u);
  EXPECT_FALSE(b.attached());
}

}  // namespace
}  // namespace nicq
