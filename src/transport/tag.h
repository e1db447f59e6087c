// Wire layout of the 16-byte header (WireHeader) in front of every p2p
// message: a 64-bit tag laid out like a libfabric tag, and a data word.
// Messages travel as untagged libfabric sends (header + payload as a
// two-entry iov), so matching is ours:
//
//   63..60  protocol (Proto)            4 bits
//   59..44  context id                  16 bits
//   43..24  source world rank           20 bits  (1M ranks)
//   23..0   user tag                    24 bits  (TagUpperBound = 2^24-1)
//
//   data:    63..32 per-(source,dest) sequence number, 31..0 sender token
//
// Receives are matched in software (see p2p/matcher.h) with the same
// bits/ignore-mask scheme libfabric uses, so the layout stays valid if a
// provider's hardware matching is used later.
#pragma once

#include <cstdint>

namespace nicq::transport {

enum class Proto : std::uint8_t {
  kEager = 0,        // payload is the message
  kEagerSync = 1,    // same, receiver answers kAck(token) when it matches
  kRts = 2,          // payload is a RndvHeader; receiver RMA-reads, then kFin(token)
  kAck = 3,          // control: sync send matched
  kFin = 4,          // control: rendezvous read finished
  kCts = 5,          // control (push rendezvous): receiver matched, send the chunks
  kData = 6,         // push rendezvous chunk; tag bits 59..0 hold its byte offset
  kCancel = 7,       // control: sender asks to withdraw its unmatched message (data: seq, token)
  kCancelReply = 8,  // control: answer to kCancel (data: 1 withdrawn / 0 already matched, token)
  kSplit =
      9,  // control (same node): receiver offers the first part of a copy (data: ticket, token)
};

inline constexpr int kTagBits = 24;
inline constexpr int kSrcBits = 20;
inline constexpr int kCtxBits = 16;
inline constexpr int kProtoBits = 4;
inline constexpr int kSrcShift = kTagBits;
inline constexpr int kCtxShift = kTagBits + kSrcBits;
inline constexpr int kProtoShift = kCtxShift + kCtxBits;
static_assert(kProtoShift + kProtoBits == 64, "tag fields must fill 64 bits");

inline constexpr std::uint64_t kUserTagMask = (std::uint64_t{1} << kTagBits) - 1;
inline constexpr std::uint64_t kSrcMask = ((std::uint64_t{1} << kSrcBits) - 1) << kSrcShift;
inline constexpr std::uint64_t kCtxMask = ((std::uint64_t{1} << kCtxBits) - 1) << kCtxShift;
inline constexpr std::uint64_t kProtoMask = ((std::uint64_t{1} << kProtoBits) - 1) << kProtoShift;
inline constexpr int kMaxUserTag = static_cast<int>(kUserTagMask);
inline constexpr std::uint32_t kMaxContextId = (1u << kCtxBits) - 1;
inline constexpr int kMaxWorldSize = 1 << kSrcBits;

constexpr std::uint64_t PackTag(Proto p, std::uint32_t ctx, std::uint32_t src_world,
                                std::uint32_t tag) {
  return (std::uint64_t(p) << kProtoShift) | (std::uint64_t(ctx) << kCtxShift & kCtxMask) |
         (std::uint64_t(src_world) << kSrcShift & kSrcMask) | (std::uint64_t(tag) & kUserTagMask);
}
constexpr Proto TagProto(std::uint64_t t) {
  return Proto((t & kProtoMask) >> kProtoShift);
}
constexpr std::uint32_t TagCtx(std::uint64_t t) {
  return std::uint32_t((t & kCtxMask) >> kCtxShift);
}
constexpr int TagSrc(std::uint64_t t) {
  return int((t & kSrcMask) >> kSrcShift);
}
constexpr int TagUser(std::uint64_t t) {
  return int(t & kUserTagMask);
}

// A receive's selector: a message matches when the bits outside `ignore`
// agree. The protocol field is always ignored (eager, sync and rendezvous
// messages all match the same receives).
struct MatchSpec {
  std::uint64_t bits = 0;
  std::uint64_t ignore = 0;
};

// src_world < 0 means any source, tag < 0 any tag.
constexpr MatchSpec MakeMatch(std::uint32_t ctx, int src_world, int tag) {
  MatchSpec m;
  m.ignore = kProtoMask;
  m.bits = PackTag(Proto::kEager, ctx, src_world < 0 ? 0 : std::uint32_t(src_world),
                   tag < 0 ? 0 : std::uint32_t(tag));
  if (src_world < 0) m.ignore |= kSrcMask;
  if (tag < 0) m.ignore |= kUserTagMask;
  return m;
}
constexpr bool Matches(const MatchSpec& m, std::uint64_t tag) {
  return ((tag ^ m.bits) & ~m.ignore) == 0;
}

constexpr std::uint64_t PackData(std::uint32_t seq, std::uint32_t token) {
  return (std::uint64_t(seq) << 32) | token;
}
constexpr std::uint32_t DataSeq(std::uint64_t d) {
  return std::uint32_t(d >> 32);
}
constexpr std::uint32_t DataToken(std::uint64_t d) {
  return std::uint32_t(d);
}

// The 16 bytes in front of every message's payload.
struct WireHeader {
  std::uint64_t tag = 0;   // PackTag(...)
  std::uint64_t data = 0;  // PackData(seq, token)
};

// What a kRts message carries: where the receiver reads the payload from.
struct RndvHeader {
  std::uint64_t addr = 0;  // remote address as the provider wants it (VA or offset)
  std::uint64_t key = 0;   // memory key
  std::uint64_t len = 0;   // full message length
  std::uint64_t push = 0;  // how the receiver gets the payload: a RndvMode
};

// RndvHeader::push: the receiver RMA-reads `addr`/`key` (kRndvRead), asks
// for pushed chunks (kRndvPush), or, from a same-node peer of the shm
// transport, copies `addr` out of the sender's address space with
// process_vm_readv (kRndvCrossMemory; key unused).
inline constexpr std::uint64_t kRndvRead = 0;
inline constexpr std::uint64_t kRndvPush = 1;
inline constexpr std::uint64_t kRndvCrossMemory = 2;

inline constexpr std::uint64_t kOffsetMask = ~kProtoMask;
constexpr std::uint64_t PackChunkTag(std::uint64_t offset) {
  return (std::uint64_t(Proto::kData) << kProtoShift) | (offset & kOffsetMask);
}
constexpr std::uint64_t ChunkOffset(std::uint64_t tag) {
  return tag & kOffsetMask;
}

}  // namespace nicq::transport
