// MPI-4.1's status field accessors (MPI_Status_get/set_source, _tag,
// _error) and the Fortran conversions of handles and statuses. nicq's
// handles are already ints, so a handle's Fortran form is the handle itself;
// a Fortran status is the C status's bytes as MPI_F_STATUS_SIZE integers.
#include <cstring>

#include "api/api_internal.h"

using namespace nicq;
using nicq::api::Call;

namespace {

bool StatusPtr(Call& c, const void* s, const char* what) {
  if (s != nullptr && s != MPI_STATUS_IGNORE) return true;
  return c.Check(false, Code::kArg, std::string(what) + " is NULL or MPI_STATUS_IGNORE");
}

int GetField(const char* call, const MPI_Status* status, int* out, int MPI_Status::*field) {
  Call c(call);
  if (!StatusPtr(c, status, "status") || !c.NotNull(out, "output")) return c.Fail();
  *out = status->*field;
  return MPI_SUCCESS;
}

int SetField(const char* call, MPI_Status* status, int value, int MPI_Status::*field) {
  Call c(call);
  if (!StatusPtr(c, status, "status")) return c.Fail();
  status->*field = value;
  return MPI_SUCCESS;
}

}  // namespace

static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
              "MPI_F_STATUS_SIZE must cover MPI_Status");

extern "C" {

int MPI_Status_get_source(MPI_Status* status, int* source) {
  return GetField("MPI_Status_get_source", status, source, &MPI_Status::MPI_SOURCE);
}
int MPI_Status_get_tag(MPI_Status* status, int* tag) {
  return GetField("MPI_Status_get_tag", status, tag, &MPI_Status::MPI_TAG);
}
int MPI_Status_get_error(MPI_Status* status, int* error) {
  return GetField("MPI_Status_get_error", status, error, &MPI_Status::MPI_ERROR);
}
int MPI_Status_set_source(MPI_Status* status, int source) {
  return SetField("MPI_Status_set_source", status, source, &MPI_Status::MPI_SOURCE);
}
int MPI_Status_set_tag(MPI_Status* status, int tag) {
  return SetField("MPI_Status_set_tag", status, tag, &MPI_Status::MPI_TAG);
}
int MPI_Status_set_error(MPI_Status* status, int error) {
  return SetField("MPI_Status_set_error", status, error, &MPI_Status::MPI_ERROR);
}

int MPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  Call c("MPI_Status_c2f");
  if (!StatusPtr(c, c_status, "c_status") || !c.NotNull(f_status, "f_status")) return c.Fail();
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int MPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  Call c("MPI_Status_f2c");
  if (!c.NotNull(f_status, "f_status") || !StatusPtr(c, c_status, "c_status")) return c.Fail();
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

#define NICQ_HANDLE_CONVERSIONS(NAME, TYPE) \
  MPI_Fint MPI_##NAME##_c2f(TYPE h) {       \
    return static_cast<MPI_Fint>(h);        \
  }                                         \
  TYPE MPI_##NAME##_f2c(MPI_Fint h) {       \
    return static_cast<TYPE>(h);            \
  }
NICQ_HANDLE_CONVERSIONS(Comm, MPI_Comm)
NICQ_HANDLE_CONVERSIONS(Type, MPI_Datatype)
NICQ_HANDLE_CONVERSIONS(Group, MPI_Group)
NICQ_HANDLE_CONVERSIONS(Request, MPI_Request)
NICQ_HANDLE_CONVERSIONS(File, MPI_File)
NICQ_HANDLE_CONVERSIONS(Win, MPI_Win)
NICQ_HANDLE_CONVERSIONS(Op, MPI_Op)
NICQ_HANDLE_CONVERSIONS(Info, MPI_Info)
NICQ_HANDLE_CONVERSIONS(Errhandler, MPI_Errhandler)
NICQ_HANDLE_CONVERSIONS(Message, MPI_Message)
NICQ_HANDLE_CONVERSIONS(Session, MPI_Session)
#undef NICQ_HANDLE_CONVERSIONS

}  // extern "C"
