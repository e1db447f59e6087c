// Blocking barrier, bcast, reduce and allreduce of an intracommunicator
// whose ranks all share this node, through the communicator's NodeArea
// (node_area.h) instead of point-to-point messages.
//
// Small messages (up to kSmallBytes): every rank copies its data into its
// slot and arrives; a reduction then folds every slot in rank order, so
// each rank that reduces computes the same bits (and non-commutative user
// ops keep MPI's order). Large messages go straight between the ranks'
// buffers where process_vm_readv works (ReduceDirect, BcastDirect: a fixed
// number of steps whatever the size), else through the staging area in
// chunks: everyone stages a chunk and arrives; each rank folds its share of
// the chunk (in rank order) into the result buffer and arrives again; then
// every rank copies the whole chunk out. Either way one rank computes each
// element, so every rank gets the same bits.
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/hier_node.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "core/config.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

// Marks a communicator whose area could not be made: never tried again.
NodeArea* const kNoArea = reinterpret_cast<NodeArea*>(std::uintptr_t{1});

void DestroyHook(Comm* comm) {
  FreeNodeGroup(comm);
  auto* a = static_cast<NodeArea*>(comm->node_area.p);
  if (a != nullptr && a != kNoArea) delete a;
  comm->node_area.p = nullptr;
}

// Before writing a region last written for generation `last`: every other
// rank has moved past it (this one has, by being here).
Status Reusable(NodeArea& area, std::uint64_t last) {
  return last == 0 ? Status::Ok() : area.WaitPeers(last + 1);
}

Status ReadFailed(int err, int r, std::size_t len) {
  return Error(err == ESRCH ? Code::kProcFailed : Code::kIntern,
               "reading " + std::to_string(len) + " bytes from rank " + std::to_string(r) +
                   " of the communicator: " + std::strerror(err));
}

// An erroneous bcast whose root sends more than this rank receives (the
// sizes on the two sides must agree, or both be small or both large, for
// the steps to pair up at all).
Status CheckFits(std::uint64_t root_bytes, std::size_t bytes, int root) {
  if (root_bytes <= bytes) return Status::Ok();
  return Error(Code::kTruncate, "bcast: receiving " + std::to_string(bytes) + " bytes from rank " +
                                    std::to_string(root) + ", which sends " +
                                    std::to_string(root_bytes));
}

Status Barrier(NodeArea& area) {
  const std::uint64_t g = area.Next();
  area.Arrive(g);
  return area.WaitAll(g);
}

Status BcastSmall(NodeArea& area, const Args& a, std::size_t bytes) {
  const std::uint64_t g = area.Next();
  const int i = int(g & 1), root = a.root;
  const dtype::Type& t = *a.stype;
  const bool flat = t.IsContiguous();
  if (area.rank() == root) {
    NICQ_RETURN_IF_ERROR(Reusable(area, area.last_small[i]));
    area.last_small[i] = g;
    // A receiver expecting less reports the truncation. (Not in Publish's
    // fields: the root returns at once and its next call rewrites those
    // while a receiver may not have read them yet.)
    area.set_small_bytes(i, std::uint32_t(bytes));
    if (flat && bytes > 0)
      std::memcpy(area.slot(i, root, bytes), a.recvbuf, bytes);
    else
      dtype::Pack(t, a.recvbuf, a.scount, area.slot(i, root, bytes));
    area.Arrive(g);
    return Status::Ok();
  }
  area.Arrive(g);
  NICQ_RETURN_IF_ERROR(area.WaitRank(root, g));
  NICQ_RETURN_IF_ERROR(CheckFits(area.small_bytes_of(i, root), bytes, root));
  if (flat && bytes > 0)
    std::memcpy(a.recvbuf, area.slot(i, root, bytes), bytes);
  else if (!flat)
    dtype::Unpack(t, area.slot(i, root, bytes), std::int64_t(bytes), a.scount, a.recvbuf);
  return Status::Ok();
}

