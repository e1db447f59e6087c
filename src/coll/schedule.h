// The host collective engine: a Schedule is a list of phases; each phase
// runs its local steps (copy, reduce, pack) in order as it is entered and
// posts its sends/receives, and the next phase starts when all of them have
// completed. Algorithms are builders that append phases (see algorithms.h);
// the engine knows nothing of MPI.
//
// Why phases rather than a general DAG: every algorithm here is a sequence
// of rounds, and a round boundary is exactly where a reduction or a copy
// needs the previous round's data. Messages between a pair of ranks in one
// collective all carry the same tag; p2p ordering keeps them apart.
//
// Lifetime: a Schedule is built once (persistent: at init; nonblocking: per
// call from a pool whose vectors keep their capacity, so a warm pool makes
// no allocation) and Launch()ed per start. Progress comes from Poll(),
// called by the progress hook (rt::Progress -> progress::PollAll) and
// directly by blocking waits.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/comm.h"
#include "runtime/request.h"

namespace nicq::coll {

struct Step {
  enum Kind : std::uint8_t { kSend, kRecv, kCopy, kReduce, kPack, kUnpack, kCopyTyped };
  Kind kind = kCopy;
  bool remote = false;                // send/recv: peer is a rank of the intercomm's remote group
  int peer = -1;                      // send/recv: comm rank
  const void* src = nullptr;          // send, copy, reduce (in), pack/unpack source
  void* dst = nullptr;                // recv, copy, reduce (inout), pack/unpack target
  std::size_t bytes = 0;              // send/recv/copy bytes; reduce: elements
  const dtype::Type* type = nullptr;  // pack/unpack/typed copy
  std::int64_t count = 0;             // pack/unpack/typed copy items
};

class Schedule {
 public:
  Schedule() = default;
  ~Schedule() { DropHolds(); }
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  // ---- building ----
  void Reset();  // keeps capacity (pool reuse); drops the held op and types
  // `shift` is added to the reduce steps' addresses before the op sees them
  // (an image that starts at a type's lower bound, not at its origin).
  // The op and the type are held until Reset(): the user may free their
  // handles while the schedule runs.
  void SetReduce(int op, int type_handle, std::ptrdiff_t shift = 0);
  // Keeps a datatype alive until Reset() (its steps point at it).
  void Hold(const dtype::Type* t);
  // A scratch block that stays valid until Reset(); blocks are reused by
  // position across Reset() so a rebuilt schedule of the same shape does not
  // allocate.
  char* Scratch(std::size_t bytes);
  void Send(const void* buf, std::size_t bytes, int peer);
  void Recv(void* buf, std::size_t bytes, int peer);
  // While set, Send/Recv peers are indexes into `comm_ranks`: a builder
  // written for ranks 0..p-1 then runs on a subgroup (hierarchical
  // schedules). nullptr: peers are comm ranks. Read only while building.
  void SetPeerMap(const int* comm_ranks) { peer_map_ = comm_ranks; }
  // Intercommunicator schedules: a send/receive naming a rank of the remote
  // group (Send/Recv then name ranks of the local group).
  void SendRemote(const void* buf, std::size_t bytes, int peer);
  void RecvRemote(void* buf, std::size_t bytes, int peer);
  void Copy(void* dst, const void* src, std::size_t bytes);
  // inout = in op inout over `elements` elements of the reduce type.
  void Reduce(const void* in, void* inout, std::size_t elements);
  void Pack(const dtype::Type* t, const void* src, std::int64_t count, void* dst);
  void Unpack(const dtype::Type* t, const void* src, std::int64_t count, void* dst);
  // Copies only the type's data of `count` items between two buffers of its layout.
  void CopyTyped(const dtype::Type* t, const void* src, std::int64_t count, void* dst);
  // Closes the current phase (no-op when it is empty).
  void EndPhase();
  int phases() const { return static_cast<int>(phase_end_.size()); }
  std::size_t steps() const { return steps_.size(); }
  // The largest send or receive (bytes).
  std::size_t largest_message() const { return largest_message_; }
  // Read-only view for tests and dumps: phase i is steps
  // [phase_ends()[i-1], phase_ends()[i]).
  const std::vector<Step>& step_list() const { return steps_; }
  const std::vector<std::uint32_t>& phase_ends() const { return phase_end_; }
  // Runs one local (copy/reduce/pack/unpack) step as the engine would.
  Status RunLocal(const Step& s) const;

