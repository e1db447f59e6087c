// Datatype constructors with int arguments (MPI_Type_contiguous ..
// MPI_Type_create_darray, MPI_Type_dup). Each records its arguments for
// MPI_Type_get_contents in the layout MPI-4.1's table of combiners gives.
#include <string>
#include <vector>

#include "api/type_internal.h"

using namespace nicq;
using api::Call;

namespace nicq::api {

bool AnyTypeArg(Call& c, MPI_Datatype h, dtype::Type** out, const char* what) {
  *out = h == MPI_DATATYPE_NULL ? nullptr : dtype::Lookup(h);
  if (h == MPI_DATATYPE_NULL)
    return c.Check(false, Code::kType, std::string(what) + " is MPI_DATATYPE_NULL");
  return *out != nullptr || c.Check(false, Code::kType,
                                    std::string("invalid ") + what + " " + std::to_string(h) + " " +
                                        dtype::TypeName(h));
}

bool LargeCountArg(Call& c, std::int64_t v, const char* what) {
  return v >= 0 || c.Check(false, Code::kCount,
                           std::string(what) + " is negative (" + std::to_string(v) + ")");
}

bool ArrayArg(Call& c, std::int64_t n, const void* p, const char* what) {
  return n == 0 || c.NotNull(p, what);
}

int FinishType(Call& c, const Status& st, int h, int combiner, dtype::Contents contents, bool large,
               MPI_Datatype* newtype) {
  if (!st.ok()) return c.Fail(st);
  dtype::SetContents(dtype::Lookup(h), combiner, std::move(contents), large);
  *newtype = h;
  return MPI_SUCCESS;
}

}  // namespace nicq::api

namespace {

using api::AnyTypeArg;
using api::ArrayArg;
using api::FinishType;

template <typename T>
std::vector<std::int64_t> Wide(const T* p, std::int64_t n) {
  return n > 0 ? std::vector<std::int64_t>(p, p + n) : std::vector<std::int64_t>{};
}

void Append(std::vector<int>& out, const int* p, int n) {
  if (n > 0) out.insert(out.end(), p, p + n);
}

// Blocks of one old type at byte displacements (the indexed family).
int Blocks(Call& c, const std::vector<std::int64_t>& lens, const std::vector<std::int64_t>& disps,
           MPI_Datatype oldtype, int combiner, dtype::Contents contents, MPI_Datatype* newtype) {
  std::vector<int> types(lens.size(), oldtype);
  int h = 0;
  Status st = dtype::Struct(c.name(), static_cast<std::int64_t>(lens.size()), lens.data(),
                            disps.data(), types.data(), false, &h);
  contents.types = {oldtype};
  return FinishType(c, st, h, combiner, std::move(contents), false, newtype);
}

}  // namespace

