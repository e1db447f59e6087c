// verbs_persona refuses what verbs;ofi_rxm refuses and accepts what it
// accepts (docs/provider-contracts.md, one test per rule).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "tests/providers/persona/persona_fixture.h"

namespace nicq::persona_test {
namespace {

constexpr uint64_t kBasicMap = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
constexpr uint64_t kCaps = FI_MSG | FI_TAGGED | FI_RMA;

struct PageBuffer {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* p = static_cast<char*>(std::aligned_alloc(page, page));
  ~PageBuffer() { std::free(p); }
};

class VerbsPersona : public ::testing::Test {
 protected:
  void TearDown() override {
    a.close();
    b.close();
    if (info_) fi_freeinfo(info_);
  }
  void open_pair(uint64_t mr_mode) {
    ASSERT_EQ(get_info("verbs_persona", mr_mode, kCaps, &info_), 0);
    ASSERT_EQ(a.open(info_), 0);
    ASSERT_EQ(b.open(info_), 0);
    ASSERT_EQ(a.enable(), 0);
    ASSERT_EQ(b.enable(), 0);
    a_to_b = a.insert_peer(b);
    b_to_a = b.insert_peer(a);
  }
  // Manual progress: both sides must call in for anything to move.
  int complete_both(Node& waiter, Node& other, fi_cq_tagged_entry* e,
                    fi_cq_err_entry* err = nullptr) {
    for (int i = 0; i < 50000; i++) {
      fi_cq_tagged_entry scratch;
      if (fi_cq_read(other.cq, &scratch, 1) == -FI_EAVAIL) {
        fi_cq_err_entry ignored{};
        fi_cq_readerr(other.cq, &ignored, 0);
      }
      int r = waiter.complete(e, err, 0);
      if (r != -FI_EAGAIN) return r;
      nap_us(100);
    }
    return -FI_EAGAIN;
  }
  // rxm connects on first use: a post may answer -FI_EAGAIN until both
  // sides have progressed the connection.
  ssize_t post(const std::function<ssize_t()>& op) {
    for (int i = 0; i < 50000; i++) {
      ssize_t r = op();
      if (r != -FI_EAGAIN) return r;
      fi_cq_tagged_entry scratch;
      fi_cq_read(a.cq, &scratch, 0);
      fi_cq_read(b.cq, &scratch, 0);
      nap_us(100);
    }
    return -FI_EAGAIN;
  }
  fi_info* info_ = nullptr;
  Node a, b;
  fi_addr_t a_to_b = FI_ADDR_UNSPEC, b_to_a = FI_ADDR_UNSPEC;
};

TEST_F(VerbsPersona, MrLocalInfoComesFirstWhenTheAppSupportsIt) {
  ASSERT_EQ(get_info("verbs_persona", kBasicMap | FI_MR_LOCAL, kCaps, &info_), 0);
  ASSERT_NE(info_->next, nullptr);
  EXPECT_EQ(info_->domain_attr->mr_mode, static_cast<int>(kBasicMap | FI_MR_LOCAL));
  EXPECT_EQ(info_->next->domain_attr->mr_mode, static_cast<int>(kBasicMap));
  EXPECT_STREQ(info_->fabric_attr->name, info_->next->fabric_attr->name);
  for (fi_info* i = info_; i; i = i->next) {
    EXPECT_FALSE(i->caps & (FI_TRIGGER | FI_RMA_EVENT));
    EXPECT_STREQ(i->fabric_attr->prov_name, "verbs_persona");
  }
}

TEST_F(VerbsPersona, WithoutMrLocalHintsOnlyTheCopyWithoutIt) {
  ASSERT_EQ(get_info("verbs_persona", kBasicMap, kCaps, &info_), 0);
  for (fi_info* i = info_; i; i = i->next)
    EXPECT_EQ(i->domain_attr->mr_mode, static_cast<int>(kBasicMap));
}

TEST_F(VerbsPersona, HintsTheTargetRefusesGetNothing) {
  fi_info* i = nullptr;
  EXPECT_EQ(get_info("verbs_persona", kBasicMap, kCaps | FI_TRIGGER, &i), -FI_ENODATA);
  EXPECT_EQ(get_info("verbs_persona", kBasicMap, kCaps | FI_RMA_EVENT, &i), -FI_ENODATA);
  // An app that cannot take provider keys / virtual addresses gets nothing.
  EXPECT_EQ(get_info("verbs_persona", FI_MR_LOCAL | FI_MR_ALLOCATED, kCaps, &i), -FI_ENODATA);
}

TEST_F(VerbsPersona, RegistrationIsPageGranular) {
  open_pair(kBasicMap | FI_MR_LOCAL);
  PageBuffer buf;
  fid_mr* mr = nullptr;
  EXPECT_EQ(fi_mr_reg(a.domain, buf.p + 8, 64, FI_SEND, 0, 0, 0, &mr, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_mr_reg(a.domain, buf.p, 64, FI_SEND, 0, 0, 0, &mr, nullptr), -FI_EINVAL);
  ASSERT_EQ(fi_mr_reg(a.domain, buf.p, buf.page, FI_SEND, 0, 0, 0, &mr, nullptr), 0);
  fi_close(&mr->fid);
}

TEST_F(VerbsPersona, MrLocalDataOpsNeedACoveringDescriptor) {
  open_pair(kBasicMap | FI_MR_LOCAL);
  ASSERT_TRUE(a.info->domain_attr->mr_mode & FI_MR_LOCAL);
  PageBuffer sbuf, rbuf;
  std::strcpy(sbuf.p, "mr local");
  rbuf.p[0] = 0;
  fid_mr* smr = a.reg(sbuf.p, sbuf.page, FI_SEND);
  fid_mr* rmr = b.reg(rbuf.p, rbuf.page, FI_RECV);
  ASSERT_NE(smr, nullptr);
  ASSERT_NE(rmr, nullptr);
  EXPECT_EQ(fi_send(a.ep, sbuf.p, 16, nullptr, a_to_b, nullptr), -FI_EINVAL);
  // A descriptor of another buffer does not cover this one.
  EXPECT_EQ(fi_send(a.ep, sbuf.p, 16, fi_mr_desc(rmr), a_to_b, nullptr), -FI_EINVAL);
  ASSERT_EQ(fi_recv(b.ep, rbuf.p, 16, fi_mr_desc(rmr), FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(post([&] { return fi_send(a.ep, sbuf.p, 16, fi_mr_desc(smr), a_to_b, nullptr); }), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(complete_both(b, a, &e), 0);
  EXPECT_STREQ(rbuf.p, "mr local");
  fi_close(&smr->fid);
  fi_close(&rmr->fid);
}

TEST_F(VerbsPersona, WithoutMrLocalMessagesNeedNoDescriptor) {
  open_pair(kBasicMap);
  ASSERT_FALSE(a.info->domain_attr->mr_mode & FI_MR_LOCAL);
  static char sbuf[16] = "no desc", rbuf[16];
  ASSERT_EQ(fi_recv(b.ep, rbuf, sizeof rbuf, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(post([&] { return fi_send(a.ep, sbuf, sizeof sbuf, nullptr, a_to_b, nullptr); }), 0);
  fi_cq_tagged_entry e{};
  ASSERT_EQ(complete_both(b, a, &e), 0);
  EXPECT_STREQ(rbuf, "no desc");
}

// One RDMA write, completed only once it reached the target memory.
ssize_t write_delivered(Node& n, void* buf, size_t len, fid_mr* mr, fi_addr_t dest, uint64_t addr,
                        uint64_t key) {
  iovec iov{buf, len};
  void* desc = fi_mr_desc(mr);
  fi_rma_iov riov{addr, len, key};
  fi_msg_rma m{};
  m.msg_iov = &iov;
  m.desc = &desc;
  m.iov_count = 1;
  m.addr = dest;
  m.rma_iov = &riov;
  m.rma_iov_count = 1;
  return fi_writemsg(n.ep, &m, FI_DELIVERY_COMPLETE | FI_COMPLETION);
}

TEST_F(VerbsPersona, RmaWithAKeyTheProviderDidNotReturnFails) {
  open_pair(kBasicMap | FI_MR_LOCAL);
  PageBuffer src, dst;
  std::memset(dst.p, 0, dst.page);
  std::strcpy(src.p, "put");
  fid_mr* smr = a.reg(src.p, src.page, FI_WRITE);
  // The requested key is ignored under FI_MR_PROV_KEY.
  fid_mr* dmr = b.reg(dst.p, dst.page, FI_REMOTE_WRITE, /*key=*/4242);
  ASSERT_NE(smr, nullptr);
  ASSERT_NE(dmr, nullptr);
  const uint64_t made_up = fi_mr_key(dmr) == 4242 ? 4243 : 4242;
  const uint64_t addr = reinterpret_cast<uint64_t>(dst.p);  // FI_MR_VIRT_ADDR
  ASSERT_EQ(post([&] { return write_delivered(a, src.p, 4, smr, a_to_b, addr, made_up); }), 0);
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  EXPECT_EQ(complete_both(a, b, &e, &err), -FI_EAVAIL);
  EXPECT_NE(err.err, 0);
  EXPECT_EQ(dst.p[0], 0);
  fi_close(&smr->fid);
  fi_close(&dmr->fid);
}

TEST_F(VerbsPersona, RmaWithTheReturnedKeyLands) {
  open_pair(kBasicMap | FI_MR_LOCAL);
  PageBuffer src, dst;
  std::memset(dst.p, 0, dst.page);
  std::strcpy(src.p, "put");
  fid_mr* smr = a.reg(src.p, src.page, FI_WRITE);
  fid_mr* dmr = b.reg(dst.p, dst.page, FI_REMOTE_WRITE);
  const uint64_t addr = reinterpret_cast<uint64_t>(dst.p);
  ASSERT_EQ(post([&] { return write_delivered(a, src.p, 4, smr, a_to_b, addr, fi_mr_key(dmr)); }),
            0);
  fi_cq_tagged_entry e{};
  fi_cq_err_entry err{};
  ASSERT_EQ(complete_both(a, b, &e, &err), 0) << fi_strerror(err.err) << " prov " << err.prov_errno;
  EXPECT_STREQ(dst.p, "put");
  fi_close(&smr->fid);
  fi_close(&dmr->fid);
}

}  // namespace
}  // namespace nicq::persona_test