// Large bcast: the root streams chunks through its two staging buffers, at
// most one chunk ahead of the slowest reader.
Status BcastLarge(NodeArea& area, const Args& a, std::size_t bytes) {
  const int root = a.root;
  const bool is_root = area.rank() == root;
  const dtype::Type& t = *a.stype;
  // Non-contiguous data is packed whole first (or unpacked at the end).
  std::vector<std::uint8_t> packed;
  std::uint8_t* data = static_cast<std::uint8_t*>(a.recvbuf);
  if (!t.IsContiguous()) {
    packed.resize(bytes);
    if (is_root) dtype::Pack(t, a.recvbuf, a.scount, packed.data());
    data = packed.data();
  }
  for (std::size_t off = 0, k = 0; off < bytes; off += NodeArea::kChunkBytes, ++k) {
    const std::size_t len = std::min(NodeArea::kChunkBytes, bytes - off);
    const std::uint64_t g = area.Next();
    const int i = int(k & 1);
    if (is_root) {
      NICQ_RETURN_IF_ERROR(Reusable(area, area.last_stage[i]));
      area.last_stage[i] = g;
      std::memcpy(area.stage(i, root), data + off, len);
      area.Arrive(g);
    } else {
      area.Arrive(g);
      NICQ_RETURN_IF_ERROR(area.WaitRank(root, g));
      std::memcpy(data + off, area.stage(i, root), len);
    }
  }
  if (!is_root && !t.IsContiguous())
    dtype::Unpack(t, packed.data(), std::int64_t(bytes), a.scount, a.recvbuf);
  return Status::Ok();
}

// Large bcast straight from the root's buffer (process_vm_readv): the root
// publishes where its data is (packed into scratch when its layout is not
// contiguous) and waits until every other rank has copied it.
Status BcastDirect(NodeArea& area, const Args& a, std::size_t bytes) {
  const int root = a.root;
  const dtype::Type& t = *a.stype;
  const bool flat = t.IsContiguous();
  const std::uint64_t published = area.Next(), copied = area.Next();
  if (area.rank() == root) {
    const std::uint8_t* data = static_cast<const std::uint8_t*>(a.recvbuf);
    if (!flat) {
      std::uint8_t* packed = area.scratch(bytes);
      dtype::Pack(t, a.recvbuf, a.scount, packed);
      data = packed;
    }
    area.Publish(reinterpret_cast<std::uint64_t>(data), bytes);
    area.Arrive(published);
    area.Arrive(copied);
    return area.WaitAll(copied);
  }
  area.Arrive(published);
  NICQ_RETURN_IF_ERROR(area.WaitRank(root, published));
  if (Status fits = CheckFits(area.dst_of(root), bytes, root); !fits.ok()) {
    area.Arrive(copied);  // the root waits for everyone before it returns
    return fits;
  }
  std::uint8_t* into = flat ? static_cast<std::uint8_t*>(a.recvbuf) : area.scratch(bytes);
  const int err = rt::ReadFromRank(area.world(root), into, area.src_of(root), bytes);
  if (err != 0) return ReadFailed(err, root, bytes);
  if (!flat) dtype::Unpack(t, into, std::int64_t(bytes), a.scount, a.recvbuf);
  area.Arrive(copied);
  return Status::Ok();
}

// Small reduce / allreduce: slots in, fold in rank order. `out` null: this
// rank only contributes (a reduce's non-root).
Status ReduceSmall(NodeArea& area, const NodeReducer& red, const void* in, void* out,
                   std::int64_t count, std::size_t bytes) {
  const std::uint64_t g = area.Next();
  const int i = int(g & 1), n = area.ranks(), me = area.rank();
  NICQ_RETURN_IF_ERROR(Reusable(area, area.last_small[i]));
  area.last_small[i] = g;
  if (bytes > 0) std::memcpy(area.slot(i, me, bytes), in, bytes);
  area.Arrive(g);
  if (out == nullptr) return Status::Ok();
  NICQ_RETURN_IF_ERROR(area.WaitAll(g));
  if (bytes == 0) return Status::Ok();
  const std::uint8_t* src[NodeArea::kMaxRanks];
  for (int r = 0; r < n; ++r) src[r] = area.slot(i, r, bytes);
  return FoldInRankOrder(red, src, n, out, count, bytes);
}

