// Argument checks of the collectives: what MPI 4.1 chapter 7 says each
// rank's arguments must be, checked locally (cross-rank consistency is
// checked by the persistent init; see src/coll/persistent.cc). Arguments
// MPI declares "significant only at root" are not checked elsewhere.
#include <string>

#include "api/coll_c_fill.h"

namespace nicq::coll::capi {

using api::Call;

namespace {
bool SameBytes(Call& c, const Args* a) {
  return c.Check(a->scount * a->stype->size == a->rcount * a->rtype->size, Code::kTruncate,
                 "send (" + std::to_string(a->scount * a->stype->size) + " bytes) and receive (" +
                     std::to_string(a->rcount * a->rtype->size) + " bytes) per-rank sizes differ");
}
}  // namespace

bool FillBarrier(Call&, Args*) {
  return true;
}

bool FillBcast(Call& c, Args* a, void* buffer, int count, MPI_Datatype datatype, int root) {
  if (a->comm->inter) return FillBcastInter(c, a, buffer, count, datatype, root);
  if (!Root(c, root, a) || !Data(c, buffer, count, datatype, &a->stype, "buffer", false))
    return false;
  a->rtype = a->stype;
  a->scount = a->rcount = count;
  a->sendbuf = a->recvbuf = buffer;
  return true;
}

bool FillReduce(Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                MPI_Datatype datatype, MPI_Op op, int root) {
  if (a->comm->inter) return FillReduceInter(c, a, sendbuf, recvbuf, count, datatype, op, root);
  if (!Root(c, root, a)) return false;
  const bool is_root = a->comm->rank == root;
  if (!Data(c, sendbuf, count, datatype, &a->stype, "send", is_root)) return false;
  if (is_root && !Data(c, recvbuf, count, datatype, &a->rtype, "receive", false)) return false;
  a->rtype = a->stype;
  a->scount = a->rcount = count;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  return OpArg(c, op, a->stype, a);
}

bool FillAllreduce(Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype datatype, MPI_Op op) {
  if (!Data(c, sendbuf, count, datatype, &a->stype, "send", true) ||
      !Data(c, recvbuf, count, datatype, &a->rtype, "receive", false))
    return false;
  a->scount = a->rcount = count;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  return OpArg(c, op, a->stype, a);
}

bool FillGather(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (a->comm->inter)
    return FillGatherInter(c, a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  if (!Root(c, root, a)) return false;
  const bool is_root = a->comm->rank == root;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (is_root) {
    if (!Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false)) return false;
    a->rcount = recvcount;
    if (sendbuf == MPI_IN_PLACE) return true;
  }
  if (!Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false)) return false;
  a->scount = sendcount;
  return !is_root || SameBytes(c, a);
}

bool FillGatherv(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                 int root) {
  if (a->comm->inter)
    return FillGathervInter(c, a, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, root);
  if (!Root(c, root, a)) return false;
  const bool is_root = a->comm->rank == root;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (is_root) {
    const int p = a->comm->size;
    if (!Counts(c, recvcounts, p, "recvcounts", true) || !Counts(c, displs, p, "displs", false))
      return false;
    dtype::Type* t = nullptr;
    if (!c.TypeArg(recvtype, &t, "receive datatype")) return false;
    a->rtype = t;
    a->rcounts = recvcounts;
    a->rdispls = displs;
    if (sendbuf == MPI_IN_PLACE) return true;
  }
  if (!Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false)) return false;
  a->scount = sendcount;
  if (!is_root) return true;
  // The root's own block is a local copy: a block that does not fit its
  // recvcounts entry is the truncation a message would report.
  const std::int64_t sent = std::int64_t(sendcount) * a->stype->size;
  const std::int64_t room = std::int64_t(recvcounts[a->comm->rank]) * a->rtype->size;
  return c.Check(sent <= room, Code::kTruncate,
                 "the root's own block (" + std::to_string(sent) +
                     " bytes) does not fit recvcounts[" + std::to_string(a->comm->rank) + "] (" +
                     std::to_string(room) + " bytes)");
}

bool FillScatter(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (a->comm->inter)
    return FillScatterInter(c, a, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root);
  if (!Root(c, root, a)) return false;
  const bool is_root = a->comm->rank == root;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (is_root) {
    if (!Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false)) return false;
    a->scount = sendcount;
    if (recvbuf == MPI_IN_PLACE) return true;
  }
  if (!Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false)) return false;
  a->rcount = recvcount;
  return !is_root || SameBytes(c, a);
}

bool FillScatterv(Call& c, Args* a, const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root) {
  if (a->comm->inter)
    return FillScattervInter(c, a, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root);
  if (!Root(c, root, a)) return false;
  const bool is_root = a->comm->rank == root;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (is_root) {
    const int p = a->comm->size;
    if (!Counts(c, sendcounts, p, "sendcounts", true) || !Counts(c, displs, p, "displs", false))
      return false;
    dtype::Type* t = nullptr;
    if (!c.TypeArg(sendtype, &t, "send datatype")) return false;
    a->stype = t;
    a->scounts = sendcounts;
    a->sdispls = displs;
    if (recvbuf == MPI_IN_PLACE) return true;
  }
  if (!Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false)) return false;
  a->rcount = recvcount;
  return true;
}

