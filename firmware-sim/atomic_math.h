// The NIC's atomic ALU: dst[i] = dst[i] op src[i] on one of the element
// types a NIC supports. The numbering of ops and types is the firmware's own
// (the sim provider maps the backend's enums onto it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nicq::fwsim {

enum class AluOp : std::uint8_t {
  kSum,
  kProd,
  kMin,
  kMax,
  kLand,
  kLor,
  kLxor,
  kBand,
  kBor,
  kBxor,
  kReplace
};
enum class AluType : std::uint8_t {
  kInt8,
  kUint8,
  kInt16,
  kUint16,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat,
  kDouble
};

std::size_t AluTypeSize(AluType t);
// False when the op is not defined on the type (bitwise ops on floats).
bool AluSupports(AluOp op, AluType t);
// Applies op element-wise over bytes / AluTypeSize(t) elements (unaligned ok).
void AluApply(AluOp op, AluType t, void* dst, const void* src, std::size_t bytes);

}  // namespace nicq::fwsim
