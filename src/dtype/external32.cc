// The "external32" data representation: every basic element big-endian at
// the fixed size MPI's table gives it, independent of this host's C types.
#include <bit>
#include <cfloat>
#include <cstring>
#include <type_traits>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq::dtype {
namespace {

// External bytes of each predefined index (1..29 and MPI_CXX_BOOL; pair
// types are flattened into their parts before this table is consulted, and
// complex elements go part by part, see Part()).
int ExternalBytes(int basic) {
  switch (basic) {
    case 5:   // MPI_SHORT
    case 6:   // MPI_UNSIGNED_SHORT
    case 17:  // MPI_WCHAR
    case 19:  // MPI_INT16_T
    case 23:  // MPI_UINT16_T
      return 2;
    case 7:   // MPI_INT
    case 8:   // MPI_UNSIGNED
    case 9:   // MPI_LONG
    case 10:  // MPI_UNSIGNED_LONG
    case 13:  // MPI_FLOAT
    case 20:  // MPI_INT32_T
    case 24:  // MPI_UINT32_T
      return 4;
    case 11:  // MPI_LONG_LONG
    case 12:  // MPI_UNSIGNED_LONG_LONG
    case 14:  // MPI_DOUBLE
    case 21:  // MPI_INT64_T
    case 25:  // MPI_UINT64_T
    case 26:  // MPI_AINT
    case 27:  // MPI_COUNT
    case 28:  // MPI_OFFSET
      return 8;
    case 15:  // MPI_LONG_DOUBLE
      return 16;
    default:  // the char and byte types, MPI_C_BOOL, MPI_CXX_BOOL, MPI_INT8_T, MPI_UINT8_T,
              // MPI_PACKED
      return 1;
  }
}

// The basic type that external32 converts one at a time: a complex element
// is its real then its imaginary part, each in its real type's external
// form (so MPI_C_DOUBLE_COMPLEX is 16 bytes, the long double ones 32).
int Part(int basic) {
  const int part = ComplexPartIndex(basic);
  return part ? part : basic;
}

// Signed integers narrower in external32 than here sign-extend on unpack.
bool SignedInteger(int basic) {
  return basic == 9 || (basic == 17 && std::is_signed_v<wchar_t>);
}

void StoreBigEndian(std::uint64_t v, int bytes, unsigned char* out) {
  for (int i = bytes - 1; i >= 0; --i, v >>= 8) out[i] = static_cast<unsigned char>(v);
}

std::uint64_t LoadBigEndian(const unsigned char* in, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | in[i];
  return v;
}

std::uint64_t LoadNative(const char* in, int bytes) {
  std::uint64_t v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, in, static_cast<std::size_t>(bytes));
  } else {
    std::memcpy(reinterpret_cast<char*>(&v) + 8 - bytes, in, static_cast<std::size_t>(bytes));
  }
  return v;
}

void StoreNative(std::uint64_t v, int bytes, char* out) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, &v, static_cast<std::size_t>(bytes));
  } else {
    std::memcpy(out, reinterpret_cast<char*>(&v) + 8 - bytes, static_cast<std::size_t>(bytes));
  }
}

// long double <-> IEEE binary128, as two 64-bit halves (hi holds sign and exponent).
void LongDoubleToQuad(const char* in, std::uint64_t* hi, std::uint64_t* lo) {
#if LDBL_MANT_DIG == 64
  // x87 extended: 64-bit significand with an explicit integer bit, then
  // sign and 15-bit exponent (the same bias as binary128).
  std::uint64_t mant = LoadNative(in, 8);
  std::uint64_t sign_exp = LoadNative(in + 8, 2);
  std::uint64_t frac = mant & 0x7fffffffffffffffULL;  // 63 fraction bits
  *hi = (sign_exp << 48) | (frac >> 15);
  *lo = (frac & 0x7fff) << 49;
#elif LDBL_MANT_DIG == 113
  *hi = LoadNative(in + (std::endian::native == std::endian::little ? 8 : 0), 8);
  *lo = LoadNative(in + (std::endian::native == std::endian::little ? 0 : 8), 8);
#else
  // long double is double: widen the exponent and the fraction.
  double d;
  std::memcpy(&d, in, sizeof d);
  std::uint64_t b = std::bit_cast<std::uint64_t>(d);
  std::uint64_t sign = b >> 63, exp = (b >> 52) & 0x7ff, frac = b & 0xfffffffffffffULL;
  std::uint64_t qexp = exp == 0 ? 0 : exp == 0x7ff ? 0x7fff : exp - 1023 + 16383;
  *hi = (sign << 63) | (qexp << 48) | (frac >> 4);
  *lo = (frac & 0xf) << 60;
#endif
}

