// Packing with large counts (MPI_Pack_c, ...) and in the portable
// "external32" representation (MPI_Pack_external, ...).
#include <cstring>
#include <string>

#include "api/type_internal.h"

using namespace nicq;
using api::Call;
using api::LargeCountArg;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

bool DatarepArg(Call& c, const char* datarep) {
  if (!c.NotNull(datarep, "datarep")) return false;
  return c.Check(
      std::strcmp(datarep, "external32") == 0, Code::kArg,
      std::string("unsupported data representation \"") + datarep + "\" (only \"external32\")");
}

// Packs `count` items at inbuf into outbuf[*position..outsize), native or external32.
int PackInto(Call& c, const void* inbuf, std::int64_t count, MPI_Datatype datatype, void* outbuf,
             std::int64_t outsize, std::int64_t* position, bool external) {
  dtype::Type* t;
  if (!LargeCountArg(c, count, "incount") || !c.TypeArg(datatype, &t) ||
      !c.BufferArg(inbuf, count > 0, t, "inbuf") || !c.NotNull(position, "position") ||
      !LargeCountArg(c, outsize, "outsize"))
    return c.Fail();
  const std::int64_t need = count * (external ? dtype::ExternalSize(*t) : t->size);
  if (*position < 0 || *position + need > outsize)
    return c.Fail(Code::kTruncate, "outsize " + Str(outsize) + " cannot hold " + Str(need) +
                                       " more bytes at position " + Str(*position));
  if (need > 0 && !outbuf) return c.Fail(Code::kBuffer, "outbuf is NULL");
  if (external) {
    if (std::int64_t bad = dtype::FirstUnrepresentable(*t, inbuf, count); bad >= 0)
      return c.Fail(Code(MPI_ERR_CONVERSION),
                    "element " + Str(bad) +
                        " does not fit its external32 size (MPI_LONG and MPI_UNSIGNED_LONG "
                        "have 4 bytes, MPI_WCHAR 2)");
  }
  char* at = static_cast<char*>(outbuf) + *position;
  if (external)
    dtype::PackExternal(*t, inbuf, count, at);
  else
    dtype::Pack(*t, inbuf, count, at);
  *position += need;
  return MPI_SUCCESS;
}

int UnpackFrom(Call& c, const void* inbuf, std::int64_t insize, std::int64_t* position,
               void* outbuf, std::int64_t count, MPI_Datatype datatype, bool external) {
  dtype::Type* t;
  if (!LargeCountArg(c, count, "outcount") || !c.TypeArg(datatype, &t) ||
      !c.BufferArg(outbuf, count > 0, t, "outbuf") || !c.NotNull(position, "position") ||
      !LargeCountArg(c, insize, "insize"))
    return c.Fail();
  const std::int64_t need = count * (external ? dtype::ExternalSize(*t) : t->size);
  if (*position < 0 || *position + need > insize)
    return c.Fail(Code::kTruncate, "insize " + Str(insize) + " holds fewer than " + Str(need) +
                                       " bytes after position " + Str(*position));
  if (need > 0 && !inbuf) return c.Fail(Code::kBuffer, "inbuf is NULL");
  const char* at = static_cast<const char*>(inbuf) + *position;
  if (external)
    dtype::UnpackExternal(*t, at, count, outbuf);
  else
    dtype::Unpack(*t, at, need, count, outbuf);
  *position += need;
  return MPI_SUCCESS;
}

int PackSize(Call& c, std::int64_t count, MPI_Datatype datatype, bool external,
             std::int64_t* size) {
  dtype::Type* t;
  if (!LargeCountArg(c, count, "incount") || !c.TypeArg(datatype, &t) || !c.NotNull(size, "size"))
    return c.Fail();
  *size = count * (external ? dtype::ExternalSize(*t) : t->size);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
               MPI_Count outsize, MPI_Count* position, MPI_Comm comm) {
  Call c("MPI_Pack_c");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc = PackInto(c, inbuf, incount, datatype, outbuf, outsize, position ? &pos : nullptr, false);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                 MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
  Call c("MPI_Unpack_c");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc =
      UnpackFrom(c, inbuf, insize, position ? &pos : nullptr, outbuf, outcount, datatype, false);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  Call c("MPI_Pack_size_c");
  Comm* cm;
  if (!c.Init() || !c.CommArg(comm, &cm)) return c.Fail();
  std::int64_t n = 0;
  int rc = PackSize(c, incount, datatype, false, size ? &n : nullptr);
  if (rc == MPI_SUCCESS) *size = n;
  return rc;
}

int MPI_Pack_external_c(const char datarep[], const void* inbuf, MPI_Count incount,
                        MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                        MPI_Count* position) {
  Call c("MPI_Pack_external_c");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc = PackInto(c, inbuf, incount, datatype, outbuf, outsize, position ? &pos : nullptr, true);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                      void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  Call c("MPI_Pack_external");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc = PackInto(c, inbuf, incount, datatype, outbuf, outsize, position ? &pos : nullptr, true);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize,
                          MPI_Count* position, void* outbuf, MPI_Count outcount,
                          MPI_Datatype datatype) {
  Call c("MPI_Unpack_external_c");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc =
      UnpackFrom(c, inbuf, insize, position ? &pos : nullptr, outbuf, outcount, datatype, true);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                        MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  Call c("MPI_Unpack_external");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t pos = position ? *position : 0;
  int rc =
      UnpackFrom(c, inbuf, insize, position ? &pos : nullptr, outbuf, outcount, datatype, true);
  if (rc == MPI_SUCCESS) *position = pos;
  return rc;
}

int MPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                             MPI_Count* size) {
  Call c("MPI_Pack_external_size_c");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t n = 0;
  int rc = PackSize(c, incount, datatype, true, size ? &n : nullptr);
  if (rc == MPI_SUCCESS) *size = n;
  return rc;
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint* size) {
  Call c("MPI_Pack_external_size");
  if (!DatarepArg(c, datarep)) return c.Fail();
  std::int64_t n = 0;
  int rc = PackSize(c, incount, datatype, true, size ? &n : nullptr);
  if (rc == MPI_SUCCESS) *size = n;
  return rc;
}

}  // extern "C"
