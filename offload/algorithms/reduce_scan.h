// Reduce_scatter(_block), scan and exscan as plans of remote atomics: the
// NIC combines every block itself, so after the first start no host step
// runs. The collectives layer (src/coll/offload_reduce_scan.cc) decides
// whether the NIC can combine the op and type, and hands the blocks here as
// byte counts and addresses. Per epoch (docs/collectives.md, "Offloaded
// reductions: reduce_scatter, scan, exscan"):
//   reduce_scatter(_block)  flat: my own block moves into my result buffer
//       (a NIC put to myself; nothing when it is already in place), then a
//       ready token to every other rank; my block j goes as a remote atomic
//       into rank j's result buffer once my start and every token owed to me
//       are in. An arrival counter counts the p - 1 atomics. In place, rank
//       r's own block sits at its displacement in recvbuf while the other
//       ranks' atomics would land at its start, over blocks still to be
//       read: the result then collects in plan scratch and one put moves it
//       to recvbuf after the last atomic in and out.
//   scan    a chain: rank i's recvbuf holds x_i (own put), its token goes to
//       i - 1, and i - 1 combines its inclusive prefix into it with one
//       atomic once that prefix is complete and the token arrived.
//   exscan  the same chain over an inclusive prefix in plan scratch
//       (x_i, then i - 1's prefix combined in); i - 1 puts its inclusive
//       prefix into rank i's recvbuf (the exclusive result) and combines it
//       into i's scratch. The last rank needs no scratch, rank 0's recvbuf
//       is not touched.
// A block longer than one atomic may carry (`chunk`) goes as several
// atomics, each counted on arrival.
#pragma once

#include <cstddef>
#include <vector>

#include "offload/schedule.h"

namespace nicq::offload {

struct ReductionArgs {
  int rank = 0;
  int size = 1;
  const PeerId* peers = nullptr;  // rank -> world rank, `size` of them
  AtomicType type = AtomicType::kDouble;
  AtomicOp op = AtomicOp::kSum;
  const char* input = nullptr;  // sendbuf, or recvbuf in place
  void* recvbuf = nullptr;
  bool in_place = false;  // MPI_IN_PLACE: input is recvbuf
  // Bytes one atomic may carry (the backend's max_atomic_count items; cxi:
  // one); 0: any. A longer block goes as several atomics, each counted.
  std::size_t chunk = 0;
  std::vector<std::size_t> block_bytes;  // reduce_scatter: rank j's block, in rank order
  std::size_t bytes = 0;                 // scan, exscan: the vector
  PeerId Peer(int r) const { return peers[r]; }
  // Atomics that carry a block of `bytes` (> 0).
  std::uint64_t Pieces(std::size_t n) const { return chunk == 0 ? 1 : (n + chunk - 1) / chunk; }
};

// Each adds one rank's plan to an empty `s` (counter and buffer indices
// agree across ranks).
Status BuildReduceScatterAtomics(const ReductionArgs& r, Schedule* s);
Status BuildScanAtomicChain(const ReductionArgs& r, Schedule* s);
Status BuildExscanAtomicChain(const ReductionArgs& r, Schedule* s);

}  // namespace nicq::offload
