// Memory and address helpers (MPI_Alloc_mem, MPI_Aint_add/diff) and
// datatype names and envelopes.
#include <cstdlib>
#include <cstring>
#include <string>

#include "api/api_internal.h"

using namespace nicq;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

// Page alignment keeps registered buffers from sharing pages with other data.
constexpr std::size_t kAllocAlign = 4096;

// Any live datatype handle, committed or not (names and envelopes do not care).
bool AnyTypeArg(Call& c, MPI_Datatype h, dtype::Type** out) {
  if (!c.Check(h != MPI_DATATYPE_NULL, Code::kType, "datatype is MPI_DATATYPE_NULL")) return false;
  *out = dtype::Lookup(h);
  return c.Check(*out != nullptr, Code::kType,
                 "invalid datatype " + Str(h) + " " + dtype::TypeName(h));
}

}  // namespace

extern "C" {

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  Call c("MPI_Alloc_mem");
  if (!c.Check(size >= 0, Code::kArg, "negative size " + Str(size)) ||
      !c.NotNull(baseptr, "baseptr"))
    return c.Fail();
  void* p = nullptr;
  std::size_t bytes = size == 0 ? kAllocAlign : static_cast<std::size_t>(size);
  if (posix_memalign(&p, kAllocAlign, bytes) != 0)
    return c.Fail(Code::kNoMem, "cannot allocate " + Str(size) + " bytes");
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int MPI_Free_mem(void* base) {
  std::free(base);
  return MPI_SUCCESS;
}

MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  // Unsigned arithmetic: addresses may exceed LONG_MAX on some systems.
  return static_cast<MPI_Aint>(static_cast<unsigned long>(base) + static_cast<unsigned long>(disp));
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<unsigned long>(addr1) -
                               static_cast<unsigned long>(addr2));
}

int MPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  Call c("MPI_Type_set_name");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(type_name, "type_name")) return c.Fail();
  t->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  Call c("MPI_Type_get_name");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(type_name, "type_name") ||
      !c.NotNull(resultlen, "resultlen"))
    return c.Fail();
  // Predefined types are named after their handle until renamed; derived ones start empty.
  std::string n = t->name.empty() && t->predefined ? dtype::TypeName(datatype) : t->name;
  std::memcpy(type_name, n.c_str(), n.size() + 1);
  *resultlen = static_cast<int>(n.size());
  return MPI_SUCCESS;
}

}  // extern "C"