  // ---- running ----
  // Communication of this schedule goes to `comm` (the collective shadow of
  // the user's communicator) with `tag`; `owner` is marked done at the end.
  // On an intercommunicator `local` is the collective shadow of its local
  // group: Send/Recv go there, SendRemote/RecvRemote to `comm`.
  Status Launch(Comm* comm, int tag, Request* owner, Comm* local = nullptr);
  // Advances as far as it can without blocking; true when it did something.
  bool Advance();
  // Read without the engine lock by a start on another thread (the host
  // progress thread may be finishing the run).
  bool running() const { return running_.load(std::memory_order_acquire); }
  // Called when the schedule finished; nonblocking schedules return to the pool.
  bool release_on_done = false;
  // A description for NICQ_LOG / plan dumps (algorithm, phases, steps).
  const char* algorithm = "";
  // Called when a run finished, after the owner's status is set and before
  // it is marked done (persistent requests count epochs on a counter here).
  // Runs with the engine lock held: it must not launch or activate.
  void (*on_done)(void* arg) = nullptr;
  void* on_done_arg = nullptr;
  // nicq::Code of the last finished run (0: success).
  int last_error() const { return last_error_; }

 private:
  Status EnterPhase();
  void DropHolds();
  // "receiving 64 bytes from rank 3 in phase 2 of 4 failed": the posted
  // send or receive `index` of the current phase.
  std::string DescribePosted(std::uint32_t index) const;
  void Finish(const Status& st);

  std::vector<Step> steps_;
  std::vector<std::uint32_t> phase_end_;
  std::uint32_t open_from_ = 0;  // first step of the phase being built
  std::vector<std::unique_ptr<char[]>> scratch_;
  std::vector<std::size_t> scratch_size_;
  std::size_t largest_message_ = 0;
  const int* peer_map_ = nullptr;
  std::size_t scratch_used_ = 0;
  int op_ = 0, red_type_ = 0;
  std::ptrdiff_t red_shift_ = 0;
  std::vector<dtype::Type*> held_types_;
  dtype::PreparedReduce prepared_;  // op_ on red_type_, resolved at build
  // Run state.
  Comm* comm_ = nullptr;
  Comm* local_ = nullptr;  // Send/Recv steps: comm_ itself unless an intercommunicator's
  int tag_ = 0;
  Request* owner_ = nullptr;
  std::atomic<bool> running_{false};
  int last_error_ = 0;
  std::uint32_t phase_ = 0;
  std::uint32_t posted_ = 0;
  std::unique_ptr<Request[]> reqs_;
  std::uint32_t reqs_cap_ = 0;
};

// ---- the engine ------------------------------------------------------------
// A pool of schedules for nonblocking collectives.
Schedule* AcquireSchedule();
void ReleaseSchedule(Schedule* s);
// Adds a launched schedule to the active list and registers the progress
// hook on first use. `async`: the schedule runs while the application
// computes (nonblocking, persistent), so the host progress thread is
// kicked (runtime/async_progress.h) when it moves messages of at least
// kAsyncMinBytes: smaller ones finish within microseconds of the next MPI
// call, and the thread's engine lock would cost each of them more (8-byte
// persistent allreduce, 2 ranks on shm: 0.8 us without, 1.2-1.6 with).
// Blocking collectives wait in place. Enqueued starts always kick.
inline constexpr std::size_t kAsyncMinBytes = 16384;
void Activate(Schedule* s, bool async = true);
// Registers the progress hook (once).
void EnsureHook();
// Advances every active schedule once; true if any made progress.
bool Poll();
// Returns once no other thread is inside an engine pass (runs finish, and
// their on_done callbacks, only inside one): a persistent request whose
// run completed may then be deleted safely.
void SyncWithEngine();
// A failed run's description by owner request (Finish notes it, the
// blocking wait takes it for its error message).
void NoteRunFailure(const Request* owner, std::string why);
std::string TakeRunFailure(const Request* owner);
// Blocks (rt::ProgressWait, plus Poll for the collectives' own steps) until
// `req` is done; returns the request's error as a Status.
Status WaitRequest(Request* req);

}  // namespace nicq::coll