// Large reduce / allreduce, chunk by chunk (see the file comment). A rank's
// own share is folded straight from its input, so it stages only the rest.
Status ReduceLarge(NodeArea& area, const NodeReducer& red, const std::uint8_t* in,
                   std::uint8_t* out, std::int64_t count, std::size_t item) {
  const int n = area.ranks(), me = area.rank();
  const std::int64_t chunk_items = std::int64_t(NodeArea::kChunkBytes / item);
  for (std::int64_t first = 0, k = 0; first < count; first += chunk_items, ++k) {
    const std::int64_t items = std::min(chunk_items, count - first);
    const std::size_t len = std::size_t(items) * item;
    const std::uint8_t* src = in + std::size_t(first) * item;
    const int i = int(k & 1);
    // Share r covers items [lo(r), lo(r+1)) of the chunk.
    auto lo = [&](int r) { return items * r / n; };
    const std::size_t my_lo = std::size_t(lo(me)) * item, my_hi = std::size_t(lo(me + 1)) * item;

    const std::uint64_t staged = area.Next();
    NICQ_RETURN_IF_ERROR(Reusable(area, area.last_stage[i]));
    area.last_stage[i] = staged;
    std::uint8_t* mine = area.stage(i, me);
    std::memcpy(mine, src, my_lo);
    std::memcpy(mine + my_hi, src + my_hi, len - my_hi);
    area.Arrive(staged);
    NICQ_RETURN_IF_ERROR(area.WaitAll(staged));

    const std::uint64_t reduced = area.Next();
    NICQ_RETURN_IF_ERROR(Reusable(area, area.last_result[i]));
    area.last_result[i] = reduced;
    if (my_hi > my_lo) {
      const std::uint8_t* parts[NodeArea::kMaxRanks];
      for (int r = 0; r < n; ++r) parts[r] = r == me ? src + my_lo : area.stage(i, r) + my_lo;
      NICQ_RETURN_IF_ERROR(FoldInRankOrder(red, parts, n, area.result(i) + my_lo,
                                           lo(me + 1) - lo(me), my_hi - my_lo));
    }
    area.Arrive(reduced);
    if (out == nullptr) continue;
    NICQ_RETURN_IF_ERROR(area.WaitAll(reduced));
    std::memcpy(out + std::size_t(first) * item, area.result(i), len);
  }
  return Status::Ok();
}

