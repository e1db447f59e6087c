// The shm trigger backend when a peer process dies: a lock of the shared
// areas left held by a killed process, and a WaitCounter whose adder was
// killed, both end in kProcFailed naming the dead rank instead of a hang.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "providers/shm_native/shm_backend.h"
#include "tests/providers/shm_fork_pair.h"

namespace nicq::shmtrig {
namespace {

using offload::CounterId;
using offload::kNoCounter;
using offload::OpKind;
using offload::TriggeredOp;

std::string Named(pid_t pid) {
  return "rank 1 (pid " + std::to_string(pid) + ")";
}

// The child takes its own area's lock and is killed holding it. The
// parent's remote add to a counter of the child needs that lock: Post
// returns kProcFailed naming the child, the add's completion counts an
// error, and every later call fails the same way without waiting again.
TEST(ShmFault, ALockHeldByAKilledProcessFailsThePeersOpNamingIt) {
  std::unique_ptr<ShmTriggerBackend> b;
  Channel ch;
  const pid_t pid = ForkPair(&b, &ch);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    CounterId id = kNoCounter;
    if (!b->AllocCounters(1, &id).ok()) _exit(10);
    if (!b->HoldAreaLockForTest(b->self())) _exit(11);
    ch.Send(&id, sizeof id);
    char never = 0;
    ch.Recv(&never, 1);  // killed here, the lock held
    _exit(12);
  }
  CounterId child_counter = kNoCounter;
  ch.Recv(&child_counter, sizeof child_counter);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  ASSERT_EQ(ChildExit(pid), 128 + SIGKILL);
  CounterId comp = kNoCounter, own = kNoCounter;
  ASSERT_TRUE(b->AllocCounters(1, &comp).ok());
  ASSERT_TRUE(b->AllocCounters(1, &own).ok());
  TriggeredOp add;
  add.kind = OpKind::kRemoteCounterAdd;
  add.peer = 1;
  add.target_counter = child_counter;
  add.value = 1;
  add.completion = comp;
  const Status st = b->Post({&add, 1});
  EXPECT_EQ(st.code(), Code::kProcFailed) << st.message();
  EXPECT_NE(st.message().find(Named(pid)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("died holding a lock"), std::string::npos) << st.message();
  EXPECT_EQ(b->ReadCounter(comp), 0u);
  EXPECT_GE(b->ReadErrors(comp), 1u);
  EXPECT_EQ(b->ReadErrors(own), 1u);  // every counter counts the death
  const Status later = b->AddCounter(own, 1);
  EXPECT_EQ(later.code(), Code::kProcFailed) << later.message();
  EXPECT_NE(later.message().find(Named(pid)), std::string::npos) << later.message();
  EXPECT_EQ(b->ReadCounter(own), 0u);
  const Status waited = b->WaitCounter(comp, 1, -1);
  EXPECT_EQ(waited.code(), Code::kProcFailed) << waited.message();
}

// The parent sleeps with no time limit on a counter only the child adds
// to; the child is killed (not yet reaped: a zombie while the parent
// waits). WaitCounter returns kProcFailed naming it.
TEST(ShmFault, AWaitWhoseAdderWasKilledReturnsNamingIt) {
  std::unique_ptr<ShmTriggerBackend> b;
  Channel ch;
  const pid_t pid = ForkPair(&b, &ch);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    char go = 0;
    ch.Recv(&go, 1);
    raise(SIGKILL);
    _exit(20);
  }
  CounterId c = kNoCounter;
  ASSERT_TRUE(b->AllocCounters(1, &c).ok());
  const char go = 1;
  ch.Send(&go, 1);
  const Status st = b->WaitCounter(c, 1, -1);
  EXPECT_EQ(st.code(), Code::kProcFailed) << st.message();
  EXPECT_NE(st.message().find(Named(pid)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("has exited"), std::string::npos) << st.message();
  EXPECT_EQ(b->ReadCounter(c), 0u);
  EXPECT_EQ(b->ReadErrors(c), 1u);
  EXPECT_EQ(ChildExit(pid), 128 + SIGKILL);
}

}  // namespace
}  // namespace nicq::shmtrig
