// Example 13.1 of the Queued Communication chapter on the simulator with 64
// ranks in one process: each rank's four matched requests (receive from left
// and right, send to left and right) and its queue post exactly the ops that
// MatchedP2p and Queue post (offload/algorithms/persistent_p2p.h and
// enqueued_wait.h), iteration by iteration in the example's order (startall
// receives, startall sends, waitall), then the "fence" runs the simulation
// until every queue counter reached its last wait. Data are checked every
// iteration: each send buffer holds values of (rank, direction, iteration),
// rewritten by a host step that the queue orders after the previous
// iteration's waits, as the example's "pack" step.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "offload/algorithms/enqueued_wait.h"
#include "offload/algorithms/persistent_p2p.h"
#include "providers/sim/sim_backend.h"

namespace nicq::queue {
namespace {

using offload::BuildEpochOps;
using offload::BuildWaitAllOps;
using offload::CounterId;
using offload::kNoCounter;
using offload::P2pWire;
using offload::TriggeredOp;
using offload::WaitTarget;

constexpr int kN = 32;  // doubles per message (the example uses 1024)

double Value(int rank, int dir, std::uint64_t iter, int i) {
  return rank * 1e6 + dir * 1e5 + double(iter) * 100 + i;
}

struct Req {
  P2pWire w;
  std::uint64_t epochs = 0;
};

// Join counters per rank, each reused only after its wait completed (Queue
// keeps a growing pool; a fixed ring is enough for these patterns).
constexpr std::size_t kJoins = 32;

struct Rank {
  std::unique_ptr<sim::SimBackend> b;
  CounterId qc = kNoCounter;
  std::uint64_t k = 0;  // waits enqueued on the queue
  std::array<CounterId, kJoins> joins{};
  std::array<std::uint64_t, kJoins> join_total{}, join_free_at{};
  std::uint64_t next_join = 0;
  std::array<std::vector<double>, 2> recv, send;  // [0] left, [1] right
  std::array<offload::MemRegion, 2> region{};
  std::array<Req, 4> req;  // recv left, recv right, send left, send right (as the example)
  int self = 0;
  CounterId packed = kNoCounter;  // completions of the pack steps
  std::uint64_t packed_iter = 0;
};

// Host step: pack the send buffers for the next iteration (runs when the
// queue's previous waits are done, so no send of that buffer is in flight).
struct PackArg {
  Rank* r;
  std::uint64_t iter;
};
void Pack(void* arg) {
  auto* p = static_cast<PackArg*>(arg);
  for (int dir = 0; dir < 2; ++dir)
    for (int i = 0; i < kN; ++i) p->r->send[dir][i] = Value(p->r->self, dir, p->iter, i);
  p->r->packed_iter = p->iter;
}

class SimExample : public ::testing::TestWithParam<bool> {
 protected:
  void Build(int size) {
    world_ = sim::SimWorld::Make(fwsim::LogGP{}, std::size_t(size));
    ranks_.resize(size);
    for (int r = 0; r < size; ++r) {
      Rank& R = ranks_[r];
      R.self = r;
      R.b = std::make_unique<sim::SimBackend>(world_, std::uint32_t(r));
      ASSERT_TRUE(R.b->AllocCounters(1, &R.qc).ok());
      ASSERT_TRUE(R.b->AllocCounters(1, &R.packed).ok());
      ASSERT_TRUE(R.b->AllocCounters(kJoins, R.joins.data()).ok());
      for (int d = 0; d < 2; ++d) {
        R.recv[d].assign(kN, -1.0);
        R.send[d].assign(kN, 0.0);
      }
      for (int i = 0; i < 4; ++i) {
        Req& q = R.req[i];
        const bool send = i >= 2;
        CounterId c[2];
        ASSERT_TRUE(R.b->AllocCounters(send ? 2 : 1, c).ok());
        q.w.role = send ? P2pWire::Role::kSend : P2pWire::Role::kRecv;
        q.w.done = c[0];
        if (send) q.w.gate = c[1];
        q.w.peer = i % 2 == 0 ? (r - 1 + size) % size : (r + 1) % size;
      }
      for (int d = 0; d < 2; ++d)
        ASSERT_TRUE(R.b->RegisterMemory(R.recv[d].data(), kN * sizeof(double), R.req[d].w.done,
                                        &R.region[d])
                        .ok());
    }
    // The match: send_right of r pairs with recv_left of right, send_left of
    // r with recv_right of left (tag 0, one pair per direction).
    for (int r = 0; r < size; ++r) {
      for (int dir = 0; dir < 2; ++dir) {
        Rank& S = ranks_[r];
        Req& send = S.req[2 + dir];
        Rank& T = ranks_[send.w.peer];
        Req& recv = T.req[1 - dir];  // sending right lands in the peer's left buffer
        send.w.buf = S.send[dir].data();
        send.w.bytes = kN * sizeof(double);
        send.w.peer_arrival = recv.w.done;
        send.w.remote_addr = T.region[1 - dir].remote_addr;
        send.w.remote_key = T.region[1 - dir].key;
        recv.w.peer_gate = send.w.gate;
        recv.w.peer_done = send.w.done;
      }
    }
  }

