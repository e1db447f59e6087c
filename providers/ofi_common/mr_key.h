// Memory keys the ofi backends request themselves (providers without
// FI_MR_PROV_KEY accept a requested key). The key carries what the
// initiator needs to know about the target without another exchange:
//
//   bit 63 set    a counter's doorbell region: bits 0..31 are the CounterId
//                 (a write to it lands on that counter; native: MR-bound
//                 remote counter, emulated: remote CQ data names it)
//   bit 63 clear  a user region: bits 32..62 hold arrival_counter + 1
//                 (0: none), bits 0..31 a per-process sequence number
//
// so a put's initiator learns the target's arrival counter from the key
// (backend.h: "the target region's arrival_counter gets +1").
#pragma once

#include <cstdint>

#include "providers/backend.h"

namespace nicq::ofi {

inline constexpr std::uint64_t kDoorbellKeyBit = std::uint64_t{1} << 63;

inline std::uint64_t DoorbellKey(offload::CounterId id) {
  return kDoorbellKeyBit | id;
}

inline std::uint64_t UserKey(offload::CounterId arrival, std::uint32_t seq) {
  const std::uint64_t c = arrival == offload::kNoCounter ? 0 : std::uint64_t{arrival} + 1;
  return (c << 32) | seq;
}

// The arrival counter a user key names (kNoCounter when none or a doorbell key).
inline offload::CounterId ArrivalCounterOfKey(std::uint64_t key) {
  if (key & kDoorbellKeyBit) return offload::kNoCounter;
  const std::uint64_t c = (key >> 32) & 0x7fffffffu;
  return c == 0 ? offload::kNoCounter : static_cast<offload::CounterId>(c - 1);
}

}  // namespace nicq::ofi
