// The wire protocol between LocalBootstrap (in each rank) and nicqrun, which
// serves the rendezvous on a Unix stream socket at $NICQ_BOOT_DIR/boot.sock.
//
// Every message is a WireHeader followed by `len` payload bytes. A rank
// sends kHello once after connecting; each Allgather (Barrier is an
// Allgather of 0 bytes) is one kAllgather request answered, once every rank
// has sent the same sequence number, by one kAllgatherDone carrying all
// contributions in rank order. kAbort asks nicqrun to kill the job; kBye
// marks a clean Finalize so that a later disconnect is not an error.
//
// Shared by src/boot/ (client) and tools/nicqrun (server); both are built
// from one tree, so there is no version negotiation beyond the magic.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nicq::boot {

inline constexpr std::uint32_t kWireMagic = 0x6e697131;  // "niq1"
inline constexpr const char* kSocketName = "boot.sock";
// Largest payload accepted by nicqrun per rank and call: bootstrap data are
// addresses and keys, so anything bigger is a bug, not a workload.
inline constexpr std::uint64_t kMaxContribution = 64u << 20;

enum class WireOp : std::uint32_t {
  kHello = 1,
  kAllgather = 2,
  kAllgatherDone = 3,
  kAbort = 4,
  kBye = 5,
  kError = 6,  // nicqrun -> rank: the collective failed (payload: message)
};

struct WireHeader {
  std::uint32_t magic;
  WireOp op;
  std::int32_t rank;
  std::int32_t code;  // abort exit code
  std::uint64_t seq;  // collective sequence number, 0-based per job
  std::uint64_t len;  // payload bytes following this header
};
static_assert(sizeof(WireHeader) == 32, "wire header must have no padding surprises");

}  // namespace nicq::boot