  // Queue::EnqueueStart -> MatchedP2p::StartGated (gated on the queue
  // counter; a send after a pack step on that step's completion instead).
  void EnqueueStart(Rank& R, Req& q, bool after_pack = false) {
    const std::uint64_t n = q.epochs + 1;
    CounterId gate = after_pack ? R.packed : R.qc;
    const std::uint64_t threshold = after_pack ? n : R.k;
    if (R.b->ReadCounter(gate) >= threshold) gate = kNoCounter;  // gate already reached
    TriggeredOp* ops = Keep(2);
    CounterId host_add = kNoCounter;
    const std::size_t count = BuildEpochOps(q.w, n, gate, threshold, ops, &host_add);
    if (count) Post(R, {ops, count});
    q.epochs = n;
    if (host_add != kNoCounter) {
      ASSERT_TRUE(R.b->AddCounter(host_add, 1).ok());
    }
  }

  // Queue::EnqueueWaitAll for the four requests (MPI_Enqueue_waitall).
  void EnqueueWaitAll(Rank& R) {
    const std::size_t j = R.next_join++ % kJoins;
    // The join's previous wait must be done (Queue's backpressure).
    Status s = R.b->WaitCounter(R.qc, R.join_free_at[j], -1);
    ASSERT_TRUE(s.ok()) << s.message();
    WaitTarget t[4];
    for (int i = 0; i < 4; ++i) t[i] = {R.req[i].w.done, R.req[i].epochs};
    // The four starts of this iteration were enqueued after the previous
    // iteration's waits (gate qc >= R.k): the gate is implied, as in Queue.
    const std::uint64_t target = R.join_total[j] + 4;
    TriggeredOp* ops = Keep(6);
    const std::size_t n =
        BuildWaitAllOps({t, 4}, R.joins[j], target, R.qc, R.k, true, GetParam(), 16, R.self, ops);
    ASSERT_EQ(n, 5u);
    Post(R, {ops, n});
    R.join_total[j] = target;
    R.join_free_at[j] = R.k + 4;
    R.k += 4;
  }

  // Queue::EnqueueWaitAll for one request (MPI_Enqueue_wait): after the
  // first wait of an iteration the starts were gated on an older queue
  // count, so the gate is not implied and the qc -> join op (and, with
  // the parameter, the doorbell back edge) is posted.
  void EnqueueWaitOne(Rank& R, Req& q, std::uint64_t start_gate) {
    const std::size_t j = R.next_join++ % kJoins;
    Status s = R.b->WaitCounter(R.qc, R.join_free_at[j], -1);
    ASSERT_TRUE(s.ok()) << s.message();
    const bool implied = start_gate == R.k;
    const WaitTarget t{q.w.done, q.epochs};
    const std::uint64_t target = R.join_total[j] + (implied ? 1 : 2);
    TriggeredOp* ops = Keep(3);
    const std::size_t n = BuildWaitAllOps({&t, 1}, R.joins[j], target, R.qc, R.k, implied,
                                          GetParam(), 16, R.self, ops);
    ASSERT_EQ(n, implied ? 2u : 3u);
    Post(R, {ops, n});
    R.join_total[j] = target;
    R.join_free_at[j] = R.k + 1;
    R.k += 1;
  }

  // A host step ordered after the queue's waits so far (the "pack" step).
  void EnqueuePack(Rank& R, std::uint64_t iter) {
    TriggeredOp* op = Keep(1);
    *op = TriggeredOp{};
    op->kind = offload::OpKind::kHost;
    op->trigger = R.qc;
    op->threshold = R.k;
    op->completion = R.packed;
    packs_.push_back(PackArg{&R, iter});
    op->host_fn = &Pack;
    op->host_arg = &packs_.back();
    Post(R, {op, 1});
  }

  void Post(Rank& R, std::span<const TriggeredOp> ops) {
    for (int tries = 0;; ++tries) {
      Status s = R.b->Post(ops);
      if (s.ok()) return;
      ASSERT_EQ(s.code(), Code::kAgain) << s.message();
      ASSERT_LT(tries, 1000000) << "trigger slots never freed";
      R.b->Progress();
    }
  }

  // Descriptors stay valid until their ops complete (backend contract).
  TriggeredOp* Keep(std::size_t n) {
    store_.emplace_back(n);
    return store_.back().data();
  }

