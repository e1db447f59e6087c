// nicq::dtype — MPI datatypes as flattened block lists, pack/unpack, and
// element counting. Handles are the int values of mpi.h (kind 0x4c in the
// top byte); predefined types live in a static table, derived ones in a
// SlotTable. Derived types are reference counted so a request that uses a
// type keeps it alive after MPI_Type_free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace nicq::dtype {

// One contiguous run of bytes inside one item of a type: `length` bytes at
// `offset` from the item's start, all of predefined type `basic` (so
// length is a multiple of that type's size).
struct Block {
  std::int64_t offset = 0;
  std::int64_t length = 0;
  int basic = 0;  // predefined index (1..42), never a pair type
};

// A constructor's arguments as MPI_Type_get_contents returns them. The
// types are retained while the type built from them lives.
struct Contents {
  std::vector<int> ints;
  std::vector<std::int64_t> addrs;
  std::vector<std::int64_t> counts;  // large counts (the _c constructors)
  std::vector<int> types;
};

struct Type {
  int handle = 0;
  bool predefined = false;
  bool committed = false;
  std::int64_t size = 0;      // bytes of data in one item
  std::int64_t lb = 0;        // lower bound
  std::int64_t extent = 0;    // ub - lb: distance between consecutive items
  std::int64_t elements = 0;  // basic elements in one item
  std::vector<Block> blocks;  // one item's data, in type-map order, adjacent runs merged
  // The single predefined type this one is built from (pair types count as
  // one), or 0 when mixed; `unit_dense` when the units sit back to back at
  // unit extent from offset 0 (then a reduction sees size/unit_size units).
  int unit = 0;
  bool unit_dense = false;
  std::atomic<int> refs{0};  // derived: handle + requests using it
  // How the type was made (MPI_Type_get_envelope / get_contents): an
  // MPI_COMBINER_* value and the constructor's arguments; and its
  // MPI_Type_set_name. `large` marks a constructor of the _c family.
  int combiner = 0;
  Contents contents;
  bool large = false;
  std::string name;

  // One item, and `count` items laid out at extent, are a single run at buf.
  bool IsContiguous() const {
    return size == 0 || (blocks.size() == 1 && blocks[0].offset == 0 && size == extent);
  }
};

inline constexpr int kKindDatatype = 0x4c;
inline constexpr int kPredefinedCount = 61;  // indices 1..60 (mpi.h NICQ_DT_PREDEFINED_COUNT)
inline constexpr int kFirstUserIndex = 64;
// MPI_INTEGER, the first of Fortran's named types (mpi.h NICQ_DT(43..60)).
inline constexpr int kFirstFortranIndex = 43;

// Predefined index helpers (indices of mpi.h's NICQ_DT(i)).
bool IsPairIndex(int index);
// The complex types' part type (MPI_FLOAT, MPI_DOUBLE or MPI_LONG_DOUBLE's
// index), or 0 for every other index: a complex element is two such parts.
int ComplexPartIndex(int index);
// The C type whose layout and reduction kernels a Fortran named type
// (MPI_INTEGER ... MPI_COMPLEX16) shares; 0 for every other index.
int FortranTwin(int index);
std::int64_t BasicSize(int index);
const char* TypeName(int handle);  // "MPI_INT", "derived", "MPI_DATATYPE_NULL", "invalid"

// The live type behind a handle, or nullptr (null, freed, or not a datatype).
Type* Lookup(int handle);

// Constructors: *out is a new uncommitted handle.
Status Contiguous(std::int64_t count, int old, int* out);
Status Hvector(std::int64_t count, std::int64_t blocklen, std::int64_t stride_bytes, int old,
               int* out);
Status Vector(std::int64_t count, std::int64_t blocklen, std::int64_t stride, int old, int* out);
Status Dup(int old, int* out);
// General constructor behind indexed, hindexed and struct: block i is
// blocklens[i] items of types[i] at byte displacement disps[i]. `pad` rounds
// the extent up to the strictest alignment of the parts (MPI_Type_create_struct).
Status Struct(const char* call, std::int64_t count, const std::int64_t* blocklens,
              const std::int64_t* disps, const int* types, bool pad, int* out);
