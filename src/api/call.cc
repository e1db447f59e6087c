// Argument checks shared by all entry points, and the communicator handle table.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string>

#include "api/api_internal.h"
#include "dtype/slot_table.h"
#include "runtime/runtime.h"

namespace nicq::api {
namespace {

struct CommSlot {
  Comm* comm = nullptr;
};
constexpr int kFirstUserComm = 3;  // 1 = MPI_COMM_WORLD, 2 = MPI_COMM_SELF

struct CommTable {
  dtype::SlotTable<CommSlot, 8, 64> user{kFirstUserComm};
};
CommTable& Comms() {
  static auto* table = new CommTable();
  return *table;
}

std::string Str(long long v) {
  return std::to_string(v);
}

}  // namespace

std::string RankText() {
  if (!IsInitialized()) return IsFinalized() ? "after MPI_Finalize" : "before MPI_Init";
  return "rank " + std::to_string(rt::WorldRank());
}

std::atomic<Comm*> g_predefined_comms[2] = {};

Comm* LookupUserComm(int handle) {
  if (KindOf(handle) != NICQ_KIND_COMM) return nullptr;
  int index = IndexOf(handle);
  if (index < kFirstUserComm) return nullptr;
  CommSlot* s = Comms().user.Get(index);
  return s ? s->comm : nullptr;
}

int RegisterComm(Comm* comm) {
  int index = Comms().user.Alloc();
  if (index < 0) return MPI_COMM_NULL;
  Comms().user.Get(index)->comm = comm;
  int handle = NICQ_HANDLE(NICQ_KIND_COMM, index);
  comm->api_data = reinterpret_cast<void*>(static_cast<std::intptr_t>(handle));
  return handle;
}

void UnregisterComm(int handle) {
  int index = IndexOf(handle);
  if (CommSlot* s = Comms().user.Get(index)) s->comm = nullptr;
  Comms().user.Free(index);
}

int CommCountInUse() {
  const int predefined = (g_predefined_comms[0].load(std::memory_order_acquire) != nullptr) +
                         (g_predefined_comms[1].load(std::memory_order_acquire) != nullptr);
  return predefined + Comms().user.LiveCount();
}

void RegisterPredefinedComms(Comm* world, Comm* self) {
  world->api_data = reinterpret_cast<void*>(static_cast<std::intptr_t>(MPI_COMM_WORLD));
  self->api_data = reinterpret_cast<void*>(static_cast<std::intptr_t>(MPI_COMM_SELF));
  world->errhandler = MPI_ERRORS_ARE_FATAL;
  self->errhandler = MPI_ERRORS_ARE_FATAL;
  g_predefined_comms[0].store(world, std::memory_order_release);
  g_predefined_comms[1].store(self, std::memory_order_release);
}

void ResetCommTable() {
  g_predefined_comms[0].store(nullptr, std::memory_order_release);
  g_predefined_comms[1].store(nullptr, std::memory_order_release);
}

// ---- Call --------------------------------------------------------------------------

bool Call::Check(bool ok, Code cls, const std::string& message) {
  if (ok) return true;
  if (cls_ == Code::kOk) {  // keep the first error
    cls_ = cls;
    message_ = std::string(name_) + "(" + RankText() + "): " + message;
  }
  return false;
}

int Call::Fail() {
  if (cls_ == Code::kOk) return MPI_SUCCESS;
  return Raise(comm_handle_, cls_, message_);
}

int Call::Fail(const Status& st) {
  if (st.ok()) return MPI_SUCCESS;
  return RaiseStatus(comm_handle_, name_, st);
}

bool Call::InitFailed() {
  return Check(false, Code::kOther,
               IsFinalized() ? "called after MPI_Finalize" : "called before MPI_Init");
}

bool Call::NullFailed(const char* what) {
  return Check(false, Code::kArg, std::string(what) + " is NULL");
}

bool Call::CommFailed(MPI_Comm handle) {
  if (handle == MPI_COMM_NULL) return Check(false, Code::kComm, "communicator is MPI_COMM_NULL");
  const char* why = KindOf(handle) == NICQ_KIND_COMM ? "freed or invalid communicator "
                                                     : "not a communicator handle: ";
  return Check(false, Code::kComm, why + Str(handle));
}

bool Call::CountFailed(std::int64_t count, const char* what) {
  return Check(false, Code::kCount, std::string("negative ") + what + " " + Str(count));
}

bool Call::TypeFailed(MPI_Datatype handle, const dtype::Type* found, const char* what) {
  if (handle == MPI_DATATYPE_NULL)
    return Check(false, Code::kType, std::string(what) + " is MPI_DATATYPE_NULL");
  if (!found)
    return Check(
        false, Code::kType,
        std::string("invalid ") + what + " " + Str(handle) + " " + dtype::TypeName(handle));
  return Check(false, Code::kType,
               std::string(what) + " is not committed (call MPI_Type_commit first)");
}

bool Call::BottomFailed(std::int64_t count, const dtype::Type* t, const char* what) {
  // Absolute addresses start past the zero page; a type whose data starts
  // lower would read or write at address 0 plus a small offset.
  constexpr std::int64_t kLowestAddress = 4096;
  if (t && !t->blocks.empty()) {
    std::int64_t lowest = t->blocks.front().offset;
    for (const dtype::Block& b : t->blocks) lowest = std::min(lowest, b.offset);
    if (lowest >= kLowestAddress && (t->extent >= 0 || count == 1)) return true;
  }
  return Check(false, Code::kBuffer,
               std::string(what) + " is NULL with count " + Str(count) +
                   " > 0 (MPI_BOTTOM needs a type whose data lies at absolute addresses)");
}

bool Call::RankFailed(int rank, const Comm* comm, const char* which) {
  return Check(false, Code::kRank,
               std::string("invalid ") + which + " rank " + Str(rank) +
                   (comm->inter ? " (remote group size " : " (communicator size ") +
                   Str(comm->PeerSize()) + ")");
}

bool Call::TagFailed(int tag, bool any_ok) {
  return Check(false, Code::kTag,
               "invalid tag " + Str(tag) +
                   (any_ok ? " (must be MPI_ANY_TAG or 0.." : " (must be 0..") +
                   Str(rt::TagUpperBound()) + ")");
}

}  // namespace nicq::api
