// cxi_persona: which counting events advance without software (RMA, AMO,
// sends below the rendezvous threshold) and which only in the app's calls
// (message receives, rendezvous sends); deferred sends and receives.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/providers/persona/cxi_persona_fixture.h"

namespace nicq::persona_test {
namespace {

TEST_F(CxiPersona, DeferredReceiveOnlyAtThresholdZero) {
  open_pair();
  fid_cntr* trig = b.cntr();
  fid_cntr* done = b.cntr();
  enable_pair();
  static char rbuf[16];
  static const char sbuf[16] = "deferred recv";
  std::memset(rbuf, 0, sizeof rbuf);
  iovec iov{rbuf, sizeof rbuf};
  fi_op_tagged op{};
  op.ep = b.ep;
  op.msg.msg_iov = &iov;
  op.msg.iov_count = 1;
  op.msg.addr = FI_ADDR_UNSPEC;
  op.msg.tag = 7;
  fi_deferred_work w{};
  op.msg.context = &w.context;
  w.triggering_cntr = trig;
  w.completion_cntr = done;
  w.op_type = FI_OP_TRECV;
  w.op.tagged = &op;
  w.threshold = 1;
  EXPECT_EQ(fi_control(&b.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);
  w.threshold = 0;
  ASSERT_EQ(fi_control(&b.domain->fid, FI_QUEUE_WORK, &w), 0);
  ASSERT_EQ(fi_tsend(a.ep, sbuf, sizeof sbuf, nullptr, a_to_b, 7, nullptr), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(a.complete(&e), 0);
  ASSERT_EQ(fi_cntr_wait(done, 1, 5000), 0);
  EXPECT_STREQ(rbuf, "deferred recv");
  fi_close(&b.ep->fid);
  b.ep = nullptr;
  fi_close(&trig->fid);
  fi_close(&done->fid);
}

TEST_F(CxiPersona, DeferredWorkValidation) {
  open_pair();
  fid_cntr* trig = a.cntr();
  fid_cntr* other = a.cntr();
  enable_pair();
  fi_op_cntr op{other, 1};
  fi_deferred_work w{};
  w.threshold = 5;
  w.triggering_cntr = trig;
  w.op_type = FI_OP_CNTR_ADD;
  w.op.cntr = &op;
  w.completion_cntr = other;  // cxip_dom_dwq_op_cntr: must be NULL
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);
  w.completion_cntr = nullptr;
  w.triggering_cntr = nullptr;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);
  w.triggering_cntr = trig;
  const int not_an_op = 42;  // what a C caller can store; not a valid enum value in C++
  std::memcpy(&w.op_type, &not_an_op, sizeof w.op_type);
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);
  w.op_type = FI_OP_CNTR_ADD;
  ASSERT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), 0);
  EXPECT_EQ(fi_cntr_read(other), 0u);
  fi_cntr_add(trig, 5);
  EXPECT_TRUE(eventually([&] { return fi_cntr_read(other) == 1; }));
  fi_close(&a.ep->fid);
  a.ep = nullptr;
  fi_close(&trig->fid);
  fi_close(&other->fid);
}

TEST_F(CxiPersona, DeferredSendFiresOnItsCounter) {
  open_pair();
  fid_cntr* trig = a.cntr();
  enable_pair();
  static char rbuf[16];
  static char sbuf[16] = "deferred tsend";
  std::memset(rbuf, 0, sizeof rbuf);
  iovec iov{sbuf, sizeof sbuf};
  fi_op_tagged op{};
  op.ep = a.ep;
  op.msg.msg_iov = &iov;
  op.msg.iov_count = 1;
  op.msg.addr = a_to_b;
  op.msg.tag = 9;
  op.flags = FI_COMPLETION;
  int app_ctx = 0;
  op.msg.context = &app_ctx;
  fi_deferred_work w{};
  w.threshold = 1;
  w.triggering_cntr = trig;
  w.op_type = FI_OP_TSEND;
  w.op.tagged = &op;
  ASSERT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), 0);
  ASSERT_EQ(fi_trecv(b.ep, rbuf, sizeof rbuf, nullptr, FI_ADDR_UNSPEC, 9, 0, nullptr), 0);
  fi_cq_tagged_entry e{};
  EXPECT_EQ(b.complete(&e, nullptr, 300), -FI_EAGAIN);  // not yet triggered
  ASSERT_EQ(fi_cntr_add(trig, 1), 0);
  ASSERT_EQ(b.complete(&e), 0);
  EXPECT_STREQ(rbuf, "deferred tsend");
  ASSERT_EQ(a.complete(&e), 0);
  EXPECT_EQ(e.op_context, &app_ctx);  // the app's context, not the persona's
  fi_close(&a.ep->fid);
  a.ep = nullptr;
  fi_close(&trig->fid);
}

