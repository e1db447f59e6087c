// The counter path of active-message windows (offload.h): setup and
// teardown, PSCW synchronization and contiguous puts on the offload
// backend's RMA and counters.
#include "rma/offload.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/config.h"
#include "core/cpu_relax.h"
#include "core/log.h"
#include "offload/algorithms/rma_epoch.h"
#include "rma/wire.h"
#include "runtime/offload_context.h"
#include "runtime/runtime.h"

namespace nicq::rma::offload_path {

using offload::CounterId;
using offload::kNoCounter;
using offload::TriggeredOp;

namespace {

// How long teardown waits for this process's own ops before it gives up
// (a peer that died leaves them pending; the window is freed regardless).
constexpr int kTeardownWaitMs = 10000;

std::uint64_t LoadSlot(const std::uint64_t* slots, int i) {
  return std::atomic_ref<const std::uint64_t>(slots[i]).load(std::memory_order_acquire);
}

// Slot arrays are written by the NIC: one cache-line-rounded, zeroed block.
std::uint64_t* NewSlots(int n) {
  const std::size_t bytes = (std::size_t(n) * 8 + 63) / 64 * 64;
  auto* p = static_cast<std::uint64_t*>(std::aligned_alloc(64, bytes));
  if (p) std::memset(p, 0, bytes);
  return p;
}

void Release(Offload* o) {
  offload::OffloadBackend* be = o->be;
  if (o->data_registered) (void)be->DeregisterMemory(&o->data_mr);
  if (o->complete_registered) (void)be->DeregisterMemory(&o->complete_mr);
  if (o->post_registered) (void)be->DeregisterMemory(&o->post_mr);
  for (CounterId c : {o->arrivals, o->completes, o->posts, o->put_done, o->ctl_done})
    if (c != kNoCounter) be->FreeCounter(c);
  std::free(o->complete_slots);
  std::free(o->post_slots);
  delete o;
}

// Everything this process needs, or a reason why not.
Status Prepare(Window* w, Offload* o, OffloadRecord* rec) {
  offload::OffloadBackend* be = o->be;
  CounterId ids[5];
  NICQ_RETURN_IF_ERROR(be->AllocCounters(5, ids));
  o->arrivals = ids[0];
  o->completes = ids[1];
  o->posts = ids[2];
  o->put_done = ids[3];
  o->ctl_done = ids[4];
  o->complete_slots = NewSlots(w->size);
  o->post_slots = NewSlots(w->size);
  if (!o->complete_slots || !o->post_slots) return Error(Code::kNoMem, "control slots");
  const std::size_t slot_bytes = std::size_t(w->size) * 8;
  NICQ_RETURN_IF_ERROR(
      be->RegisterMemory(o->complete_slots, slot_bytes, o->completes, &o->complete_mr));
  o->complete_registered = true;
  NICQ_RETURN_IF_ERROR(be->RegisterMemory(o->post_slots, slot_bytes, o->posts, &o->post_mr));
  o->post_registered = true;
  if (w->bytes > 0) {
    NICQ_RETURN_IF_ERROR(
        be->RegisterMemory(w->base, std::size_t(w->bytes), o->arrivals, &o->data_mr));
    o->data_registered = true;
  }
  rec->arrivals = o->arrivals;
  rec->completes = o->completes;
  rec->posts = o->posts;
  rec->data_addr = o->data_mr.remote_addr;
  rec->data_key = o->data_mr.key;
  rec->complete_addr = o->complete_mr.remote_addr;
  rec->complete_key = o->complete_mr.key;
  rec->post_addr = o->post_mr.remote_addr;
  rec->post_key = o->post_mr.key;
  rec->ok = 1;
  return Status::Ok();
}

// Posts `op`, retrying while the backend has no free slot: a control put
// cannot fall back to a message (the peer waits on its counter).
Status PostControl(Window* w, const TriggeredOp& op) {
  Offload* o = w->offload;
  rt::Backoff b;
  for (;;) {
    Status st = o->be->Post({&op, 1});
    if (st.ok()) {
      ++o->ctl_posted;
      return st;
    }
    if (st.code() != Code::kAgain) return st;
    (void)o->be->Progress();
    NICQ_RETURN_IF_ERROR(rt::ProgressWait(b));
  }
}

// Where peer `r` registered its window memory, its post slots and its
// complete slots, as its record says.
offload::RemoteMemory DataOf(const Offload* o, int r, bool counted) {
  const OffloadRecord& p = o->peers[std::size_t(r)];
  return {o->world[std::size_t(r)], p.data_addr, p.data_key, counted ? p.arrivals : kNoCounter};
}
offload::RemoteMemory PostSlotsOf(const Offload* o, int r) {
  const OffloadRecord& p = o->peers[std::size_t(r)];
  return {o->world[std::size_t(r)], p.post_addr, p.post_key, p.posts};
}
offload::RemoteMemory CompleteSlotsOf(const Offload* o, int r) {
  const OffloadRecord& p = o->peers[std::size_t(r)];
  return {o->world[std::size_t(r)], p.complete_addr, p.complete_key, p.completes};
}

// Waits until counter `c` reaches `value` while serving this process's
// active messages and driving a host-driven backend: a peer in a mixed
// epoch waits for the acknowledgement of its messages to me before its
// complete, and may be the one I wait for. Spins very briefly, yields,
// then naps 30 us for the first 2 ms (an epoch's hand-off is usually that
// short), then naps doubling up to 1 ms. Few spins: each poll is a
// progress pass of both engines, and where the two ranks of an epoch share
// a core 200 of them kept the peer off it (1.2-2.5 ms per 8-byte epoch
// against 0.1-0.3 ms with 20, loaded 2-core VM, performance.md Run 20).
// Naps, not the backend's blocking WaitCounter, which serves no messages
// while it sleeps (and with a 1 ms bound gave 1.1-1.4 ms per epoch).
Status WaitServing(Offload* o, CounterId c, std::uint64_t value) {
  constexpr int kSpins = 20, kYields = 50;
  constexpr int kShortNapUs = 30, kShortPhaseUs = 2000, kMaxNapUs = 1000;
  int polls = 0, nap_us = kShortNapUs, slept_us = 0;
  for (;;) {
    if (o->be->ReadCounter(c) >= value) return Status::Ok();
    if (o->be->ReadErrors(c) > 0)
      return Error(Code::kOther, std::string("one-sided: an operation on the ") + o->be->Name() +
                                     " offload backend failed");
    NICQ_RETURN_IF_ERROR(rt::Progress());
    // Every backend: a host-driven one fires and lands ops only here, the
    // native one reclaims finished ops' slots (else puts run out of them).
    if (o->be->Progress()) continue;
    if (polls < kSpins) {
      ++polls;
      CpuRelax();
    } else if (polls < kSpins + kYields) {
      ++polls;
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(nap_us));
      slept_us += nap_us;
      if (slept_us >= kShortPhaseUs) nap_us = std::min(2 * nap_us, kMaxNapUs);
    }
  }
}

Status CheckErrors(Offload* o, const char* call) {
  if (o->be->ReadErrors(o->put_done) > 0 || o->be->ReadErrors(o->ctl_done) > 0)
    return Error(Code::kOther, std::string(call) + ": a put or a synchronization write on the " +
                                   o->be->Name() + " offload backend failed");
  return Status::Ok();
}

}  // namespace

