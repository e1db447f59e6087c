// The large-count (_c) datatype constructors and queries. Their
// MPI_Type_get_contents_c record keeps every count, block length and
// displacement as a large count (MPI-4.1's table of combiners).
#include <string>
#include <vector>

#include "api/type_internal.h"

using namespace nicq;
using api::AnyTypeArg;
using api::ArrayArg;
using api::Call;
using api::FinishType;
using api::LargeCountArg;

namespace {

std::vector<std::int64_t> Wide(const MPI_Count* p, std::int64_t n) {
  return n > 0 ? std::vector<std::int64_t>(p, p + n) : std::vector<std::int64_t>{};
}

void Append(std::vector<std::int64_t>& out, const MPI_Count* p, std::int64_t n) {
  if (n > 0) out.insert(out.end(), p, p + n);
}

// Blocks of one old type at byte displacements (the indexed family).
int Blocks(Call& c, const std::vector<std::int64_t>& lens, const std::vector<std::int64_t>& disps,
           MPI_Datatype oldtype, int combiner, std::vector<std::int64_t> counts,
           MPI_Datatype* newtype) {
  std::vector<int> types(lens.size(), oldtype);
  int h = 0;
  Status st = dtype::Struct(c.name(), static_cast<std::int64_t>(lens.size()), lens.data(),
                            disps.data(), types.data(), false, &h);
  return FinishType(c, st, h, combiner, {{}, {}, std::move(counts), {oldtype}}, true, newtype);
}

// Checks shared by the indexed family: count, the arrays, old and new type.
bool IndexedArgs(Call& c, MPI_Count count, const void* lens, const void* disps, MPI_Datatype old,
                 dtype::Type** t, MPI_Datatype* newtype) {
  return LargeCountArg(c, count, "count") && ArrayArg(c, count, lens, "array_of_blocklengths") &&
         ArrayArg(c, count, disps, "array_of_displacements") && AnyTypeArg(c, old, t, "oldtype") &&
         c.NotNull(newtype, "newtype");
}

}  // namespace

extern "C" {

int MPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_contiguous_c");
  dtype::Type* t;
  if (!LargeCountArg(c, count, "count") || !AnyTypeArg(c, oldtype, &t, "oldtype") ||
      !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Contiguous(count, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_CONTIGUOUS, {{}, {}, {count}, {oldtype}}, true, newtype);
}

int MPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_vector_c");
  dtype::Type* t;
  if (!LargeCountArg(c, count, "count") || !LargeCountArg(c, blocklength, "blocklength") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Vector(count, blocklength, stride, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_VECTOR,
                    {{}, {}, {count, blocklength, stride}, {oldtype}}, true, newtype);
}

int MPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hvector_c");
  dtype::Type* t;
  if (!LargeCountArg(c, count, "count") || !LargeCountArg(c, blocklength, "blocklength") ||
      !AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype"))
    return c.Fail();
  int h = 0;
  Status st = dtype::Hvector(count, blocklength, stride, oldtype, &h);
  return FinishType(c, st, h, MPI_COMBINER_HVECTOR,
                    {{}, {}, {count, blocklength, stride}, {oldtype}}, true, newtype);
}

int MPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                       const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                       MPI_Datatype* newtype) {
  Call c("MPI_Type_indexed_c");
  dtype::Type* t;
  if (!IndexedArgs(c, count, array_of_blocklengths, array_of_displacements, oldtype, &t, newtype))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  for (auto& d : disps) d *= t->extent;
  std::vector<std::int64_t> k{count};
  Append(k, array_of_blocklengths, count);
  Append(k, array_of_displacements, count);
  return Blocks(c, Wide(array_of_blocklengths, count), disps, oldtype, MPI_COMBINER_INDEXED,
                std::move(k), newtype);
}

int MPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                               const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hindexed_c");
  dtype::Type* t;
  if (!IndexedArgs(c, count, array_of_blocklengths, array_of_displacements, oldtype, &t, newtype))
    return c.Fail();
  std::vector<std::int64_t> k{count};
  Append(k, array_of_blocklengths, count);
  Append(k, array_of_displacements, count);
  return Blocks(c, Wide(array_of_blocklengths, count), Wide(array_of_displacements, count), oldtype,
                MPI_COMBINER_HINDEXED, std::move(k), newtype);
}

int MPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                    const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  Call c("MPI_Type_create_indexed_block_c");
  dtype::Type* t;
  if (!LargeCountArg(c, blocklength, "blocklength") ||
      !IndexedArgs(c, count, &blocklength, array_of_displacements, oldtype, &t, newtype))
    return c.Fail();
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  for (auto& d : disps) d *= t->extent;
  std::vector<std::int64_t> k{count, blocklength};
  Append(k, array_of_displacements, count);
  return Blocks(c, std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklength), disps,
                oldtype, MPI_COMBINER_INDEXED_BLOCK, std::move(k), newtype);
}

int MPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype* newtype) {
  Call c("MPI_Type_create_hindexed_block_c");
  dtype::Type* t;
  if (!LargeCountArg(c, blocklength, "blocklength") ||
      !IndexedArgs(c, count, &blocklength, array_of_displacements, oldtype, &t, newtype))
    return c.Fail();
  std::vector<std::int64_t> k{count, blocklength};
  Append(k, array_of_displacements, count);
  return Blocks(c, std::vector<std::int64_t>(static_cast<std::size_t>(count), blocklength),
                Wide(array_of_displacements, count), oldtype, MPI_COMBINER_HINDEXED_BLOCK,
                std::move(k), newtype);
}

int MPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[],
                             const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  Call c("MPI_Type_create_struct_c");
  if (!LargeCountArg(c, count, "count") || !c.NotNull(newtype, "newtype") ||
      !ArrayArg(c, count, array_of_blocklengths, "array_of_blocklengths") ||
      !ArrayArg(c, count, array_of_displacements, "array_of_displacements") ||
      !ArrayArg(c, count, array_of_types, "array_of_types"))
    return c.Fail();
  std::vector<std::int64_t> lens = Wide(array_of_blocklengths, count);
  std::vector<std::int64_t> disps = Wide(array_of_displacements, count);
  int h = 0;
  Status st = dtype::Struct(c.name(), count, lens.data(), disps.data(), array_of_types, true, &h);
  dtype::Contents k{{}, {}, {count}, {}};
  Append(k.counts, array_of_blocklengths, count);
  Append(k.counts, array_of_displacements, count);
  if (count > 0) k.types.assign(array_of_types, array_of_types + count);
  return FinishType(c, st, h, MPI_COMBINER_STRUCT, std::move(k), true, newtype);
}

int MPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                               const MPI_Count array_of_subsizes[],
                               const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                               MPI_Datatype* newtype) {
  Call c("MPI_Type_create_subarray_c");
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
  dtype::Contents k{{ndims, order}, {}, sizes, {oldtype}};
  k.counts.insert(k.counts.end(), subs.begin(), subs.end());
  k.counts.insert(k.counts.end(), starts.begin(), starts.end());
  return FinishType(c, st, h, MPI_COMBINER_SUBARRAY, std::move(k), true, newtype);
}

int MPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                             const int array_of_distribs[], const int array_of_dargs[],
                             const int array_of_psizes[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  Call c("MPI_Type_create_darray_c");
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
  dtype::Contents k{{size, rank, ndims}, {}, gsizes, {oldtype}};
  k.ints.insert(k.ints.end(), array_of_distribs, array_of_distribs + ndims);
  k.ints.insert(k.ints.end(), array_of_dargs, array_of_dargs + ndims);
  k.ints.insert(k.ints.end(), array_of_psizes, array_of_psizes + ndims);
  k.ints.push_back(order);
  return FinishType(c, st, h, MPI_COMBINER_DARRAY, std::move(k), true, newtype);
}

int MPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                              MPI_Datatype* newtype) {
  Call c("MPI_Type_create_resized_c");
  dtype::Type* t;
  if (!AnyTypeArg(c, oldtype, &t, "oldtype") || !c.NotNull(newtype, "newtype")) return c.Fail();
  int h = 0;
  Status st = dtype::Resized(oldtype, lb, extent, &h);
  return FinishType(c, st, h, MPI_COMBINER_RESIZED, {{}, {}, {lb, extent}, {oldtype}}, true,
                    newtype);
}

int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  Call c("MPI_Type_get_extent_c");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(lb, "lb") || !c.NotNull(extent, "extent"))
    return c.Fail();
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  Call c("MPI_Type_size_c");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(size, "size")) return c.Fail();
  *size = t->size;
  return MPI_SUCCESS;
}

int MPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  return PMPI_Get_elements_x(status, datatype, count);
}

}  // extern "C"
