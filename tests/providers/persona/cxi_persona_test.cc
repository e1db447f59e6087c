// cxi_persona refuses what cxi refuses and accepts what cxi accepts
// (docs/provider-contracts.md, one test per rule).
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "providers/persona/persona_ext.h"

extern char** environ;
#include "tests/providers/persona/persona_fixture.h"

namespace nicq::persona_test {
namespace {

constexpr uint64_t kProvKeyMode = FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
constexpr uint64_t kCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_TRIGGER | FI_RMA_EVENT;

// A deferred RMA write on a node, from one 8-byte word into another word of
// the same node (through its own address), gated on a counter: when it
// fires, `flag` changes without any call from the test thread.
struct FlagWrite {
  alignas(64) uint64_t src = 0x77;
  alignas(64) volatile uint64_t flag = 0;
  fid_mr* src_mr = nullptr;
  fid_mr* flag_mr = nullptr;
  iovec iov{};
  void* desc = nullptr;
  fi_rma_iov riov{};
  fi_op_rma rma{};
  fi_deferred_work work{};

  int queue(Node& n, fid_cntr* trigger, uint64_t threshold) {
    src_mr = n.reg(&src, sizeof src, FI_WRITE);
    flag_mr = n.reg(const_cast<uint64_t*>(&flag), sizeof flag, FI_REMOTE_WRITE);
    if (!src_mr || !flag_mr) return -FI_EINVAL;
    iov = {&src, sizeof src};
    desc = fi_mr_desc(src_mr);
    riov = {0, sizeof flag, fi_mr_key(flag_mr)};  // no FI_MR_VIRT_ADDR: offset 0
    rma.ep = n.ep;
    rma.msg.msg_iov = &iov;
    rma.msg.desc = &desc;
    rma.msg.iov_count = 1;
    rma.msg.addr = n.self_addr;
    rma.msg.rma_iov = &riov;
    rma.msg.rma_iov_count = 1;
    rma.msg.context = &work.context;
    work.threshold = threshold;
    work.triggering_cntr = trigger;
    work.op_type = FI_OP_WRITE;
    work.op.rma = &rma;
    return fi_control(&n.domain->fid, FI_QUEUE_WORK, &work);
  }
  void close() {
    if (src_mr) fi_close(&src_mr->fid);
    if (flag_mr) fi_close(&flag_mr->fid);
  }
};

class CxiPersona : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> serial{0};
    service_ = "gtest_" + std::to_string(getpid()) + "_" + std::to_string(serial++);
    setenv("NICQ_PERSONA_SERVICE", service_.c_str(), 1);
    unsetenv("NICQ_PERSONA_DWQ_DEPTH");
    unsetenv("NICQ_PERSONA_TRIG_OP_LIMIT");
  }
  void TearDown() override {
    a.close();
    b.close();
    if (info_) fi_freeinfo(info_);
  }
  void open_pair(uint64_t mr_mode = kProvKeyMode) {
    ASSERT_EQ(get_info("cxi_persona", mr_mode, kCaps, &info_), 0);
    ASSERT_EQ(a.open(info_), 0);
    ASSERT_EQ(b.open(info_), 0);
  }
  void enable_pair() {
    ASSERT_EQ(a.enable(), 0);
    ASSERT_EQ(b.enable(), 0);
    a_to_b = a.insert_peer(b);
    b_to_a = b.insert_peer(a);
  }
  std::string service_;
  fi_info* info_ = nullptr;
  Node a, b;
  fi_addr_t a_to_b = FI_ADDR_UNSPEC, b_to_a = FI_ADDR_UNSPEC;
};

TEST_F(CxiPersona, InfoCarriesTheCxiContract) {
  ASSERT_EQ(get_info("cxi_persona", kProvKeyMode, kCaps, &info_), 0);
  int n = 0;
  for (fi_info* i = info_; i; i = i->next, n++) {
    EXPECT_STREQ(i->fabric_attr->prov_name, "cxi_persona");
    EXPECT_EQ(i->ep_attr->type, FI_EP_RDM);
    EXPECT_EQ(i->domain_attr->data_progress, FI_PROGRESS_MANUAL);
    EXPECT_EQ(i->domain_attr->control_progress, FI_PROGRESS_MANUAL);
    EXPECT_TRUE(i->domain_attr->mr_mode & FI_MR_ENDPOINT);
    EXPECT_FALSE(i->domain_attr->mr_mode & FI_MR_VIRT_ADDR);
    EXPECT_EQ(i->domain_attr->cq_data_size, 8u);
    EXPECT_EQ(i->caps & kCaps, kCaps);
  }
  ASSERT_GE(n, 2);
  // Provider keys first, then client keys (cxip_info.c order).
  EXPECT_TRUE(info_->domain_attr->mr_mode & FI_MR_PROV_KEY);
  EXPECT_FALSE(info_->next->domain_attr->mr_mode & FI_MR_PROV_KEY);
}

