// The Fortran 90 parameterized types: MPI_Type_create_f90_real, _complex,
// _integer. Each names the predefined type that Fortran's
// SELECTED_REAL_KIND(p, r) / SELECTED_INT_KIND(r) would pick among the C
// types nicq has: the one with the least precision (reals) or the least
// range (integers) that still satisfies the request. The handle is the
// predefined one itself (MPI_FLOAT, MPI_INT32_T, ...), so it is never freed
// and MPI_Type_get_envelope reports MPI_COMBINER_NAMED for it.
//
// A complex request picks the real kind the same way and answers the C
// complex type built on it (MPI_C_FLOAT_COMPLEX for MPI_FLOAT, ...).
#include <cstdint>
#include <limits>
#include <string>

#include "api/api_internal.h"

using namespace nicq;
using api::Call;

namespace {

struct RealKind {
  MPI_Datatype type;
  int precision;  // decimal digits, Fortran's PRECISION()
  int range;      // decimal exponent range, Fortran's RANGE()
};

template <typename T>
constexpr RealKind Real(MPI_Datatype type) {
  using L = std::numeric_limits<T>;
  const int range = -L::min_exponent10 < L::max_exponent10 ? -L::min_exponent10 : L::max_exponent10;
  return {type, L::digits10, range};
}

// In increasing precision: the first that fits is the one Fortran picks.
const RealKind kReals[] = {Real<float>(MPI_FLOAT), Real<double>(MPI_DOUBLE),
                           Real<long double>(MPI_LONG_DOUBLE)};

struct IntKind {
  MPI_Datatype type;
  int range;  // every n with -10^range < n < 10^range fits
};

const IntKind kInts[] = {{MPI_INT8_T, std::numeric_limits<std::int8_t>::digits10},
                         {MPI_INT16_T, std::numeric_limits<std::int16_t>::digits10},
                         {MPI_INT32_T, std::numeric_limits<std::int32_t>::digits10},
                         {MPI_INT64_T, std::numeric_limits<std::int64_t>::digits10}};

bool Fits(int wanted, int has) {
  return wanted == MPI_UNDEFINED || wanted <= has;
}

std::string Wanted(int p, int r) {
  auto one = [](int v) {
    return v == MPI_UNDEFINED ? std::string("MPI_UNDEFINED") : std::to_string(v);
  };
  return "precision " + one(p) + ", range " + one(r);
}

// The real type for (p, r), or MPI_DATATYPE_NULL after failing `c`.
MPI_Datatype PickReal(Call& c, int p, int r, MPI_Datatype* newtype) {
  if (!c.Init() || !c.NotNull(newtype, "newtype") ||
      !c.Check(p != MPI_UNDEFINED || r != MPI_UNDEFINED, Code::kArg,
               "p and r are both MPI_UNDEFINED: at most one may be"))
    return MPI_DATATYPE_NULL;
  for (const RealKind& k : kReals)
    if (Fits(p, k.precision) && Fits(r, k.range)) return k.type;
  c.Check(false, Code::kArg,
          "no real type has " + Wanted(p, r) + " (the widest, MPI_LONG_DOUBLE, has precision " +
              std::to_string(kReals[2].precision) + ", range " + std::to_string(kReals[2].range) +
              ")");
  return MPI_DATATYPE_NULL;
}

}  // namespace

extern "C" {

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  Call c("MPI_Type_create_f90_real");
  MPI_Datatype t = PickReal(c, p, r, newtype);
  if (t == MPI_DATATYPE_NULL) return c.Fail();
  *newtype = t;
  return MPI_SUCCESS;
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  Call c("MPI_Type_create_f90_complex");
  const MPI_Datatype real = PickReal(c, p, r, newtype);
  if (real == MPI_DATATYPE_NULL) return c.Fail();
  *newtype = real == MPI_FLOAT    ? MPI_C_FLOAT_COMPLEX
             : real == MPI_DOUBLE ? MPI_C_DOUBLE_COMPLEX
                                  : MPI_C_LONG_DOUBLE_COMPLEX;
  return MPI_SUCCESS;
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  Call c("MPI_Type_create_f90_integer");
  if (!c.Init() || !c.NotNull(newtype, "newtype") ||
      !c.Check(r != MPI_UNDEFINED, Code::kArg, "r is MPI_UNDEFINED"))
    return c.Fail();
  for (const IntKind& k : kInts) {
    if (r <= k.range) {
      *newtype = k.type;
      return MPI_SUCCESS;
    }
  }
  return c.Fail(Code::kArg, "no integer type has range " + std::to_string(r) +
                                " (the widest, MPI_INT64_T, has range " +
                                std::to_string(kInts[3].range) + ")");
}

}  // extern "C"
