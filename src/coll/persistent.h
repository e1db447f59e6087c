// A persistent collective request's engine state, and how it is matched
// and enqueued on queues (chapter 13) like a point-to-point request.
//
// Match (MPI_Match / MPI_Imatch, collective over the request's
// communicator): every rank contributes {init sequence number, kind,
// signature digest} to an allgather on the communicator's init tag class;
// all ranks see the same table, so all reach the same verdict: matched, or
// kMatch naming the first rank that matched a different request. Nothing
// is left half-matched and nothing hangs on a mismatch.
//
// Enqueue, offloaded allreduce (nic_tree): the plan's start counter is
// bumped by a counter op gated on the queue (offload_allreduce.h).
//
// Enqueue, host-engine schedule (every other persistent collective):
//  * StartGated posts one OpKind::kHost op gated on (gate, threshold) on
//    the process backend. Its host_fn (FiredStart) runs on whatever thread
//    drives the backend: the emulator's progress thread, the native
//    backend's host-op runner inside an MPI call, or the simulator. It only
//    counts the fire and pushes the request on a lock-free list: the
//    point-to-point engine is serialized for MPI calls only, not against
//    the backend's thread, so no message may be posted from there.
//  * The collective engine's progress hook (schedule.cc Poll, run by every
//    MPI call that progresses: MPI_Queue_fence, enqueue calls, tests,
//    waits, and by the host progress thread, runtime/async_progress.h,
//    which StartGated kicks) takes the list and launches the schedules,
//    then advances them like any other.
//  * When a schedule of a matched request finishes (queued or MPI_Start),
//    the engine adds 1 to the request's done counter on the backend, so
//    DoneCounter() reaches DoneTarget() == epochs started, as the queue's
//    enqueued waits expect. A failed run still counts (the queue must not
//    hang); its error is in the status the enqueued wait reports.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/hier_async.h"
#include "coll/node_persistent.h"
#include "coll/offload_allreduce.h"
#include "coll/schedule.h"
#include "queue/enqueueable.h"

namespace nicq::coll {

struct Persistent final : queue::Enqueueable {
  // ---- set at init ----
  Args args;
  std::vector<int> scounts, sdispls, rcounts, rdispls;
  std::vector<int> sources, destinations;                // neighborhood collectives
  std::vector<std::int64_t> sbyte_displs, rbyte_displs;  // neighbor alltoallw
  std::vector<const dtype::Type*> stypes, rtypes;
  std::vector<dtype::Type*> retained;
  Schedule sched;
  std::unique_ptr<OffloadedPlan> off;  // set: runs as a NIC trigger plan
  // Set: every start runs on the same-node area: MPI_Start, and once
  // matched the enqueued ones too (a rank may start one epoch with
  // MPI_Start where a peer enqueues it, so both forms take one path). The
  // schedule is built as well, and unused.
  std::unique_ptr<NodeAllreduce> node;
  // Set: every start runs as a hierarchical run whose node phases are on
  // each node's area (a communicator spanning nodes), the same way as
  // `node` for MPI_Start and enqueued starts. No schedule is built.
  std::unique_ptr<HierRun> hier;
  Comm* shadow = nullptr;
  Comm* local_shadow = nullptr;  // intercommunicators: the local group's (Schedule::Launch)
  int tag = 0;
  std::uint64_t signature = 0;  // digest of what every rank must agree on

  ~Persistent() override;

  // ---- queue::Enqueueable ----
  Status BeginMatch() override;
  Status PollMatch(bool* done) override;
  bool IsMatched() const override { return matched_; }
  Status StartGated(offload::CounterId gate, std::uint64_t threshold) override;
  void EpochRetired() override;
  offload::CounterId DoneCounter() const override;
  std::uint64_t DoneTarget() const override;
  std::uint64_t EpochsStarted() const override;
  void GetStatus(RequestStatus* out) const override;
  Status Release() override;
  std::string DebugString() const override;

  // ---- used by persistent.cc ----
  // MPI_Start of a host-engine schedule (counts an epoch once matched).
  Status StartHost(Request* owner);
  // A start on the same-node area, `node` or `hier` (counts an epoch once
  // matched).
  Status StartNode(Request* owner);
  bool OnArea() const { return node || hier; }
  // Whether the area's start (node or hier) has not completed yet.
  bool AreaActive() const { return node ? node->active() : hier && hier->active(); }
  bool Matching() const { return matching_; }
  // Whether a queued start fired and is not launched yet.
  bool LaunchPending() const { return fired_.load(std::memory_order_acquire) > launched_; }

  // ---- used by the engine (schedule.cc Poll, engine lock held) ----
  // Detaches the list of requests whose gate fired since the last call.
  static Persistent* TakeFired();
  // Whether any request is on the fired list (one relaxed load: the
  // engine's lock-free fast path when nothing is active).
  static bool AnyFired();
  // Whether any gated (enqueued) start is posted and not launched yet.
  static bool AnyGated();
  Persistent* next_fired() const { return next_fired_; }
  // Launches this request's fired start and returns the schedule to
  // activate; nullptr when it cannot run yet (listed again for a later poll).
  Schedule* LaunchFired();

 private:
  static void FiredStart(void* self);    // host_fn of a gated start
  void List();                           // pushes this request on the fired list
  static void ScheduleDone(void* self);  // Schedule::on_done
  static void NodeDone(void* self);      // the area start's completion
  // An enqueued start, on the area. `in_engine`: called inside the schedule
  // engine's pass (a hierarchical run then starts its phases in the hook).
  Status StartQueuedOnNode(bool in_engine = false);

  // Match state.
  bool matched_ = false, matching_ = false;
  Schedule* match_sched_ = nullptr;
  Request match_req_;
  std::vector<std::uint64_t> match_words_;
  // Data path of a host-engine schedule (counters on rt::Backend()).
  offload::OffloadBackend* be_ = nullptr;
  offload::CounterId done_ = offload::kNoCounter;
  offload::CounterId fired_counter_ = offload::kNoCounter;  // gate ops completed
  std::uint64_t epochs_ = 0;                                // starts since the match
  std::uint64_t gated_posted_ = 0;                          // gated starts posted
  std::atomic<std::uint64_t> fired_{0};                     // gated starts whose gate fired
  std::atomic<std::uint64_t> launched_{0};                  // of those, launched
  Request queued_owner_;                                    // owner of queued runs
  Request* node_owner_ = nullptr;                           // of the area's running start
  int last_error_ = 0;
  // Lock-free list of requests whose gate fired (FiredStart pushes).
  std::atomic<bool> listed_{false};
  Persistent* next_fired_ = nullptr;
  // Gate ops: storage must outlive each op; a ring entry is reused once the
  // op kGateRing starts earlier completed (fired_counter_).
  static constexpr int kGateRing = 8;
  offload::TriggeredOp gate_ops_[kGateRing];
  // Offloaded (off): an epoch armed by StartGated whose gate op the
  // backend refused for now (kAgain); the retry posts the gate only.
  bool off_armed_ = false;
};

}  // namespace nicq::coll
