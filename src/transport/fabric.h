// Fabric: the one libfabric RDM endpoint the p2p engine uses, plus the
// address vector and what each peer told us at init (pid, host) for dead-peer
// detection.
//
// Open() picks the provider (NICQ_PROVIDER, or "auto": shm when every rank is
// on this node, else tcp;ofi_rxm), picks the NIC closest to the calling core
// when the provider offers several, and exchanges endpoint names through the
// bootstrap. All ranks must agree on the provider; they verify it.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "transport/shm_transport.h"

namespace nicq {
class Bootstrap;
}

namespace nicq::transport {

struct PeerInfo {
  fi_addr_t addr = FI_ADDR_UNSPEC;
  std::int32_t pid = 0;
  bool same_node = false;
  std::uint64_t node_hash = 0;  // core/node_name.h's node, hashed: equal on one node
  // Its pid names it here (same kernel and pid namespace, PidSpaceId): a
  // liveness check by pid is valid, also across virtual nodes.
  bool pid_visible = false;
};

class Fabric {
 public:
  Fabric() = default;
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;
  ~Fabric() { Close(); }

  Status Open(Bootstrap& boot);
  void Close();

  const std::string& provider() const { return provider_; }
  const std::string& domain_name() const { return domain_name_; }
  fid_ep* ep() const { return ep_; }
  fid_cq* cq() const { return cq_; }
  fid_domain* domain() const { return domain_; }
  bool cq_can_block() const { return cq_wait_; }
  bool has_rma_read() const { return rma_read_; }
  // The provider moves data on its own thread (sockets): waiters should block
  // at once rather than poll, or they starve that thread on a small machine.
  bool auto_progress() const { return auto_progress_; }
  std::size_t max_msg_size() const { return max_msg_; }
  // Largest send fi_inject accepts (0: do not inject). The buffer is reusable
  // on return and no completion is written, so small eager sends finish at
  // once instead of after a CQ round.
  std::size_t inject_size() const { return inject_size_; }
  const PeerInfo& peer(int world) const { return peers_[world]; }
  // nicq's own transport to the ranks of this node (inactive: all traffic
  // goes through the endpoint). Opened after the addresses are exchanged.
  ShmTransport& shm() { return shm_; }
  int size() const { return int(peers_.size()); }

  // Expose [buf, buf+len) for remote reads; fills what the peer needs.
  Status RegisterForRead(const void* buf, std::size_t len, fid_mr** mr, std::uint64_t* raddr,
                         std::uint64_t* key);
  void* DescOf(fid_mr* mr) const;

 private:
  Status OpenWith(fi_info* info);
  Status ExchangeAddresses(Bootstrap& boot);

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::string provider_;
  std::string domain_name_;
  bool cq_wait_ = false;
  bool rma_read_ = false;
  bool auto_progress_ = false;
  std::size_t max_msg_ = 0;
  std::size_t inject_size_ = 0;
  std::uint64_t mr_mode_ = 0;
  std::uint64_t next_key_ = 1;
  std::vector<PeerInfo> peers_;
  ShmTransport shm_;
};

// ---- provider choice (fabric_select.cc) --------------------------------------
// Hints for the p2p endpoint; `with_rma` asks for FI_RMA|FI_READ.
fi_info* MakeHints(bool with_rma);
// Provider list to try for NICQ_PROVIDER=value ("auto" expands to several).
std::vector<std::string> ProviderCandidates(const std::string& value, bool single_node);
// Among the infos fi_getinfo returned (all of one provider), the one whose NIC
// is closest to the calling core; `multi_node` skips loopback-only domains.
fi_info* PickClosestNic(fi_info* list, bool multi_node, std::string* why);

// For nicq_info: every provider usable for p2p, its domains, and the domain
// Open() would pick on this core. Needs no Init.
std::string DescribeFabric();

}  // namespace nicq::transport