void QuadToLongDouble(std::uint64_t hi, std::uint64_t lo, char* out) {
#if LDBL_MANT_DIG == 64
  std::uint64_t sign_exp = hi >> 48;
  std::uint64_t frac = ((hi & 0xffffffffffffULL) << 15) | (lo >> 49);
  std::uint64_t integer_bit = (sign_exp & 0x7fff) != 0 ? 1ULL << 63 : 0;
  std::memset(out, 0, sizeof(long double));
  StoreNative(integer_bit | frac, 8, out);
  StoreNative(sign_exp, 2, out + 8);
#elif LDBL_MANT_DIG == 113
  StoreNative(hi, 8, out + (std::endian::native == std::endian::little ? 8 : 0));
  StoreNative(lo, 8, out + (std::endian::native == std::endian::little ? 0 : 8));
#else
  std::uint64_t sign = hi >> 63, qexp = (hi >> 48) & 0x7fff;
  std::uint64_t frac = ((hi & 0xffffffffffffULL) << 4) | (lo >> 60);
  std::int64_t exp = qexp == 0 ? 0 : qexp == 0x7fff ? 0x7ff : std::int64_t(qexp) - 16383 + 1023;
  if (exp <= 0 && qexp != 0) exp = 0, frac = 0;               // underflow to zero
  if (exp >= 0x7ff && qexp != 0x7fff) exp = 0x7ff, frac = 0;  // overflow to infinity
  double d = std::bit_cast<double>((sign << 63) | (std::uint64_t(exp) << 52) | frac);
  std::memcpy(out, &d, sizeof d);
#endif
}

}  // namespace

bool ExternalScale(const Type& t, int* ext, int* native) {
  int e = 0, n = 0;
  for (const Block& b : t.blocks) {
    const int basic = Part(b.basic);
    const int bn = static_cast<int>(BasicSize(basic)), be = ExternalBytes(basic);
    if (basic == 15 || (n != 0 && (bn != n || be != e))) return false;  // long double: not linear
    n = bn;
    e = be;
    if (b.offset % n != 0 || b.length % n != 0) return false;
  }
  if (n == 0 || t.extent % n != 0) return false;
  *ext = e;
  *native = n;
  return true;
}

std::int64_t ExternalSize(const Type& t) {
  std::int64_t n = 0;
  for (const Block& b : t.blocks)
    n += b.length / BasicSize(Part(b.basic)) * ExternalBytes(Part(b.basic));
  return n;
}

std::int64_t FirstUnrepresentable(const Type& t, const void* src, std::int64_t count) {
  const auto* base = static_cast<const char*>(src);
  std::int64_t index = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    for (const Block& b : t.blocks) {
      const int native = static_cast<int>(BasicSize(b.basic));
      const int ext = ExternalBytes(b.basic);
      const std::int64_t n = b.length / native;
      if (ext >= native || b.basic == 15 || ComplexPartIndex(b.basic)) {  // floating types fit
        index += n;
        continue;
      }
      const char* in = base + i * t.extent + b.offset;
      for (std::int64_t k = 0; k < n; ++k, in += native, ++index) {
        const std::uint64_t v = LoadNative(in, native);
        const int bits = 8 * ext;
        bool fits;
        if (SignedInteger(b.basic)) {
          const auto sv = static_cast<std::int64_t>(
              native == 8 ? v : (v ^ (1ULL << (8 * native - 1))) - (1ULL << (8 * native - 1)));
          fits = sv >= -(std::int64_t{1} << (bits - 1)) && sv < (std::int64_t{1} << (bits - 1));
        } else {
          fits = v < (std::uint64_t{1} << bits);
        }
        if (!fits) return index;
      }
    }
  }
  return -1;
}

void PackExternal(const Type& t, const void* src, std::int64_t count, void* dst) {
  auto* out = static_cast<unsigned char*>(dst);
  const auto* base = static_cast<const char*>(src);
  for (std::int64_t i = 0; i < count; ++i) {
    for (const Block& b : t.blocks) {
      const int basic = Part(b.basic);
      const int native = static_cast<int>(BasicSize(basic));
      const int ext = ExternalBytes(basic);
      const char* in = base + i * t.extent + b.offset;
      for (std::int64_t k = 0; k < b.length / native; ++k, in += native, out += ext) {
        if (basic == 15) {
          std::uint64_t hi, lo;
          LongDoubleToQuad(in, &hi, &lo);
          StoreBigEndian(hi, 8, out);
          StoreBigEndian(lo, 8, out + 8);
        } else {
          StoreBigEndian(LoadNative(in, native), ext, out);
        }
      }
    }
  }
}

void UnpackExternal(const Type& t, const void* src, std::int64_t count, void* dst) {
  const auto* in = static_cast<const unsigned char*>(src);
  auto* base = static_cast<char*>(dst);
  for (std::int64_t i = 0; i < count; ++i) {
    for (const Block& b : t.blocks) {
      const int basic = Part(b.basic);
      const int native = static_cast<int>(BasicSize(basic));
      const int ext = ExternalBytes(basic);
      char* out = base + i * t.extent + b.offset;
      for (std::int64_t k = 0; k < b.length / native; ++k, out += native, in += ext) {
        if (basic == 15) {
          QuadToLongDouble(LoadBigEndian(in, 8), LoadBigEndian(in + 8, 8), out);
          continue;
        }
        std::uint64_t v = LoadBigEndian(in, ext);
        if (ext < native && SignedInteger(basic) && (v >> (8 * ext - 1)) & 1)
          v |= ~std::uint64_t{0} << (8 * ext);
        StoreNative(v, native, out);
      }
    }
  }
}

}  // namespace nicq::dtype
