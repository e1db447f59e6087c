// Opening the p2p endpoint and wiring up the address vector.
#include "transport/fabric.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>

#include "boot/bootstrap.h"
#include "core/config.h"
#include "core/fabric_env.h"
#include "core/log.h"
#include "core/node_name.h"

namespace nicq::transport {
namespace {

constexpr std::size_t kMaxName = 232;
struct AddrBlob {
  std::uint32_t len;
  std::int32_t pid;
  std::uint64_t host_hash;
  std::uint64_t pid_space;
  std::uint8_t name[kMaxName];
};

constexpr std::size_t kProvNameLen = 32;

Status FiError(const char* call, const std::string& what, int rc) {
  return Error(Code::kIntern, std::string(call) + "(" + what + ") failed: " + fi_strerror(-rc));
}

std::uint64_t NodeHash(int world_rank) {
  return std::hash<std::string>{}(NodeName(world_rank));
}

// fi_getinfo for one provider name, with RMA read if it has it.
fi_info* GetInfo(const std::string& prov, bool* rma) {
  for (bool with_rma : {true, false}) {
    fi_info* hints = MakeHints(with_rma);
    hints->fabric_attr->prov_name = strdup(prov.c_str());
    fi_info* list = nullptr;
    int rc = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &list);
    fi_freeinfo(hints);
    if (rc == 0 && list) {
      *rma = with_rma;
      return list;
    }
  }
  return nullptr;
}

}  // namespace

Status Fabric::OpenWith(fi_info* info) {
  if (std::strncmp(info->fabric_attr->prov_name, "shm", 3) == 0) RemoveStaleShmRegions();
  int rc = fi_fabric(info->fabric_attr, &fabric_, nullptr);
  if (rc) return FiError("fi_fabric", info->fabric_attr->prov_name, rc);
  rc = fi_domain(fabric_, info, &domain_, nullptr);
  if (rc) return FiError("fi_domain", info->domain_attr->name, rc);
  fi_av_attr av_attr = {};
  av_attr.type =
      info->domain_attr->av_type == FI_AV_UNSPEC ? FI_AV_TABLE : info->domain_attr->av_type;
  rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
  if (rc) return FiError("fi_av_open", "table", rc);
  fi_cq_attr cq_attr = {};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = 16384;
  // A wait object lets idle waiters sleep in fi_cq_sread; providers without
  // one get short sleeps instead (see ProgressWait).
  const bool is_shm = std::strncmp(info->fabric_attr->prov_name, "shm", 3) == 0;
  cq_attr.wait_obj = is_shm ? FI_WAIT_NONE : FI_WAIT_UNSPEC;
  rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  cq_wait_ = rc == 0;
  if (rc) {
    cq_attr.wait_obj = FI_WAIT_NONE;
    rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
    if (rc) return FiError("fi_cq_open", "tagged", rc);
  }
  rc = fi_endpoint(domain_, info, &ep_, nullptr);
  if (rc) return FiError("fi_endpoint", "rdm", rc);
  if ((rc = fi_ep_bind(ep_, &av_->fid, 0))) return FiError("fi_ep_bind", "av", rc);
  if ((rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV)))
    return FiError("fi_ep_bind", "cq", rc);
  if ((rc = fi_enable(ep_))) return FiError("fi_enable", "ep", rc);
  provider_ = info->fabric_attr->prov_name;
  // shm (1.17) accepts a CQ wait object, but fi_cq_sread neither progresses
  // the endpoint nor honours its timeout while peers are silent: two ranks
  // both in sread wait for each other forever. Poll and sleep instead.
  if (provider_.rfind("shm", 0) == 0) cq_wait_ = false;
  domain_name_ = info->domain_attr->name ? info->domain_attr->name : "";
  mr_mode_ = info->domain_attr->mr_mode;
  max_msg_ = info->ep_attr->max_msg_size;
  inject_size_ = UsableInjectSize(provider_, info->tx_attr->inject_size);
  auto_progress_ = info->domain_attr->data_progress == FI_PROGRESS_AUTO;
  return Status::Ok();
}