TEST_F(CxiPersona, ReceiveCounterAdvancesOnlyInAppCalls) {
  open_pair();
  fid_cntr* recv_cntr = b.cntr();
  ASSERT_EQ(fi_ep_bind(b.ep, &recv_cntr->fid, FI_RECV), 0);
  enable_pair();
  FlagWrite fw;
  ASSERT_EQ(fw.queue(b, recv_cntr, 1), 0);
  static char rbuf[8];
  static const char sbuf[8] = "msg";
  ASSERT_EQ(fi_recv(b.ep, rbuf, sizeof rbuf, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep, sbuf, sizeof sbuf, nullptr, a_to_b, nullptr), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(a.complete(&e), 0);
  // The message has arrived (sockets delivers it), but nobody called into
  // B's domain: the receive counting event has not reached the counter, so
  // the deferred write gated on it has not fired.
  EXPECT_TRUE(eventually([&] { return std::strcmp(rbuf, "msg") == 0; }));
  nap_us(200000);
  EXPECT_EQ(fw.flag, 0u);
  // An app call on B's domain progresses it.
  EXPECT_EQ(fi_cntr_read(recv_cntr), 1u);
  EXPECT_TRUE(eventually([&] { return fw.flag == 0x77; }));
  fi_close(&b.ep->fid);
  b.ep = nullptr;
  fw.close();
  fi_close(&recv_cntr->fid);
}

// A send's counter, with a deferred write gated on it; the send is done
// once B has the data (B's calls only); true when the write fired before
// A made any further call.
class CxiPersonaSend : public CxiPersona {
 protected:
  bool counter_fires_without_a_call(size_t len) {
    open_pair();
    fid_cntr* sent = a.cntr();
    EXPECT_EQ(fi_ep_bind(a.ep, &sent->fid, FI_SEND), 0);
    enable_pair();
    FlagWrite fw;
    EXPECT_EQ(fw.queue(a, sent, 1), 0);
    std::vector<char> sbuf(len, 's'), rbuf(len, 0);
    int ctx = 0;
    EXPECT_EQ(fi_recv(b.ep, rbuf.data(), len, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    EXPECT_EQ(fi_send(a.ep, sbuf.data(), len, nullptr, a_to_b, &ctx), 0);
    fi_cq_tagged_entry e{};
    EXPECT_EQ(b.complete(&e), 0);
    EXPECT_EQ(rbuf, sbuf);
    const bool fired = eventually([&] { return fw.flag == 0x77; }, 300);
    // Any call on A's domain completes the send: counter, write, CQ entry.
    EXPECT_EQ(a.complete(&e), 0);
    EXPECT_EQ(e.op_context, &ctx);
    EXPECT_EQ(fi_cntr_read(sent), 1u);
    EXPECT_TRUE(eventually([&] { return fw.flag == 0x77; }));
    fi_close(&a.ep->fid);
    a.ep = nullptr;
    fw.close();
    fi_close(&sent->fid);
    return fired;
  }
};

TEST_F(CxiPersonaSend, SendBelowRendezvousCountsWithoutSoftware) {
  EXPECT_TRUE(counter_fires_without_a_call(1024));
}

TEST_F(CxiPersonaSend, RendezvousSendCountsOnlyInAppCalls) {
  EXPECT_FALSE(counter_fires_without_a_call(64 * 1024));
}

TEST_F(CxiPersona, DeferredRendezvousSendCountsItsCompletionCounterInAppCalls) {
  open_pair();
  fid_cntr* trig = a.cntr();
  fid_cntr* done = a.cntr();
  enable_pair();
  FlagWrite fw;
  ASSERT_EQ(fw.queue(a, done, 1), 0);
  std::vector<char> sbuf(64 * 1024, 'd'), rbuf(64 * 1024, 0);
  iovec iov{sbuf.data(), sbuf.size()};
  fi_op_tagged op{};
  op.ep = a.ep;
  op.msg.msg_iov = &iov;
  op.msg.iov_count = 1;
  op.msg.addr = a_to_b;
  op.msg.tag = 3;
  fi_deferred_work w{};
  op.msg.context = &w.context;
  w.threshold = 1;
  w.triggering_cntr = trig;
  w.completion_cntr = done;  // not the endpoint's counter: fine past the threshold
  w.op_type = FI_OP_TSEND;
  w.op.tagged = &op;
  ASSERT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), 0);
  ASSERT_EQ(fi_trecv(b.ep, rbuf.data(), rbuf.size(), nullptr, FI_ADDR_UNSPEC, 3, 0, nullptr), 0);
  ASSERT_EQ(fi_cntr_add(trig, 1), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(b.complete(&e), 0);
  EXPECT_EQ(rbuf, sbuf);
  nap_us(200000);
  EXPECT_EQ(fw.flag, 0u);
  EXPECT_EQ(fi_cntr_read(done), 1u);
  EXPECT_TRUE(eventually([&] { return fw.flag == 0x77; }));
  fi_close(&a.ep->fid);
  a.ep = nullptr;
  fw.close();
  fi_close(&trig->fid);
  fi_close(&done->fid);
}

// fi_cxi(7) "Counters": an eager send is counted by the NIC on whatever
// completion counter its deferred work names, and work chained on that
// counter fires, with no call on the sender's domain.
TEST_F(CxiPersona, DeferredEagerSendCountsItsOwnCounterWithoutSoftware) {
  open_pair();
  fid_cntr* trig = a.cntr();
  fid_cntr* done = a.cntr();
  enable_pair();
  FlagWrite fw;
  ASSERT_EQ(fw.queue(a, done, 2), 0);
  std::vector<char> sbuf(1024, 'e'), rbuf(1024, 0), rbuf2(1024, 0);
  iovec iov{sbuf.data(), sbuf.size()};
  fi_op_tagged op{};
  op.ep = a.ep;
  op.msg.msg_iov = &iov;
  op.msg.iov_count = 1;
  op.msg.addr = a_to_b;
  op.msg.tag = 4;
  op.flags = FI_COMPLETION;
  int app_ctx = 0;
  op.msg.context = &app_ctx;
  fi_deferred_work w{}, w2{};
  w.threshold = 1;
  w.triggering_cntr = trig;
  w.completion_cntr = done;  // not the endpoint's send counter
  w.op_type = FI_OP_TSEND;
  w.op.tagged = &op;
  ASSERT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), 0);
  // A second send chained on the first one's completion counter.
  w2 = w;
  w2.triggering_cntr = done;
  w2.threshold = 1;
  ASSERT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w2), 0);
  ASSERT_EQ(fi_trecv(b.ep, rbuf.data(), rbuf.size(), nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr), 0);
  ASSERT_EQ(fi_trecv(b.ep, rbuf2.data(), rbuf2.size(), nullptr, FI_ADDR_UNSPEC, 4, 0, nullptr), 0);
  ASSERT_EQ(fi_cntr_add(trig, 1), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(b.complete(&e), 0);
  ASSERT_EQ(b.complete(&e), 0);
  EXPECT_EQ(rbuf, sbuf);
  EXPECT_EQ(rbuf2, sbuf);
  // No call on A's domain from here: both sends counted, the write fired.
  EXPECT_TRUE(eventually([&] { return fw.flag == 0x77; }));
  EXPECT_EQ(fi_cntr_read(done), 2u);
  ASSERT_EQ(a.complete(&e), 0);
  EXPECT_EQ(e.op_context, &app_ctx);  // the app's context, reported in its call
  ASSERT_EQ(a.complete(&e), 0);
  EXPECT_EQ(e.op_context, &app_ctx);
  fi_close(&a.ep->fid);
  a.ep = nullptr;
  fw.close();
  fi_close(&trig->fid);
  fi_close(&done->fid);
}

