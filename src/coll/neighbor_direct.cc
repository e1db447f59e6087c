// Blocking neighborhood collectives on contiguous blocks, straight on
// point-to-point requests.
//
// The schedule engine takes a schedule from its pool, builds it, lists it,
// posts it from a progress pass and finishes it through the owner request
// on every call: for a 4-neighbor 8-byte MPI_Neighbor_alltoall that was
// more of the call's instructions than its eight messages. When every
// block is contiguous the exchange is one phase of receives and sends with
// nothing to pack, so it is posted here directly: the same messages, in
// the same order (receives in source order, sends in the builder's slot
// order, build_neighbor.cc), with the same tag sequence on the collective
// shadow. A rank on this path therefore pairs with a rank whose call took
// the schedule (a noncontiguous type on one side only, a degree above
// kMaxPosted), and each message lands where the schedule would put it.
#include <string>

#include "coll/algorithms.h"
#include "coll/build_util.h"
#include "coll/coll.h"
#include "core/log.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// Receives plus sends of one call; larger neighborhoods take the schedule.
constexpr int kMaxPosted = 32;

// The posted requests of this thread's blocking calls. A wait that fails
// (a dead peer) returns while the engine may still hold one of them: the
// block is then abandoned and the thread's later calls take the schedule.
// Reached through a constant-initialized initial-exec pointer, as the
// blocking point-to-point slot (api/p2p.cc): one load from the thread
// pointer instead of a __tls_get_addr call. The block itself is on the
// heap: every thread-local of libnicq counts against glibc's static TLS
// surplus, which a dlopen of the library (a Python binding) must fit in,
// and 32 requests are 4 KiB of it (api.dlopen checks the size).
struct PostedBlock {
  Request reqs[kMaxPosted];
  bool abandoned = false;
};
[[gnu::tls_model("initial-exec")]] thread_local PostedBlock* t_posted = nullptr;

// Frees the thread's block at its exit, unless it was abandoned: the
// engine may still write into a request of an abandoned block, so that
// one is left allocated.
struct PostedOwner {
  PostedBlock* block = nullptr;
  ~PostedOwner() {
    t_posted = nullptr;
    if (block != nullptr && !block->abandoned) delete block;
  }
};

[[gnu::noinline]] PostedBlock* MakePostedBlock() {
  static thread_local PostedOwner owner;
  owner.block = new PostedBlock;
  t_posted = owner.block;
  return owner.block;
}

bool Contiguous(const dtype::Type* t, std::int64_t count) {
  return count == 0 || t->IsContiguous();
}

struct BlockAt {
  const char* at;
  std::int64_t count;
  const dtype::Type* type;
};

BlockAt SendBlockAt(const Args& a, int j) {
  const char* base = static_cast<const char*>(a.sendbuf);
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
      return {base, a.scount, a.stype};
    case Kind::kNeighborAlltoall:
      return {base + j * a.scount * a.stype->extent, a.scount, a.stype};
    case Kind::kNeighborAlltoallv:
      return {base + a.sdispls[j] * a.stype->extent, a.scounts[j], a.stype};
    default:  // alltoallw
      return {base + a.sbyte_displs[j], a.scounts[j], a.stypes[j]};
  }
}

BlockAt RecvBlockAt(const Args& a, int i) {
  const char* base = static_cast<const char*>(a.recvbuf);
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAlltoall:
      return {base + i * a.rcount * a.rtype->extent, a.rcount, a.rtype};
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoallv:
      return {base + a.rdispls[i] * a.rtype->extent, a.rcounts[i], a.rtype};
    default:  // alltoallw
      return {base + a.rbyte_displs[i], a.rcounts[i], a.rtypes[i]};
  }
}

