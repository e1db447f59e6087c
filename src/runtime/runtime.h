// The runtime's internal API, used by src/api/ (and later by collectives and
// queues). Everything returns nicq::Status; MPI error codes exist only in
// src/api/. Ranks are comm ranks unless a name says "world".
//
// Special values follow mpi.h: kAnySource = -2, kProcNull = -1, kAnyTag = -1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "runtime/comm.h"
#include "runtime/request.h"

namespace nicq {
class Bootstrap;
}

namespace nicq::offload {
struct AgentBell;
}

namespace nicq::rt {

inline constexpr int kAnySource = -2;
inline constexpr int kProcNull = -1;
inline constexpr int kAnyTag = -1;

// ---- environment -----------------------------------------------------------
// Bootstrap, open the fabric (NICQ_PROVIDER), exchange addresses, build the
// world and self communicators. `required`/`provided` are MPI_THREAD_* values
// (0 single .. 3 multiple).
Status Init(int required, int* provided);
Status Finalize();
bool Initialized();
bool Finalized();
int ThreadLevel();
int WorldRank();
int WorldSize();
Bootstrap& Boot();
// Ranks of this node that run on this process's CPUs: all local ranks, or
// fewer when the launcher bound each rank to its own (NICQ_BOUND).
int RanksSharingMyCpus();
const char* ProviderName();  // the libfabric provider in use, e.g. "tcp;ofi_rxm"
[[noreturn]] void Abort(int code, const char* why);
int TagUpperBound();  // largest user tag the tag packing allows (>= 32767)
// The same as a constant, for inline argument checks (runtime.cc asserts
// that it is the tag packing's bound).
inline constexpr int kMaxUserTag = (1 << 24) - 1;

// ---- communicators -----------------------------------------------------------
Comm* World();
Comm* Self();
// Collective over `parent`: a new context id agreed by all members.
Status CommDup(Comm* parent, Comm** out);
// color < 0 means MPI_UNDEFINED (out = nullptr on that rank).
Status CommSplit(Comm* parent, int color, int key, Comm** out);
// The same creation without blocking (MPI_Comm_idup): Start takes the
// parent's next runtime tag and sends the first round (an
// intercommunicator parent: only its duplicate, color 0 and key = rank,
// agreed over both groups and over the local group); Poll advances it
// (never blocks, call it from progress) and is true once it is over;
// Finish builds the communicator (nullptr for color < 0) and deletes the
// agreement. Agreements that overlap in time on one process are safe (see
// comm_agreement.cc).
struct CommAgreement;
Status CommAgreementStart(Comm* parent, int color, int key, CommAgreement** out);
bool CommAgreementPoll(CommAgreement* a);
Status CommAgreementFinish(CommAgreement* a, Comm** out);
// MPI_Comm_free: drops the handle's reference. The communicator (and its
// context id) lives on until the last request using it releases it, so
// pending operations complete normally (MPI 4.1 7.4.3).
Status CommFree(Comm* comm);
void CommRetain(Comm* comm);
void CommRelease(Comm* comm);
// Collective over `parent` (MPI_Comm_create / create_group by ranks): the
// members are `parent_ranks` in that order; every parent rank passes the same
// list. Ranks not in the list get out = nullptr.
Status CommCreateFromRanks(Comm* parent, const int* parent_ranks, int n, Comm** out);

// Intercommunicators (intercomm.cc). Create: collective over `local` (an
// intracommunicator) and the remote group's local communicator; only the
// leader's `peer` and `remote_leader_world` matter (the leaders meet on the
// peer's runtime context under `tag`). A leader whose arguments were
// refused passes that error's class as `leader_refused` (kOk otherwise):
// its group's members then fail with it rather than wait. Split: collective over both groups
// (dup is color 0 with key = rank, MPI_Comm_create a color per member);
// color < 0 or no remote member with the same color gives out = nullptr.
// Merge: the intracommunicator of both groups, the group that passed
// high = false first.
Status IntercommCreate(Comm* local, int local_leader, Comm* peer, int remote_leader_world, int tag,
                       Code leader_refused, Comm** out);
Status IntercommSplit(Comm* inter, int color, int key, Comm** out);
Status IntercommMerge(Comm* inter, bool high, Comm** out);

// Called with a communicator just before it is deleted (its last reference
// gone, or the world and self at Finalize): the collectives layer frees
// what it keeps per communicator. One hook; set once.
void SetCommDestroyHook(void (*hook)(Comm* comm));

// ---- point-to-point ------------------------------------------------------------
// Start a send/receive of `bytes` contiguous bytes; `req` is filled in and
// completes asynchronously (req->IsDone()). The engine sets req->status.
// MPI_PROC_NULL completes at once with source = MPI_PROC_NULL, tag = MPI_ANY_TAG.
Status Isend(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
             Request* req);
Status Irecv(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req);
// The same for a caller that has checked the rank (one of comm's ranks,
// kProcNull, or kAnySource for the receive) and the tag (a user tag, or
// kAnyTag for the receive), and passes `req` as a fresh one: not done, an
// empty status, no engine link (the API layer's reset request slots). They
// check only what the caller cannot see (the runtime running, the
// communicator's rank map, the engine lock in use; kProcNull goes through
// Isend/Irecv too) and otherwise go straight to the engine.
Status IsendFresh(const void* buf, std::size_t bytes, int dest, int tag, Comm* comm, SendMode mode,
                  Request* req);
Status IrecvFresh(void* buf, std::size_t bytes, int source, int tag, Comm* comm, Request* req);
// Probe: status.bytes is the incoming message's size.
Status Iprobe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status);
Status Probe(int source, int tag, Comm* comm, RequestStatus* status);
// Cancel a pending receive at once; a pending synchronous or rendezvous
// send asks its receiver (see p2p::Engine::Cancel). Ok when too late.
Status Cancel(Request* req);
// Matched probe: *msg is the matched message, taken out of matching (no
// later receive or probe sees it), or nullptr with *flag false. A probe of
// kProcNull sets *flag with *msg = nullptr (MPI_MESSAGE_NO_PROC).
Status Improbe(int source, int tag, Comm* comm, bool* flag, RequestStatus* status, void** msg);
Status Mprobe(int source, int tag, Comm* comm, RequestStatus* status, void** msg);
// Receive a message from Improbe/Mprobe (nullptr: the kProcNull message).
Status Mrecv(void* msg, void* buf, std::size_t bytes, Comm* comm, Request* req);

