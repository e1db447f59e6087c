// Opens a persona through plain libfabric (FI_PROVIDER_PATH is set by the
// test's environment) as an app would: one Node is a fabric + domain + AV +
// CQ + RDM endpoint on loopback. Two Nodes in one process are two separate
// domains, so one node's calls never progress the other's.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_trigger.h>
#include <time.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace nicq::persona_test {

inline constexpr uint32_t kVersion = FI_VERSION(1, 17);

inline int get_info(const char* prov, uint64_t mr_mode, uint64_t caps, fi_info** out,
                    fi_progress progress = FI_PROGRESS_UNSPEC, fi_ep_type type = FI_EP_RDM) {
  fi_info* hints = fi_allocinfo();
  hints->fabric_attr->prov_name = strdup(prov);
  hints->ep_attr->type = type;
  hints->caps = caps;
  hints->mode = ~0ull;
  hints->domain_attr->mr_mode = static_cast<int>(mr_mode);
  hints->domain_attr->data_progress = progress;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  int ret = fi_getinfo(kVersion, "127.0.0.1", nullptr, FI_SOURCE, hints, out);
  fi_freeinfo(hints);
  return ret;
}

inline void nap_us(long us) {
  timespec ts{us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// Polls a condition that needs no libfabric call (memory written by the
// provider's own threads), sleeping between polls; false after limit_ms.
inline bool eventually(const std::function<bool()>& cond, int limit_ms = 5000) {
  for (int waited = 0; waited < limit_ms; waited++) {
    if (cond()) return true;
    nap_us(1000);
  }
  return cond();
}

struct Node {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fi_addr_t self_addr = FI_ADDR_UNSPEC;
  char name[128];
  size_t name_len = sizeof name;

  // Opens everything up to a bound (not yet enabled) endpoint from info
  // (the node takes a copy).
  int open(const fi_info* i) {
    info = fi_dupinfo(i);
    info->next = nullptr;
    if (int r = fi_fabric(info->fabric_attr, &fabric, nullptr)) return r;
    if (int r = fi_domain(fabric, info, &domain, nullptr)) return r;
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    if (int r = fi_av_open(domain, &av_attr, &av, nullptr)) return r;
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_NONE;
    if (int r = fi_cq_open(domain, &cq_attr, &cq, nullptr)) return r;
    if (int r = fi_endpoint(domain, info, &ep, nullptr)) return r;
    if (int r = fi_ep_bind(ep, &av->fid, 0)) return r;
    return fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
  }

  int enable() {
    if (int r = fi_enable(ep)) return r;
    if (int r = fi_getname(&ep->fid, name, &name_len)) return r;
    return fi_av_insert(av, name, 1, &self_addr, 0, nullptr) == 1 ? 0 : -FI_EINVAL;
  }

  fi_addr_t insert_peer(const Node& peer) {
    fi_addr_t a = FI_ADDR_UNSPEC;
    fi_av_insert(av, peer.name, 1, &a, 0, nullptr);
    return a;
  }

  fid_cntr* cntr() {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = FI_WAIT_UNSPEC;
    fid_cntr* c = nullptr;
    return fi_cntr_open(domain, &attr, &c, nullptr) == 0 ? c : nullptr;
  }

  // Registers buf; with FI_MR_ENDPOINT also binds it to the endpoint and
  // enables it unless enable is false.
  fid_mr* reg(void* buf, size_t len, uint64_t access, uint64_t key = 0, bool enable = true,
              uint64_t flags = 0, fid_cntr* remote_cntr = nullptr) {
    fid_mr* mr = nullptr;
    if (fi_mr_reg(domain, buf, len, access, 0, key, flags, &mr, nullptr)) return nullptr;
    if (remote_cntr && fi_mr_bind(mr, &remote_cntr->fid, FI_REMOTE_WRITE)) return nullptr;
    if ((info->domain_attr->mr_mode & FI_MR_ENDPOINT) && enable) {
      if (fi_mr_bind(mr, &ep->fid, 0) || fi_mr_enable(mr)) return nullptr;
    }
    return mr;
  }

  // Reads one completion (or error) with progress; -FI_EAGAIN after limit_ms.
  int complete(fi_cq_tagged_entry* e, fi_cq_err_entry* err = nullptr, int limit_ms = 5000) {
    for (int waited = 0;; waited++) {
      ssize_t n = fi_cq_read(cq, e, 1);
      if (n == 1) return 0;
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry tmp{};
        fi_cq_readerr(cq, err ? err : &tmp, 0);
        return -FI_EAVAIL;
      }
      if (n != -FI_EAGAIN) return static_cast<int>(n);
      if (waited >= limit_ms * 10) return -FI_EAGAIN;
      nap_us(100);
    }
  }

  void close() {
    if (ep) fi_close(&ep->fid);
    if (cq) fi_close(&cq->fid);
    if (av) fi_close(&av->fid);
    if (domain) fi_close(&domain->fid);
    if (fabric) fi_close(&fabric->fid);
    if (info) fi_freeinfo(info);
    ep = nullptr;
    cq = nullptr;
    av = nullptr;
    domain = nullptr;
    fabric = nullptr;
    info = nullptr;
  }
};

}  // namespace nicq::persona_test
