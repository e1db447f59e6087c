// Internal structures of NativeBackend shared by its .cc files.
#pragma once

#include <rdma/fi_trigger.h>

#include <atomic>

#include "providers/ofi_native/native_backend.h"

namespace nicq::ofi {

using offload::CounterId;
using offload::kNoCounter;

struct NativeBackend::Counter {
  fid_cntr* cntr = nullptr;
  fid_mr* doorbell_mr = nullptr;
  std::atomic<std::uint64_t> base{0};
  std::atomic<int> pending{0};  // unreclaimed NIC ops triggered by it (rebase only at 0)
  bool in_use = false;
};

// The descriptors of one op on the NIC: libfabric reads them when the
// trigger fires (and, for data ops, when they complete), so they live here
// until the slot counter says the op is done.
//
// A data op gated on a counter is posted behind an "arm" hop: a counter add
// of 1 to the record's slot counter on the trigger (work[0]), the data op on
// the slot counter (work[1]), its completion report (work[2]). sockets copies
// a data op's descriptors when it is queued but reads a counter op's value
// when it fires, so zeroing the arm's value cancels the data op before it
// fires (Cancel, FreeCounter, Flush); the record's slot counter, on whose
// list the disarmed data op stays, is then replaced.

// A remote counter add of v is v doorbell writes, v slots: keep v small
// (Capabilities::max_remote_add).
inline constexpr std::uint64_t kMaxDoorbellWrites = 16;

struct NativeBackend::Record {
  fi_deferred_work work[3];
  union {
    fi_op_rma rma;
    fi_op_atomic atomic;
    fi_op_tagged tagged;
  } data;
  fi_op_cntr cntr[2];
  iovec iov;
  fi_rma_iov riov;
  fi_ioc ioc;
  fi_rma_ioc rioc;
  fid_cntr* slot_cntr = nullptr;
  std::uint64_t slot_target = 0;  // slot counter value meaning "done"
  std::uint64_t slot_errors = 0;
  fid_cntr* spare_slot = nullptr;  // replaces slot_cntr once a disarmed op's arm fired
  bool cq_failed = false;          // an error completion named this op
  bool is_data = false;
  bool armed = false;     // data op behind the arm hop (work[0] arm, work[1] op, work[2] report)
  bool disarmed = false;  // cancelled before it fired: retire the slot counter
  CounterId trigger = kNoCounter;
  CounterId completion = kNoCounter;
  fid_cntr* trigger_cntr = nullptr;
  std::uint64_t hw_threshold = 0;
  std::size_t entries = 0;
  Record* next = nullptr;
};

}  // namespace nicq::ofi
