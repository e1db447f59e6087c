// The derived-type constructors below the MPI_Type_* calls: vector,
// contiguous, dup, struct and resized types as flattened runs of their old
// types' blocks (the slots come from the registry in datatype.cc).
#include <algorithm>
#include <cstdint>
#include <string>

#include "dtype/datatype.h"
#include "dtype/type_builder.h"
#include "mpi.h"

namespace nicq::dtype {

Status Hvector(std::int64_t count, std::int64_t blocklen, std::int64_t stride, int old, int* out) {
  Type* o = Lookup(old);
  if (!o) return BadOld("MPI_Type_vector", old);
  if (count < 0)
    return Error(Code::kCount, "MPI_Type_vector: negative count " + std::to_string(count));
  if (blocklen < 0)
    return Error(Code::kArg, "MPI_Type_vector: negative blocklength " + std::to_string(blocklen));
  int handle;
  Type* t = NewType(&handle);
  if (!t) return Error(Code::kNoMem, "MPI_Type_vector: datatype table is full");
  std::int64_t lo = 0, hi = 0;
  bool first = true;
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::int64_t j = 0; j < blocklen; ++j) {
      std::int64_t disp = i * stride + j * o->extent;
      for (const Block& b : o->blocks) AddBlock(t->blocks, disp + b.offset, b.length, b.basic);
      std::int64_t item_lo = disp + o->lb, item_hi = disp + o->lb + o->extent;
      lo = first ? item_lo : std::min(lo, item_lo);
      hi = first ? item_hi : std::max(hi, item_hi);
      first = false;
    }
  }
  std::int64_t n = count * blocklen;
  t->size = n * o->size;
  t->elements = n * o->elements;
  t->lb = lo;
  t->extent = hi - lo;
  t->unit = o->unit;
  // Units stay back to back (what a pair-type reduction needs) when the old
  // type's were and the blocks follow each other without gaps.
  t->unit_dense = o->unit_dense && o->lb == 0 && (count <= 1 || stride == blocklen * o->extent);
  t->combiner = MPI_COMBINER_HVECTOR;
  *out = handle;
  return Status::Ok();
}

Status Vector(std::int64_t count, std::int64_t blocklen, std::int64_t stride, int old, int* out) {
  Type* o = Lookup(old);
  if (!o) return BadOld("MPI_Type_vector", old);
  NICQ_RETURN_IF_ERROR(Hvector(count, blocklen, stride * o->extent, old, out));
  Lookup(*out)->combiner = MPI_COMBINER_VECTOR;
  return Status::Ok();
}

Status Contiguous(std::int64_t count, int old, int* out) {
  Type* o = Lookup(old);
  if (!o) return BadOld("MPI_Type_contiguous", old);
  if (count < 0)
    return Error(Code::kCount, "MPI_Type_contiguous: negative count " + std::to_string(count));
  NICQ_RETURN_IF_ERROR(Hvector(1, count, 0, old, out));
  Lookup(*out)->combiner = MPI_COMBINER_CONTIGUOUS;
  return Status::Ok();
}

Status Dup(int old, int* out) {
  Type* o = Lookup(old);
  if (!o) return BadOld("MPI_Type_dup", old);
  int handle;
  Type* t = NewType(&handle);
  if (!t) return Error(Code::kNoMem, "MPI_Type_dup: datatype table is full");
  t->committed = o->committed;
  t->size = o->size;
  t->lb = o->lb;
  t->extent = o->extent;
  t->elements = o->elements;
  t->blocks = o->blocks;
  t->unit = o->unit;
  t->unit_dense = o->unit_dense;
  t->combiner = MPI_COMBINER_DUP;
  *out = handle;
  return Status::Ok();
}

namespace {
// Alignment of a type's parts (for struct padding): the largest basic
// element size, capped at 16 (long double); a complex element aligns as its
// part (`float _Complex` to 4, not 8).
std::int64_t AlignOf(const Type& t) {
  std::int64_t a = 1;
  for (const Block& b : t.blocks) {
    const int part = ComplexPartIndex(b.basic);
    a = std::max(a, std::min<std::int64_t>(BasicSize(part ? part : b.basic), 16));
  }
  return a;
}
}  // namespace

Status Struct(const char* call, std::int64_t count, const std::int64_t* blocklens,
              const std::int64_t* disps, const int* types, bool pad, int* out) {
  if (count < 0)
    return Error(Code::kCount, std::string(call) + ": negative count " + std::to_string(count));
  for (std::int64_t i = 0; i < count; ++i) {
    if (!Lookup(types[i])) return BadOld(call, types[i]);
    if (blocklens[i] < 0)
      return Error(Code::kArg, std::string(call) + ": negative blocklength " +
                                   std::to_string(blocklens[i]) + " at index " + std::to_string(i));
  }
  int handle;
  Type* t = NewType(&handle);
  if (!t) return Error(Code::kNoMem, std::string(call) + ": datatype table is full");
  std::int64_t lo = 0, hi = 0, align = 1;
  bool first = true;
  int unit = -1;
  for (std::int64_t i = 0; i < count; ++i) {
    const Type& o = *Lookup(types[i]);
    if (blocklens[i] == 0) continue;
    for (std::int64_t j = 0; j < blocklens[i]; ++j) {
      std::int64_t disp = disps[i] + j * o.extent;
      for (const Block& b : o.blocks) AddBlock(t->blocks, disp + b.offset, b.length, b.basic);
    }
    std::int64_t item_lo = disps[i] + o.lb, item_hi = disps[i] + o.lb + blocklens[i] * o.extent;
    lo = first ? item_lo : std::min(lo, item_lo);
    hi = first ? item_hi : std::max(hi, item_hi);
    first = false;
    t->size += blocklens[i] * o.size;
    t->elements += blocklens[i] * o.elements;
    align = std::max(align, AlignOf(o));
    unit = unit == -1 ? o.unit : (unit == o.unit ? unit : 0);
  }
  if (pad && hi > lo && (hi - lo) % align) hi += align - (hi - lo) % align;
  t->lb = lo;
  t->extent = hi - lo;
  t->unit = unit < 0 ? 0 : unit;
  t->unit_dense = false;              // reductions walk the runs (pair units are refused)
  t->combiner = MPI_COMBINER_STRUCT;  // the caller records the real constructor
  *out = handle;
  return Status::Ok();
}

Status Resized(int old, std::int64_t lb, std::int64_t extent, int* out) {
  Type* o = Lookup(old);
  if (!o) return BadOld("MPI_Type_create_resized", old);
  NICQ_RETURN_IF_ERROR(Dup(old, out));
  Type* t = Lookup(*out);
  t->committed = false;
  t->lb = lb;
  t->extent = extent;
  t->unit_dense = t->unit_dense && lb == 0 && extent == o->extent;
  t->combiner = MPI_COMBINER_RESIZED;
  return Status::Ok();
}

}  // namespace nicq::dtype
