// cxi_persona refuses what cxi refuses and accepts what cxi accepts
// (docs/provider-contracts.md, one test per rule): info, keys, memory
// regions, triggered-op forms, atomics.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/providers/persona/cxi_persona_fixture.h"

namespace nicq::persona_test {
namespace {

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

// FI_MR_ALLOCATED (fi_mr(3); every cxi info has it): memory that is not
// mapped cannot be registered; mapped memory can.
TEST_F(CxiPersona, OnlyAllocatedMemoryRegisters) {
  open_pair();
  const long page = sysconf(_SC_PAGESIZE);
  void* area = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(area, MAP_FAILED);
  fid_mr* mr = nullptr;
  ASSERT_EQ(fi_mr_reg(a.domain, area, 2 * page, FI_REMOTE_WRITE, 0, 0, 0, &mr, nullptr), 0);
  fi_close(&mr->fid);
  // The second page goes away: a range over it is no longer allocated.
  ASSERT_EQ(munmap(static_cast<char*>(area) + page, page), 0);
  fid_mr* gone = nullptr;
  EXPECT_EQ(fi_mr_reg(a.domain, area, 2 * page, FI_REMOTE_WRITE, 0, 0, 0, &gone, nullptr),
            -FI_EINVAL);
  munmap(area, page);
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

// cxip_dom.c: deferred sends take one iov and no FI_INJECT, deferred RMA
// one local and exactly one remote iov, deferred atomics one element.
TEST_F(CxiPersona, DeferredOpFormsCxiRefuses) {
  open_pair();
  fid_cntr* trig = a.cntr();
  enable_pair();
  alignas(64) static uint64_t words[4];
  fid_mr* mr = a.reg(words, sizeof words, FI_WRITE | FI_REMOTE_WRITE | FI_SEND);
  ASSERT_NE(mr, nullptr);
  void* desc[2] = {fi_mr_desc(mr), fi_mr_desc(mr)};
  iovec iov[2] = {{&words[0], 8}, {&words[1], 8}};
  fi_deferred_work w{};
  w.threshold = 100;
  w.triggering_cntr = trig;

  fi_op_tagged send{};
  send.ep = a.ep;
  send.msg.msg_iov = iov;
  send.msg.desc = desc;
  send.msg.iov_count = 2;
  send.msg.addr = a_to_b;
  send.msg.context = &w.context;
  w.op_type = FI_OP_TSEND;
  w.op.tagged = &send;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);
  send.msg.iov_count = 1;
  send.flags = FI_INJECT;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);

  fi_rma_iov riov[2] = {{16, 8, fi_mr_key(mr)}, {24, 8, fi_mr_key(mr)}};
  fi_op_rma rma{};
  rma.ep = a.ep;
  rma.msg.msg_iov = iov;
  rma.msg.desc = desc;
  rma.msg.iov_count = 1;
  rma.msg.addr = a.self_addr;
  rma.msg.rma_iov = riov;
  rma.msg.rma_iov_count = 2;
  rma.msg.context = &w.context;
  w.op_type = FI_OP_WRITE;
  w.op.rma = &rma;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);

  fi_ioc ioc{&words[0], 2};
  fi_rma_ioc rioc{16, 2, fi_mr_key(mr)};
  fi_op_atomic amo{};
  amo.ep = a.ep;
  amo.msg.msg_iov = &ioc;
  amo.msg.desc = desc;
  amo.msg.iov_count = 1;
  amo.msg.addr = a.self_addr;
  amo.msg.rma_iov = &rioc;
  amo.msg.rma_iov_count = 1;
  amo.msg.datatype = FI_UINT64;
  amo.msg.op = FI_SUM;
  amo.msg.context = &w.context;
  w.op_type = FI_OP_ATOMIC;
  w.op.atomic = &amo;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), -FI_EINVAL);

  // The accepted form of each: nothing refused.
  rma.msg.rma_iov_count = 1;
  w.op_type = FI_OP_WRITE;
  w.op.rma = &rma;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w), 0);
  fi_deferred_work w2 = w;
  ioc.count = 1;
  rioc.count = 1;
  amo.msg.context = &w2.context;
  w2.op_type = FI_OP_ATOMIC;
  w2.op.atomic = &amo;
  EXPECT_EQ(fi_control(&a.domain->fid, FI_QUEUE_WORK, &w2), 0);
  fi_close(&a.ep->fid);
  a.ep = nullptr;
  fi_close(&mr->fid);
  fi_close(&trig->fid);
}

}  // namespace
}  // namespace nicq::persona_test