// Large reduce / allreduce straight between the ranks' buffers, when
// process_vm_readv works: three steps whatever the size. (1) Everyone
// publishes its input and output addresses. (2) Each rank folds its share
// of the items, in rank order, reading the others' inputs piece by piece
// into scratch, into its output (a reduce's non-root: scratch) and
// arrives; no rank returns before that step, since the others read its
// input until then. (3) The readers (everyone, or the root) copy every
// other share from its owner's output, then arrive; owners wait for that.
Status ReduceDirect(NodeArea& area, const NodeReducer& red, const std::uint8_t* in,
                    std::uint8_t* out, std::int64_t count, std::size_t item, int root) {
  const int n = area.ranks(), me = area.rank();
  const bool reads_all = root < 0 || me == root;
  auto lo = [&](int r) { return std::size_t(count * r / n) * item; };
  const std::size_t my_lo = lo(me), my_len = lo(me + 1) - my_lo;
  const std::size_t piece = NodeArea::kChunkBytes / item * item;
  // The scratch: one piece of another rank's input, one of our own (in
  // place, our input is where the fold accumulates), and a non-root's share.
  std::uint8_t* const theirs = area.scratch(2 * piece + (reads_all ? 0 : my_len));
  std::uint8_t* const own = theirs + piece;
  std::uint8_t* const acc_base = reads_all ? out : own + piece - my_lo;
  const bool in_place = in == out;

  const std::uint64_t published = area.Next();
  area.Publish(reinterpret_cast<std::uint64_t>(in), reinterpret_cast<std::uint64_t>(acc_base));
  area.Arrive(published);
  NICQ_RETURN_IF_ERROR(area.WaitAll(published));

  for (std::size_t off = my_lo; off < my_lo + my_len; off += piece) {
    const std::size_t len = std::min(piece, my_lo + my_len - off);
    const std::int64_t items = std::int64_t(len / item);
    std::uint8_t* acc = acc_base + off;
    const std::uint8_t* mine = in + off;
    if (in_place && me != n - 1) {
      std::memcpy(own, in + off, len);  // the fold overwrites it before its turn
      mine = own;
    }
    // acc = input of rank n-1, then acc = input_r op acc down to rank 0.
    for (int r = n - 1; r >= 0; --r) {
      const std::uint8_t* operand = mine;
      if (r != me) {
        std::uint8_t* into = r == n - 1 ? acc : theirs;
        const int err = rt::ReadFromRank(area.world(r), into, area.src_of(r) + off, len);
        if (err != 0) return ReadFailed(err, r, len);
        operand = into;
      }
      if (r == n - 1) {
        if (operand != acc) std::memcpy(acc, operand, len);
      } else {
        NICQ_RETURN_IF_ERROR(red.Apply(operand, acc, items));
      }
    }
  }
  const std::uint64_t folded = area.Next();
  area.Arrive(folded);
  NICQ_RETURN_IF_ERROR(area.WaitAll(folded));

  const std::uint64_t gathered = area.Next();
  if (reads_all) {
    for (int r = 0; r < n; ++r) {
      if (r == me || lo(r + 1) == lo(r)) continue;
      const std::size_t len = lo(r + 1) - lo(r);
      const int err = rt::ReadFromRank(area.world(r), out + lo(r), area.dst_of(r) + lo(r), len);
      if (err != 0) return ReadFailed(err, r, len);
    }
  }
  area.Arrive(gathered);
  return root < 0 ? area.WaitAll(gathered) : area.WaitRank(root, gathered);
}

// The reduction prepared for the area's last call when op and type repeat
// (the look-ups cost more than an 8-byte allreduce's fold). A predefined
// type's handle always names that type; a derived one's may name another
// after a free, and a user op is looked up at each fold anyway.
dtype::PreparedReduce PreparedFor(NodeArea& area, int op, const dtype::Type& t) {
  if (!t.predefined) return dtype::PreparedReduce::For(op, t.handle);
  if (area.red_op != op || area.red_type != t.handle) {
    area.red_fast = dtype::PreparedReduce::For(op, t.handle);
    area.red_op = op;
    area.red_type = t.handle;
  }
  return area.red_fast;
}

Status RunReduction(NodeArea& area, const Args& a) {
  const dtype::Type& t = *a.rtype;
  const std::int64_t count = a.rcount;
  const std::size_t item = std::size_t(t.size), bytes = std::size_t(count) * item;
  const bool contributes_only = a.kind == Kind::kReduce && area.rank() != a.root;
  const void* in = a.sendbuf == kInPlace ? a.recvbuf : a.sendbuf;
  void* out = contributes_only ? nullptr : a.recvbuf;
  NodeReducer red{a.op, t.handle, PreparedFor(area, a.op, t)};
  if (bytes <= NodeArea::kSmallBytes) return ReduceSmall(area, red, in, out, count, bytes);
  if (area.cross_memory())
    return ReduceDirect(area, red, static_cast<const std::uint8_t*>(in),
                        static_cast<std::uint8_t*>(out), count, item,
                        a.kind == Kind::kReduce ? a.root : -1);
  return ReduceLarge(area, red, static_cast<const std::uint8_t*>(in),
                     static_cast<std::uint8_t*>(out), count, item);
}

}  // namespace

