// Another process of the node using the cxi_persona service named by
// NICQ_PERSONA_SERVICE: opens a domain, queues deferred counter work that
// never fires, and checks each FI_QUEUE_WORK result against the expected
// ones given as arguments ("0" or "enospc"). "--leak" exits without closing
// anything, as a crashed rank would. Exit status 0: every result matched.
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "tests/providers/persona/persona_fixture.h"

using namespace nicq::persona_test;

int main(int argc, char** argv) {
  fi_info* info = nullptr;
  if (get_info("cxi_persona", FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY, FI_TRIGGER, &info))
    return 10;
  Node n;
  if (n.open(info)) return 11;
  fid_cntr* trig = n.cntr();
  fid_cntr* target = n.cntr();
  static fi_deferred_work work[64];
  static fi_op_cntr op[64];
  bool leak = false;
  int failures = 0;
  for (int i = 1, k = 0; i < argc && k < 64; i++) {
    if (std::strcmp(argv[i], "--leak") == 0) {
      leak = true;
      continue;
    }
    const int expected = std::strcmp(argv[i], "enospc") == 0 ? -FI_ENOSPC : 0;
    op[k] = {target, 1};
    work[k].threshold = 1000;
    work[k].triggering_cntr = trig;
    work[k].op_type = FI_OP_CNTR_ADD;
    work[k].op.cntr = &op[k];
    const int ret = fi_control(&n.domain->fid, FI_QUEUE_WORK, &work[k]);
    if (ret != expected) {
      std::fprintf(stderr, "dwq_peer: entry %d: got %d, expected %d\n", k, ret, expected);
      failures++;
    }
    if (ret == 0) k++;
  }
  if (leak) _exit(failures ? 1 : 0);
  fi_close(&trig->fid);
  fi_close(&target->fid);
  n.close();
  fi_freeinfo(info);
  return failures ? 1 : 0;
}