  std::shared_ptr<sim::SimWorld> world_;
  std::vector<Rank> ranks_;
  std::deque<std::vector<TriggeredOp>> store_;
  std::deque<PackArg> packs_;
};

TEST_P(SimExample, RingOf64RanksHundredIterationsDataChecked) {
  constexpr int kSize = 64, kIters = 100;
  Build(kSize);
  for (int it = 1; it <= kIters; ++it) {
    for (Rank& R : ranks_) {
      EnqueueStart(R, R.req[0]);  // MPI_Enqueue_startall(queue, 2, &reqs[0])
      EnqueueStart(R, R.req[1]);
      EnqueuePack(R, std::uint64_t(it));  // "packing send buffers"
      EnqueueStart(R, R.req[2], true);    // MPI_Enqueue_startall(queue, 2, &reqs[2])
      EnqueueStart(R, R.req[3], true);
      EnqueueWaitAll(R);  // MPI_Enqueue_waitall(queue, 4, ...)
    }
    // "Fence" of this iteration, to check its data: everything completes
    // on the simulated NICs, the host only runs the pack steps.
    for (Rank& R : ranks_) {
      Status s = R.b->WaitCounter(R.qc, R.k, -1);
      ASSERT_TRUE(s.ok()) << "rank " << R.self << " iteration " << it << ": " << s.message();
    }
    for (Rank& R : ranks_) {
      ASSERT_EQ(R.packed_iter, std::uint64_t(it));
      const int left = (R.self - 1 + kSize) % kSize, right = (R.self + 1) % kSize;
      for (int i = 0; i < kN; ++i) {
        // recv_left holds left's send_right, recv_right holds right's send_left.
        ASSERT_EQ(R.recv[0][i], Value(left, 1, std::uint64_t(it), i))
            << "rank " << R.self << " iteration " << it;
        ASSERT_EQ(R.recv[1][i], Value(right, 0, std::uint64_t(it), i))
            << "rank " << R.self << " iteration " << it;
      }
    }
  }
  for (Rank& R : ranks_) {
    EXPECT_EQ(R.b->ReadCounter(R.qc), std::uint64_t(4 * kIters));
    for (Req& q : R.req) {
      EXPECT_EQ(q.epochs, std::uint64_t(kIters));
      EXPECT_EQ(R.b->ReadErrors(q.w.done), 0u);
    }
  }
}

// Without a per-iteration fence: all 100 iterations enqueued back to back
// (the example as written), one fence at the end.
TEST_P(SimExample, RingOf64RanksEnqueuedBackToBack) {
  constexpr int kSize = 64, kIters = 100;
  Build(kSize);
  for (int it = 1; it <= kIters; ++it) {
    for (Rank& R : ranks_) {
      EnqueueStart(R, R.req[0]);
      EnqueueStart(R, R.req[1]);
      EnqueueStart(R, R.req[2]);
      EnqueueStart(R, R.req[3]);
      EnqueueWaitAll(R);
    }
  }
  for (Rank& R : ranks_) {
    Status s = R.b->WaitCounter(R.qc, R.k, -1);
    ASSERT_TRUE(s.ok()) << "rank " << R.self << ": " << s.message();
    EXPECT_EQ(R.b->ReadCounter(R.qc), std::uint64_t(4 * kIters));
    for (Req& q : R.req) EXPECT_EQ(R.b->ReadCounter(q.w.done), std::uint64_t(kIters));
  }
}

// Four single waits per iteration (MPI_Enqueue_wait each): the first has
// its gate implied, the other three post the queue-gate op; all 100
// iterations back to back, then the data of the last one and the counters.
TEST_P(SimExample, RingOf64RanksSingleWaits) {
  constexpr int kSize = 64, kIters = 100;
  Build(kSize);
  for (Rank& R : ranks_)
    for (int d = 0; d < 2; ++d)
      for (int i = 0; i < kN; ++i) R.send[d][i] = Value(R.self, d, 0, i);
  for (int it = 1; it <= kIters; ++it) {
    for (Rank& R : ranks_) {
      const std::uint64_t gate = R.k;
      for (Req& q : R.req) EnqueueStart(R, q);
      for (Req& q : R.req) EnqueueWaitOne(R, q, gate);
    }
  }
  for (Rank& R : ranks_) {
    Status s = R.b->WaitCounter(R.qc, R.k, -1);
    ASSERT_TRUE(s.ok()) << "rank " << R.self << ": " << s.message();
    EXPECT_EQ(R.b->ReadCounter(R.qc), std::uint64_t(4 * kIters));
    for (Req& q : R.req) {
      EXPECT_EQ(R.b->ReadCounter(q.w.done), std::uint64_t(kIters));
      EXPECT_EQ(R.b->ReadErrors(q.w.done), 0u);
    }
  }
  for (Rank& R : ranks_) {
    const int left = (R.self - 1 + kSize) % kSize, right = (R.self + 1) % kSize;
    for (int i = 0; i < kN; ++i) {  // the send buffers hold iteration 0's values throughout
      ASSERT_EQ(R.recv[0][i], ranks_[left].send[1][i]) << "rank " << R.self;
      ASSERT_EQ(R.recv[1][i], ranks_[right].send[0][i]) << "rank " << R.self;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Queue, SimExample, ::testing::Values(false, true), [](const auto& info) {
  return info.param ? "BackEdgeDoorbell" : "BackEdgeCounterAdd";
});

}  // namespace
}  // namespace nicq::queue
