// Array-shaped constructors (subarray, darray), constructor records for
// MPI_Type_get_contents, and true bounds.
#include <algorithm>
#include <string>
#include <vector>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

std::string Str(long long v) {
  return std::to_string(v);
}

Status Bad(Code cls, const char* call, const std::string& what) {
  return Error(cls, std::string(call) + ": " + what);
}

// A type holding one `old` item at every grid point: dims[d] lists the
// indices taken in dimension d, strides[d] the bytes between indices. The
// fastest dimension is the last for MPI_ORDER_C, the first for Fortran. The
// result has lower bound 0 and extent `extent`.
Status Grid(const char* call, const std::vector<std::vector<std::int64_t>>& dims,
            const std::vector<std::int64_t>& strides, int order, int old, std::int64_t extent,
            int* out) {
  const int nd = static_cast<int>(dims.size());
  std::int64_t points = 1;
  for (const auto& d : dims) points *= static_cast<std::int64_t>(d.size());
  std::vector<std::int64_t> disps, lens(static_cast<std::size_t>(points), 1);
  std::vector<int> types(static_cast<std::size_t>(points), old);
  disps.reserve(static_cast<std::size_t>(points));
  std::vector<std::size_t> at(static_cast<std::size_t>(nd), 0);
  for (std::int64_t p = 0; p < points; ++p) {
    std::int64_t disp = 0;
    for (int d = 0; d < nd; ++d) disp += dims[d][at[d]] * strides[d];
    disps.push_back(disp);
    // Advance the odometer, fastest dimension first.
    for (int k = 0; k < nd; ++k) {
      int d = order == MPI_ORDER_C ? nd - 1 - k : k;
      if (++at[d] < dims[d].size()) break;
      at[d] = 0;
    }
  }
  NICQ_RETURN_IF_ERROR(Struct(call, points, lens.data(), disps.data(), types.data(), false, out));
  Type* t = Lookup(*out);
  t->lb = 0;
  t->extent = extent;
  return Status::Ok();
}

// Bytes between consecutive indices of each dimension of a `sizes` array.
std::vector<std::int64_t> Strides(int ndims, const std::int64_t* sizes, int order,
                                  std::int64_t unit) {
  std::vector<std::int64_t> s(static_cast<std::size_t>(ndims));
  std::int64_t step = unit;
  for (int k = 0; k < ndims; ++k) {
    int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
    s[d] = step;
    step *= sizes[d];
  }
  return s;
}

bool ValidOrder(int order) {
  return order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN;
}

}  // namespace

Status Subarray(const char* call, int ndims, const std::int64_t* sizes,
                const std::int64_t* subsizes, const std::int64_t* starts, int order, int old,
                int* out) {
  const Type* o = Lookup(old);
  if (!o) return Bad(Code::kType, call, "invalid oldtype " + std::string(TypeName(old)));
  if (ndims <= 0) return Bad(Code::kArg, call, "ndims " + Str(ndims) + " is not positive");
  if (!ValidOrder(order)) return Bad(Code::kArg, call, "invalid order " + Str(order));
  std::vector<std::vector<std::int64_t>> dims(static_cast<std::size_t>(ndims));
  std::int64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    const std::string at = " at dimension " + Str(d);
    if (sizes[d] <= 0) return Bad(Code::kArg, call, "size " + Str(sizes[d]) + " < 1" + at);
    if (subsizes[d] < 0 || subsizes[d] > sizes[d])
      return Bad(Code::kArg, call,
                 "subsize " + Str(subsizes[d]) + " outside [0, " + Str(sizes[d]) + "]" + at);
    if (starts[d] < 0 || starts[d] + subsizes[d] > sizes[d])
      return Bad(Code::kArg, call,
                 "start " + Str(starts[d]) + " + subsize " + Str(subsizes[d]) + " exceeds size " +
                     Str(sizes[d]) + at);
    for (std::int64_t i = 0; i < subsizes[d]; ++i) dims[d].push_back(starts[d] + i);
    total *= sizes[d];
  }
  return Grid(call, dims, Strides(ndims, sizes, order, o->extent), order, old, total * o->extent,
              out);
}