bool FillAllgather(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                   void* recvbuf, int recvcount, MPI_Datatype recvtype) {
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (!Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false)) return false;
  a->rcount = recvcount;
  if (sendbuf == MPI_IN_PLACE) return true;
  if (!Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false)) return false;
  a->scount = sendcount;
  // Intercommunicators: the sizes to match are the remote group's.
  return a->comm->inter || SameBytes(c, a);
}

bool FillAllgatherv(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                    void* recvbuf, const int recvcounts[], const int displs[],
                    MPI_Datatype recvtype) {
  const int p = a->comm->PeerSize();
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  dtype::Type* t = nullptr;
  if (!Counts(c, recvcounts, p, "recvcounts", true) || !Counts(c, displs, p, "displs", false) ||
      !c.TypeArg(recvtype, &t, "receive datatype"))
    return false;
  a->rtype = t;
  a->rcounts = recvcounts;
  a->rdispls = displs;
  if (sendbuf == MPI_IN_PLACE) return true;
  if (!Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false)) return false;
  a->scount = sendcount;
  if (a->comm->inter) return true;
  return c.Check(sendcount * a->stype->size == recvcounts[a->comm->rank] * t->size, Code::kTruncate,
                 "send size differs from recvcounts[own rank]");
}

bool FillAlltoallv(Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                   const int recvcounts[], const int rdispls[], MPI_Datatype recvtype) {
  const int p = a->comm->PeerSize();
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  dtype::Type* t = nullptr;
  if (!Counts(c, recvcounts, p, "recvcounts", true) || !Counts(c, rdispls, p, "rdispls", false) ||
      !c.TypeArg(recvtype, &t, "receive datatype"))
    return false;
  a->rtype = t;
  a->rcounts = recvcounts;
  a->rdispls = rdispls;
  if (sendbuf == MPI_IN_PLACE) return true;
  if (!Counts(c, sendcounts, p, "sendcounts", true) || !Counts(c, sdispls, p, "sdispls", false) ||
      !c.TypeArg(sendtype, &t, "send datatype"))
    return false;
  a->stype = t;
  a->scounts = sendcounts;
  a->sdispls = sdispls;
  return true;
}

namespace {
thread_local std::vector<const dtype::Type*> t_stypes, t_rtypes;

bool TypeArray(Call& c, const MPI_Datatype* h, int p, const char* what,
               std::vector<const dtype::Type*>& out) {
  if (!c.NotNull(h, what)) return false;
  out.resize(p);
  for (int i = 0; i < p; ++i) {
    dtype::Type* t = nullptr;
    const std::string w = std::string(what) + "[" + std::to_string(i) + "]";
    if (!c.TypeArg(h[i], &t, w.c_str())) return false;
    out[i] = t;
  }
  return true;
}
}  // namespace

bool FillAlltoallw(Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                   const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf,
                   const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[]) {
  const int p = a->comm->PeerSize();
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  if (!Counts(c, recvcounts, p, "recvcounts", true) || !Counts(c, rdispls, p, "rdispls", false) ||
      !TypeArray(c, recvtypes, p, "recvtypes", t_rtypes))
    return false;
  a->rcounts = recvcounts;
  a->rdispls = rdispls;
  a->rtypes = t_rtypes.data();
  if (sendbuf == MPI_IN_PLACE) return true;
  if (!Counts(c, sendcounts, p, "sendcounts", true) || !Counts(c, sdispls, p, "sdispls", false) ||
      !TypeArray(c, sendtypes, p, "sendtypes", t_stypes))
    return false;
  a->scounts = sendcounts;
  a->sdispls = sdispls;
  a->stypes = t_stypes.data();
  return true;
}

bool FillReduceScatterBlock(Call& c, Args* a, const void* sendbuf, void* recvbuf, int recvcount,
                            MPI_Datatype datatype, MPI_Op op) {
  if (!Data(c, recvbuf, recvcount, datatype, &a->rtype, "receive", false)) return false;
  if (sendbuf != MPI_IN_PLACE &&
      !Data(c, sendbuf, recvcount * a->comm->size, datatype, &a->stype, "send", false))
    return false;
  a->stype = a->rtype;
  a->scount = a->rcount = recvcount;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  return OpArg(c, op, a->rtype, a);
}

bool FillReduceScatter(Call& c, Args* a, const void* sendbuf, void* recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op) {
  const int p = a->comm->size;
  if (!Counts(c, recvcounts, p, "recvcounts", true)) return false;
  long long total = 0;
  for (int i = 0; i < p; ++i) total += recvcounts[i];
  if (!Data(c, recvbuf, recvcounts[a->comm->rank], datatype, &a->rtype, "receive", false))
    return false;
  if (sendbuf != MPI_IN_PLACE &&
      !Data(c, sendbuf, static_cast<int>(total), datatype, &a->stype, "send", false))
    return false;
  a->stype = a->rtype;
  a->rcounts = recvcounts;
  a->sendbuf = sendbuf;
  a->recvbuf = recvbuf;
  return OpArg(c, op, a->rtype, a);
}

}  // namespace nicq::coll::capi