Status Fabric::Open(Bootstrap& boot) {
  const bool single_node = boot.LocalSize() == boot.Size();
  const std::string want = config::GetString("NICQ_PROVIDER");
  PrepareFabricEnvironment(want);
  const bool is_auto = want.empty() || want == "auto";
  std::vector<std::string> cands = ProviderCandidates(want, single_node);

  // Open the first candidate that works; under "auto" all ranks then settle
  // on the least preferred choice any rank made, so they all speak one stack.
  std::size_t chosen = cands.size();
  std::string err = "no candidate";
  for (int round = 0; round < 2; ++round) {
    std::size_t start = round == 0 ? 0 : chosen;
    chosen = cands.size();
    for (std::size_t i = start; i < cands.size(); ++i) {
      bool rma = false;
      fi_info* list = GetInfo(cands[i], &rma);
      if (!list) {
        err = "fi_getinfo(" + cands[i] + ", FI_EP_RDM, FI_MSG) found nothing";
        if (!is_auto && i + 1 == cands.size()) break;
        continue;
      }
      std::string why;
      fi_info* pick = PickClosestNic(list, !single_node, &why);
      Status s = OpenWith(pick);
      if (s.ok()) {
        info_ = fi_dupinfo(pick);
        rma_read_ = rma;
        chosen = i;
        NICQ_LOG(kInfo, kFabric, "provider %s, %s, rma_read=%d, cq_wait=%d", provider_.c_str(),
                 why.c_str(), int(rma), int(cq_wait_));
        fi_freeinfo(list);
        break;
      }
      err = s.message();
      fi_freeinfo(list);
      Close();
      if (round == 1) break;
    }
    std::uint32_t mine = std::uint32_t(chosen);
    std::vector<std::uint8_t> all;
    NICQ_RETURN_IF_ERROR(boot.Allgather(&mine, sizeof mine, all));
    std::uint32_t worst = 0;
    bool agreed = true;
    for (int r = 0; r < boot.Size(); ++r) {
      std::uint32_t v;
      std::memcpy(&v, all.data() + r * sizeof v, sizeof v);
      worst = std::max(worst, v);
      agreed &= v == mine;
    }
    if (worst >= cands.size())
      return Error(Code::kIntern, "opening the fabric (NICQ_PROVIDER=" + want +
                                      ") failed on some rank; here: " + err);
    // Every rank must take the same path: either all exchange addresses now,
    // or all (also those already on `worst`) reopen in round 2, so the
    // bootstrap collectives stay in step.
    if (agreed) {
      NICQ_RETURN_IF_ERROR(ExchangeAddresses(boot));
      return shm_.Open(boot, peers_, boot.Rank()).WithContext("shm transport");
    }
    if (round == 1) return Error(Code::kIntern, "ranks could not agree on a libfabric provider");
    Close();
    chosen = worst;
  }
  return Error(Code::kIntern, "unreachable");
}

Status Fabric::ExchangeAddresses(Bootstrap& boot) {
  AddrBlob mine = {};
  std::size_t len = sizeof mine.name;
  int rc = fi_getname(&ep_->fid, mine.name, &len);
  if (rc) return FiError("fi_getname", provider_, rc);
  mine.len = std::uint32_t(len);
  mine.pid = getpid();
  mine.host_hash = NodeHash(boot.Rank());
  mine.pid_space = PidSpaceId();
  std::vector<std::uint8_t> all;
  NICQ_RETURN_IF_ERROR(boot.Allgather(&mine, sizeof mine, all));
  const int n = boot.Size();
  peers_.assign(n, PeerInfo{});
  for (int r = 0; r < n; ++r) {
    AddrBlob b;
    std::memcpy(&b, all.data() + std::size_t(r) * sizeof b, sizeof b);
    fi_addr_t a = FI_ADDR_UNSPEC;
    rc = fi_av_insert(av_, b.name, 1, &a, 0, nullptr);
    if (rc != 1) return Error(Code::kIntern, "fi_av_insert(rank " + std::to_string(r) + ") failed");
    peers_[r].addr = a;
    peers_[r].pid = b.pid;
    peers_[r].same_node = b.host_hash == mine.host_hash;
    peers_[r].node_hash = b.host_hash;
    peers_[r].pid_visible = mine.pid_space != 0 && b.pid_space == mine.pid_space;
  }
  return Status::Ok();
}

Status Fabric::RegisterForRead(const void* buf, std::size_t len, fid_mr** mr, std::uint64_t* raddr,
                               std::uint64_t* key) {
  std::uint64_t want_key = (mr_mode_ & FI_MR_PROV_KEY) ? 0 : next_key_++;
  // Where registration is by whole pages (verbs), the region is the pages
  // around the buffer; the peer's address is the buffer's own (virtual
  // addresses) or its offset in the region.
  const PageSpan pages = RegistersWholePages(provider_) ? PagesAround(buf, len)
                                                        : PageSpan{const_cast<void*>(buf), len};
  const void* reg = pages.base;
  const std::size_t reg_len = pages.len;
  int rc = fi_mr_reg(domain_, reg, reg_len, FI_REMOTE_READ, 0, want_key, 0, mr, nullptr);
  if (rc) return FiError("fi_mr_reg", std::to_string(len) + " bytes", rc);
  if (mr_mode_ & FI_MR_ENDPOINT) {
    if ((rc = fi_mr_bind(*mr, &ep_->fid, 0)) || (rc = fi_mr_enable(*mr))) {
      fi_close(&(*mr)->fid);
      return FiError("fi_mr_bind", "ep", rc);
    }
  }
  *key = fi_mr_key(*mr);
  *raddr = (mr_mode_ & FI_MR_VIRT_ADDR) ? reinterpret_cast<std::uint64_t>(buf)
                                        : static_cast<std::uint64_t>(static_cast<const char*>(buf) -
                                                                     static_cast<const char*>(reg));
  return Status::Ok();
}

void* Fabric::DescOf(fid_mr* mr) const {
  return mr ? fi_mr_desc(mr) : nullptr;
}

void Fabric::Close() {
  shm_.Close();
  if (ep_) fi_close(&ep_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) fi_freeinfo(info_);
  ep_ = nullptr;
  cq_ = nullptr;
  av_ = nullptr;
  domain_ = nullptr;
  fabric_ = nullptr;
  info_ = nullptr;
}

}  // namespace nicq::transport
