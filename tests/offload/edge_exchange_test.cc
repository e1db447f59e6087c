// The edge-exchange builder (offload/algorithms/edge_exchange.h) on the
// simulator with many ranks in one process: an alltoallv-like exchange with
// blocks of different sizes, empty edges, null edges, a put to the rank
// itself, and pack / unpack host steps on some ranks; data checked every
// epoch, and every rank's counters at rest afterwards.
#include "offload/algorithms/edge_exchange.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "offload/algorithms/gather_fold.h"
#include "offload/trigger_plan.h"
#include "providers/sim/sim_backend.h"

namespace nicq::offload {
namespace {

constexpr int kRanks = 24;
constexpr int kEpochs = 5;

// Words rank r sends rank j: 0 (an empty edge) on every third pair.
std::size_t Words(int r, int j) {
  return std::size_t((r + 2 * j) % 3) * 2;
}
// A word of epoch e's block from r to j.
std::uint64_t Value(int e, int r, int j, std::size_t i) {
  return std::uint64_t(e) << 48 | std::uint64_t(r) << 32 | std::uint64_t(j) << 16 | i;
}
bool Packs(int r) {
  return r % 4 == 1;
}  // sends from a host-packed copy
bool Unpacks(int r) {
  return r % 5 == 2;
}  // receives into scratch, then a host step

// One rank's buffers. Its "user" send data is one block per destination,
// stored back to front (block for rank 0 last) so a packing rank's host step
// has something to reorder; its receive buffer holds the blocks in source
// order.
struct RankData {
  std::vector<std::uint64_t> user;     // send blocks, reversed order of destinations
  std::vector<std::size_t> user_at;    // per destination: word offset in `user`
  std::vector<std::uint64_t> packed;   // Packs(): the blocks in destination order
  std::vector<std::size_t> packed_at;  // per destination: word offset in `packed`
  std::vector<std::uint64_t> landing;  // Unpacks(): where the blocks land
  std::vector<std::uint64_t> recv;     // the result, blocks in source order
  std::vector<std::size_t> recv_at;    // per source: word offset in recv (and landing)
  int pack_runs = 0, unpack_runs = 0;
};

// Copies block j of the reversed user area into destination order.
void PackBlocks(void* arg) {
  RankData* d = static_cast<RankData*>(arg);
  for (std::size_t j = 0; j < d->packed_at.size(); ++j) {
    const std::size_t n = j + 1 < d->packed_at.size() ? d->packed_at[j + 1] - d->packed_at[j]
                                                      : d->packed.size() - d->packed_at[j];
    for (std::size_t i = 0; i < n; ++i) d->packed[d->packed_at[j] + i] = d->user[d->user_at[j] + i];
  }
  ++d->pack_runs;
}

void UnpackBlocks(void* arg) {
  RankData* d = static_cast<RankData*>(arg);
  std::copy(d->landing.begin(), d->landing.end(), d->recv.begin());
  ++d->unpack_runs;
}

TEST(EdgeExchange, ManyRanksUnevenBlocksPackAndUnpack) {
  auto world = sim::SimWorld::Make(fwsim::LogGP{}, kRanks);
  std::vector<std::unique_ptr<sim::SimBackend>> nic;
  std::vector<RankData> data(kRanks);
  std::vector<std::unique_ptr<TriggerPlan>> plan(kRanks);
  for (int r = 0; r < kRanks; ++r) nic.push_back(std::make_unique<sim::SimBackend>(world, r));

  for (int r = 0; r < kRanks; ++r) {
    RankData& d = data[r];
    // Send side: blocks stored for destinations kRanks-1 .. 0.
    d.user_at.assign(kRanks, 0);
    std::size_t at = 0;
    for (int j = kRanks - 1; j >= 0; --j) {
      d.user_at[j] = at;
      at += Words(r, j);
    }
    d.user.assign(at + 1, 0);  // + 1: never empty
    d.packed_at.assign(kRanks, 0);
    at = 0;
    for (int j = 0; j < kRanks; ++j) {
      d.packed_at[j] = at;
      at += Words(r, j);
    }
    d.packed.assign(at, 0);
    // Receive side: the block from source i at the sum of the earlier ones.
    d.recv_at.assign(kRanks, 0);
    at = 0;
    for (int i = 0; i < kRanks; ++i) {
      d.recv_at[i] = at;
      at += Words(i, r);
    }
    d.recv.assign(at + 1, 0);
    d.landing.assign(at + 1, 0);
  }

  for (int r = 0; r < kRanks; ++r) {
    RankData& d = data[r];
    EdgeExchangeArgs x;
    x.self = r;
    for (int i = 0; i < kRanks; ++i) {
      x.sources.push_back(i);
      x.recv_bytes.push_back(Words(i, r) * 8);
    }
    x.sources.push_back(-1);  // MPI_PROC_NULL in-edge
    x.recv_bytes.push_back(64);
    for (int j = 0; j < kRanks; ++j) {
      x.destinations.push_back(j);
      x.send_bytes.push_back(Words(r, j) * 8);
      x.send_blocks.push_back(Packs(r) ? d.packed.data() + d.packed_at[j]
                                       : d.user.data() + d.user_at[j]);
      x.send_packed.push_back(Packs(r));
      x.remote_offset.push_back(data[j].recv_at[r] * 8);
    }
    x.destinations.push_back(-1);  // MPI_PROC_NULL out-edge
    x.send_bytes.push_back(64);
    x.send_blocks.push_back(d.user.data());
    x.send_packed.push_back(false);
    x.remote_offset.push_back(0);
    x.recv_len = d.recv.size() * 8;
    x.recvbuf = Unpacks(r) ? d.landing.data() : d.recv.data();
    if (Packs(r)) x.pack = HostStepSpec{&PackBlocks, &d, "pack"};
    if (Unpacks(r)) x.unpack = HostStepSpec{&UnpackBlocks, &d, "unpack"};
    Schedule s("edge exchange test");
    ASSERT_TRUE(BuildEdgeExchange(x, &s).ok());
    ASSERT_TRUE(s.Validate().ok()) << s.Validate().message();
    // The simulator runs a host step as soon as it fires, so the order the
    // plan guarantees is checked on its shape: every put waits on the pack
    // step and, when it goes to another rank, on the "ready" tokens.
    StepId pack = ~StepId{0};
    for (StepId i = 0; i < s.steps().size(); ++i)
      if (s.steps()[i].kind == StepKind::kHost && s.steps()[i].label == "pack") pack = i;
    ASSERT_EQ(pack != ~StepId{0}, Packs(r)) << "rank " << r;
    for (const Step& st : s.steps()) {
      if (st.kind != StepKind::kPut) continue;
      if (Packs(r))
        EXPECT_NE(std::find(st.deps.begin(), st.deps.end(), pack), st.deps.end())
            << "rank " << r << ": " << st.label << " does not wait on the pack step";
      if (st.rbuf.peer != r)
        EXPECT_EQ(st.wait_counter, PlanCounter{0}) << "rank " << r << ": " << st.label;
    }
    ASSERT_TRUE(Lower(s, &plan[r]).ok());
    // Puts and ready tokens need only leave: their receivers count the
    // landings (docs/triggered-semantics.md clause 4.2), so the lowered ops
    // ask for source completion, which the emulated backend injects.
    int tokens = 0;
    for (const TriggeredOp& op : plan[r]->ops()) {
      if (op.kind != OpKind::kPut && op.kind != OpKind::kRemoteCounterAdd) continue;
      tokens += op.kind == OpKind::kRemoteCounterAdd;
      EXPECT_TRUE(op.source_completion)
          << "rank " << r << ": " << OpKindName(op.kind) << " to " << op.peer;
    }
    int live_sources = 0;
    for (int i = 0; i < kRanks; ++i) live_sources += i != r && Words(i, r) > 0;
    EXPECT_EQ(tokens, live_sources) << "rank " << r << ": one token per other live source";
    ASSERT_TRUE(plan[r]->Bind(nic[r].get()).ok());
  }
  std::vector<PlanExports> exports;
  for (int r = 0; r < kRanks; ++r) exports.push_back(plan[r]->Exports());
  auto lookup = [&](PeerId p) { return &exports[p]; };
  for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(plan[r]->Resolve(lookup).ok());

  for (int e = 0; e < kEpochs; ++e) {
    for (int r = 0; r < kRanks; ++r)
      for (int j = 0; j < kRanks; ++j)
        for (std::size_t i = 0; i < Words(r, j); ++i)
          data[r].user[data[r].user_at[j] + i] = Value(e, r, j, i);
    // Start in reverse rank order: a put must wait for its receiver's token.
    for (int r = kRanks - 1; r >= 0; --r) ASSERT_TRUE(plan[r]->Start().ok());
    for (int r = 0; r < kRanks; ++r) ASSERT_TRUE(plan[r]->Wait().ok()) << "rank " << r;
    for (int r = 0; r < kRanks; ++r) {
      const RankData& d = data[r];
      for (int i = 0; i < kRanks; ++i)
        for (std::size_t k = 0; k < Words(i, r); ++k)
          ASSERT_EQ(d.recv[d.recv_at[i] + k], Value(e, i, r, k))
              << "epoch " << e << " rank " << r << " block from " << i << " word " << k;
      EXPECT_EQ(d.pack_runs, Packs(r) ? e + 1 : 0) << "rank " << r;
      EXPECT_EQ(d.unpack_runs, Unpacks(r) ? e + 1 : 0) << "rank " << r;
    }
  }
}

TEST(EdgeExchange, RefusesListsOfDifferentLengths) {
  EdgeExchangeArgs x;
  x.destinations = {1, 2};
  x.send_bytes = {8};
  x.send_blocks = {nullptr, nullptr};
  x.remote_offset = {0, 0};
  Schedule s("bad");
  EXPECT_EQ(BuildEdgeExchange(x, &s).code(), Code::kArg);
}

}  // namespace
}  // namespace nicq::offload

