// The cxi_persona test fixture: two nodes (A, B) of one service, and a
// deferred write whose firing shows, without any libfabric call, that the
// counter gating it has advanced.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "tests/providers/persona/persona_fixture.h"

namespace nicq::persona_test {

inline constexpr uint64_t kProvKeyMode = FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
inline constexpr uint64_t kCaps =
    FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_TRIGGER | FI_RMA_EVENT;

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

}  // namespace nicq::persona_test
