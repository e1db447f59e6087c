// The same-node collectives' large-message steps (see node_coll.cc):
// bcast and reduce / allreduce straight between the ranks' buffers where
// process_vm_readv works, else chunk by chunk through the staging area.
// Out of line from TryNodeCollective, whose small-message steps stay
// inline there: a call is nothing beside a large message's copies.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/node_area.h"
#include "coll/node_reduce.h"
#include "coll/node_steps.h"
#include "dtype/datatype.h"
#include "runtime/runtime.h"

namespace nicq::coll {
namespace {

Status ReadFailed(int err, int r, std::size_t len) {
  return Error(err == ESRCH ? Code::kProcFailed : Code::kIntern,
               "reading " + std::to_string(len) + " bytes from rank " + std::to_string(r) +
                   " of the communicator: " + std::strerror(err));
}

}  // namespace

Status BcastTooLong(std::uint64_t root_bytes, std::size_t bytes, int root) {
  return Error(Code::kTruncate, "bcast: receiving " + std::to_string(bytes) + " bytes from rank " +
                                    std::to_string(root) + ", which sends " +
                                    std::to_string(root_bytes));
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

}  // namespace nicq::coll
