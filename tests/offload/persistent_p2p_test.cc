// The matched point-to-point epoch ops (offload/algorithms/persistent_p2p.h),
// exactly as MatchedP2p posts them, on two simulated NICs: each start is one
// write gated on both sides, the receiver acknowledges each landing, and a
// queued start adds one counter op in front.
#include "offload/algorithms/persistent_p2p.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "providers/sim/sim_backend.h"

namespace nicq::offload {
namespace {

constexpr std::size_t kN = 32;

// A matched pair as MatchedP2p's match leaves it: rank 0 sends `src` into
// rank 1's `dst`.
struct MatchedPair {
  std::shared_ptr<sim::SimWorld> world = sim::SimWorld::Make(fwsim::LogGP{}, 2);
  sim::SimBackend sb{world, 0}, rb{world, 1};
  std::vector<std::int64_t> src = std::vector<std::int64_t>(kN),
                            dst = std::vector<std::int64_t>(kN, -1);
  P2pWire send, recv;

  void Match() {
    CounterId c[2];
    ASSERT_TRUE(sb.AllocCounters(2, c).ok());
    send.role = P2pWire::Role::kSend;
    send.done = c[0];
    send.gate = c[1];
    send.peer = 1;
    send.buf = src.data();
    send.bytes = kN * 8;
    ASSERT_TRUE(rb.AllocCounters(1, c).ok());
    recv.role = P2pWire::Role::kRecv;
    recv.done = c[0];
    recv.peer = 0;
    MemRegion mr;
    ASSERT_TRUE(rb.RegisterMemory(dst.data(), kN * 8, recv.done, &mr).ok());
    send.peer_arrival = recv.done;
    send.remote_addr = mr.remote_addr;
    send.remote_key = mr.key;
    recv.peer_gate = send.gate;
    recv.peer_done = send.done;
  }

  // One start of `side` on backend `b`, ungated (MPI_Start): the ops, then
  // the host's counter add.
  void Start(sim::SimBackend& b, const P2pWire& side, std::uint64_t n) {
    TriggeredOp ops[2];
    CounterId host_add = kNoCounter;
    const std::size_t count = BuildEpochOps(side, n, kNoCounter, 0, ops, &host_add);
    if (count) ASSERT_TRUE(b.Post({ops, count}).ok());
    if (host_add != kNoCounter) ASSERT_TRUE(b.AddCounter(host_add, 1).ok());
  }
};

TEST(PersistentP2p, EachStartIsOneWriteGatedOnBothSides) {
  MatchedPair p;
  p.Match();
  for (std::uint64_t n = 1; n <= 5; ++n) {
    for (std::size_t i = 0; i < kN; ++i) p.src[i] = std::int64_t(100 * n + i);
    p.Start(p.sb, p.send, n);
    p.world->fw().RunUntilIdle();
    EXPECT_EQ(p.sb.ReadCounter(p.send.done), n - 1) << "completed before the receiver was ready";
    EXPECT_NE(p.dst[1], p.src[1]) << "wrote before the receiver was ready, epoch " << n;
    p.Start(p.rb, p.recv, n);
    p.world->fw().RunUntilIdle();
    EXPECT_EQ(p.dst, p.src) << "epoch " << n;
    EXPECT_EQ(p.rb.ReadCounter(p.recv.done), n) << "one landing per epoch";
    EXPECT_EQ(p.sb.ReadCounter(p.send.done), n) << "the acknowledgement completes the send";
  }
}

// The receiver may start first: its ready token waits in the sender's gate
// and the write goes at the sender's start.
TEST(PersistentP2p, ReceiverStartingFirstIsTheSame) {
  MatchedPair p;
  p.Match();
  for (std::uint64_t n = 1; n <= 3; ++n) {
    for (std::size_t i = 0; i < kN; ++i) p.src[i] = std::int64_t(-7 * n - i);
    p.Start(p.rb, p.recv, n);
    p.world->fw().RunUntilIdle();
    EXPECT_EQ(p.rb.ReadCounter(p.recv.done), n - 1);
    p.Start(p.sb, p.send, n);
    p.world->fw().RunUntilIdle();
    EXPECT_EQ(p.dst, p.src) << "epoch " << n;
    EXPECT_EQ(p.sb.ReadCounter(p.send.done), n);
  }
}

// The shape of one epoch: the sender's write at gate >= 2n (ready token +
// its own start), counted by the receiver's arrivals; the receiver's ready
// token and the acknowledgement of the n-th landing. Behind a queue's gate
// each side adds one local counter op that carries the gate into the
// protocol (the sender's gate, the receiver's token trigger).
TEST(PersistentP2p, EpochOpsHaveTheProtocolsShape) {
  MatchedPair p;
  p.Match();
  TriggeredOp ops[2];
  CounterId host_add = kNoCounter;
  ASSERT_EQ(BuildEpochOps(p.send, 3, kNoCounter, 0, ops, &host_add), 1u);
  EXPECT_EQ(host_add, p.send.gate);
  EXPECT_EQ(ops[0].kind, OpKind::kPut);
  EXPECT_EQ(ops[0].trigger, p.send.gate);
  EXPECT_EQ(ops[0].threshold, 6u);
  EXPECT_EQ(ops[0].target_counter, p.recv.done);
  EXPECT_EQ(ops[0].completion, kNoCounter) << "the acknowledgement is the completion";
  EXPECT_EQ(ops[0].bytes, kN * 8);

  const CounterId queue = 77;
  ASSERT_EQ(BuildEpochOps(p.send, 3, queue, 9, ops, &host_add), 2u);
  EXPECT_EQ(host_add, kNoCounter);
  EXPECT_EQ(ops[1].kind, OpKind::kCounterAdd);
  EXPECT_EQ(ops[1].trigger, queue);
  EXPECT_EQ(ops[1].threshold, 9u);
  EXPECT_EQ(ops[1].target_counter, p.send.gate);

  ASSERT_EQ(BuildEpochOps(p.recv, 3, queue, 9, ops, &host_add), 2u);
  EXPECT_EQ(host_add, kNoCounter);
  EXPECT_EQ(ops[0].kind, OpKind::kRemoteCounterAdd);  // ready token
  EXPECT_EQ(ops[0].trigger, queue);
  EXPECT_EQ(ops[0].threshold, 9u);
  EXPECT_EQ(ops[0].peer, 0);
  EXPECT_EQ(ops[0].target_counter, p.send.gate);
  EXPECT_EQ(ops[1].kind, OpKind::kRemoteCounterAdd);  // acknowledgement
  EXPECT_EQ(ops[1].trigger, p.recv.done);
  EXPECT_EQ(ops[1].threshold, 3u);
  EXPECT_EQ(ops[1].target_counter, p.send.done);
}

}  // namespace
}  // namespace nicq::offload
