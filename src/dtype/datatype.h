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
  int basic = 0;  // predefined index (1..35), never a pair type
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
  // How the type was made (MPI_Type_get_envelope): an MPI_COMBINER_* value
  // and the count argument of its constructor; and its MPI_Type_set_name.
  int combiner = 0;
  int combiner_count = 0;
  std::string name;

  // One item, and `count` items laid out at extent, are a single run at buf.
  bool IsContiguous() const {
    return size == 0 || (blocks.size() == 1 && blocks[0].offset == 0 && size == extent);
  }
};

inline constexpr int kKindDatatype = 0x4c;
inline constexpr int kPredefinedCount = 36;  // indices 1..35
inline constexpr int kFirstUserIndex = 64;

// Predefined index helpers (indices of mpi.h's NICQ_DT(i)).
bool IsPairIndex(int index);
std::int64_t BasicSize(int index);
const char* TypeName(int handle);  // "MPI_INT", "derived", "MPI_DATATYPE_NULL", "invalid"

// The live type behind a handle, or nullptr (null, freed, or not a datatype).
Type* Lookup(int handle);

// Constructors: *out is a new uncommitted handle.
Status Contiguous(int count, int old, int* out);
Status Hvector(int count, int blocklen, std::int64_t stride_bytes, int old, int* out);
Status Vector(int count, int blocklen, int stride, int old, int* out);
Status Dup(int old, int* out);
// General constructor behind indexed, hindexed and struct: block i is
// blocklens[i] items of types[i] at byte displacement disps[i]. `pad` rounds
// the extent up to the strictest alignment of the parts (MPI_Type_create_struct).
Status Struct(const char* call, int count, const int* blocklens, const std::int64_t* disps,
              const int* types, bool pad, int* out);
// Same layout with lower bound `lb` and extent `extent` (MPI_Type_create_resized).
Status Resized(int old, std::int64_t lb, std::int64_t extent, int* out);
Status Commit(int handle);
Status Free(int* handle);  // sets *handle to MPI_DATATYPE_NULL

// Reference counting for requests that outlive a handle.
void Retain(Type* t);
void Release(Type* t);

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
