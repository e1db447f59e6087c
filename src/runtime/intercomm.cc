// Intercommunicators: creation from two intracommunicators joined by a
// peer communicator, split (dup and create are splits), and merge into an
// intracommunicator.
//
// Every operation is the same three-step agreement: each member gives a
// Member record (world rank, color, key, high flag, its used context
// slots) to its group's leader over the local group's runtime context;
// the two leaders swap their groups' records (over the peer communicator
// at creation, over the intercommunicator's runtime context afterwards);
// each leader hands both lists to its members. Every process then computes
// the same result from the same lists: the remote group's order, and a
// context slot free on every member of both groups (so both groups agree
// on the intercommunicator's context id), which a second pass of votes
// confirms (ConfirmSlot). The local group gets an
// intracommunicator of its own first (its own context id), which carries
// the local phases of the intercommunicator's collectives.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/log.h"
#include "runtime/runtime.h"
#include "runtime/runtime_state.h"
#include "transport/tag.h"

namespace nicq::rt {

using detail::EngineLock;
using detail::S;

namespace {

constexpr std::size_t kSlots = (std::size_t(transport::kMaxContextId) + 1) / kContextStride;
// Tags of the leaders' exchange at creation, on the peer communicator's
// runtime context: bit 22 keeps them apart from the peer's own creation
// sequence (counting from 0) and from member-only creations (bit 23).
constexpr std::uint32_t kCreateTagBit = 1u << 22;
constexpr std::uint32_t kCreateTagMask = kCreateTagBit - 1;

struct Member {
  std::int32_t world = 0;
  std::int32_t color = 0;  // < 0: MPI_UNDEFINED
  std::int32_t key = 0;
  std::int32_t high = 0;
  std::int32_t vote = 0;               // ConfirmSlot's: kVoteYes or kVoteNo
  std::uint8_t used[kSlots / 8] = {};  // one bit per context slot
};
constexpr std::int32_t kVoteYes = 1, kVoteNo = 2;

Member MemberOf(int color, int key, bool high) {
  Member m;
  m.world = WorldRank();
  m.color = color < 0 ? -1 : color;
  m.key = key;
  m.high = high ? 1 : 0;
  EngineLock lock;  // the progress engine may finish an MPI_Comm_idup meanwhile
  for (std::size_t i = 0; i < kSlots; ++i)
    if (S().ctx_used[i]) m.used[i / 8] |= std::uint8_t(1u << (i % 8));
  return m;
}

// Where the leaders meet: the remote leader's world rank, a context, a tag.
struct Link {
  int remote_leader_world = 0;
  std::uint32_t ctx = 0;
  int tag = 0;
  Code refused = Code::kOk;  // the leader refused the call: tell the members, meet no one
  // At creation the remote leader may never come (it refused its
  // arguments, or the groups disagree on the call): the leaders' exchange
  // then ends after this many seconds (0: never). An existing
  // intercommunicator's remote group is known to exist, so split and merge
  // wait as long as it takes; a process of either group that failed still
  // ends the wait (ProgressWait's dead-peer checks, after NICQ_PEER_TIMEOUT
  // for one that exited on this node).
  double meeting_timeout_s = 0;
  bool creating = false;  // IntercommCreate: the members' failure message names its causes
};

Status Post(bool send, void* buf, std::size_t len, int world, std::uint32_t ctx, int tag,
            Request* req) {
  // Requests are reused between rounds: the engine does not reset them.
  req->done.store(false, std::memory_order_relaxed);
  req->status = RequestStatus{};
  req->engine = nullptr;
  EngineLock lock;
  if (send) return S().engine.Isend(buf, len, world, ctx, tag, SendMode::kStandard, req);
  return S().engine.Irecv(buf, len, world, ctx, tag, nullptr, req);
}

Status WaitAll(Request* reqs, int n, const char* what) {
  for (int i = 0; i < n; ++i) {
    NICQ_RETURN_IF_ERROR(Wait(&reqs[i]));
    if (reqs[i].status.error != 0)
      return Error(Code(reqs[i].status.error), std::string(what) + " failed");
  }
  return Status::Ok();
}

// The leaders' exchange: as WaitAll, but bounded by the link's timeout.
// Past it, what is still pending is cancelled (a late remote leader's
// messages then match nothing of this call) and the call fails.
Status WaitMeeting(Request* reqs, int n, const Link& link, const char* what) {
  if (link.meeting_timeout_s <= 0) return WaitAll(reqs, n, what);
  const double deadline = detail::NowSeconds() + link.meeting_timeout_s;
  Backoff bo;
  for (int i = 0; i < n; ++i) {
    while (!reqs[i].IsDone() && detail::NowSeconds() < deadline)
      NICQ_RETURN_IF_ERROR(ProgressWait(bo));
    if (!reqs[i].IsDone()) break;
    if (reqs[i].status.error != 0)
      return Error(Code(reqs[i].status.error), std::string(what) + " failed");
  }
  bool late = false;
  for (int i = 0; i < n; ++i) {
    if (reqs[i].IsDone()) continue;
    late = true;
    Cancel(&reqs[i]).IgnoreError();
    NICQ_RETURN_IF_ERROR(Wait(&reqs[i]));
  }
  if (!late) return Status::Ok();
  return Error(Code::kOther,
               std::string(what) + ": the remote leader (world rank " +
                   std::to_string(link.remote_leader_world) + ") did not take part within " +
                   std::to_string(int(link.meeting_timeout_s)) +
                   " s (NICQ_INTERCOMM_TIMEOUT); it may have refused its arguments, or the two "
                   "groups did not make the same call");
}

// The agreement described at the top: fills both lists, in group rank order.
Status Agree(Comm* local, int leader, const Link& link, const Member& mine,
             std::vector<Member>& locals, std::vector<Member>& remotes) {
  const int p = local->size;
  const std::uint32_t lctx = local->context_id + kRuntimeContextOffset;
  const int ltag = int(local->rt_seq++ & transport::kUserTagMask);
  std::int32_t counts[2] = {p, 0};  // local, remote
  locals.assign(std::size_t(p), Member{});
  if (local->rank == leader) {
    locals[std::size_t(leader)] = mine;
    auto reqs = std::make_unique<Request[]>(std::size_t(p));
    int n = 0;
    for (int r = 0; r < p; ++r)
      if (r != leader)
        NICQ_RETURN_IF_ERROR(Post(false, &locals[std::size_t(r)], sizeof(Member),
                                  local->WorldRank(r), lctx, ltag, &reqs[std::size_t(n++)]));
    NICQ_RETURN_IF_ERROR(WaitAll(reqs.get(), n, "gathering the local group"));
    // Leaders: counts first (the remote size may be unknown), then records.
    Request x[2];
    std::int32_t remote_n = 0;
    Status met = Error(link.refused, "the local leader refused its arguments");
    if (link.refused == Code::kOk) {
      NICQ_RETURN_IF_ERROR(Post(true, &counts[0], sizeof(std::int32_t), link.remote_leader_world,
                                link.ctx, link.tag, &x[0]));
      NICQ_RETURN_IF_ERROR(Post(false, &remote_n, sizeof remote_n, link.remote_leader_world,
                                link.ctx, link.tag, &x[1]));
      met = WaitMeeting(x, 2, link, "exchanging group sizes with the remote leader");
    }
    if (!met.ok()) {
      // A negative remote size carries the failure's class to the members.
      counts[1] = -std::int32_t(met.code());
      n = 0;
      for (int r = 0; r < p; ++r)
        if (r != leader)
          NICQ_RETURN_IF_ERROR(Post(true, &counts[1], sizeof(std::int32_t), local->WorldRank(r),
                                    lctx, ltag, &reqs[std::size_t(n++)]));
      NICQ_RETURN_IF_ERROR(WaitAll(reqs.get(), n, "telling the local group of the failure"));
      return met;
    }
    if (remote_n <= 0 || remote_n > WorldSize())
      return Error(Code::kComm,
                   "the remote leader sent a group size of " + std::to_string(remote_n));
    remotes.assign(std::size_t(remote_n), Member{});
    NICQ_RETURN_IF_ERROR(Post(true, locals.data(), sizeof(Member) * std::size_t(p),
                              link.remote_leader_world, link.ctx, link.tag, &x[0]));
    NICQ_RETURN_IF_ERROR(Post(false, remotes.data(), sizeof(Member) * std::size_t(remote_n),
                              link.remote_leader_world, link.ctx, link.tag, &x[1]));
    NICQ_RETURN_IF_ERROR(WaitMeeting(x, 2, link, "exchanging groups with the remote leader"));
    counts[1] = remote_n;
    // Members: the remote size, then both lists.
    auto out = std::make_unique<Request[]>(3 * std::size_t(p));
    n = 0;
    for (int r = 0; r < p; ++r) {
      if (r == leader) continue;
      const int w = local->WorldRank(r);
      NICQ_RETURN_IF_ERROR(Post(true, &counts[1], sizeof(std::int32_t), w, lctx, ltag, &out[n++]));
      NICQ_RETURN_IF_ERROR(
          Post(true, locals.data(), sizeof(Member) * std::size_t(p), w, lctx, ltag, &out[n++]));
      NICQ_RETURN_IF_ERROR(Post(true, remotes.data(), sizeof(Member) * std::size_t(remote_n), w,
                                lctx, ltag, &out[n++]));
    }
    return WaitAll(out.get(), n, "sending the groups to the local members");
  }
  const int lw = local->WorldRank(leader);
  Request x[2];
  NICQ_RETURN_IF_ERROR(
      Post(true, const_cast<Member*>(&mine), sizeof(Member), lw, lctx, ltag, &x[0]));
  NICQ_RETURN_IF_ERROR(Post(false, &counts[1], sizeof(std::int32_t), lw, lctx, ltag, &x[1]));
  NICQ_RETURN_IF_ERROR(WaitAll(x, 2, "reaching the local leader"));
  if (counts[1] < 0)
    return Error(Code(-counts[1]),
                 "the local leader (local rank " + std::to_string(leader) + ", world rank " +
                     std::to_string(lw) + ") failed the call (its error says why: " +
                     (link.creating ? "its arguments were refused, or the remote leader never came"
                                    : "a process of either group failed") +
                     ")");
  if (counts[1] == 0 || counts[1] > WorldSize())
    return Error(Code::kComm,
                 "the local leader sent a remote group size of " + std::to_string(counts[1]));
  remotes.assign(std::size_t(counts[1]), Member{});
  NICQ_RETURN_IF_ERROR(
      Post(false, locals.data(), sizeof(Member) * std::size_t(p), lw, lctx, ltag, &x[0]));
  NICQ_RETURN_IF_ERROR(
      Post(false, remotes.data(), sizeof(Member) * remotes.size(), lw, lctx, ltag, &x[1]));
  return WaitAll(x, 2, "receiving the groups from the local leader");
}

// Lowest slot that no listed member uses; kSlots when none is free.
std::uint32_t FreeSlot(const std::vector<const Member*>& members) {
  for (std::uint32_t slot = 0; slot < kSlots; ++slot) {
    bool used = false;
    for (const Member* m : members) used = used || (m->used[slot / 8] >> (slot % 8)) & 1;
    if (!used) return slot;
  }
  return std::uint32_t(kSlots);
}

// The slot a process's color would take: free on every member of both
// groups with that color; kSlots when the color makes no communicator.
std::uint32_t ColorSlot(const Member& mine, const std::vector<Member>& locals,
                        const std::vector<Member>& remotes) {
  if (mine.color < 0) return std::uint32_t(kSlots);
  std::vector<const Member*> all;
  for (const Member& m : locals)
    if (m.color == mine.color) all.push_back(&m);
  const std::size_t n_local = all.size();
  for (const Member& m : remotes)
    if (m.color == mine.color) all.push_back(&m);
  return all.size() == n_local ? std::uint32_t(kSlots) : FreeSlot(all);
}

// Every process computes its candidate from the same lists, but a
// communicator made since the maps were taken (an MPI_Comm_idup that the
// progress engine finished meanwhile) may hold it on some process. As in
// comm_agreement.cc, each process reserves its candidate if still free
// and votes, and the votes go round like the records: all yes keeps the
// candidates, anything else drops them and starts over from the fresh maps.
Status ConfirmSlot(Comm* local, int leader, const std::function<Link()>& link_of,
                   const Member& mine, std::vector<Member>& locals, std::vector<Member>& remotes,
                   const std::function<std::uint32_t(const std::vector<Member>&,
                                                     const std::vector<Member>&)>& candidate,
                   std::uint32_t* slot) {
  for (;;) {
    const std::uint32_t c = candidate(locals, remotes);
    bool reserved = false;
    Member again = MemberOf(mine.color, mine.key, mine.high != 0);
    again.vote = kVoteYes;
    if (c < kSlots) {
      EngineLock lock;
      if (S().ctx_used[c]) {
        again.vote = kVoteNo;
      } else {
        S().ctx_used[c] = 1;
        reserved = true;
      }
    }
    std::vector<Member> l2, r2;
    Status st = Agree(local, leader, link_of(), again, l2, r2);
    bool all_yes = st.ok();
    for (const Member& m : l2) all_yes = all_yes && m.vote == kVoteYes;
    for (const Member& m : r2) all_yes = all_yes && m.vote == kVoteYes;
    if (all_yes) {
      *slot = c;
      return Status::Ok();
    }
    if (reserved) {
      EngineLock lock;
      S().ctx_used[c] = 0;
    }
    NICQ_RETURN_IF_ERROR(st);
    locals = std::move(l2);
    remotes = std::move(r2);
  }
}

std::vector<int> RankMap(const std::vector<int>& world_ranks) {
  std::vector<int> map(std::size_t(WorldSize()), -1);
  for (std::size_t r = 0; r < world_ranks.size(); ++r) map[std::size_t(world_ranks[r])] = int(r);
  return map;
}

// The intercommunicator over `lc` (taken over) and the remote members with
// this process's color, ordered by key then remote rank.
Status Finish(Comm* lc, const Member& mine, const std::vector<Member>& remotes, std::uint32_t slot,
              const char* call, Comm** out) {
  std::vector<int> ridx;
  for (int i = 0; i < int(remotes.size()); ++i)
    if (remotes[std::size_t(i)].color == mine.color) ridx.push_back(i);
  if (ridx.empty()) {  // MPI: no remote process with this color gives MPI_COMM_NULL
    if (lc) NICQ_RETURN_IF_ERROR(CommFree(lc));
    return Status::Ok();
  }
  std::stable_sort(ridx.begin(), ridx.end(),
                   [&](int a, int b) { return remotes[a].key < remotes[b].key; });
  if (slot == kSlots) {
    CommFree(lc).IgnoreError();
    return Error(Code::kOther, std::string(call) + ": no context id free on both groups");
  }
  auto* c = new Comm;
  c->inter = true;
  c->context_id = slot * kContextStride;
  c->rank = lc->rank;
  c->size = lc->size;
  c->world_ranks = lc->world_ranks;
  c->world_to_rank = RankMap(c->world_ranks);
  for (int i : ridx) c->remote_world_ranks.push_back(remotes[std::size_t(i)].world);
  c->remote_world_to_rank = RankMap(c->remote_world_ranks);
  c->local_comm = lc;
  c->rt_map_checked = true;
  S().ctx_used[slot] = 1;
  CommSetSession(c, lc->session);
  *out = c;
  NICQ_LOG(kDebug, kCore, "%s: local size %d, remote size %d, context %u", call, c->size,
           int(c->remote_world_ranks.size()), c->context_id);
  return Status::Ok();
}

Link LinkOf(Comm* inter) {
  return Link{inter->remote_world_ranks[0], inter->context_id + kRuntimeContextOffset,
              int(inter->rt_seq++ & transport::kUserTagMask)};
}

}  // namespace

Status IntercommCreate(Comm* local, int local_leader, Comm* peer, int remote_leader_world, int tag,
                       Code leader_refused, Comm** out) {
  *out = nullptr;
  if (!local || local->inter) return Error(Code::kComm, "local_comm must be an intracommunicator");
  Comm* lc = nullptr;
  NICQ_RETURN_IF_ERROR(CommDup(local, &lc).WithContext("duplicating the local group"));
  const Member mine = MemberOf(0, lc->rank, false);
  std::vector<Member> locals, remotes;
  Link link;
  if (lc->rank == local_leader && leader_refused == Code::kOk)
    link = Link{remote_leader_world, peer->context_id + kRuntimeContextOffset,
                int(kCreateTagBit | (std::uint32_t(tag) & kCreateTagMask))};
  link.refused = leader_refused;
  link.creating = true;
  link.meeting_timeout_s =
      double(std::max<std::int64_t>(0, config::GetInt("NICQ_INTERCOMM_TIMEOUT")));
  Status st = Agree(lc, local_leader, link, mine, locals, remotes);
  if (st.ok()) {
    for (const Member& r : remotes)
      if (lc->RankOfWorld(r.world) >= 0)
        st = Error(Code::kComm, "world rank " + std::to_string(r.world) +
                                    " is in both groups (the groups must be disjoint)");
  }
  std::uint32_t slot = std::uint32_t(kSlots);
  if (st.ok())
    st = ConfirmSlot(
        lc, local_leader, [&link] { return link; }, mine, locals, remotes,
        [&mine](const auto& l, const auto& r) { return ColorSlot(mine, l, r); }, &slot);
  if (!st.ok()) {
    CommFree(lc).IgnoreError();
    return st;
  }
  return Finish(lc, mine, remotes, slot, "IntercommCreate", out);
}

Status IntercommSplit(Comm* inter, int color, int key, Comm** out) {
  *out = nullptr;
  if (!inter || !inter->inter || !inter->local_comm)
    return Error(Code::kComm, "IntercommSplit: not an intercommunicator");
  Comm* lc = nullptr;
  NICQ_RETURN_IF_ERROR(CommSplit(inter->local_comm, color, key, &lc));
  const Member mine = MemberOf(color, key, false);
  std::vector<Member> locals, remotes;
  Status st = Agree(inter->local_comm, 0, LinkOf(inter), mine, locals, remotes);
  std::uint32_t slot = std::uint32_t(kSlots);
  if (st.ok())  // every process votes, those without a communicator too
    st = ConfirmSlot(
        inter->local_comm, 0, [inter] { return LinkOf(inter); }, mine, locals, remotes,
        [&mine](const auto& l, const auto& r) { return ColorSlot(mine, l, r); }, &slot);
  if (!st.ok() || color < 0) {
    if (lc) CommFree(lc).IgnoreError();
    return st;
  }
  return Finish(lc, mine, remotes, slot, "IntercommSplit", out);
}

Status IntercommMerge(Comm* inter, bool high, Comm** out) {
  *out = nullptr;
  if (!inter || !inter->inter || !inter->local_comm)
    return Error(Code::kComm, "IntercommMerge: not an intercommunicator");
  const Member mine = MemberOf(0, 0, high);
  std::vector<Member> locals, remotes;
  NICQ_RETURN_IF_ERROR(Agree(inter->local_comm, 0, LinkOf(inter), mine, locals, remotes));
  std::uint32_t slot = std::uint32_t(kSlots);
  NICQ_RETURN_IF_ERROR(ConfirmSlot(
      inter->local_comm, 0, [inter] { return LinkOf(inter); }, mine, locals, remotes,
      [](const auto& l, const auto& r) {
        std::vector<const Member*> all;
        for (const Member& m : l) all.push_back(&m);
        for (const Member& m : r) all.push_back(&m);
        return FreeSlot(all);
      },
      &slot));
  // The group that passed high = false comes first; with equal flags, the
  // group whose leader has the lower world rank (both sides see the same).
  const bool lh = locals[0].high != 0, rh = remotes[0].high != 0;
  const bool local_first = lh != rh ? !lh : locals[0].world < remotes[0].world;
  std::vector<const Member*> order;
  for (const Member& m : local_first ? locals : remotes) order.push_back(&m);
  for (const Member& m : local_first ? remotes : locals) order.push_back(&m);
  if (slot == kSlots) return Error(Code::kOther, "IntercommMerge: no free context id left");
  auto* c = new Comm;
  c->context_id = slot * kContextStride;
  c->size = int(order.size());
  for (const Member* m : order) c->world_ranks.push_back(m->world);
  bool identity = c->size == WorldSize();
  for (int r = 0; r < c->size && identity; ++r) identity = c->world_ranks[std::size_t(r)] == r;
  if (!identity) c->world_to_rank = RankMap(c->world_ranks);
  c->rank = c->RankOfWorld(WorldRank());
  c->rt_map_checked = true;
  S().ctx_used[slot] = 1;
  CommSetSession(c, inter->session);
  *out = c;
  return Status::Ok();
}

}  // namespace nicq::rt
