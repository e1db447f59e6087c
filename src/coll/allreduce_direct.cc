// Blocking allreduce of a few hundred bytes on a power-of-two intra
// communicator: recursive doubling straight on point-to-point requests.
//
// The schedule engine builds, launches and polls a schedule for every
// collective call (about 3,000 instructions for a two-rank 8-byte
// allreduce before the first byte moves, callgrind); small blocking
// allreduces are latency-bound and the most frequent collective of most
// programs, so they skip it. The exchange is the one the schedule's
// recursive doubling does (same partners, same reduction order, same tag
// sequence on the communicator's collective context), so the result is the
// same bit for bit, and every other form, size and communicator still takes
// the schedule.
#include <cstring>
#include <string>

#include "coll/algorithms.h"
#include "coll/coll.h"
#include "coll/select.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/comm.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

constexpr std::size_t kDirectMaxBytes = 512;

}  // namespace

bool AllreduceDirectFits(const Args& a) {
  if (a.kind != Kind::kAllreduce || a.comm->inter || a.comm->size < 2 || !IsPof2(a.comm->size) ||
      a.rtype == nullptr || !a.rtype->predefined)
    return false;
  // Items back to back (padded pair types such as MPI_DOUBLE_INT are not).
  if (a.rtype->lb != 0 || a.rtype->extent != a.rtype->size) return false;
  const std::size_t bytes = std::size_t(a.rcount) * std::size_t(a.rtype->size);
  if (a.rcount <= 0 || bytes > kDirectMaxBytes) return false;
  const dtype::Op* op = dtype::LookupOp(a.op);
  // Predefined ops are commutative: either partner's order gives the same bits.
  if (op == nullptr || !op->predefined || !op->commute) return false;
  // The algorithm the schedule would run (a forced one included).
  return std::strcmp(PickAlgorithm(a), "recursive_doubling") == 0;
}

Status RunAllreduceDirect(const Args& a) {
  const int p = a.comm->size, rank = a.comm->rank;
  const std::size_t bytes = std::size_t(a.rcount) * std::size_t(a.rtype->size);
  char* acc = static_cast<char*>(a.recvbuf);
  if (a.sendbuf != kInPlace && a.sendbuf != a.recvbuf) std::memcpy(acc, a.sendbuf, bytes);
  alignas(16) char incoming[kDirectMaxBytes];
  Comm* shadow = ShadowOf(a.comm);
  const int tag = NextTag(a.comm, 2);
  for (int mask = 1; mask < p; mask <<= 1) {
    const int partner = rank ^ mask;
    Request recv, send;
    NICQ_RETURN_IF_ERROR(rt::Irecv(incoming, bytes, partner, tag, shadow, &recv));
    Status sent = rt::Isend(acc, bytes, partner, tag, shadow, SendMode::kStandard, &send);
    // Both requests live on this stack: neither may be left to the engine.
    Status received = rt::Wait(&recv);
    if (sent.ok()) sent = rt::Wait(&send);
    NICQ_RETURN_IF_ERROR(received);
    NICQ_RETURN_IF_ERROR(sent);
    for (const Request* r : {&recv, &send})
      if (r->status.error != 0)
        return Error(static_cast<Code>(r->status.error),
                     std::string(r == &send ? "sending " : "receiving ") + std::to_string(bytes) +
                         " bytes " + (r == &send ? "to" : "from") + " rank " +
                         std::to_string(partner) + " in step " + std::to_string(mask) +
                         " of the allreduce failed");
    NICQ_RETURN_IF_ERROR(dtype::Reduce(a.op, a.rtype->handle, incoming, acc, a.rcount));
  }
  return Status::Ok();
}

}  // namespace nicq::coll