TEST_F(CxiPersona, RemoteWriteCounterAdvancesWhileTargetSleeps) {
  open_pair();
  fid_cntr* arrivals = b.cntr();
  enable_pair();
  alignas(64) static uint64_t target = 0;
  alignas(64) static uint64_t src = 5;
  fid_mr* tmr = b.reg(&target, sizeof target, FI_REMOTE_WRITE, 0, true, FI_RMA_EVENT, arrivals);
  ASSERT_NE(tmr, nullptr);
  FlagWrite fw;
  ASSERT_EQ(fw.queue(b, arrivals, 1), 0);
  fid_mr* smr = a.reg(&src, sizeof src, FI_WRITE);
  ASSERT_EQ(fi_write(a.ep, &src, sizeof src, fi_mr_desc(smr), a_to_b, 0, fi_mr_key(tmr), nullptr),
            0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(a.complete(&e), 0);
  // No call into B's domain from here on: the NIC counts RMA arrivals itself.
  EXPECT_TRUE(eventually([&] { return fw.flag == 0x77; }));
  EXPECT_EQ(target, 5u);
  fi_close(&smr->fid);
  fi_close(&b.ep->fid);
  b.ep = nullptr;
  fi_close(&tmr->fid);
  fw.close();
  fi_close(&arrivals->fid);
}

}  // namespace
}  // namespace nicq::persona_test