namespace nicq::offload {
namespace {

void NoStep(void*) {}

// The host-fold plan's contributions, results and tokens need only leave
// too: the root counts the contributions, each rank its result, and every
// put that a token gates is what its sender's epoch waits for.
TEST(GatherFold, PutsAndTokensAskOnlyForSourceCompletion) {
  constexpr int kSize = 4, kRoot = 1;
  const PeerId peers[kSize] = {0, 1, 2, 3};
  std::vector<std::uint64_t> slots(kSize), result(1), input(1);
  for (int rank = 0; rank < kSize; ++rank) {
    GatherFoldArgs a;
    a.rank = rank;
    a.size = kSize;
    a.root = kRoot;
    a.peers = peers;
    a.bytes = 8;
    a.contribution = input.data();
    a.landing = result.data();
    a.landing_bytes = 8;
    a.slots = slots.data();
    a.fold = HostStepSpec{&NoStep, nullptr, "fold"};
    a.result_from.assign(kSize, result.data());
    a.result_bytes.assign(kSize, 8);
    Schedule s("gather fold test");
    ASSERT_TRUE(BuildGatherFold(a, &s).ok());
    std::unique_ptr<TriggerPlan> plan;
    ASSERT_TRUE(Lower(s, &plan).ok());
    int puts = 0, tokens = 0;
    for (const TriggeredOp& op : plan->ops()) {
      if (op.kind != OpKind::kPut && op.kind != OpKind::kRemoteCounterAdd) continue;
      (op.kind == OpKind::kPut ? puts : tokens) += 1;
      EXPECT_TRUE(op.source_completion)
          << "rank " << rank << ": " << OpKindName(op.kind) << " to " << op.peer;
    }
    EXPECT_EQ(puts, rank == kRoot ? kSize - 1 : 1) << "rank " << rank;
    EXPECT_EQ(tokens, rank == kRoot ? kSize - 1 : 0) << "rank " << rank;
  }
}

}  // namespace
}  // namespace nicq::offload