// Buffered mode per communicator and per session (MPI-4.1). A buffered
// send on a communicator uses the communicator's buffer, else the buffer of
// the session it derives from (CommSetSession), else the process's.
struct BufferOwner {
  enum Kind : std::uint8_t { kProcess, kComm, kSession } kind = kProcess;
  std::uint32_t id = 0;  // kComm: context id; kSession: session index
};
// `buf` == kBufferAutomatic: messages are copied into memory nicq allocates.
inline void* const kBufferAutomatic = reinterpret_cast<void*>(-2);
Status BufferAttachTo(BufferOwner owner, void* buf, std::size_t size);
Status BufferDetachFrom(BufferOwner owner, void** buf, std::size_t* size);  // waits
// Blocks until every buffered message of that buffer has been sent;
// BufferIdle tests it without blocking.
Status BufferFlush(BufferOwner owner);
bool BufferIdle(BufferOwner owner);
// At CommFree: sends what the communicator's buffer holds and detaches it, so
// a later communicator with the same context id starts without a buffer.
Status DropCommBuffer(std::uint32_t context_id);
// Records that `comm` derives from session `session` (an index; -1: none).
// Communicators created from it (dup, split, idup, intercommunicators over
// it, merge) inherit it.
void CommSetSession(Comm* comm, int session);