TEST_F(CxiPersona, HintsTheTargetRefusesGetNothing) {
  fi_info* i = nullptr;
  EXPECT_EQ(get_info("cxi_persona", FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR, 0, &i),
            -FI_ENODATA);
  EXPECT_EQ(get_info("cxi_persona", kProvKeyMode, 0, &i, FI_PROGRESS_AUTO), -FI_ENODATA);
  EXPECT_EQ(get_info("cxi_persona", kProvKeyMode, 0, &i, FI_PROGRESS_UNSPEC, FI_EP_MSG),
            -FI_ENODATA);
  ASSERT_EQ(get_info("cxi_persona", kProvKeyMode, 0, &i, FI_PROGRESS_MANUAL), 0);
  fi_freeinfo(i);
}

TEST_F(CxiPersona, ClientKeysAre32Bit) {
  open_pair(FI_MR_ENDPOINT | FI_MR_ALLOCATED);
  ASSERT_FALSE(a.info->domain_attr->mr_mode & FI_MR_PROV_KEY);
  alignas(64) static char buf[64];
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(a.domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, UINT32_MAX, 0, &mr, nullptr),
            0);
  EXPECT_EQ(fi_mr_key(mr), UINT32_MAX);
  fi_close(&mr->fid);
  fid_mr* big = nullptr;
  EXPECT_EQ(fi_mr_reg(a.domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, 1ull << 32, 0, &big, nullptr),
            -FI_EKEYREJECTED);
}

TEST_F(CxiPersona, ProviderKeysUseAll64Bits) {
  open_pair();
  alignas(64) static char buf[64];
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(a.domain, buf, sizeof buf, FI_REMOTE_WRITE, 0, 5, 0, &mr, nullptr), 0);
  EXPECT_GT(fi_mr_key(mr), uint64_t{UINT32_MAX});
  fi_close(&mr->fid);
}

TEST_F(CxiPersona, MrIsUsableOnlyOnceBoundAndEnabled) {
  open_pair();
  enable_pair();
  alignas(64) static uint64_t src = 0x1234;
  alignas(64) static uint64_t dst = 0;
  dst = 0;
  fid_mr* src_mr = a.reg(&src, sizeof src, FI_WRITE, 0, /*enable=*/false);
  ASSERT_NE(src_mr, nullptr);
  fid_mr* dst_mr = b.reg(&dst, sizeof dst, FI_REMOTE_WRITE, 0, /*enable=*/false);
  ASSERT_NE(dst_mr, nullptr);
  // Local descriptor of an MR not bound to the endpoint: refused.
  EXPECT_EQ(
      fi_write(a.ep, &src, sizeof src, fi_mr_desc(src_mr), a_to_b, 0, fi_mr_key(dst_mr), nullptr),
      -FI_EINVAL);
  // Enable before bind: refused.
  EXPECT_EQ(fi_mr_enable(src_mr), -FI_EINVAL);
  ASSERT_EQ(fi_mr_bind(src_mr, &a.ep->fid, 0), 0);
  ASSERT_EQ(fi_mr_enable(src_mr), 0);
  // Remote MR not enabled: the put fails at the target.
  ASSERT_EQ(
      fi_write(a.ep, &src, sizeof src, fi_mr_desc(src_mr), a_to_b, 0, fi_mr_key(dst_mr), nullptr),
      0);
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  EXPECT_EQ(a.complete(&e, &err), -FI_EAVAIL);
  EXPECT_NE(err.err, 0);
  EXPECT_EQ(dst, 0u);
  // Bound and enabled: the put lands.
  ASSERT_EQ(fi_mr_bind(dst_mr, &b.ep->fid, 0), 0);
  ASSERT_EQ(fi_mr_enable(dst_mr), 0);
  ASSERT_EQ(
      fi_write(a.ep, &src, sizeof src, fi_mr_desc(src_mr), a_to_b, 0, fi_mr_key(dst_mr), nullptr),
      0);
  ASSERT_EQ(a.complete(&e), 0);
  EXPECT_EQ(dst, 0x1234u);
  fi_close(&src_mr->fid);
  fi_close(&dst_mr->fid);
}

