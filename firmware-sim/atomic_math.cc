#include "firmware-sim/atomic_math.h"

#include <cstring>
#include <type_traits>

namespace nicq::fwsim {
namespace {

template <typename T>
T Combine(AluOp op, T a, T b) {
  switch (op) {
    case AluOp::kSum:
      return static_cast<T>(a + b);
    case AluOp::kProd:
      return static_cast<T>(a * b);
    case AluOp::kMin:
      return b < a ? b : a;
    case AluOp::kMax:
      return a < b ? b : a;
    case AluOp::kLand:
      return static_cast<T>((a != T{}) && (b != T{}));
    case AluOp::kLor:
      return static_cast<T>((a != T{}) || (b != T{}));
    case AluOp::kLxor:
      return static_cast<T>((a != T{}) != (b != T{}));
    case AluOp::kReplace:
      return b;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case AluOp::kBand:
        return static_cast<T>(a & b);
      case AluOp::kBor:
        return static_cast<T>(a | b);
      case AluOp::kBxor:
        return static_cast<T>(a ^ b);
      default:
        break;
    }
  }
  return a;
}

template <typename T>
void ApplyTyped(AluOp op, void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t off = 0; off + sizeof(T) <= bytes; off += sizeof(T)) {
    T a, b;
    std::memcpy(&a, d + off, sizeof(T));
    std::memcpy(&b, s + off, sizeof(T));
    a = Combine<T>(op, a, b);
    std::memcpy(d + off, &a, sizeof(T));
  }
}

}  // namespace

std::size_t AluTypeSize(AluType t) {
  switch (t) {
    case AluType::kInt8:
    case AluType::kUint8:
      return 1;
    case AluType::kInt16:
    case AluType::kUint16:
      return 2;
    case AluType::kInt32:
    case AluType::kUint32:
    case AluType::kFloat:
      return 4;
    default:
      return 8;
  }
}

bool AluSupports(AluOp op, AluType t) {
  const bool floating = t == AluType::kFloat || t == AluType::kDouble;
  const bool bitwise = op == AluOp::kBand || op == AluOp::kBor || op == AluOp::kBxor;
  return !(floating && bitwise);
}

void AluApply(AluOp op, AluType t, void* dst, const void* src, std::size_t bytes) {
  switch (t) {
    case AluType::kInt8:
      return ApplyTyped<std::int8_t>(op, dst, src, bytes);
    case AluType::kUint8:
      return ApplyTyped<std::uint8_t>(op, dst, src, bytes);
    case AluType::kInt16:
      return ApplyTyped<std::int16_t>(op, dst, src, bytes);
    case AluType::kUint16:
      return ApplyTyped<std::uint16_t>(op, dst, src, bytes);
    case AluType::kInt32:
      return ApplyTyped<std::int32_t>(op, dst, src, bytes);
    case AluType::kUint32:
      return ApplyTyped<std::uint32_t>(op, dst, src, bytes);
    case AluType::kInt64:
      return ApplyTyped<std::int64_t>(op, dst, src, bytes);
    case AluType::kUint64:
      return ApplyTyped<std::uint64_t>(op, dst, src, bytes);
    case AluType::kFloat:
      return ApplyTyped<float>(op, dst, src, bytes);
    case AluType::kDouble:
      return ApplyTyped<double>(op, dst, src, bytes);
  }
}

}  // namespace nicq::fwsim