Status FoldInRankOrder(const NodeReducer& red, const std::uint8_t* const* src, int n, void* dst,
                       std::int64_t count, std::size_t bytes) {
  // The first step reads the two rightmost inputs and writes dst in one
  // pass (no copy of src[n - 1] first), unless dst is src[n - 2] itself.
  int r = n - 2;
  if (n >= 2 && dst != src[n - 2]) {
    NICQ_RETURN_IF_ERROR(red.Apply(src[n - 2], src[n - 1], dst, count, bytes));
    --r;
  } else if (dst != src[n - 1]) {
    std::memcpy(dst, src[n - 1], bytes);
  }
  for (; r >= 0; --r) NICQ_RETURN_IF_ERROR(red.Apply(src[r], dst, count));
  return Status::Ok();
}

bool NodeCollEnabled() {
  static const bool on = config::GetString("NICQ_NODE_COLL") != "off";
  return on;
}

// Whether this call can take the area; every rank decides the same from
// arguments MPI requires to match (kind, count and type of reductions, the
// byte count of bcast) and from the communicator.
bool NodeCollFits(const Args& a) {
  const Comm* c = a.comm;
  if (c->inter || c->size < 2 || c->size > NodeArea::kMaxRanks) return false;
  switch (a.kind) {
    case Kind::kBarrier:
    case Kind::kBcast:
      return true;
    case Kind::kReduce:
    case Kind::kAllreduce: {
      if (a.kind == Kind::kAllreduce) {
        // A forced algorithm (tests of each one) keeps its schedule.
        static const bool forced = [] {
          const std::string algo = config::GetString("NICQ_ALLREDUCE_ALGO");
          return !algo.empty() && algo != "auto";
        }();
        if (forced) return false;
      }
      const dtype::Type* t = a.rtype;
      if (t == nullptr || !t->IsContiguous() || t->size <= 0 || a.rcount < 0) return false;
      // Chunks hold whole items.
      return std::size_t(t->size) * std::size_t(c->size) <= NodeArea::kChunkBytes;
    }
    default:
      return false;
  }
}

void EnsureCollDestroyHook() {
  static const bool hooked = (rt::SetCommDestroyHook(&DestroyHook), true);
  (void)hooked;
}

Status NodeAreaOf(Comm* comm, NodeArea** out) {
  *out = nullptr;
  void*& slot = comm->node_area.p;
  if (slot == kNoArea) return Status::Ok();
  if (slot == nullptr) {
    // Only when every member is reached through nicq's shm transport (a
    // property every rank sees alike).
    for (int w : comm->world_ranks)
      if (!rt::SameNodeShm(w)) {
        slot = kNoArea;
        return Status::Ok();
      }
    EnsureCollDestroyHook();
    std::unique_ptr<NodeArea> made;
    NICQ_RETURN_IF_ERROR(NodeArea::Create(comm, ShadowOf(comm), NextTag(comm, 2), &made)
                             .WithContext("setting up the same-node collective area"));
    slot = made ? static_cast<void*>(made.release()) : kNoArea;
  }
  // An area some rank could not map leaves the marker, never an area.
  *out = NodeAreaIfMade(comm);
  return Status::Ok();
}

NodeArea* NodeAreaIfMade(Comm* comm) {
  void* slot = comm->node_area.p;
  return slot == kNoArea ? nullptr : static_cast<NodeArea*>(slot);
}

bool TryNodeCollective(const Args& a, Status* st) {
  if (!NodeCollEnabled() || !NodeCollFits(a)) return false;
  NodeArea* area = nullptr;
  *st = NodeAreaOf(a.comm, &area);
  if (!st->ok()) return true;
  if (area == nullptr) return false;
  switch (a.kind) {
    case Kind::kBarrier:
      *st = Barrier(*area);
      break;
    case Kind::kBcast: {
      const std::size_t bytes = std::size_t(a.scount) * std::size_t(a.stype->size);
      if (bytes <= NodeArea::kSmallBytes)
        *st = BcastSmall(*area, a, bytes);
      else if (area->cross_memory())
        *st = BcastDirect(*area, a, bytes);
      else
        *st = BcastLarge(*area, a, bytes);
      break;
    }
    default:
      *st = RunReduction(*area, a);
      break;
  }
  return true;
}

}  // namespace nicq::coll