Status Darray(const char* call, int size, int rank, int ndims, const std::int64_t* gsizes,
              const int* distribs, const int* dargs, const int* psizes, int order, int old,
              int* out) {
  const Type* o = Lookup(old);
  if (!o) return Bad(Code::kType, call, "invalid oldtype " + std::string(TypeName(old)));
  if (ndims <= 0) return Bad(Code::kArg, call, "ndims " + Str(ndims) + " is not positive");
  if (!ValidOrder(order)) return Bad(Code::kArg, call, "invalid order " + Str(order));
  if (size <= 0 || rank < 0 || rank >= size)
    return Bad(Code::kArg, call, "rank " + Str(rank) + " outside a group of size " + Str(size));
  std::int64_t grid = 1;
  for (int d = 0; d < ndims; ++d) {
    if (psizes[d] <= 0)
      return Bad(Code::kArg, call, "psize " + Str(psizes[d]) + " < 1 at dimension " + Str(d));
    grid *= psizes[d];
  }
  if (grid != size)
    return Bad(Code::kArg, call,
               "the process grid has " + Str(grid) + " processes, not size " + Str(size));
  // The process grid is row-major whatever `order` says.
  std::vector<int> coord(static_cast<std::size_t>(ndims));
  for (int d = ndims - 1, r = rank; d >= 0; --d) coord[d] = r % psizes[d], r /= psizes[d];
  std::vector<std::vector<std::int64_t>> dims(static_cast<std::size_t>(ndims));
  std::int64_t total = 1;
  for (int d = 0; d < ndims; ++d) {
    const std::string at = " at dimension " + Str(d);
    const std::int64_t g = gsizes[d], p = psizes[d];
    if (g <= 0) return Bad(Code::kArg, call, "gsize " + Str(g) + " < 1" + at);
    total *= g;
    const bool dflt = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG;
    if (!dflt && dargs[d] <= 0)
      return Bad(Code::kArg, call, "darg " + Str(dargs[d]) + " is not positive" + at);
    switch (distribs[d]) {
      case MPI_DISTRIBUTE_NONE:
        if (p != 1)
          return Bad(Code::kArg, call, "MPI_DISTRIBUTE_NONE needs psize 1, not " + Str(p) + at);
        for (std::int64_t i = 0; i < g; ++i) dims[d].push_back(i);
        break;
      case MPI_DISTRIBUTE_BLOCK: {
        const std::int64_t b = dflt ? (g + p - 1) / p : dargs[d];
        if (b * p < g)
          return Bad(Code::kArg, call,
                     "block " + Str(b) + " x psize " + Str(p) + " < gsize " + Str(g) + at);
        for (std::int64_t i = coord[d] * b; i < std::min((coord[d] + 1) * b, g); ++i)
          dims[d].push_back(i);
        break;
      }
      case MPI_DISTRIBUTE_CYCLIC: {
        const std::int64_t b = dflt ? 1 : dargs[d];
        for (std::int64_t start = coord[d] * b; start < g; start += p * b)
          for (std::int64_t i = start; i < std::min(start + b, g); ++i) dims[d].push_back(i);
        break;
      }
      default:
        return Bad(Code::kArg, call, "invalid distribution " + Str(distribs[d]) + at);
    }
  }
  return Grid(call, dims, Strides(ndims, gsizes, order, o->extent), order, old, total * o->extent,
              out);
}

void SetContents(Type* t, int combiner, Contents contents, bool large) {
  for (int h : contents.types)
    if (Type* p = Lookup(h)) Retain(p);
  t->combiner = combiner;
  t->contents = std::move(contents);
  t->large = large;
}

void TrueBounds(const Type& t, std::int64_t* lb, std::int64_t* extent) {
  if (t.blocks.empty()) {
    *lb = *extent = 0;
    return;
  }
  std::int64_t lo = t.blocks.front().offset, hi = lo;
  for (const Block& b : t.blocks) {
    lo = std::min(lo, b.offset);
    hi = std::max(hi, b.offset + b.length);
  }
  *lb = lo;
  *extent = hi - lo;
}

}  // namespace nicq::dtype