// The schedule's message for its failed request `k` of the phase
// (Schedule::DescribePosted, through WaitRequest), so that an error reads
// the same on either path. Cold: the posting loops walked once more.
Status Failed(const Args& a, int k, Code code) {
  int seen = 0, peer = -1;
  std::int64_t bytes = 0;
  bool send = false;
  for (int i = 0; i < a.indegree && seen <= k; ++i) {
    if (a.sources[i] < 0) continue;
    const BlockAt b = RecvBlockAt(a, i);
    if (seen++ == k) peer = a.sources[i], bytes = b.count * b.type->size;
  }
  for (int j = 0; j < a.outdegree && seen <= k; ++j) {
    const int slot = NeighborSendSlot(a, j);
    if (a.destinations[slot] < 0) continue;
    const BlockAt b = SendBlockAt(a, slot);
    if (seen++ == k) peer = a.destinations[slot], bytes = b.count * b.type->size, send = true;
  }
  const std::string what = std::string(send ? "sending " : "receiving ") + std::to_string(bytes) +
                           " bytes " + (send ? "to " : "from ") + "rank " + std::to_string(peer) +
                           " in phase 1 of 1 failed";
  NICQ_LOG(kWarn, kColl, "collective (%s) failed: %s", PickAlgorithm(a), what.c_str());
  return Error(code, std::string("collective (") + PickAlgorithm(a) + "): " + what);
}

}  // namespace

bool NeighborDirectFits(const Args& a) {
  if (a.comm->inter || a.indegree + a.outdegree > kMaxPosted) return false;
  if (const PostedBlock* b = t_posted; b != nullptr && b->abandoned) [[unlikely]]
    return false;
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAlltoall:
      return Contiguous(a.stype, a.scount) && Contiguous(a.rtype, a.rcount);
    case Kind::kNeighborAllgatherv:
      if (!Contiguous(a.stype, a.scount)) return false;
      if (a.rtype->IsContiguous()) return true;
      for (int i = 0; i < a.indegree; ++i)
        if (a.rcounts[i] != 0) return false;
      return true;
    case Kind::kNeighborAlltoallv:
      if (a.stype->IsContiguous() && a.rtype->IsContiguous()) return true;
      for (int j = 0; j < a.outdegree; ++j)
        if (!Contiguous(a.stype, a.scounts[j])) return false;
      for (int i = 0; i < a.indegree; ++i)
        if (!Contiguous(a.rtype, a.rcounts[i])) return false;
      return true;
    case Kind::kNeighborAlltoallw:
      for (int j = 0; j < a.outdegree; ++j)
        if (!Contiguous(a.stypes[j], a.scounts[j])) return false;
      for (int i = 0; i < a.indegree; ++i)
        if (!Contiguous(a.rtypes[i], a.rcounts[i])) return false;
      return true;
    default:
      return false;
  }
}

Status RunNeighborDirect(const Args& a) {
  PostedBlock* block = t_posted ? t_posted : MakePostedBlock();
  Request* reqs = block->reqs;
  int tag = 0;
  Comm* shadow = ShadowAndTag(a.comm, 2, &tag);
  int posted = 0;
  Status post;
  // Receives first, as the builder posts them.
  for (int i = 0; i < a.indegree; ++i) {
    const int peer = a.sources[i];
    if (peer < 0) continue;  // MPI_PROC_NULL
    const BlockAt b = RecvBlockAt(a, i);
    Request& r = reqs[posted];
    r.MakeFresh();
    post = rt::IrecvFresh(const_cast<char*>(b.at), std::size_t(b.count * b.type->size), peer, tag,
                          shadow, &r);
    if (!post.ok()) [[unlikely]]
      break;
    ++posted;
  }
  for (int j = 0; j < a.outdegree && post.ok(); ++j) {
    const int slot = NeighborSendSlot(a, j);
    const int peer = a.destinations[slot];
    if (peer < 0) continue;
    const BlockAt b = SendBlockAt(a, slot);
    Request& r = reqs[posted];
    r.MakeFresh();
    post = rt::IsendFresh(b.at, std::size_t(b.count * b.type->size), peer, tag, shadow,
                          SendMode::kStandard, &r);
    if (!post.ok()) [[unlikely]]
      break;
    ++posted;
  }
  // Wait for everything posted, also after a failed post: the requests
  // point into the user's buffers.
  for (int k = 0; k < posted; ++k) {
    if (Status st = rt::Wait(&reqs[k]); !st.ok()) [[unlikely]] {
      block->abandoned = true;  // still the engine's: see PostedBlock
      return st;
    }
  }
  if (!post.ok()) [[unlikely]]
    return Error(post.code(),
                 std::string("collective (") + PickAlgorithm(a) + "): " + post.message());
  for (int k = 0; k < posted; ++k)
    if (reqs[k].status.error != 0) [[unlikely]]
      return Failed(a, k, static_cast<Code>(reqs[k].status.error));
  return Status::Ok();
}

}  // namespace nicq::coll
