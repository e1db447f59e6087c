// Inbox segments, the probe for cross-memory reads, and the futex that a
// waiting receiver sleeps on.
#include "transport/shm_transport.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <new>
#include <random>

#include "boot/bootstrap.h"
#include "core/config.h"
#include "core/cpu_relax.h"
#include "core/log.h"
#include "transport/fabric.h"

namespace nicq::transport {

namespace {
constexpr std::uint64_t kInboxMagic = 0x6e69637173686d31ull;  // "nicqshm1"
// Rings start on their own page, after the header.
constexpr std::size_t kRingsOffset = 4096;
static_assert(sizeof(ShmInboxHeader) <= kRingsOffset, "the inbox header must fit before the rings");
// Ring cells per (sender, receiver) pair: 256 KiB each up to 32 ranks on a
// node, fewer cells beyond so an inbox stays near 8 MiB; never below 64 KiB.
constexpr std::size_t kInboxBudget = 8u << 20;
constexpr std::size_t kMaxCells = 4096, kMinCells = 1024;

std::size_t CellsFor(std::size_t local_ranks) {
  std::size_t cells = kMaxCells;
  while (cells > kMinCells && cells * kShmCell * local_ranks > kInboxBudget) cells /= 2;
  return cells;
}

std::size_t InboxBytes(std::size_t rings, std::size_t cells) {
  return kRingsOffset + rings * ShmRingBytes(cells);
}

void* RingAt(void* base, std::size_t i, std::size_t cells) {
  return static_cast<std::uint8_t*>(base) + kRingsOffset + i * ShmRingBytes(cells);
}

// What each rank tells the others at Open.
struct InboxBlob {
  char name[48] = {};
  std::uint64_t header_addr = 0;  // the inbox header in the owner's address space
  std::uint32_t created = 0;
  std::uint32_t pad = 0;
};
struct OpenResult {
  std::uint32_t mapped = 0;  // every local peer's inbox mapped
  std::uint32_t cma = 0;     // process_vm_readv of a peer's page worked (or nothing to probe)
};

long Futex(std::atomic<std::uint32_t>* word, int op, std::uint32_t val, const timespec* ts) {
  // Shared futex (no FUTEX_PRIVATE_FLAG): the word lives in a mapping that
  // other processes write.
  return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), op, val, ts, nullptr, 0);
}
}  // namespace

Status ShmTransport::CreateInbox(int me, std::size_t rings, std::size_t cells, std::string* name) {
  *name = "/nicq-shm-" + std::to_string(getpid()) + "-" + std::to_string(me);
  int fd = shm_open(name->c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0 && errno == EEXIST) {
    // Left by an earlier process with our pid that died between creating
    // and unlinking it: it is no one's now.
    shm_unlink(name->c_str());
    fd = shm_open(name->c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  }
  if (fd < 0) return Error(Code::kIntern, "shm_open(" + *name + "): " + std::strerror(errno));
  const std::size_t bytes = InboxBytes(rings, cells);
  if (ftruncate(fd, off_t(bytes)) != 0) {
    const int e = errno;
    close(fd);
    shm_unlink(name->c_str());
    return Error(Code::kIntern, "ftruncate(" + *name + "): " + std::strerror(e));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name->c_str());
    return Error(Code::kIntern, "mmap(" + *name + "): " + std::strerror(errno));
  }
  own_ = {p, bytes};
  auto* h = new (p) ShmInboxHeader;
  h->rings = std::uint32_t(rings);
  h->cells = std::uint32_t(cells);
  h->cookie = std::random_device{}() | (std::uint64_t(std::random_device{}()) << 32) | 1;
  for (std::size_t i = 0; i < rings; ++i) ShmRingWriter::Format(RingAt(p, i, cells));
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kInboxMagic;
  return Status::Ok();
}