bool Wanted(const Window* w, std::string* why) {
  static const std::string mode = config::GetString("NICQ_RMA_OFFLOAD");
  if (mode == "off" || mode == "0") {
    *why = "NICQ_RMA_OFFLOAD=" + mode;
    return false;
  }
  if (w->flavor != Flavor::kCreate && w->flavor != Flavor::kAllocate) {
    *why = w->flavor == Flavor::kDynamic ? "dynamic window" : "shared window";
    return false;
  }
  offload::OffloadBackend* be = rt::Backend();
  if (!be) {
    *why = "no offload backend";
    return false;
  }
  if (!be->Caps().remote_counters) {
    *why = std::string("the ") + be->Name() + " offload backend has no remote counters";
    return false;
  }
  // auto: where a NIC runs the triggered writes. The emulated backend's
  // agent and the sockets provider's thread (naps of ~10 ms) make a small
  // epoch slower than its active messages (docs/performance.md, Run 20).
  if (mode != "on" && mode != "1") {
    if (!rt::NicFiresOps()) {
      *why = std::string("NICQ_RMA_OFFLOAD=auto keeps the ") + rt::BackendName() +
             " backend's windows on active messages";
      return false;
    }
    if (be->Caps().trigger_thread_naps) {
      *why =
          "NICQ_RMA_OFFLOAD=auto keeps windows on sockets (triggered ops on a provider thread) "
          "on active messages";
      return false;
    }
  }
  return true;
}

