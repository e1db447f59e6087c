// Builder of the neighborhood collectives (MPI 4.1 8.6): one phase in which
// every receive from a source and every send to a destination is posted,
// then the unpacks of noncontiguous receive blocks. A neighbor that is
// MPI_PROC_NULL keeps its slot in the buffers but moves nothing, so its
// receive block is never written.
//
// Matching. All messages of one collective carry the schedule's tag, so when
// a process is a neighbor more than once (multi-edges of a graph, both
// neighbors of a periodic Cartesian dimension of size 1 or 2) the k-th
// send to it pairs with its k-th posted receive from us (MPI's
// non-overtaking rule). The posting order therefore encodes the standard's
// pairing: graphs pair the k-th edge of the destination list with the k-th
// edge of the peer's source list (both list orders); Cartesian topologies
// pair the send to the -1 neighbor with that neighbor's +1 receive slot
// (Args::cartesian_pairs).
#include "coll/build_util.h"

namespace nicq::coll {
namespace {

struct SendSide {
  const void* base;
  std::int64_t byte_disp;
  std::int64_t count;
  const dtype::Type* type;
};
struct RecvSide {
  void* base;
  std::int64_t byte_disp;
  std::int64_t count;
  const dtype::Type* type;
};

SendSide SendOf(const Args& a, int j) {
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAllgatherv:
      return {a.sendbuf, 0, a.scount, a.stype};
    case Kind::kNeighborAlltoall:
      return {a.sendbuf, j * a.scount * a.stype->extent, a.scount, a.stype};
    case Kind::kNeighborAlltoallv:
      return {a.sendbuf, a.sdispls[j] * a.stype->extent, a.scounts[j], a.stype};
    default:  // alltoallw
      return {a.sendbuf, a.sbyte_displs[j], a.scounts[j], a.stypes[j]};
  }
}

RecvSide RecvOf(const Args& a, int i) {
  switch (a.kind) {
    case Kind::kNeighborAllgather:
    case Kind::kNeighborAlltoall:
      return {a.recvbuf, i * a.rcount * a.rtype->extent, a.rcount, a.rtype};
    case Kind::kNeighborAllgatherv:
    case Kind::kNeighborAlltoallv:
      return {a.recvbuf, a.rdispls[i] * a.rtype->extent, a.rcounts[i], a.rtype};
    default:  // alltoallw
      return {a.recvbuf, a.rbyte_displs[i], a.rcounts[i], a.rtypes[i]};
  }
}

}  // namespace

int NeighborSendSlot(const Args& a, int j) {
  return a.cartesian_pairs ? (j ^ 1) : j;
}

void BuildNeighborCollective(const Args& a, Schedule& s, Unpacks& u) {
  // Receives first: a message from a fast neighbor then finds its buffer.
  for (int i = 0; i < a.indegree; ++i) {
    const int peer = a.sources[i];
    if (peer < 0) continue;  // MPI_PROC_NULL
    const RecvSide r = RecvOf(a, i);
    char* at = static_cast<char*>(r.base) + r.byte_disp;
    s.Recv(Out(s, u, at, r.count, r.type, false), std::size_t(r.count * r.type->size), peer);
  }
  // allgather sends one block to everyone: pack it once.
  const bool one_block = a.kind == Kind::kNeighborAllgather || a.kind == Kind::kNeighborAllgatherv;
  const char* shared = nullptr;
  for (int j = 0; j < a.outdegree; ++j) {
    const int slot = NeighborSendSlot(a, j);
    const int peer = a.destinations[slot];
    if (peer < 0) continue;
    const SendSide x = SendOf(a, slot);
    const char* at = static_cast<const char*>(x.base) + x.byte_disp;
    const char* view = one_block && shared ? shared : In(s, at, x.count, x.type);
    if (one_block) shared = view;
    s.Send(view, std::size_t(x.count * x.type->size), peer);
  }
}

}  // namespace nicq::coll
