// Shared by the datatype entry points (dtype_api.cc, type_*.cc): argument
// checks on datatypes and large counts, and the common tail of every
// constructor (record how the type was made, hand out its handle).
#pragma once

#include <cstdint>
#include <string>

#include "api/api_internal.h"

namespace nicq::api {

// Any live datatype, committed or not (layout queries accept both).
bool AnyTypeArg(Call& c, MPI_Datatype h, dtype::Type** out, const char* what = "datatype");
// A non-negative count of any width.
bool LargeCountArg(Call& c, std::int64_t v, const char* what);
// An array argument that may be NULL only when it has no entries.
bool ArrayArg(Call& c, std::int64_t n, const void* p, const char* what);
// After a dtype:: constructor returned st and filled h: records the
// constructor (MPI_Type_get_contents) and stores the handle, or fails.
int FinishType(Call& c, const Status& st, int h, int combiner, dtype::Contents contents, bool large,
               MPI_Datatype* newtype);

// Attributes cached on datatypes (type_attr.cc): copied by MPI_Type_dup,
// deleted when the handle is freed. Return MPI_SUCCESS or a raised code.
int CopyTypeAttrs(Call& c, MPI_Datatype from, MPI_Datatype to);
int DeleteTypeAttrs(Call& c, MPI_Datatype type);

}  // namespace nicq::api
