// Datatype queries: true extent, envelope and contents (the constructor
// that made a type and its arguments), matching a size to a named type,
// and the pair type of a value and index type.
#include <cfloat>
#include <climits>
#include <string>

#include "api/type_internal.h"

using namespace nicq;
using api::AnyTypeArg;
using api::Call;

namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

// A named type has no constructor to report (MPI_Type_get_contents on it is erroneous).
bool DerivedArg(Call& c, MPI_Datatype h, const dtype::Type* t) {
  return c.Check(t->combiner != MPI_COMBINER_NAMED, Code::kType,
                 std::string("datatype ") + dtype::TypeName(h) +
                     " is predefined (combiner MPI_COMBINER_NAMED) and has no contents");
}

// The int forms cannot describe a type made by a large-count constructor.
bool SmallArg(Call& c, const dtype::Type* t) {
  return c.Check(t->contents.counts.empty(), Code::kType,
                 "the datatype was made by a large-count (_c) constructor; use the _c query");
}

bool RoomArg(Call& c, std::int64_t have, std::size_t need, const char* what) {
  return c.Check(have >= static_cast<std::int64_t>(need), Code::kArg,
                 std::string(what) + " is " + Str(have) + ", the type has " + Str(need));
}

// Copies the contents out; derived types handed out are retained (the
// caller frees them, as MPI specifies).
void CopyContents(const dtype::Contents& k, int* ints, MPI_Aint* addrs, MPI_Count* counts,
                  MPI_Datatype* types) {
  for (std::size_t i = 0; i < k.ints.size(); ++i) ints[i] = k.ints[i];
  for (std::size_t i = 0; i < k.addrs.size(); ++i) addrs[i] = k.addrs[i];
  for (std::size_t i = 0; i < k.counts.size(); ++i) counts[i] = k.counts[i];
  for (std::size_t i = 0; i < k.types.size(); ++i) {
    types[i] = k.types[i];
    if (dtype::Type* t = dtype::Lookup(k.types[i])) dtype::Retain(t);
  }
}

}  // namespace

extern "C" {

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  Call c("MPI_Type_get_true_extent_x");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(true_lb, "true_lb") ||
      !c.NotNull(true_extent, "true_extent"))
    return c.Fail();
  std::int64_t lb, extent;
  dtype::TrueBounds(*t, &lb, &extent);
  *true_lb = lb;
  *true_extent = extent;
  return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  return PMPI_Type_get_true_extent_x(datatype, true_lb, true_extent);
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  Call c("MPI_Type_get_true_extent");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(true_lb, "true_lb") ||
      !c.NotNull(true_extent, "true_extent"))
    return c.Fail();
  std::int64_t lb, extent;
  dtype::TrueBounds(*t, &lb, &extent);
  *true_lb = lb;
  *true_extent = extent;
  return MPI_SUCCESS;
}

