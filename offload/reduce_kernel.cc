#include "offload/reduce_kernel.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace nicq::offload {
namespace {

template <typename T>
inline T Combine(AtomicOp op, T a, T b) {
  switch (op) {
    case AtomicOp::kSum:
      return static_cast<T>(a + b);
    case AtomicOp::kProd:
      return static_cast<T>(a * b);
    case AtomicOp::kMin:
      return b < a ? b : a;
    case AtomicOp::kMax:
      return a < b ? b : a;
    case AtomicOp::kLand:
      return static_cast<T>((a != T{}) && (b != T{}));
    case AtomicOp::kLor:
      return static_cast<T>((a != T{}) || (b != T{}));
    case AtomicOp::kLxor:
      return static_cast<T>((a != T{}) != (b != T{}));
    case AtomicOp::kReplace:
      return b;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == AtomicOp::kBand) return static_cast<T>(a & b);
    if (op == AtomicOp::kBor) return static_cast<T>(a | b);
    if (op == AtomicOp::kBxor) return static_cast<T>(a ^ b);
  }
  return a;
}

template <typename T>
void Typed(AtomicOp op, void* dst, const void* src, std::size_t bytes) {
  const std::size_t n = bytes / sizeof(T);
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (std::size_t i = 0; i < n; ++i) {  // memcpy: buffers need not be aligned
    T a, b;
    std::memcpy(&a, d + i * sizeof(T), sizeof(T));
    std::memcpy(&b, s + i * sizeof(T), sizeof(T));
    a = Combine<T>(op, a, b);
    std::memcpy(d + i * sizeof(T), &a, sizeof(T));
  }
}

}  // namespace

void ReduceInto(AtomicOp op, AtomicType type, void* dst, const void* src, std::size_t bytes) {
  switch (type) {
    case AtomicType::kInt8:
      return Typed<std::int8_t>(op, dst, src, bytes);
    case AtomicType::kUint8:
      return Typed<std::uint8_t>(op, dst, src, bytes);
    case AtomicType::kInt16:
      return Typed<std::int16_t>(op, dst, src, bytes);
    case AtomicType::kUint16:
      return Typed<std::uint16_t>(op, dst, src, bytes);
    case AtomicType::kInt32:
      return Typed<std::int32_t>(op, dst, src, bytes);
    case AtomicType::kUint32:
      return Typed<std::uint32_t>(op, dst, src, bytes);
    case AtomicType::kInt64:
      return Typed<std::int64_t>(op, dst, src, bytes);
    case AtomicType::kUint64:
      return Typed<std::uint64_t>(op, dst, src, bytes);
    case AtomicType::kFloat:
      return Typed<float>(op, dst, src, bytes);
    case AtomicType::kDouble:
      return Typed<double>(op, dst, src, bytes);
  }
}

}  // namespace nicq::offload
