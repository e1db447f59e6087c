// The one-sided epoch ops (offload/algorithms/rma_epoch.h) on two simulated
// NICs: a block write split into chunks lands whole and is counted once per
// chunk at the target, and a signal write lands its word in its slot only
// once its gate is reached.
#include "offload/algorithms/rma_epoch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "providers/sim/sim_backend.h"

namespace nicq::offload {
namespace {

struct TwoNics {
  std::shared_ptr<sim::SimWorld> world = sim::SimWorld::Make(fwsim::LogGP{}, 2);
  sim::SimBackend origin{world, 0}, target{world, 1};
};

TEST(RmaEpochOps, ChunkCountCoversTheBlockWithoutOverflow) {
  BlockWriteArgs a;
  a.bytes = 960;
  a.max_chunk = 96;
  EXPECT_EQ(BlockWriteOpCount(a), 10u);  // an exact multiple: no empty last write
  a.bytes = 961;
  EXPECT_EQ(BlockWriteOpCount(a), 11u);
  a.max_chunk = 0;  // no limit
  EXPECT_EQ(BlockWriteOpCount(a), 1u);
  // A backend without a limit may report one near SIZE_MAX (libfabric's
  // max_msg_size): still one write, not zero.
  a.max_chunk = std::numeric_limits<std::size_t>::max();
  EXPECT_EQ(BlockWriteOpCount(a), 1u);
  TriggeredOp op[1];
  BuildBlockWrite(a, op);
  EXPECT_EQ(op[0].bytes, 961u);
  a.bytes = 0;
  EXPECT_EQ(BlockWriteOpCount(a), 0u);
}

TEST(RmaEpochOps, ChunkedBlockWriteLandsAtItsOffsetCountedPerChunk) {
  TwoNics n;
  CounterId arrivals, done;
  ASSERT_TRUE(n.target.AllocCounters(1, &arrivals).ok());
  ASSERT_TRUE(n.origin.AllocCounters(1, &done).ok());
  std::vector<std::uint8_t> window(1200, 0xee), src(1000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = std::uint8_t(i * 7 + 1);
  MemRegion mr;
  ASSERT_TRUE(n.target.RegisterMemory(window.data(), window.size(), arrivals, &mr).ok());

  BlockWriteArgs a;
  a.src = src.data();
  a.bytes = src.size();
  a.dst = {1, mr.remote_addr, mr.key, arrivals};
  a.offset = 100;
  a.max_chunk = 96;
  a.completion = done;
  std::vector<TriggeredOp> ops(BlockWriteOpCount(a));
  ASSERT_EQ(ops.size(), 11u);
  BuildBlockWrite(a, ops.data());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].kind, OpKind::kPut);
    EXPECT_EQ(ops[i].trigger, kNoCounter) << "a put goes at once";
    EXPECT_EQ(ops[i].bytes, i + 1 < ops.size() ? 96u : 40u);
    EXPECT_EQ(ops[i].remote_addr, mr.remote_addr + 100 + 96 * i);
    EXPECT_EQ(ops[i].local_buf, src.data() + 96 * i);
  }
  ASSERT_TRUE(n.origin.Post(ops).ok());
  n.world->fw().RunUntilIdle();

  EXPECT_EQ(n.target.ReadCounter(arrivals), 11u);
  EXPECT_EQ(n.origin.ReadCounter(done), 11u);
  EXPECT_EQ(std::vector<std::uint8_t>(window.begin() + 100, window.begin() + 1100), src);
  EXPECT_EQ(window[99], 0xee) << "wrote before its offset";
  EXPECT_EQ(window[1100], 0xee) << "wrote past its block";
}

TEST(RmaEpochOps, UncountedBlockWriteNamesNoTargetCounter) {
  BlockWriteArgs a;
  a.bytes = 8;
  a.dst = {1, 4096, 7, kNoCounter};
  TriggeredOp op[1];
  BuildBlockWrite(a, op);
  EXPECT_EQ(op[0].target_counter, kNoCounter);
  EXPECT_EQ(op[0].remote_key, 7u);
  EXPECT_EQ(op[0].peer, 1);
}

TEST(RmaEpochOps, GatedSignalWriteLandsInItsSlotOnlyAtItsThreshold) {
  TwoNics n;
  CounterId signals, gate, done;
  ASSERT_TRUE(n.target.AllocCounters(1, &signals).ok());
  ASSERT_TRUE(n.origin.AllocCounters(1, &gate).ok());
  ASSERT_TRUE(n.origin.AllocCounters(1, &done).ok());
  std::vector<std::uint64_t> slots(3, 0);
  MemRegion mr;
  ASSERT_TRUE(n.target.RegisterMemory(slots.data(), 3 * 8, signals, &mr).ok());
  const std::uint64_t word = 41;

  SignalWriteArgs a;
  a.word = &word;
  a.slots = {1, mr.remote_addr, mr.key, signals};
  a.slot = 2;
  a.gate = gate;
  a.threshold = 2;
  a.completion = done;
  const TriggeredOp op[1] = {BuildSignalWrite(a)};
  ASSERT_TRUE(n.origin.Post(op).ok());
  ASSERT_TRUE(n.origin.AddCounter(gate, 1).ok());
  n.world->fw().RunUntilIdle();
  EXPECT_EQ(slots[2], 0u) << "fired below its threshold";
  EXPECT_EQ(n.target.ReadCounter(signals), 0u);

  ASSERT_TRUE(n.origin.AddCounter(gate, 1).ok());
  n.world->fw().RunUntilIdle();
  EXPECT_EQ(slots, (std::vector<std::uint64_t>{0, 0, 41}));
  EXPECT_EQ(n.target.ReadCounter(signals), 1u);
  EXPECT_EQ(n.origin.ReadCounter(done), 1u);
}

}  // namespace
}  // namespace nicq::offload
