// cxi_persona: the deferred-work depth of a service, shared by its domains
// and processes, refused with the limit set and fatal without it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "providers/persona/persona_ext.h"

extern char** environ;

#include "tests/providers/persona/cxi_persona_fixture.h"

namespace nicq::persona_test {
namespace {

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

// The service segment of a job whose launcher died (named after its pid)
// is removed when a domain attaches, as a real NIC's service ends with its
// job; a named service (NICQ_PERSONA_SERVICE) is left alone.
TEST_F(CxiPersona, DwqSegmentsOfDeadJobsAreRemovedAtAttach) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // dead and reaped
  const std::string stale = "/nicq_persona_dwq_" + std::to_string(child);
  const std::string named = "/nicq_persona_dwq_kept_" + std::to_string(getpid());
  for (const std::string& n : {stale, named}) {
    const int fd = shm_open(n.c_str(), O_RDWR | O_CREAT, 0600);
    ASSERT_GE(fd, 0) << n;
    close(fd);
  }
  open_pair();
  EXPECT_EQ(shm_open(stale.c_str(), O_RDWR, 0600), -1) << stale << " was not removed";
  const int kept = shm_open(named.c_str(), O_RDWR, 0600);
  EXPECT_GE(kept, 0) << named << " was removed";
  if (kept >= 0) close(kept);
  shm_unlink(named.c_str());
  shm_unlink(stale.c_str());
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
