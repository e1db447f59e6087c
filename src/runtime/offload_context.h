// The process-wide offload context: the one OffloadBackend that matched
// persistent requests and queues of this process post their triggered ops
// to (DESIGN.md: "backend chosen once at init").
//
// NICQ_OFFLOAD names the backend wanted first: native (libfabric triggered
// ops; needs FI_TRIGGER, e.g. sockets here, cxi), emulated (software
// counters over tcp;ofi_rxm, shm, verbs, with its progress thread), sim
// (one-process simulator), or auto (native, else emulated). A backend that
// cannot open, or opens with fewer trigger slots than one enqueued waitall
// posts, is passed over for the next one over the same provider
// (runtime/offload_select.h), forced native included: every rank agrees on
// the backend, and each logs one line at info saying which and why. Only
// when none opens do queues and matching report an error, naming the
// provider and what it lacks; persistent collectives then run on the host.
// none: no context (queues and matching then report NICQ_OFFLOAD=none).
//
// Lifecycle: InitOffloadContext() is collective over MPI_COMM_WORLD (the
// backend addresses are exchanged through rt::Boot().Allgather), so MPI_Init
// calls it on every rank right after the runtime is up; a failure is kept
// and returned by every later EnsureOffloadContext() (no lazy retry, which
// would be a collective step only some ranks take). FinalizeOffloadContext()
// is collective too (a barrier, so no peer's op still targets this process)
// and MPI_Finalize calls it before the runtime goes down. Only a program
// that brings up the runtime without MPI_Init (unit tests) gets the context
// lazily from EnsureOffloadContext(), torn down at exit.
#pragma once

#include "core/status.h"
#include "providers/backend.h"

namespace nicq::rt {

Status InitOffloadContext();
Status FinalizeOffloadContext();
// Creates the context if MPI_Init did not (see above); Ok when it exists.
Status EnsureOffloadContext();
// Whether the context was made or refused already (MPI_Init does it on
// every rank): only then may a subset of world's ranks rely on it without
// a collective step over world.
bool OffloadContextDecided();
// The backend; nullptr before init / after finalize.
offload::OffloadBackend* Backend();
// "native", "emulated", "shm" or "sim" (empty before init): for logs and
// dumps; callers choose by what the backend does (below), never by name.
const char* BackendName();
// The backend's ops are fired by a NIC, with no host thread or call
// (offload::Firing::kNic); false without a backend.
bool NicFiresOps();
// The backend's ops are fired by its agent thread (kAgentThread).
bool AgentFiresOps();
// Before the context exists (unit tests without MPI_Init): whether
// NICQ_OFFLOAD would open a NIC backend over this process's provider
// (forced native, or auto over a provider that offers FI_TRIGGER).
bool NicBackendExpected();

}  // namespace nicq::rt
