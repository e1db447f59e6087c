// The messages of the one-sided protocol (docs/rma.md) and the objects both
// sides keep while a message is in flight. Private to src/rma.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "dtype/datatype.h"
#include "rma/window.h"
#include "runtime/request.h"

namespace nicq::rma {

struct OutMsg {
  std::vector<char> data;
  Request req;
};

// A reply the origin waits for, with where its data goes.
struct Pending {
  int target = 0;
  Request recv;
  std::vector<char> buf;              // ReplyHeader + data
  void* user = nullptr;               // result buffer (nullptr for acknowledgements)
  const dtype::Type* type = nullptr;  // retained while pending
  std::int64_t count = 0;
  std::atomic<bool> finished{false};
  Status result;  // set when finished
};

// A request the server received: complete once `req` is done.
struct Incoming {
  int source = 0;
  std::vector<char> buf;
  Request req;
};

namespace detail {

enum MsgKind : std::uint8_t {
  kPut = 1,
  kGet,
  kAcc,
  kGetAcc,
  kCas,
  kFlush,          // acknowledged once every earlier request of the origin is applied
  kLockShared,     // acknowledged when granted
  kLockExclusive,  // acknowledged when granted
  kUnlock,         // a flush that also releases the origin's lock
  kComplete,       // MPI_Win_complete: counted by the target's MPI_Win_wait
};

// Request: header, then `nblocks` WireBlocks (one item of the target
// layout), then `data_bytes` of origin data (packed contiguous).
struct ReqHeader {
  std::uint8_t kind = 0;
  std::uint8_t pad[3] = {};
  std::int32_t op = 0;    // accumulate op handle
  std::int32_t unit = 0;  // the target type's single predefined unit (pairs), or 0
  std::int32_t nblocks = 0;
  std::int64_t disp = 0;    // target displacement (dynamic windows: address)
  std::int64_t count = 0;   // target items
  std::int64_t extent = 0;  // target type extent
  std::int64_t data_bytes = 0;
};

struct WireBlock {
  std::int64_t offset = 0;
  std::int64_t length = 0;
  std::int32_t basic = 0;
  std::int32_t pad = 0;
};

// Reply: header, then `bytes` of data (get, get_accumulate, compare_and_swap).
struct ReplyHeader {
  std::int32_t error = 0;  // nicq::Code of the first error since the last reply
  std::int32_t pad = 0;
  std::int64_t bytes = 0;
};

inline int BasicHandle(int index) {
  return int((unsigned(dtype::kKindDatatype) << 24) | unsigned(index));
}

// Where a target layout touches, relative to its start: [lo, hi).
inline void LayoutSpan(const WireBlock* blocks, int n, std::int64_t count, std::int64_t extent,
                       std::int64_t* lo, std::int64_t* hi) {
  *lo = 0;
  *hi = 0;
  if (count <= 0 || n == 0) return;
  bool first = true;
  for (std::int64_t item : {std::int64_t(0), count - 1}) {
    for (int b = 0; b < n; ++b) {
      std::int64_t s = item * extent + blocks[b].offset, e = s + blocks[b].length;
      if (first || s < *lo) *lo = s;
      if (first || e > *hi) *hi = e;
      first = false;
    }
  }
}

}  // namespace detail
}  // namespace nicq::rma