Status ShmTransport::Open(Bootstrap& boot, const std::vector<PeerInfo>& peers, int me) {
  const std::string mode = config::GetString("NICQ_SHM");
  if (mode == "off" || mode == "0") return Status::Ok();
  const bool required = mode == "on" || mode == "1";
  if (mode != "auto" && !required)
    NICQ_LOG(kWarn, kP2p, "NICQ_SHM=%s not understood (auto, on, off): using auto", mode.c_str());
  const int n = int(peers.size());
  if (n <= 1) return Status::Ok();  // job-uniform: every rank returns here or none does

  std::vector<int> local;  // world ranks on this node, ours included
  for (int w = 0; w < n; ++w)
    if (peers[w].same_node || w == me) local.push_back(w);
  int my_slot = 0;
  while (local[my_slot] != me) ++my_slot;
  const std::size_t cells = CellsFor(local.size());

  InboxBlob mine;
  Status made = local.size() > 1 ? CreateInbox(me, local.size(), cells, &own_name_)
                                 : Error(Code::kIntern, "no other rank on this node");
  if (made.ok()) {
    std::snprintf(mine.name, sizeof mine.name, "%s", own_name_.c_str());
    mine.header_addr = reinterpret_cast<std::uint64_t>(own_.base);
    mine.created = 1;
  }
  std::vector<std::uint8_t> all;
  Status st = boot.Allgather(&mine, sizeof mine, all);

  OpenResult res;
  res.mapped = made.ok() && st.ok();
  res.cma = 1;
  tx_.assign(n, ShmRingWriter{});
  peer_header_.assign(n, nullptr);
  pid_.assign(n, 0);
  mapped_.clear();
  bool probed = false;
  for (std::size_t k = 0; res.mapped && k < local.size(); ++k) {
    const int w = local[k];
    if (w == me) continue;
    InboxBlob b;
    std::memcpy(&b, all.data() + std::size_t(w) * sizeof b, sizeof b);
    const std::size_t bytes = InboxBytes(local.size(), cells);
    int fd = b.created ? shm_open(b.name, O_RDWR, 0) : -1;
    void* p =
        fd >= 0 ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0) close(fd);
    if (p == MAP_FAILED) {
      NICQ_LOG(kWarn, kP2p, "cannot map rank %d's inbox %s: %s", w, b.name, std::strerror(errno));
      res.mapped = 0;
      break;
    }
    mapped_.push_back({p, bytes});
    auto* h = static_cast<ShmInboxHeader*>(p);
    if (h->magic != kInboxMagic || h->cells != cells || h->rings != local.size()) {
      NICQ_LOG(kWarn, kP2p, "rank %d's inbox %s has an unexpected layout", w, b.name);
      res.mapped = 0;
      break;
    }
    tx_[w].Attach(RingAt(p, my_slot, cells), cells);
    peer_header_[w] = h;
    pid_[w] = peers[w].pid;
    // The probe: one real cross-memory read of the peer's header, checked
    // against the cookie we see through the mapping.
    if (!probed) {
      probed = true;
      std::uint64_t got = 0;
      const int err =
          ReadFrom(w, &got, b.header_addr + offsetof(ShmInboxHeader, cookie), sizeof got);
      res.cma = err == 0 && got == h->cookie;
      if (!res.cma)
        NICQ_LOG(kDebug, kP2p, "process_vm_readv from rank %d: %s", w,
                 err ? std::strerror(err) : "wrong bytes");
    }
  }
  // This allgather is also the barrier after which every rank has mapped
  // every inbox it needs: the names can go. From here on a killed rank
  // leaves nothing in /dev/shm (the kernel frees a segment with its last
  // mapping); one killed before this point leaves its name behind.
  std::vector<std::uint8_t> results;
  Status rs = boot.Allgather(&res, sizeof res, results);
  if (!own_name_.empty()) {
    shm_unlink(own_name_.c_str());
    own_name_.clear();
  }
  NICQ_RETURN_IF_ERROR(st.WithContext("shm transport: allgather"));
  NICQ_RETURN_IF_ERROR(rs.WithContext("shm transport: allgather"));
  bool all_mapped = true, all_cma = true;
  for (int w : local) {  // only this node's ranks share our rings
    OpenResult r;
    std::memcpy(&r, results.data() + std::size_t(w) * sizeof r, sizeof r);
    all_mapped &= r.mapped != 0;
    all_cma &= r.cma != 0;
  }
  if (!all_mapped || local.size() <= 1) {
    if (local.size() > 1) {
      if (required)
        return Error(Code::kIntern, "NICQ_SHM=on but the node's inboxes could not be set up (" +
                                        made.message() + ")");
      NICQ_LOG(kWarn, kP2p, "shm transport unavailable; same-node peers use libfabric");
    }
    Close();
    return Status::Ok();
  }
  rx_.resize(local.size() - 1);
  std::size_t r = 0;
  for (std::size_t k = 0; k < local.size(); ++k)
    if (local[k] != me) rx_[r++].Attach(RingAt(own_.base, k, cells), cells);
  max_frame_ = tx_[local[my_slot == 0 ? 1 : 0]].max_frame();
  all_local_ = local.size() == std::size_t(n);
  cma_ = all_cma;
  me_ = me;
  free_offers_.clear();
  for (int i = kSplitOffers - 1; i >= 0; --i) free_offers_.push_back(std::uint8_t(i));
  active_ = true;
  NICQ_LOG(
      kInfo, kP2p,
      "shm transport: %zu ranks on this node, %zu KiB ring per pair, frames to %zu B; large "
      "messages by %s",
      local.size(), cells * kShmCell / 1024, max_frame_,
      cma_ ? "process_vm_readv (single copy)" : "libfabric RMA read (process_vm_readv refused)");
  return Status::Ok();
}

void ShmTransport::Close() {
  if (!own_name_.empty()) shm_unlink(own_name_.c_str());
  own_name_.clear();
  for (Segment& s : mapped_) munmap(s.base, s.bytes);
  mapped_.clear();
  if (own_.base) munmap(own_.base, own_.bytes);
  own_ = {};
  tx_.clear();
  rx_.clear();
  peer_header_.clear();
  active_ = all_local_ = cma_ = false;
  me_ = -1;
}