int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                            MPI_Count* num_addresses, MPI_Count* num_large_counts,
                            MPI_Count* num_datatypes, int* combiner) {
  Call c("MPI_Type_get_envelope_c");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(num_integers, "num_integers") ||
      !c.NotNull(num_addresses, "num_addresses") ||
      !c.NotNull(num_large_counts, "num_large_counts") ||
      !c.NotNull(num_datatypes, "num_datatypes") || !c.NotNull(combiner, "combiner"))
    return c.Fail();
  *num_integers = static_cast<MPI_Count>(t->contents.ints.size());
  *num_addresses = static_cast<MPI_Count>(t->contents.addrs.size());
  *num_large_counts = static_cast<MPI_Count>(t->contents.counts.size());
  *num_datatypes = static_cast<MPI_Count>(t->contents.types.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                          int* num_datatypes, int* combiner) {
  Call c("MPI_Type_get_envelope");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !c.NotNull(num_integers, "num_integers") ||
      !c.NotNull(num_addresses, "num_addresses") || !c.NotNull(num_datatypes, "num_datatypes") ||
      !c.NotNull(combiner, "combiner") || !SmallArg(c, t))
    return c.Fail();
  *num_integers = static_cast<int>(t->contents.ints.size());
  *num_addresses = static_cast<int>(t->contents.addrs.size());
  *num_datatypes = static_cast<int>(t->contents.types.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes,
                            int array_of_integers[], MPI_Aint array_of_addresses[],
                            MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
  Call c("MPI_Type_get_contents_c");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !DerivedArg(c, datatype, t)) return c.Fail();
  const dtype::Contents& k = t->contents;
  if (!RoomArg(c, max_integers, k.ints.size(), "max_integers") ||
      !RoomArg(c, max_addresses, k.addrs.size(), "max_addresses") ||
      !RoomArg(c, max_large_counts, k.counts.size(), "max_large_counts") ||
      !RoomArg(c, max_datatypes, k.types.size(), "max_datatypes") ||
      !api::ArrayArg(c, std::int64_t(k.ints.size()), array_of_integers, "array_of_integers") ||
      !api::ArrayArg(c, std::int64_t(k.addrs.size()), array_of_addresses, "array_of_addresses") ||
      !api::ArrayArg(c, std::int64_t(k.counts.size()), array_of_large_counts,
                     "array_of_large_counts") ||
      !api::ArrayArg(c, std::int64_t(k.types.size()), array_of_datatypes, "array_of_datatypes"))
    return c.Fail();
  CopyContents(k, array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes);
  return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]) {
  Call c("MPI_Type_get_contents");
  dtype::Type* t;
  if (!AnyTypeArg(c, datatype, &t) || !DerivedArg(c, datatype, t) || !SmallArg(c, t))
    return c.Fail();
  const dtype::Contents& k = t->contents;
  if (!RoomArg(c, max_integers, k.ints.size(), "max_integers") ||
      !RoomArg(c, max_addresses, k.addrs.size(), "max_addresses") ||
      !RoomArg(c, max_datatypes, k.types.size(), "max_datatypes") ||
      !api::ArrayArg(c, std::int64_t(k.ints.size()), array_of_integers, "array_of_integers") ||
      !api::ArrayArg(c, std::int64_t(k.addrs.size()), array_of_addresses, "array_of_addresses") ||
      !api::ArrayArg(c, std::int64_t(k.types.size()), array_of_datatypes, "array_of_datatypes"))
    return c.Fail();
  CopyContents(k, array_of_integers, array_of_addresses, nullptr, array_of_datatypes);
  return MPI_SUCCESS;
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  Call c("MPI_Type_match_size");
  if (!c.NotNull(datatype, "datatype")) return c.Fail();
  MPI_Datatype found = MPI_DATATYPE_NULL;
  if (typeclass == MPI_TYPECLASS_INTEGER) {
    found = size == 1   ? MPI_INT8_T
            : size == 2 ? MPI_INT16_T
            : size == 4 ? MPI_INT32_T
            : size == 8 ? MPI_INT64_T
                        : MPI_DATATYPE_NULL;
  } else if (typeclass == MPI_TYPECLASS_REAL) {
    found = size == int(sizeof(float))         ? MPI_FLOAT
            : size == int(sizeof(double))      ? MPI_DOUBLE
            : size == int(sizeof(long double)) ? MPI_LONG_DOUBLE
                                               : MPI_DATATYPE_NULL;
  } else if (typeclass == MPI_TYPECLASS_COMPLEX) {
    // The C names: nicq has no Fortran MPI_COMPLEX; the C complex types are
    // the ones a C caller can hold the result in.
    found = size == int(2 * sizeof(float))         ? MPI_C_FLOAT_COMPLEX
            : size == int(2 * sizeof(double))      ? MPI_C_DOUBLE_COMPLEX
            : size == int(2 * sizeof(long double)) ? MPI_C_LONG_DOUBLE_COMPLEX
                                                   : MPI_DATATYPE_NULL;
  } else {
    return c.Fail(Code::kArg, "invalid typeclass " + Str(typeclass));
  }
  if (found == MPI_DATATYPE_NULL)
    return c.Fail(Code::kArg,
                  "no predefined type of typeclass " + Str(typeclass) + " has size " + Str(size));
  *datatype = found;
  return MPI_SUCCESS;
}

int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                             MPI_Datatype* pair_type) {
  Call c("MPI_Type_get_value_index");
  dtype::Type *v, *i;
  if (!AnyTypeArg(c, value_type, &v, "value_type") ||
      !AnyTypeArg(c, index_type, &i, "index_type") || !c.NotNull(pair_type, "pair_type"))
    return c.Fail();
  *pair_type = MPI_DATATYPE_NULL;  // no predefined pair: not an error
  // Fortran's pairs hold the index in the value's own type.
  if (index_type == value_type) {
    if (value_type == MPI_REAL) *pair_type = MPI_2REAL;
    if (value_type == MPI_DOUBLE_PRECISION) *pair_type = MPI_2DOUBLE_PRECISION;
    if (value_type == MPI_INTEGER) *pair_type = MPI_2INTEGER;
    if (*pair_type != MPI_DATATYPE_NULL) return MPI_SUCCESS;
  }
  if (index_type != MPI_INT) return MPI_SUCCESS;
  switch (value_type) {
    case MPI_FLOAT:
      *pair_type = MPI_FLOAT_INT;
      break;
    case MPI_DOUBLE:
      *pair_type = MPI_DOUBLE_INT;
      break;
    case MPI_LONG:
      *pair_type = MPI_LONG_INT;
      break;
    case MPI_INT:
      *pair_type = MPI_2INT;
      break;
    case MPI_SHORT:
      *pair_type = MPI_SHORT_INT;
      break;
    case MPI_LONG_DOUBLE:
      *pair_type = MPI_LONG_DOUBLE_INT;
      break;
  }
  return MPI_SUCCESS;
}

}  // extern "C"
