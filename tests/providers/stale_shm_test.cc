// A process killed by a signal leaves libfabric shm's regions
// (/dev/shm/<pid>:<uid>:<n>) behind, and a later process that inherits the
// pid failed to open its shm endpoint (fi_enable: EBUSY): that is how
// mp.ofi_chain_emulated_thread.shm.n2 failed on a loaded machine, where
// pid_max is 32768. The offload backends' endpoints remove such leftovers
// as the transport's fabric does (core/fabric_env.h, RemoveStaleShmRegions).
// Without that the backend below cannot open: libfabric maps the empty
// files these stand-ins are and dies of SIGBUS (a real leftover: EBUSY).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "providers/ofi_emulated/emulated_backend.h"

namespace nicq::ofi {
namespace {

TEST(StaleShmRegions, AnEmulatedBackendOnShmOpensOverTheLeftoversOfAnEarlierPid) {
  // What a killed process of this pid would have left: its first regions.
  std::vector<std::string> left;
  for (int n = 0; n < 4; ++n) {
    left.push_back("/dev/shm/" + std::to_string(getpid()) + ":" + std::to_string(getuid()) + ":" +
                   std::to_string(n));
    const int fd = open(left.back().c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fd, 0) << left.back();
    close(fd);
  }
  EmulatedConfig c;
  c.provider = "shm";
  c.progress_thread = 0;
  c.num_counters = 8;
  c.num_ops = 64;
  std::unique_ptr<EmulatedBackend> b;
  const Status s = EmulatedBackend::Create(c, &b);
  EXPECT_TRUE(s.ok()) << s.message();
  b.reset();
  for (const std::string& path : left) unlink(path.c_str());
}

}  // namespace
}  // namespace nicq::ofi