Status SetUp(Window* w, bool wanted, const std::string& why) {
  OffloadRecord mine;
  Offload* o = nullptr;
  std::string local_why = why;
  if (wanted) {
    o = new Offload();
    o->be = rt::Backend();
    Status st = Prepare(w, o, &mine);
    if (!st.ok()) {
      local_why = st.message();
      mine = OffloadRecord();
    }
  }
  std::vector<OffloadRecord> all(std::size_t(w->size));
  Status st = detail::Allgather(w->comm, &mine, sizeof mine, all.data());
  int refused = -1;
  for (int r = 0; r < w->size && refused < 0; ++r)
    if (!all[std::size_t(r)].ok) refused = r;
  if (!st.ok() || refused >= 0) {
    if (o) Release(o);
    if (st.ok() && refused != w->rank)
      local_why = "rank " + std::to_string(refused) + " cannot take the counter path";
    w->path_note = "active messages (" + local_why + ")";
    return st;
  }
  o->peers = std::move(all);
  for (int r = 0; r < w->size; ++r) o->world.push_back(w->comm->WorldRank(r));
  o->bounce.assign(Offload::kBounceSlots * Offload::kBounceSlotBytes, 0);
  o->announce_src.assign(std::size_t(w->size), 0);
  o->post_src.assign(std::size_t(w->size), 0);
  o->posts_consumed.assign(std::size_t(w->size), 0);
  o->max_chunk = o->be->Caps().max_msg_bytes;
  w->offload = o;
  w->path_note = std::string("counters on the ") + o->be->Name() + " offload backend";
  return Status::Ok();
}

void TearDown(Window* w) {
  Offload* o = w->offload;
  if (!o) return;
  (void)o->be->WaitCounter(o->put_done, o->put_posted, kTeardownWaitMs);
  (void)o->be->WaitCounter(o->ctl_done, o->ctl_posted, kTeardownWaitMs);
  Release(o);
  w->offload = nullptr;
}

Status TryPut(Window* w, const void* origin, std::int64_t bytes, const Target& t, bool* taken) {
  *taken = false;
  Offload* o = w->offload;
  const bool locked = w->lock_all || w->lock_kind[std::size_t(t.rank)] != 0;
  bool in_group = false;
  if (w->pscw_access && !locked)
    for (int r : w->start_group) in_group |= r == t.rank;
  // A PSCW put is counted at the target (its wait sums the completes'
  // counts against the arrivals); a put of a fence or lock epoch is made
  // remotely complete by the origin's next flush, unlock or fence, which
  // waits for its delivery (FinishPuts) before it says so.
  const EpochKind epoch = in_group                           ? EpochKind::kPscw
                          : locked                           ? EpochKind::kPassive
                          : w->fence_open && !w->pscw_access ? EpochKind::kFence
                                                             : EpochKind::kNone;
  if (epoch == EpochKind::kNone) return Status::Ok();
  const std::int64_t off = t.disp * w->disp_units[std::size_t(t.rank)];
  *taken = true;
  if (bytes == 0) return Status::Ok();
  if (t.rank == w->rank) {
    // My own exposure epoch is open (my start consumed my post): the data
    // may land now; no counter needs to hear of it.
    std::memcpy(static_cast<char*>(w->base) + off, origin, std::size_t(bytes));
    return Status::Ok();
  }
  // A small put leaves from a copy (as a NIC's inject does), so the
  // origin's buffer is free at return, as on the active-message path.
  if (std::size_t(bytes) <= Offload::kBounceSlotBytes) {
    if (o->bounce_used == Offload::kBounceSlots) {
      // Every copy may still be read: the ring is free once all landed.
      NICQ_RETURN_IF_ERROR(WaitServing(o, o->put_done, o->put_posted));
      o->bounce_used = 0;
    }
    unsigned char* copy = o->bounce.data() + o->bounce_used++ * Offload::kBounceSlotBytes;
    std::memcpy(copy, origin, std::size_t(bytes));
    origin = copy;
  }
  offload::BlockWriteArgs put;
  put.src = origin;
  put.bytes = std::size_t(bytes);
  put.dst = DataOf(o, t.rank, epoch == EpochKind::kPscw);
  put.offset = std::uint64_t(off);
  put.max_chunk = o->max_chunk;
  put.completion = o->put_done;
  std::vector<TriggeredOp>& ops = o->put_ops;
  ops.resize(offload::BlockWriteOpCount(put));
  offload::BuildBlockWrite(put, ops.data());
  Status st = o->be->Post(ops);
  if (st.code() == Code::kAgain && o->be->Progress()) st = o->be->Post(ops);  // reclaimed some
  if (st.code() == Code::kAgain) {  // no slots now: this one goes as a message
    *taken = false;
    return Status::Ok();
  }
  NICQ_RETURN_IF_ERROR(st);
  o->put_posted += ops.size();
  if (epoch == EpochKind::kPscw) {
    o->announce_src[std::size_t(t.rank)] += ops.size();
    ++o->puts_on_counters;
  } else {
    ++o->epoch_puts_on_counters;
  }
  return Status::Ok();
}

