// nicq atomic op/type <-> libfabric enums.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>

#include "providers/backend.h"

namespace nicq::ofi {

inline fi_op ToFiOp(offload::AtomicOp op) {
  switch (op) {
    case offload::AtomicOp::kSum:
      return FI_SUM;
    case offload::AtomicOp::kProd:
      return FI_PROD;
    case offload::AtomicOp::kMin:
      return FI_MIN;
    case offload::AtomicOp::kMax:
      return FI_MAX;
    case offload::AtomicOp::kLand:
      return FI_LAND;
    case offload::AtomicOp::kLor:
      return FI_LOR;
    case offload::AtomicOp::kLxor:
      return FI_LXOR;
    case offload::AtomicOp::kBand:
      return FI_BAND;
    case offload::AtomicOp::kBor:
      return FI_BOR;
    case offload::AtomicOp::kBxor:
      return FI_BXOR;
    case offload::AtomicOp::kReplace:
      return FI_ATOMIC_WRITE;
  }
  return FI_SUM;
}

inline fi_datatype ToFiType(offload::AtomicType t) {
  switch (t) {
    case offload::AtomicType::kInt8:
      return FI_INT8;
    case offload::AtomicType::kUint8:
      return FI_UINT8;
    case offload::AtomicType::kInt16:
      return FI_INT16;
    case offload::AtomicType::kUint16:
      return FI_UINT16;
    case offload::AtomicType::kInt32:
      return FI_INT32;
    case offload::AtomicType::kUint32:
      return FI_UINT32;
    case offload::AtomicType::kInt64:
      return FI_INT64;
    case offload::AtomicType::kUint64:
      return FI_UINT64;
    case offload::AtomicType::kFloat:
      return FI_FLOAT;
    case offload::AtomicType::kDouble:
      return FI_DOUBLE;
  }
  return FI_DOUBLE;
}

inline constexpr int kNumAtomicOps = 11;
inline constexpr int kNumAtomicTypes = 10;

}  // namespace nicq::ofi