bool ShmTransport::Send(int dest, const iovec* iov, int n, std::size_t total, std::size_t* off) {
  bool wrote = false;
  const bool done = WriteMessage(tx_[dest], max_frame_, iov, n, total, off, &wrote);
  if (wrote) Wake(dest);
  return done;
}

void ShmTransport::Wake(int dest) {
  ShmInboxHeader* h = peer_header_[dest];
  // Pairs with the fence in Sleep: either the receiver sees our frame when
  // it re-checks its rings, or we see it sleeping here.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (h->sleeping.load(std::memory_order_relaxed) == 0) return;
  h->wake_seq.fetch_add(1, std::memory_order_release);
  Futex(&h->wake_seq, FUTEX_WAKE, INT_MAX, nullptr);
}

offload::AgentBell* ShmTransport::agent_bell(int world) const {
  if (!active_) return nullptr;
  if (static_cast<std::size_t>(world) < peer_header_.size() && peer_header_[world] != nullptr)
    return &peer_header_[world]->agent_bell;
  if (world == me_) return &static_cast<ShmInboxHeader*>(own_.base)->agent_bell;
  return nullptr;
}

bool ShmTransport::AnyPending() const {
  for (const ShmMessageReader& in : rx_)
    if (in.Pending()) return true;
  return false;
}

void ShmTransport::Sleep(int timeout_us) {
  auto* h = static_cast<ShmInboxHeader*>(own_.base);
  const std::uint32_t seq = h->wake_seq.load(std::memory_order_acquire);
  h->sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!AnyPending()) {
    timespec ts{timeout_us / 1000000, long(timeout_us % 1000000) * 1000};
    Futex(&h->wake_seq, FUTEX_WAIT, seq, &ts);
  }
  h->sleeping.store(0, std::memory_order_relaxed);
}

int ShmTransport::ReadFrom(int src, void* dst, std::uint64_t addr, std::size_t len) const {
  auto* d = static_cast<std::uint8_t*>(dst);
  while (len > 0) {
    // One call moves at most about 2 GiB (MAX_RW_COUNT); partial reads loop.
    const std::size_t chunk = std::min<std::size_t>(len, std::size_t(1) << 30);
    iovec local{d, chunk};
    iovec remote{reinterpret_cast<void*>(addr), chunk};
    const ssize_t got = process_vm_readv(pid_[src], &local, 1, &remote, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;
    d += got;
    addr += std::uint64_t(got);
    len -= std::size_t(got);
  }
  return 0;
}

// Split copy (ShmSplitOffer). Tickets: offer slot in the low 8 bits, the
// offer's generation in the high 24.
bool ShmTransport::OfferSplit(void* dst, std::size_t len, std::uint32_t* ticket) {
  if (free_offers_.empty()) return false;
  const std::uint32_t slot = free_offers_.back();
  free_offers_.pop_back();
  offer_generation_ = (offer_generation_ + 1) & 0xffffff;
  *ticket = (offer_generation_ << 8) | slot;
  ShmSplitOffer& o = OwnOffer(*ticket);
  o.addr = reinterpret_cast<std::uint64_t>(dst);
  o.len = len;
  o.state.store(SplitState(*ticket, SplitStage::kOffered), std::memory_order_release);
  return true;
}

ShmSplitOffer& ShmTransport::OwnOffer(std::uint32_t ticket) {
  return static_cast<ShmInboxHeader*>(own_.base)->offers[ticket & 0xff];
}

int ShmTransport::TakeSplit(int dest, std::uint32_t ticket, const void* src) {
  if ((ticket & 0xff) >= kSplitOffers) return 0;
  ShmSplitOffer& o = peer_header_[dest]->offers[ticket & 0xff];
  std::uint64_t seen = SplitState(ticket, SplitStage::kOffered);
  if (!o.state.compare_exchange_strong(seen, SplitState(ticket, SplitStage::kSenderWriting),
                                       std::memory_order_acq_rel))
    return 0;  // the receiver kept it (or the offer is from an older generation)
  auto* from = static_cast<const std::uint8_t*>(src);
  std::uint64_t addr = o.addr;
  std::size_t len = o.len;
  int err = 0;
  while (len > 0) {
    const std::size_t chunk = std::min<std::size_t>(len, std::size_t(1) << 30);
    iovec local{const_cast<std::uint8_t*>(from), chunk};
    iovec remote{reinterpret_cast<void*>(addr), chunk};
    const ssize_t put = process_vm_writev(pid_[dest], &local, 1, &remote, 1, 0);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) {
      err = put < 0 ? errno : EFAULT;
      break;
    }
    from += put;
    addr += std::uint64_t(put);
    len -= std::size_t(put);
  }
  o.state.store(SplitState(ticket, err ? SplitStage::kSenderFailed : SplitStage::kSenderDone),
                std::memory_order_release);
  return err;
}

void ShmTransport::WaitBriefly(int round) const {
  if (round < 64)
    CpuRelax();
  else
    sched_yield();
}

}  // namespace nicq::transport
