// Matched persistent send/recv as plans (DESIGN.md, "the life of a
// persistent allreduce", last paragraph): after the match the sender holds
// the receive buffer's address and key, and each start is a triggered RMA
// write gated on "sender started" plus "receiver ready" (both feed one
// counter: threshold 2 per epoch); the write's arrival counter at the
// receiver completes the receive. No tag matching on the data path.
#pragma once

#include "offload/schedule.h"

namespace nicq::offload {

// The sender's side. Named counter 0 ("ready") receives the receiver's
// ready token; the receiver's plan must be built with BuildPersistentRecv
// (its buffer 0 is where the data goes).
Status BuildPersistentSend(PeerId receiver, const void* buf, std::size_t bytes, Schedule* out);
// The receiver's side: exposes `buf` (buffer 0, arrivals on counter 0
// "data") and sends the sender a ready token each epoch.
Status BuildPersistentRecv(PeerId sender, void* buf, std::size_t bytes, Schedule* out);

}  // namespace nicq::offload
