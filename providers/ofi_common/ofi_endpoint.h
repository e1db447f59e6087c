// OfiEndpoint: one libfabric fabric/domain/AV/RDM endpoint/CQ opened for an
// offload backend, separate from the point-to-point engine's, so the
// backend's tags, keys and counters never collide with the runtime's.
//
// The native backend asks for FI_TRIGGER + FI_RMA_EVENT and client-chosen
// keys (its doorbell keys name counters, mr_key.h); the emulated backend asks
// for remote CQ data and drives the CQ itself. Both take whatever progress
// model and memory-registration mode the provider returns (cxi: manual
// progress, FI_MR_ENDPOINT; verbs: provider keys) and honour it: MRs are
// bound to the endpoint and enabled where FI_MR_ENDPOINT says so, keys are
// narrowed to the provider's mr_key_size, provider keys travel in the wire
// blob (docs/provider-contracts.md, "What nicq does").
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "providers/backend.h"

namespace nicq::ofi {

struct EndpointOptions {
  std::string provider;        // "sockets", "tcp;ofi_rxm", "shm", ... ("" or "auto": backend picks)
  bool triggers = false;       // require FI_TRIGGER and FI_RMA_EVENT (native)
  bool auto_progress = false;  // require FI_PROGRESS_AUTO data progress
  bool client_keys = false;    // refuse FI_MR_PROV_KEY (keys must be computable by peers)
  bool remote_cq_data = false;    // require FI_REMOTE_CQ_DATA (emulated remote counters)
  bool cq_wait_object = false;    // CQ with a wait object so fi_cq_sread can block
  std::size_t queue_size = 4096;  // tx/rx/CQ depth asked for
};

// A peer's wire-up blob (fixed size so every rank contributes the same length
// to the bootstrap's allgather): the endpoint name and the base address of
// the peer's counter doorbell array (backend specific; 0 if unused).
struct WireAddress {
  std::vector<std::uint8_t> name;
  std::uint64_t doorbell_base = 0;
  std::uint64_t doorbell_key = 0;  // only needed where the provider picks keys
};
inline constexpr std::size_t kWireBlobBytes = 256;
Status EncodeWire(const WireAddress& in, std::vector<std::uint8_t>& out);
Status DecodeWire(std::span<const std::uint8_t> blob, WireAddress* out);

class OfiEndpoint {
 public:
  static Status Open(const EndpointOptions& options, std::unique_ptr<OfiEndpoint>* out);
  ~OfiEndpoint();
  OfiEndpoint(const OfiEndpoint&) = delete;
  OfiEndpoint& operator=(const OfiEndpoint&) = delete;

  const char* provider_name() const { return info_->fabric_attr->prov_name; }
  fi_info* info() const { return info_; }
  fid_domain* domain() const { return domain_; }
  fid_ep* ep() const { return ep_; }
  fid_cq* cq() const { return cq_; }
  bool cq_waitable() const { return cq_waitable_; }
  bool has_atomics() const { return (info_->caps & FI_ATOMIC) != 0; }
  // Remote addresses are virtual addresses (else offsets into the region).
  bool virt_addr() const { return (info_->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0; }
  // The provider chooses MR keys: keys cannot carry counter ids (mr_key.h).
  bool prov_key() const { return (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0; }
  // MRs must be bound to the endpoint and enabled before use (cxi).
  bool mr_endpoint() const { return (info_->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0; }
  bool manual_progress() const { return info_->domain_attr->data_progress != FI_PROGRESS_AUTO; }
  // Width of the keys we may request (fi_info mr_key_size).
  std::size_t mr_key_bytes() const { return info_->domain_attr->mr_key_size; }
  // Deferred-work entries the provider's service offers to all processes of
  // the node together (cxi's get_dwq_depth extension; the cxi persona's
  // equivalent, providers/persona/persona_ext.h). 0 with *known false when
  // the provider does not say.
  std::size_t DeferredWorkDepth(bool* known) const;
  // The provider whose flaws apply: the persona's core ("sockets" under the
  // cxi persona), else the provider itself.
  std::string CoreProvider() const;
  std::size_t tx_size() const { return info_->tx_attr->size; }
  // What the provider advertises, unless it cannot be used (core/fabric_env.h).
  std::size_t inject_size() const;

  Status Name(std::vector<std::uint8_t>& out) const;
  // Inserts every peer's endpoint name; Peer(rank) is its fi_addr afterwards.
  Status InsertPeers(std::span<const WireAddress> peers);
  fi_addr_t Peer(offload::PeerId rank) const {
    return rank >= 0 && static_cast<std::size_t>(rank) < peers_.size() ? peers_[rank]
                                                                       : FI_ADDR_NOTAVAIL;
  }
  std::size_t num_peers() const { return peers_.size(); }

  // Registers [addr, addr+len) with `access` under requested key `key` (the
  // provider's own under FI_MR_PROV_KEY), binds `counter` to it for remote
  // writes when given, and under FI_MR_ENDPOINT binds it to the endpoint and
  // enables it: the MR is usable on return.
  Status RegisterMr(void* addr, std::size_t len, std::uint64_t access, std::uint64_t key,
                    fid_mr** out, fid_cntr* counter = nullptr) const;
  // Address a peer must use to reach offset 0 of a region registered at addr.
  std::uint64_t RemoteBase(const void* addr) const {
    return virt_addr() ? reinterpret_cast<std::uint64_t>(addr) : 0;
  }

  // Fills caps->atomics / atomic_mask / max_atomic_count from fi_query_atomic.
  void QueryAtomics(offload::Capabilities* caps) const;
  // Whether every op/type pair caps allows also has a fetching form, of at
  // least max_atomic_count elements.
  bool FetchesEveryAtomic(const offload::Capabilities& caps) const;

 private:
  OfiEndpoint() = default;
  Status OpenObjects(const EndpointOptions& options);

  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_cq* cq_ = nullptr;
  bool cq_waitable_ = false;
  bool page_aligned_mr_ = false;  // register whole pages (verbs)
  std::vector<fi_addr_t> peers_;
};

}  // namespace nicq::ofi