Status Post(Window* w, const std::vector<int>& ranks) {
  Offload* o = w->offload;
  for (int r : ranks) {
    std::uint64_t& src = o->post_src[std::size_t(r)];
    ++src;
    if (r == w->rank) {
      std::atomic_ref<std::uint64_t>(o->post_slots[r]).store(src, std::memory_order_release);
      continue;
    }
    offload::SignalWriteArgs post;
    post.word = &src;
    post.slots = PostSlotsOf(o, r);
    post.slot = std::size_t(w->rank);
    post.completion = o->ctl_done;
    NICQ_RETURN_IF_ERROR(PostControl(w, offload::BuildSignalWrite(post)));
  }
  return Status::Ok();
}

Status Start(Window* w, const std::vector<int>& ranks) {
  Offload* o = w->offload;
  for (;;) {
    // Read the counter first: a landing after this read bumps it past `seen`.
    const std::uint64_t seen = o->be->ReadCounter(o->posts);
    bool all = true;
    for (int r : ranks) all = all && LoadSlot(o->post_slots, r) > o->posts_consumed[std::size_t(r)];
    if (all) break;
    NICQ_RETURN_IF_ERROR(WaitServing(o, o->posts, seen + 1));
  }
  for (int r : ranks) ++o->posts_consumed[std::size_t(r)];
  return Status::Ok();
}

Status CompleteTo(Window* w, int rank) {
  Offload* o = w->offload;
  const std::uint64_t* src = &o->announce_src[std::size_t(rank)];
  if (rank == w->rank) {
    std::atomic_ref<std::uint64_t>(o->complete_slots[rank]).store(*src, std::memory_order_release);
    return o->be->AddCounter(o->completes, 1);
  }
  offload::SignalWriteArgs complete;
  complete.word = src;
  complete.slots = CompleteSlotsOf(o, rank);
  complete.slot = std::size_t(w->rank);
  complete.completion = o->ctl_done;
  // Behind every put posted so far: their local (delivery) completion
  // fires it, on the NIC where the backend has native triggers.
  complete.gate = o->put_done;
  complete.threshold = o->put_posted;
  ++o->completes_on_counters;
  return PostControl(w, offload::BuildSignalWrite(complete));
}

Status FinishPuts(Window* w, const char* call) {
  Offload* o = w->offload;
  if (o == nullptr) return Status::Ok();
  if (o->be->ReadCounter(o->put_done) < o->put_posted)
    NICQ_RETURN_IF_ERROR(WaitServing(o, o->put_done, o->put_posted));
  o->bounce_used = 0;
  return CheckErrors(o, call);
}

Status FinishComplete(Window* w) {
  Offload* o = w->offload;
  NICQ_RETURN_IF_ERROR(WaitServing(o, o->put_done, o->put_posted));
  o->bounce_used = 0;
  return CheckErrors(o, "MPI_Win_complete");
}

Status WaitExposure(Window* w, bool block, bool* done) {
  Offload* o = w->offload;
  *done = false;
  const std::uint64_t need = o->completes_consumed + std::uint64_t(w->completes_expected);
  if (block) {
    NICQ_RETURN_IF_ERROR(WaitServing(o, o->completes, need));
  } else {
    if (o->be->HostDriven()) (void)o->be->Progress();
    if (o->be->ReadCounter(o->completes) < need) return Status::Ok();
  }
  // Every complete of the epoch landed and no other can be in flight (an
  // origin completes toward me again only after my next post): the slots
  // are stable, and together say how many puts were ever sent to me.
  std::uint64_t announced = 0;
  for (int r = 0; r < w->size; ++r) announced += LoadSlot(o->complete_slots, r);
  if (block) {
    NICQ_RETURN_IF_ERROR(WaitServing(o, o->arrivals, announced));
  } else if (o->be->ReadCounter(o->arrivals) < announced) {
    return Status::Ok();
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  o->completes_consumed = need;
  ++o->epochs_waited;
  *done = true;
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> Describe(const Window* w) {
  const Offload* o = w->offload;
  if (!o) return {};
  return {{"nicq_rma_counter_puts", std::to_string(o->puts_on_counters)},
          {"nicq_rma_counter_epoch_puts", std::to_string(o->epoch_puts_on_counters)},
          {"nicq_rma_counter_completes", std::to_string(o->completes_on_counters)},
          {"nicq_rma_counter_epochs", std::to_string(o->epochs_waited)},
          {"nicq_rma_counter_arrivals", std::to_string(o->be->ReadCounter(o->arrivals))}};
}

}  // namespace nicq::rma::offload_path
