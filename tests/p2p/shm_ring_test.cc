// The shm transport's ring (transport/shm_ring.h) in one process: frames
// wrap around the end of the cell array, a full ring pushes back and takes
// more once the consumer releases cells, messages larger than a frame are
// fragmented and reassembled, and a producer and a consumer on two threads
// see every message once, intact and in order.
#include "transport/shm_ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

namespace nicq::transport {
namespace {

struct Ring {
  explicit Ring(std::size_t cells) : cells(cells) {
    mem = std::aligned_alloc(kShmCell, ShmRingBytes(cells));
    ShmRingWriter::Format(mem);
    w.Attach(mem, cells);
    r.Attach(mem, cells);
  }
  ~Ring() { std::free(mem); }
  std::size_t cells;
  void* mem;
  ShmRingWriter w;
  ShmMessageReader r;
};

// Message i: `len` bytes whose first 8 hold i and the rest a pattern of i.
std::vector<std::uint8_t> Message(std::uint64_t i, std::size_t len) {
  std::vector<std::uint8_t> m(len);
  for (std::size_t k = 0; k < len; ++k) m[k] = std::uint8_t(i * 31 + k * 7);
  std::memcpy(m.data(), &i, std::min(len, sizeof i));
  return m;
}

bool Put(Ring& ring, const std::vector<std::uint8_t>& m) {
  // Two iov entries, split off-centre, as the engine's (header, payload).
  const std::size_t cut = m.size() / 3;
  const iovec iov[2] = {{const_cast<std::uint8_t*>(m.data()), cut},
                        {const_cast<std::uint8_t*>(m.data()) + cut, m.size() - cut}};
  std::size_t off = 0;
  bool wrote = false;
  return WriteMessage(ring.w, ring.w.max_frame(), iov, 2, m.size(), &off, &wrote);
}

TEST(ShmRing, FramesWrapAroundTheEndIntact) {
  Ring ring(64);  // 4 KiB: a few frames of these sizes wrap every few messages
  std::uint64_t next = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    const std::size_t len = 8 + (i * 37) % 900;  // not cell multiples: padding at the end
    ASSERT_TRUE(Put(ring, Message(i, len))) << "message " << i;
    int got = ring.r.Drain(
        [&](const std::uint8_t* b, std::size_t n) {
          EXPECT_EQ(n, len);
          EXPECT_EQ(std::vector<std::uint8_t>(b, b + n), Message(next, n)) << "message " << next;
          ++next;
        },
        16);
    EXPECT_EQ(got, 1);
  }
  EXPECT_EQ(next, 5000u);
}

TEST(ShmRing, FullRingPushesBackUntilTheConsumerReleases) {
  Ring ring(64);
  const std::size_t len = 100;  // 2 cells a frame: 32 frames fill the ring
  std::uint64_t sent = 0;
  while (Put(ring, Message(sent, len))) ++sent;
  EXPECT_EQ(sent, 32u);
  EXPECT_FALSE(Put(ring, Message(sent, len)));  // still full: nothing written
  std::uint64_t next = 0;
  auto check = [&](const std::uint8_t* b, std::size_t n) {
    EXPECT_EQ(std::vector<std::uint8_t>(b, b + n), Message(next, n));
    ++next;
  };
  EXPECT_EQ(ring.r.Drain(check, 1), 1);  // one frame released: room for one more
  EXPECT_TRUE(Put(ring, Message(sent++, len)));
  EXPECT_FALSE(Put(ring, Message(sent, len)));
  EXPECT_EQ(ring.r.Drain(check, 1000), 32);
  EXPECT_EQ(next, sent);
  EXPECT_EQ(ring.r.Drain(check, 1000), 0);  // empty
}

TEST(ShmRing, LargeMessagesAreFragmentedAndReassembled) {
  Ring ring(256);                 // 16 KiB ring, frames to 4080 bytes
  const std::size_t len = 10000;  // three frames
  const auto m = Message(7, len);
  const iovec iov[1] = {{const_cast<std::uint8_t*>(m.data()), len}};
  std::size_t off = 0;
  bool wrote = false;
  ASSERT_TRUE(WriteMessage(ring.w, ring.w.max_frame(), iov, 1, len, &off, &wrote));
  EXPECT_TRUE(wrote);
  int delivered = 0;
  const int frames = ring.r.Drain(
      [&](const std::uint8_t* b, std::size_t n) {
        ++delivered;
        EXPECT_EQ(std::vector<std::uint8_t>(b, b + n), m);
      },
      100);
  EXPECT_EQ(frames, 3);
  EXPECT_EQ(delivered, 1);

  // A message bigger than the whole ring goes in as the consumer drains.
  const std::size_t huge = 100000;
  const auto h = Message(8, huge);
  const iovec hiov[1] = {{const_cast<std::uint8_t*>(h.data()), huge}};
  off = 0;
  int rounds = 0;
  delivered = 0;
  while (!WriteMessage(ring.w, ring.w.max_frame(), hiov, 1, huge, &off, &wrote)) {
    ASSERT_TRUE(wrote || off > 0);
    ASSERT_LT(off, huge);
    EXPECT_EQ(delivered, 0);  // nothing delivered before the last fragment
    ring.r.Drain([&](const std::uint8_t*, std::size_t) { ++delivered; }, 1000);
    ASSERT_LT(++rounds, 1000);
  }
  EXPECT_GT(rounds, 3);
  ring.r.Drain(
      [&](const std::uint8_t* b, std::size_t n) {
        ++delivered;
        EXPECT_EQ(std::vector<std::uint8_t>(b, b + n), h);
      },
      1000);
  EXPECT_EQ(delivered, 1);
}

TEST(ShmRing, ManyMessagesBetweenTwoThreadsArriveInOrder) {
  Ring ring(1024);
  constexpr std::uint64_t kCount = 200000;
  auto size_of = [](std::uint64_t i) -> std::size_t {
    return i % 997 == 0 ? 40000 : 8 + (i * 13) % 300;  // some fragmented
  };
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kCount; ++i) {
      const auto m = Message(i, size_of(i));
      const iovec iov[1] = {{const_cast<std::uint8_t*>(m.data()), m.size()}};
      std::size_t off = 0;
      bool wrote = false;
      while (!WriteMessage(ring.w, ring.w.max_frame(), iov, 1, m.size(), &off, &wrote))
        std::this_thread::yield();
    }
  });
  std::uint64_t next = 0, bad = 0;
  while (next < kCount) {
    const int got = ring.r.Drain(
        [&](const std::uint8_t* b, std::size_t n) {
          if (n != size_of(next) || std::vector<std::uint8_t>(b, b + n) != Message(next, n)) ++bad;
          ++next;
        },
        64);
    if (got == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(next, kCount);
}

}  // namespace
}  // namespace nicq::transport