TEST_F(CxiPersona, DataOpsFlaggedFiTriggerAreRefused) {
  open_pair();
  enable_pair();
  fid_cntr* c = a.cntr();
  static char buf[8];
  iovec iov{buf, sizeof buf};
  fi_triggered_context tctx{};
  tctx.event_type = FI_TRIGGER_THRESHOLD;
  tctx.trigger.threshold = {c, 1};
  fi_msg_tagged m{};
  m.msg_iov = &iov;
  m.iov_count = 1;
  m.addr = a_to_b;
  m.context = &tctx;
  EXPECT_EQ(fi_tsendmsg(a.ep, &m, FI_TRIGGER), -FI_EINVAL);
  fi_close(&c->fid);
}

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
  w.op_type = static_cast<fi_op_type>(42);
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

TEST_F(CxiPersona, AtomicsCarryOneElement) {
  open_pair();
  enable_pair();
  size_t count = 0;
  ASSERT_EQ(fi_atomicvalid(a.ep, FI_INT64, FI_SUM, &count), 0);
  EXPECT_EQ(count, 1u);
  fi_atomic_attr attr{};
  ASSERT_EQ(fi_query_atomic(a.domain, FI_INT64, FI_SUM, &attr, 0), 0);
  EXPECT_EQ(attr.count, 1u);
  alignas(64) static int64_t target[2] = {10, 10};
  alignas(64) static int64_t operand[2] = {3, 3};
  fid_mr* tmr = b.reg(target, sizeof target, FI_REMOTE_WRITE | FI_REMOTE_READ);
  fid_mr* omr = a.reg(operand, sizeof operand, FI_WRITE | FI_READ);
  EXPECT_EQ(fi_atomic(a.ep, operand, 2, fi_mr_desc(omr), a_to_b, 0, fi_mr_key(tmr), FI_INT64,
                      FI_SUM, nullptr),
            -FI_EINVAL);
  ASSERT_EQ(fi_atomic(a.ep, operand, 1, fi_mr_desc(omr), a_to_b, 0, fi_mr_key(tmr), FI_INT64,
                      FI_SUM, nullptr),
            0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(a.complete(&e), 0);
  EXPECT_EQ(target[0], 13);
  EXPECT_EQ(target[1], 10);
  fi_close(&omr->fid);
  fi_close(&tmr->fid);
}

int queue_cntr_add(Node& n, fid_cntr* trig, fid_cntr* target, uint64_t threshold,
                   fi_deferred_work* w, fi_op_cntr* op) {
  *op = {target, 1};
  *w = {};
  w->threshold = threshold;
  w->triggering_cntr = trig;
  w->op_type = FI_OP_CNTR_ADD;
  w->op.cntr = op;
  return fi_control(&n.domain->fid, FI_QUEUE_WORK, w);
}

TEST_F(CxiPersona, DwqDepthIsSharedAndEnforcedWithTheLimitSet) {
  setenv("NICQ_PERSONA_DWQ_DEPTH", "3", 1);
  setenv("NICQ_PERSONA_TRIG_OP_LIMIT", "1", 1);
  open_pair();
  nicq_persona_dom_ops* ext = nullptr;
  ASSERT_EQ(
      fi_open_ops(&a.domain->fid, NICQ_PERSONA_DOM_OPS, 0, reinterpret_cast<void**>(&ext), nullptr),
      0);
  size_t depth = 0;
  ASSERT_EQ(ext->get_dwq_depth(&a.domain->fid, &depth), 0);
  EXPECT_EQ(depth, 3u);
  fid_cntr* ta = a.cntr();
  fid_cntr* xa = a.cntr();
  fid_cntr* tb = b.cntr();
  fid_cntr* xb = b.cntr();
  fi_deferred_work w[4];
  fi_op_cntr op[4];
  // Two domains of the same service share the three entries.
  ASSERT_EQ(queue_cntr_add(a, ta, xa, 10, &w[0], &op[0]), 0);
  ASSERT_EQ(queue_cntr_add(a, ta, xa, 10, &w[1], &op[1]), 0);
  ASSERT_EQ(queue_cntr_add(b, tb, xb, 10, &w[2], &op[2]), 0);
  EXPECT_EQ(queue_cntr_add(b, tb, xb, 10, &w[3], &op[3]), -FI_ENOSPC);
  EXPECT_EQ(queue_cntr_add(a, ta, xa, 10, &w[3], &op[3]), -FI_ENOSPC);
  // Fired work gives its entries back.
  fi_cntr_add(ta, 10);
  EXPECT_TRUE(eventually([&] { return fi_cntr_read(xa) == 2; }));
  EXPECT_EQ(queue_cntr_add(b, tb, xb, 10, &w[3], &op[3]), 0);
  for (fid_cntr* c : {ta, xa, tb, xb}) fi_close(&c->fid);
}

// Runs tests/persona_dwq_peer (another process of the node, same service)
// with the expected result of each of its FI_QUEUE_WORK calls; its exit code.
int run_peer(std::vector<const char*> args) {
  args.insert(args.begin(), NICQ_PERSONA_DWQ_PEER);
  args.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, NICQ_PERSONA_DWQ_PEER, nullptr, nullptr, const_cast<char**>(args.data()),
                  environ) != 0)
    return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(CxiPersona, DwqDepthIsSharedByTheProcessesOfTheService) {
  setenv("NICQ_PERSONA_DWQ_DEPTH", "3", 1);
  setenv("NICQ_PERSONA_TRIG_OP_LIMIT", "1", 1);
  open_pair();
  fid_cntr* t = a.cntr();
  fid_cntr* x = a.cntr();
  fi_deferred_work w[2];
  fi_op_cntr op[2];
  ASSERT_EQ(queue_cntr_add(a, t, x, 10, &w[0], &op[0]), 0);
  ASSERT_EQ(queue_cntr_add(a, t, x, 10, &w[1], &op[1]), 0);
  // One entry is left for the other process.
  EXPECT_EQ(run_peer({"0", "enospc"}), 0);
  // A peer that dies holding entries does not keep them.
  EXPECT_EQ(run_peer({"0", "--leak"}), 0);
  EXPECT_EQ(run_peer({"0", "enospc"}), 0);
  // Closing the domain gives this process's entries back.
  fi_close(&t->fid);
  fi_close(&x->fid);
  a.close();
  EXPECT_EQ(run_peer({"0", "0", "0", "enospc"}), 0);
}