extern "C" {

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_contiguous");
  dtype::Type* t;
  if (!c.CountArg(count) || !AnyTypeArg(c, oldtype, &t, "oldtype") ||
      !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Contiguous(count, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_CONTIGUOUS, {{count}, {}, {}, {oldtype}}, false,
                    newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype* newtype) {
  Call c("MPI_Type_vector");
  dtype::Type* t;
  if (!c.CountArg(count) || !c.CountArg(blocklength, "blocklength") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Vector(count, blocklength, stride, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_VECTOR,
                    {{count, blocklength, stride}, {}, {}, {oldtype}}, false, newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hvector");
  dtype::Type* t;
  if (!c.CountArg(count) || !c.CountArg(blocklength, "blocklength") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Hvector(count, blocklength, stride, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_HVECTOR, {{count, blocklength}, {stride}, {}, {oldtype}},
                    false, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[],
                     const int array_of_displacements[], MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  Call c("MPI_Type_indexed");
  dtype::Type* t;
  if (!c.CountArg(count) || !ArrayArg(c, count, array_of_blocklengths, "array_of_blocklengths") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  for (auto& d : disps) d *= t->extent;
  dtype::Contents k{{count}, {}, {}, {}};
  Append(k.ints, array_of_blocklengths, count);
  Append(k.ints, array_of_displacements, count);
  return Blocks(c, Wide(array_of_blocklengths, count), disps, oldtype, MPI_COMBINER_INDEXED,
                std::move(k), newtype);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                             const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hindexed");
  dtype::Type* t;
  if (!c.CountArg(count) || !ArrayArg(c, count, array_of_blocklengths, "array_of_blocklengths") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  dtype::Contents k{{count}, disps, {}, {}};
  Append(k.ints, array_of_blocklengths, count);
  return Blocks(c, Wide(array_of_blocklengths, count), disps, oldtype, MPI_COMBINER_HINDEXED,
                std::move(k), newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_create_indexed_block");
  dtype::Type* t;
  if (!c.CountArg(count) || !c.CountArg(blocklength, "blocklength") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  for (auto& d : disps) d *= t->extent;
  dtype::Contents k{{count, blocklength}, {}, {}, {}};
  Append(k.ints, array_of_displacements, count);
  return Blocks(c, std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklength), disps,
                oldtype, MPI_COMBINER_INDEXED_BLOCK, std::move(k), newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength,
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hindexed_block");
  dtype::Type* t;
  if (!c.CountArg(count) || !c.CountArg(blocklength, "blocklength") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  return Blocks(c, std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklength), disps,
                oldtype, MPI_COMBINER_HINDEXED_BLOCK, {{count, blocklength}, disps, {}, {}},
                newtype);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                           const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  Call c("MPI_Type_create_struct");
  if (!c.CountArg(count) || !c.NotNull(newtype, "newtype") ||
      !ArrayArg(c, count, array_of_blocklengths, "array_of_blocklengths") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !ArrayArg(c, count, array_of_types, "array_of_types"))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  std::vector<std::int64_t> lens = Wide(array_of_blocklengths, count);
  int h = 0;
  Status st = dtype::Struct(c.name(), count, lens.data(), disps.data(), array_of_types, true, &h);
  dtype::Contents k{{count}, disps, {}, {}};
  Append(k.ints, array_of_blocklengths, count);
  Append(k.types, array_of_types, count);
  return FinishType(c, st, h, MPI_COMBINER_STRUCT, std::move(k), false, newtype);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  Call c("MPI_Type_create_subarray");
  dtype::Type* t;
  if (!c.Check(ndims > 0, Code::kArg, "ndims " + std::to_string(ndims) + " is not positive") ||
      !c.NotNull(array_of_sizes, "array_of_sizes") ||
      !c.NotNull(array_of_subsizes, "array_of_subsizes") ||
      !c.NotNull(array_of_starts, "array_of_starts") || !AnyTypeArg(c, oldtype, &t, "oldtype") ||
      !c.NotNull(newtype, "newtype"))
    return c.Fail();
  auto sizes = Wide(array_of_sizes, ndims), subs = Wide(array_of_subsizes, ndims),
       starts = Wide(array_of_starts, ndims);
  int h = 0;
  Status st = dtype::Subarray(c.name(), ndims, sizes.data(), subs.data(), starts.data(), order,
                              oldtype, &h);
  dtype::Contents k{{ndims}, {}, {}, {oldtype}};
  Append(k.ints, array_of_sizes, ndims);
  Append(k.ints, array_of_subsizes, ndims);
  Append(k.ints, array_of_starts, ndims);
  k.ints.push_back(order);
  return FinishType(c, st, h, MPI_COMBINER_SUBARRAY, std::move(k), false, newtype);
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype* newtype) {
  Call c("MPI_Type_create_darray");
  dtype::Type* t;
  if (!c.Check(ndims > 0, Code::kArg, "ndims " + std::to_string(ndims) + " is not positive") ||
      !c.NotNull(array_of_gsizes, "array_of_gsizes") ||
      !c.NotNull(array_of_distribs, "array_of_distribs") ||
      !c.NotNull(array_of_dargs, "array_of_dargs") ||
      !c.NotNull(array_of_psizes, "array_of_psizes") || !AnyTypeArg(c, oldtype, &t, "oldtype") ||
      !c.NotNull(newtype, "newtype"))
    return c.Fail();
  auto gsizes = Wide(array_of_gsizes, ndims);
  int h = 0;
  Status st = dtype::Darray(c.name(), size, rank, ndims, gsizes.data(), array_of_distribs,
                            array_of_dargs, array_of_psizes, order, oldtype, &h);
  dtype::Contents k{{size, rank, ndims}, {}, {}, {oldtype}};
  Append(k.ints, array_of_gsizes, ndims);
  Append(k.ints, array_of_distribs, ndims);
  Append(k.ints, array_of_dargs, ndims);
  Append(k.ints, array_of_psizes, ndims);
  k.ints.push_back(order);
  return FinishType(c, st, h, MPI_COMBINER_DARRAY, std::move(k), false, newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype* newtype) {
  Call c("MPI_Type_create_resized");
  dtype::Type* t;
  if (!AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype")) return c.Fail();
  int h = 0;
  Status st = dtype::Resized(oldtype, lb, extent, &h);
  return FinishType(c, st, h, MPI_COMBINER_RESIZED, {{}, {lb, extent}, {}, {oldtype}}, false,
                    newtype);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_dup");
  dtype::Type* t;
  if (!AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype")) return c.Fail();
  int h = 0;
  Status st = dtype::Dup(oldtype, &h);
  if (!st.ok()) return c.Fail(st);
  if (int rc = api::CopyTypeAttrs(c, oldtype, h); rc != MPI_SUCCESS) {
    dtype::Free(&h).IgnoreError();
    return rc;
  }
  return FinishType(c, st, h, MPI_COMBINER_DUP, {{}, {}, {}, {oldtype}}, false, newtype);
}

}  // extern "C"
