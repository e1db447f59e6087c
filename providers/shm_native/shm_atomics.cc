#include "providers/shm_native/shm_atomics.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

namespace nicq::shmtrig {

using offload::AtomicOp;
using offload::AtomicType;

AtomicStage& ThreadStage() {
  thread_local std::unique_ptr<AtomicStage> stage;
  if (!stage) stage = std::make_unique<AtomicStage>();
  return *stage;
}

namespace {

bool IsInteger(AtomicType t) {
  return t != AtomicType::kFloat && t != AtomicType::kDouble;
}

template <typename T>
bool Apply(AtomicOp op, T& a, T b) {
  switch (op) {
    case AtomicOp::kSum:
      a = static_cast<T>(a + b);
      return true;
    case AtomicOp::kProd:
      a = static_cast<T>(a * b);
      return true;
    case AtomicOp::kMin:
      a = b < a ? b : a;
      return true;
    case AtomicOp::kMax:
      a = b > a ? b : a;
      return true;
    case AtomicOp::kReplace:
      a = b;
      return true;
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case AtomicOp::kLand:
        a = static_cast<T>(a && b);
        return true;
      case AtomicOp::kLor:
        a = static_cast<T>(a || b);
        return true;
      case AtomicOp::kLxor:
        a = static_cast<T>(!a != !b);
        return true;
      case AtomicOp::kBand:
        a = static_cast<T>(a & b);
        return true;
      case AtomicOp::kBor:
        a = static_cast<T>(a | b);
        return true;
      case AtomicOp::kBxor:
        a = static_cast<T>(a ^ b);
        return true;
      default:
        break;
    }
  }
  return false;
}

// Elements are copied in and out: the staged bytes need not be aligned for T.
template <typename T>
bool CombineAs(AtomicOp op, void* target, const void* operand, std::size_t count) {
  auto* t = static_cast<unsigned char*>(target);
  const auto* o = static_cast<const unsigned char*>(operand);
  for (std::size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, t + i * sizeof(T), sizeof(T));
    std::memcpy(&b, o + i * sizeof(T), sizeof(T));
    if (!Apply(op, a, b)) return false;
    std::memcpy(t + i * sizeof(T), &a, sizeof(T));
  }
  return true;
}

}  // namespace

bool Combine(AtomicOp op, AtomicType type, void* target, const void* operand, std::size_t count) {
  switch (type) {
    case AtomicType::kInt8:
      return CombineAs<std::int8_t>(op, target, operand, count);
    case AtomicType::kUint8:
      return CombineAs<std::uint8_t>(op, target, operand, count);
    case AtomicType::kInt16:
      return CombineAs<std::int16_t>(op, target, operand, count);
    case AtomicType::kUint16:
      return CombineAs<std::uint16_t>(op, target, operand, count);
    case AtomicType::kInt32:
      return CombineAs<std::int32_t>(op, target, operand, count);
    case AtomicType::kUint32:
      return CombineAs<std::uint32_t>(op, target, operand, count);
    case AtomicType::kInt64:
      return CombineAs<std::int64_t>(op, target, operand, count);
    case AtomicType::kUint64:
      return CombineAs<std::uint64_t>(op, target, operand, count);
    case AtomicType::kFloat:
      return CombineAs<float>(op, target, operand, count);
    case AtomicType::kDouble:
      return CombineAs<double>(op, target, operand, count);
  }
  return false;
}

void AllowAtomics(offload::Capabilities& caps) {
  caps.atomics = true;
  for (int op = 0; op <= static_cast<int>(AtomicOp::kReplace); ++op) {
    for (int t = 0; t <= static_cast<int>(AtomicType::kDouble); ++t) {
      const auto o = static_cast<AtomicOp>(op);
      const bool arith = o == AtomicOp::kSum || o == AtomicOp::kProd || o == AtomicOp::kMin ||
                         o == AtomicOp::kMax || o == AtomicOp::kReplace;
      if (arith || IsInteger(static_cast<AtomicType>(t)))
        caps.AllowAtomic(o, static_cast<AtomicType>(t));
    }
  }
}

}  // namespace nicq::shmtrig
