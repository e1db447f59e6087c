// Accumulates on direct windows whose every part is mapped in every member
// (MPI_Win_allocate, MPI_Win_allocate_shared): elements of the integer,
// floating and logical basic types of 1, 2, 4 or 8 bytes at an address
// aligned to their size are updated with one CPU atomic each (fetch-add for
// an integer MPI_SUM, a store for MPI_REPLACE (an exchange when the old
// value is fetched), a load for MPI_NO_OP,
// compare-exchange for MPI_Compare_and_swap, a compare-exchange loop around
// the reduction kernel for every other op), by every origin, the target
// included. Every other element (long double, complex and pair types, a
// misaligned address) is updated under the target's accumulate lock, also
// by every origin. Which of the two an element takes depends only on its
// basic type and address, so concurrent accumulates to one location with
// one predefined type always use the same mechanism and stay atomic per
// element, as MPI requires (docs/rma.md, "Ordering, atomicity, completion").
#include <cstring>
#include <string>

#include "dtype/reduce.h"
#include "mpi.h"
#include "rma/direct.h"
#include "rma/wire.h"

namespace nicq::rma::direct {
namespace {

// Bytes of one element of predefined index `basic` when it is updated with
// CPU atomics, 0 when it takes the accumulate lock (long double, MPI_PACKED,
// pairs, complex). Indices as mpi.h's NICQ_DT(i).
constexpr std::uint8_t kAtomicWidth[dtype::kPredefinedCount] = {
    0, 1, 1, 1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 4, 8, 0, 1, 4, 1, 2, 4, 8,
    1, 2, 4, 8, 8, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
static_assert(sizeof(long) == 8 && sizeof(wchar_t) == 4 && sizeof(bool) == 1 &&
                  sizeof(MPI_Aint) == 8 && sizeof(MPI_Count) == 8 && sizeof(MPI_Offset) == 8,
              "kAtomicWidth assumes LP64 Linux");

int AtomicWidth(int basic) {
  return basic > 0 && basic < dtype::kPredefinedCount ? kAtomicWidth[basic] : 0;
}

// The integer types, whose MPI_SUM is a wrapping add (the kernel's too).
bool IsInteger(int basic) {
  return (basic >= 1 && basic <= 12 && basic != 4) || (basic >= 18 && basic <= 28);
}

// Calls fn(offset, length, basic) for every run of the target layout from
// `base`; basic 0 for a pair type's runs (reduced as pairs, under the lock).
template <class Fn>
void ForEachTypedRun(const Target& t, std::int64_t base, Fn fn) {
  const dtype::Type& tt = *t.type;
  const bool pair = tt.unit != 0 && dtype::IsPairIndex(tt.unit);
  if (tt.IsContiguous()) {
    if (tt.size * t.count > 0) fn(base, tt.size * t.count, pair ? 0 : tt.blocks[0].basic);
    return;
  }
  for (std::int64_t i = 0; i < t.count; ++i)
    for (const dtype::Block& b : tt.blocks)
      fn(base + i * tt.extent + b.offset, b.length, pair ? 0 : b.basic);
}

// Whether a run at `at` of `basic` elements is updated with atomics.
bool AtomicRun(int basic, const char* at) {
  const int width = AtomicWidth(basic);
  return width != 0 && std::uintptr_t(at) % std::uintptr_t(width) == 0;
}

Status NotForType(int op, int basic) {
  return Error(Code::kOp, std::string(dtype::OpName(op)) + " does not apply to " +
                              dtype::TypeName(detail::BasicHandle(basic)));
}

// Applies op to `n` elements at `at` (U: an unsigned integer of the
// elements' width), each with one atomic; `old`, when given, receives the
// previous values; `compare` makes it a compare-and-swap of one element.
template <class U>
Status ApplyAtomic(int basic, int op, const char* in, char* at, char* old, const char* compare,
                   std::int64_t n) {
  U* p = reinterpret_cast<U*>(at);
  for (std::int64_t i = 0; i < n; ++i, ++p) {
    U operand{}, prev;
    if (in) std::memcpy(&operand, in + i * std::int64_t(sizeof(U)), sizeof(U));
    if (compare) {
      std::memcpy(&prev, compare, sizeof(U));
      __atomic_compare_exchange_n(p, &prev, operand, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    } else if (op == MPI_NO_OP) {
      prev = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    } else if (op == MPI_REPLACE && !old) {
      // An aligned store is atomic by itself: no locked instruction.
      __atomic_store_n(p, operand, __ATOMIC_RELEASE);
      continue;
    } else if (op == MPI_REPLACE) {
      prev = __atomic_exchange_n(p, operand, __ATOMIC_SEQ_CST);
    } else if (op == MPI_SUM && IsInteger(basic)) {
      prev = __atomic_fetch_add(p, operand, __ATOMIC_SEQ_CST);
    } else {
      prev = __atomic_load_n(p, __ATOMIC_RELAXED);
      for (;;) {
        U next = prev;
        if (!dtype::ReduceBasic(op, basic, &operand, &next, 1)) return NotForType(op, basic);
        if (__atomic_compare_exchange_n(p, &prev, next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
          break;
      }
    }
    if (old) std::memcpy(old + i * std::int64_t(sizeof(U)), &prev, sizeof(U));
  }
  return Status::Ok();
}

Status ApplyAtomicRun(int basic, int op, const char* in, char* at, char* old, const char* compare,
                      std::int64_t len) {
  const int width = AtomicWidth(basic);
  const std::int64_t n = len / width;
  switch (width) {
    case 1:
      return ApplyAtomic<std::uint8_t>(basic, op, in, at, old, compare, n);
    case 2:
      return ApplyAtomic<std::uint16_t>(basic, op, in, at, old, compare, n);
    case 4:
      return ApplyAtomic<std::uint32_t>(basic, op, in, at, old, compare, n);
    default:
      return ApplyAtomic<std::uint64_t>(basic, op, in, at, old, compare, n);
  }
}

// A run under the accumulate lock: plain loads and stores.
Status ApplyLockedRun(int basic, int op, const char* in, char* at, char* old, const char* compare,
                      std::int64_t len) {
  if (old) std::memcpy(old, at, std::size_t(len));
  if (compare) {
    if (std::memcmp(old, compare, std::size_t(len)) == 0) std::memcpy(at, in, std::size_t(len));
    return Status::Ok();
  }
  if (op == MPI_NO_OP) return Status::Ok();
  return dtype::Reduce(op, detail::BasicHandle(basic), in, at, len / dtype::BasicSize(basic));
}

}  // namespace

Status AtomicAccumulate(Window* w, const Target& t, int op, const char* in, char* old,
                        const char* compare, bool* taken) {
  Direct* d = w->direct;
  char* mapped = d->local_base[std::size_t(t.rank)];
  const dtype::Type& tt = *t.type;
  // Pair types reduce as pairs: the caller's locked path. (The API checked
  // that op applies to the target datatype, so no element fails halfway.)
  *taken = !(tt.unit != 0 && dtype::IsPairIndex(tt.unit));
  if (!*taken) return Status::Ok();
  const std::int64_t base = PartOffset(w, t);
  bool locked = false;
  ForEachTypedRun(t, base, [&](std::int64_t off, std::int64_t, int basic) {
    locked |= !AtomicRun(basic, mapped + off);
  });
  if (locked) AccLock(d, t.rank);
  Status st;
  ForEachTypedRun(t, base, [&](std::int64_t off, std::int64_t len, int basic) {
    if (!st.ok()) return;
    char* at = mapped + off;
    st = AtomicRun(basic, at) ? ApplyAtomicRun(basic, op, in, at, old, compare, len)
                              : ApplyLockedRun(basic, op, in, at, old, compare, len);
    if (in) in += len;
    if (old) old += len;
  });
  if (locked) AccUnlock(d, t.rank);
  return st;
}

}  // namespace nicq::rma::direct

namespace nicq::rma {

void SetAccumulateGranularity(Window* w, std::int64_t bytes) {
  if (w->direct) w->direct->atomic_acc = w->direct->atomic_acc && bytes >= 1 && bytes <= 8;
}

bool FastAtomic(Window* w, const void* origin, const void* compare, void* result,
                const dtype::Type* type, std::int64_t count, int rank, std::int64_t disp, int op) {
  Direct* d = w->direct;
  if (!d || w->origin_locking || rank < 0 || rank >= w->size || count <= 0 || disp < 0 ||
      (!origin && op != MPI_NO_OP) || !type->predefined)
    return false;
  if (!(w->fence_open || w->lock_all || w->lock_kind[std::size_t(rank)] != 0)) return false;
  // A predefined op that applies to the type (MINLOC and MAXLOC apply to
  // pairs only, which reduce as pairs on the general path).
  const int op_index = op & 0xffffff;
  const int basic = type->handle & 0xffffff;
  if ((op >> 24) != dtype::kKindOp || op_index < 1 || op_index > 14 || dtype::IsPairIndex(basic) ||
      !dtype::OpAppliesTo(op, type->handle))
    return false;
  char* mapped = d->local_base[std::size_t(rank)];
  const std::int64_t off = disp * w->disp_units[std::size_t(rank)];
  const std::int64_t bytes = type->size * count;
  if (!mapped || off + bytes > w->sizes[std::size_t(rank)]) return false;
  char* at = mapped + off;
  // The element's mechanism, as AtomicAccumulate chooses it.
  const bool atomic = d->atomic_acc && direct::AtomicRun(basic, at);
  const char* in = static_cast<const char*>(origin);
  char* old = static_cast<char*>(result);
  const char* cmp = static_cast<const char*>(compare);
  Status st;
  if (atomic) {
    st = direct::ApplyAtomicRun(basic, op, in, at, old, cmp, bytes);
  } else {
    direct::AccLock(d, rank);
    st = direct::ApplyLockedRun(basic, op, in, at, old, cmp, bytes);
    direct::AccUnlock(d, rank);
  }
  // OpAppliesTo vouched for the op, so this cannot fail; if it did, the
  // next synchronization call reports it, as the direct path does.
  if (!st.ok() && w->deferred.ok()) w->deferred = std::move(st);
  return true;
}

}  // namespace nicq::rma