TEST_F(CxiPersona, DwqDepthZeroRefusesEveryTrigger) {
  setenv("NICQ_PERSONA_DWQ_DEPTH", "0", 1);
  setenv("NICQ_PERSONA_TRIG_OP_LIMIT", "1", 1);
  open_pair();
  fid_cntr* t = a.cntr();
  fid_cntr* x = a.cntr();
  fi_deferred_work w;
  fi_op_cntr op;
  EXPECT_EQ(queue_cntr_add(a, t, x, 1, &w, &op), -FI_ENOSPC);
  fi_close(&t->fid);
  fi_close(&x->fid);
}

TEST_F(CxiPersona, DwqExhaustionWithoutTheLimitAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        // The parent unlinks the segment the aborted child leaves behind.
        setenv("NICQ_PERSONA_SERVICE", ("gtest_death_" + std::to_string(getppid())).c_str(), 1);
        setenv("NICQ_PERSONA_DWQ_DEPTH", "1", 1);
        open_pair();
        fid_cntr* t = a.cntr();
        fid_cntr* x = a.cntr();
        fi_deferred_work w[2];
        fi_op_cntr op[2];
        queue_cntr_add(a, t, x, 10, &w[0], &op[0]);
        queue_cntr_add(a, t, x, 10, &w[1], &op[1]);
      },
      "cxi_persona: trigger resources exhausted");
  shm_unlink(("/nicq_persona_dwq_gtest_death_" + std::to_string(getpid())).c_str());
}

}  // namespace
}  // namespace nicq::persona_test
