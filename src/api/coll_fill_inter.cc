// Argument checks of the rooted collectives on an intercommunicator (MPI
// 4.1 6.2.2): in the root's group the root passes MPI_ROOT and the others
// MPI_PROC_NULL; the other group passes the root's rank in the remote
// group. Each process checks only the arguments its role reads (MPI_PROC_NULL
// processes: none), and MPI_IN_PLACE is never allowed (coll_run.cc).
#include <string>

#include "api/coll_c_fill.h"

namespace nicq::coll::capi {

using api::Call;

namespace {

// Root of a rooted intercommunicator collective; true when valid.
bool InterRoot(Call& c, int root, Args* a) {
  a->root = root;
  const int q = a->comm->PeerSize();
  return c.Check(root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < q), Code::kRoot,
                 "invalid root " + std::to_string(root) +
                     " on an intercommunicator (MPI_ROOT, MPI_PROC_NULL or a rank of the "
                     "remote group of size " +
                     std::to_string(q) + ")");
}

bool InPlaceRefused(Call& c, const void* buf, const char* what) {
  return c.Check(buf != MPI_IN_PLACE, Code::kBuffer,
                 std::string("MPI_IN_PLACE is not allowed for the ") + what +
                     " buffer on an intercommunicator");
}

}  // namespace

bool FillBcastInter(Call& c, Args* a, void* buffer, int count, MPI_Datatype datatype, int root) {
  if (!InterRoot(c, root, a)) return false;
  if (root == MPI_PROC_NULL) return true;
  if (!InPlaceRefused(c, buffer, "bcast") ||
      !Data(c, buffer, count, datatype, &a->stype, "buffer", false))
    return false;
  a->rtype = a->stype;
  a->scount = a->rcount = count;
  a->sendbuf = a->recvbuf = buffer;
  return true;
}

bool FillReduceInter(Call& c, Args* a, const void* sendbuf, void* recvbuf, int count,
                     MPI_Datatype datatype, MPI_Op op, int root) {
  if (!InterRoot(c, root, a)) return false;
  if (root == MPI_PROC_NULL) return true;
  const bool is_root = root == MPI_ROOT;
  const dtype::Type** t = is_root ? &a->rtype : &a->stype;
  if (!InPlaceRefused(c, is_root ? recvbuf : sendbuf, is_root ? "receive" : "send") ||
      !Data(c, is_root ? recvbuf : sendbuf, count, datatype, t, is_root ? "receive" : "send",
            false))
    return false;
  a->stype = a->rtype = *t;
  a->scount = a->rcount = count;
  if (is_root)
    a->recvbuf = recvbuf;
  else
    a->sendbuf = sendbuf;
  return OpArg(c, op, *t, a);
}

bool FillGatherInter(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                     void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (!InterRoot(c, root, a)) return false;
  if (root == MPI_PROC_NULL) return true;
  if (root == MPI_ROOT) {
    if (!InPlaceRefused(c, recvbuf, "receive") ||
        !Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false))
      return false;
    a->recvbuf = recvbuf;
    a->rcount = recvcount;
    return true;
  }
  if (!InPlaceRefused(c, sendbuf, "send") ||
      !Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false))
    return false;
  a->sendbuf = sendbuf;
  a->scount = sendcount;
  return true;
}

bool FillGathervInter(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const int recvcounts[], const int displs[],
                      MPI_Datatype recvtype, int root) {
  if (root != MPI_ROOT)
    return FillGatherInter(c, a, sendbuf, sendcount, sendtype, nullptr, 0, MPI_DATATYPE_NULL, root);
  const int q = a->comm->PeerSize();
  a->root = root;
  dtype::Type* t = nullptr;
  if (!InPlaceRefused(c, recvbuf, "receive") || !Counts(c, recvcounts, q, "recvcounts", true) ||
      !Counts(c, displs, q, "displs", false) || !c.TypeArg(recvtype, &t, "receive datatype"))
    return false;
  long long total = 0;
  for (int i = 0; i < q; ++i) total += recvcounts[i];
  if (!c.BufferArg(recvbuf, total > 0 ? 1 : 0, t, "receive")) return false;
  a->recvbuf = recvbuf;
  a->rtype = t;
  a->rcounts = recvcounts;
  a->rdispls = displs;
  return true;
}

bool FillScatterInter(Call& c, Args* a, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                      void* recvbuf, int recvcount, MPI_Datatype recvtype, int root) {
  if (!InterRoot(c, root, a)) return false;
  if (root == MPI_PROC_NULL) return true;
  if (root == MPI_ROOT) {
    if (!InPlaceRefused(c, sendbuf, "send") ||
        !Data(c, sendbuf, sendcount, sendtype, &a->stype, "send", false))
      return false;
    a->sendbuf = sendbuf;
    a->scount = sendcount;
    return true;
  }
  if (!InPlaceRefused(c, recvbuf, "receive") ||
      !Data(c, recvbuf, recvcount, recvtype, &a->rtype, "receive", false))
    return false;
  a->recvbuf = recvbuf;
  a->rcount = recvcount;
  return true;
}

bool FillScattervInter(Call& c, Args* a, const void* sendbuf, const int sendcounts[],
                       const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount,
                       MPI_Datatype recvtype, int root) {
  if (root != MPI_ROOT)
    return FillScatterInter(c, a, nullptr, 0, MPI_DATATYPE_NULL, recvbuf, recvcount, recvtype,
                            root);
  const int q = a->comm->PeerSize();
  a->root = root;
  dtype::Type* t = nullptr;
  if (!InPlaceRefused(c, sendbuf, "send") || !Counts(c, sendcounts, q, "sendcounts", true) ||
      !Counts(c, displs, q, "displs", false) || !c.TypeArg(sendtype, &t, "send datatype"))
    return false;
  long long total = 0;
  for (int i = 0; i < q; ++i) total += sendcounts[i];
  if (!c.BufferArg(sendbuf, total > 0 ? 1 : 0, t, "send")) return false;
  a->sendbuf = sendbuf;
  a->stype = t;
  a->scounts = sendcounts;
  a->sdispls = displs;
  return true;
}

}  // namespace nicq::coll::capi