// Same layout with lower bound `lb` and extent `extent` (MPI_Type_create_resized).
Status Resized(int old, std::int64_t lb, std::int64_t extent, int* out);
// MPI_Type_create_subarray / darray (layout.cc): `order` is MPI_ORDER_C or
// MPI_ORDER_FORTRAN; arguments are checked here, naming `call`.
Status Subarray(const char* call, int ndims, const std::int64_t* sizes,
                const std::int64_t* subsizes, const std::int64_t* starts, int order, int old,
                int* out);
Status Darray(const char* call, int size, int rank, int ndims, const std::int64_t* gsizes,
              const int* distribs, const int* dargs, const int* psizes, int order, int old,
              int* out);
// Records how t was made (retaining contents.types); replaces the combiner.
void SetContents(Type* t, int combiner, Contents contents, bool large);
// The span of t's data, ignoring its lb/extent (MPI_Type_get_true_extent).
void TrueBounds(const Type& t, std::int64_t* lb, std::int64_t* extent);

// "external32" (external32.cc): big-endian, fixed sizes (MPI_LONG 4 bytes,
// MPI_WCHAR 2, MPI_LONG_DOUBLE 16 as IEEE binary128); narrower integers
// sign-extend back. ExternalSize is the bytes of one item.
std::int64_t ExternalSize(const Type& t);
void PackExternal(const Type& t, const void* src, std::int64_t count, void* dst);
// The index (in type-map order over all items) of the first element whose
// value the narrower external32 integer cannot hold, or -1.
std::int64_t FirstUnrepresentable(const Type& t, const void* src, std::int64_t count);
void UnpackExternal(const Type& t, const void* src, std::int64_t count, void* dst);
// Whether every element of t is `*native` bytes here and `*ext` in
// external32 (one size pair for all), with t's block offsets, lengths and
// extent whole elements: then t's external32 layout is its native one with
// every byte position scaled by ext/native.
bool ExternalScale(const Type& t, int* ext, int* native);

Status Commit(int handle);
Status Free(int* handle);  // sets *handle to MPI_DATATYPE_NULL

// Reference counting for requests that outlive a handle.
void Retain(Type* t);
void Release(Type* t);
// Called with a derived type's handle when its last reference goes, before
// the handle can be reused (the API layer drops the type's attributes).
using ReleaseHook = void (*)(int handle);
void SetReleaseHook(ReleaseHook hook);

// Copy `count` items of `t` at `src` into a contiguous buffer (count*size bytes).
void Pack(const Type& t, const void* src, std::int64_t count, void* dst);
// Scatter `bytes` contiguous bytes (at most count*size) into `count` items at `dst`.
void Unpack(const Type& t, const void* src, std::int64_t bytes, std::int64_t count, void* dst);

// Copy the data of `count` items laid out as `t` at src to the same layout at
// dst; bytes of dst outside the type's blocks (holes) are left as they were.
void CopyTyped(const Type& t, const void* src, std::int64_t count, void* dst);

// Element counts for MPI_Get_count / MPI_Get_elements; -1 for MPI_UNDEFINED.
std::int64_t CountFromBytes(const Type& t, std::int64_t bytes);
std::int64_t ElementsFromBytes(const Type& t, std::int64_t bytes);
// Bytes that `elements` basic elements occupy (MPI_Status_set_elements), -1 if not whole.
std::int64_t BytesFromElements(const Type& t, std::int64_t elements);

// The span [lo, hi) of memory that `count` items at buf touch (for aliasing checks).
void Span(const Type& t, const void* buf, std::int64_t count, std::uintptr_t* lo,
          std::uintptr_t* hi);

int LiveDerivedTypes();  // for tests: leak checks

}  // namespace nicq::dtype