// Buffered mode (MPI_Buffer_attach/detach).
Status BufferAttach(void* buf, std::size_t size);
Status BufferDetach(void** buf, std::size_t* size);  // waits for pending bsends
inline constexpr std::size_t kBsendOverhead = 96;    // = MPI_BSEND_OVERHEAD

// ---- progress -------------------------------------------------------------------
// Poll the fabric once; *progressed is set when any completion was handled.
Status Progress(bool* progressed = nullptr);
// One poll of the point-to-point engine alone (its transports, matching and
// completions), without the progress hooks; true when it handled anything.
// For a caller that runs its own engine's work right after (a host-sequenced
// queue's pass in an enqueued wait).
bool PollEngine();

// A waiter's escalation: spin a little, then yield, then block on the
// fabric's wait object with a short timeout. Callers loop:
//   Backoff b; while (!cond) NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
// ProgressWait also detects dead peers (kProcFailed) so no wait hangs silently.
struct Backoff {
  std::uint32_t polls = 0;
  std::int64_t spin_until_ns = 0;  // end of the spin phase; 0: not begun
  bool spin_expired = false;       // the spin phase ended without progress
  void Reset() {
    polls = 0;
    spin_until_ns = 0;
    spin_expired = false;
  }
};
Status ProgressWait(Backoff& backoff);

// ---- additions (RUNTIME) ----------------------------------------------------------
// Re-post a persistent kPersistentSend/kPersistentRecv request from the
// arguments stored in it (buf, bytes, peer, tag, comm, mode); sets active.
Status Start(Request* req);
// The same for a request whose kind, buffer, peer, tag, mode and comm are
// set already (the API layer's persistent requests): one call from the
// request to the engine, the argument checks inline.
Status StartPersistent(Request* req);
// Block until req is done (progressing the fabric); Test polls once.
Status Wait(Request* req);
Status Test(Request* req, bool* done);
// Context ids step by 8 per communicator (see comm.h).
inline constexpr std::uint32_t kContextStride = 8;
inline constexpr std::uint32_t kRuntimeContextOffset = 3;
inline constexpr std::uint32_t kPartitionedOfferContextOffset = 4;
inline constexpr std::uint32_t kPartitionedDataContextOffset = 5;
// The libfabric domain (NIC) in use and why it was chosen.
const char* FabricDomain();
// For nicq_info, without Init: providers usable for p2p, their domains and
// the one Init would choose on this core (multi-line text).
std::string DescribeFabric();
// Whether nicq's same-node transport carries this world rank's messages
// (NICQ_SHM on or auto, and the rank on our node); true for ourselves
// when the transport is active.
bool SameNodeShm(int world);
// The node of a world rank, named by the lowest world rank on it (every
// rank computes the same from what Init exchanged; core/node_name.h says
// what a node is, virtual nodes included).
int NodeIdOf(int world);
// Whether the shm transport may copy straight out of a same-node rank's
// memory (process_vm_readv, probed at Init on every rank of the node), and
// that copy: len bytes at `addr` in world rank `world`'s address space to
// dst. Returns 0 or an errno (ESRCH: the process is gone).
bool CrossMemoryReads();
int ReadFromRank(int world, void* dst, std::uint64_t addr, std::size_t len);
// World rank `world`'s offload agent doorbell in the node's shared memory
// (ours included), valid until Finalize closes the fabric; nullptr when the
// shm transport is off or the rank is on another node.
offload::AgentBell* AgentBellOf(int world);
// Whether a rank this process can see by pid (this host, this pid namespace)
// has exited (its process is gone or a zombie).
bool LocalProcessGone(int world);
// More ranks on our CPUs than cores: waiters should yield rather than spin.
bool Oversubscribed();
// Largest message sent eagerly (NICQ_EAGER_LIMIT after clamping).
std::size_t EagerLimit();

}  // namespace nicq::rt
