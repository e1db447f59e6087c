// Memory keys the ofi backends request themselves, when the provider lets
// the client choose them (no FI_MR_PROV_KEY). The key carries what the
// initiator needs to know about the target without another exchange. Its
// layout depends on how wide the provider's client keys are
// (fi_info domain_attr->mr_key_size: cxi takes 32-bit client keys, fi_cxi(7)
// "Memory registration modes"; sockets 64-bit):
//
//   64-bit keys
//     bit 63 set    a counter's doorbell region: bits 0..31 are the CounterId
//                   (a write to it lands on that counter; native: MR-bound
//                   remote counter, emulated: remote CQ data names it)
//     bit 63 clear  a user region: bits 32..62 hold arrival_counter + 1
//                   (0: none), bits 0..31 a per-process sequence number
//   32-bit keys
//     bit 31 set    a doorbell: bits 0..30 are the CounterId
//     bit 31 clear  a user region: bits 0..30 a per-process sequence number;
//                   the arrival counter is not in the key, so ops name it
//                   (TriggeredOp::target_counter), as with provider keys.
#pragma once

#include <cstdint>

#include "providers/backend.h"

namespace nicq::ofi {

class MrKeyLayout {
 public:
  // key_bytes: the provider's mr_key_size (0 or >= 8: 64-bit keys).
  explicit MrKeyLayout(std::size_t key_bytes = 8) : narrow_(key_bytes != 0 && key_bytes < 8) {}

  bool narrow() const { return narrow_; }
  // Counters a doorbell key can name.
  std::uint64_t MaxCounters() const {
    return narrow_ ? (std::uint64_t{1} << 31) : (std::uint64_t{1} << 32);
  }

  std::uint64_t DoorbellKey(offload::CounterId id) const { return DoorbellBit() | id; }

  std::uint64_t UserKey(offload::CounterId arrival, std::uint32_t seq) const {
    if (narrow_) return seq & 0x7fffffffu;
    const std::uint64_t c = arrival == offload::kNoCounter ? 0 : std::uint64_t{arrival} + 1;
    return (c << 32) | seq;
  }

  // The arrival counter a user key names (kNoCounter when none, a doorbell
  // key, or a layout that does not carry it).
  offload::CounterId ArrivalCounterOfKey(std::uint64_t key) const {
    if (narrow_ || (key & DoorbellBit())) return offload::kNoCounter;
    const std::uint64_t c = (key >> 32) & 0x7fffffffu;
    return c == 0 ? offload::kNoCounter : static_cast<offload::CounterId>(c - 1);
  }

 private:
  std::uint64_t DoorbellBit() const {
    return narrow_ ? (std::uint64_t{1} << 31) : (std::uint64_t{1} << 63);
  }
  bool narrow_;
};

}  // namespace nicq::ofi
