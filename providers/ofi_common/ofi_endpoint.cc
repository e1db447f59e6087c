#include "providers/ofi_common/ofi_endpoint.h"

#include <unistd.h>

#include <cstring>

#include "core/fabric_env.h"
#include "core/log.h"
#include "providers/ofi_common/atomic_map.h"
#include "providers/ofi_common/ofi_error.h"
#include "providers/persona/persona_ext.h"

namespace nicq::ofi {
namespace {

constexpr std::uint32_t kWireMagic = 0x6e6f6669;  // "nofi"
constexpr std::size_t kHeader = 24;               // magic, name length, doorbell base, doorbell key

fi_info* MakeHints(const EndpointOptions& o, bool atomics) {
  fi_info* hints = fi_allocinfo();
  if (hints == nullptr) return nullptr;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | FI_RMA | FI_DIRECTED_RECV | FI_READ | FI_WRITE | FI_SEND | FI_RECV |
                FI_REMOTE_READ | FI_REMOTE_WRITE;
  if (atomics) hints->caps |= FI_ATOMIC;
  if (o.triggers) hints->caps |= FI_TRIGGER | FI_RMA_EVENT;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;  // our contexts are fi_context2-sized
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->domain_attr->data_progress = o.auto_progress ? FI_PROGRESS_AUTO : FI_PROGRESS_UNSPEC;
  hints->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
  // Every registration mode we honour: virtual addresses or offsets,
  // registering only allocated memory, binding MRs to the endpoint, and
  // (where peers need not compute keys) provider-chosen keys. FI_MR_LOCAL is
  // not offered: our ops carry no local descriptors, and ofi_rxm (the
  // verbs stack) registers on our behalf when the app does not set it
  // (prov/rxm/src/rxm_init.c, rxm_getinfo).
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_ENDPOINT;
  if (!o.client_keys) hints->domain_attr->mr_mode |= FI_MR_PROV_KEY;
  if (o.remote_cq_data) hints->domain_attr->cq_data_size = 8;
  if (!o.provider.empty()) hints->fabric_attr->prov_name = strdup(o.provider.c_str());
  return hints;
}

}  // namespace

Status EncodeWire(const WireAddress& in, std::vector<std::uint8_t>& out) {
  if (in.name.size() + kHeader > kWireBlobBytes)
    return Error(Code::kIntern, "EncodeWire: endpoint name of " + std::to_string(in.name.size()) +
                                    " bytes does not fit the wire blob");
  out.assign(kWireBlobBytes, 0);
  const std::uint32_t len = static_cast<std::uint32_t>(in.name.size());
  std::memcpy(out.data(), &kWireMagic, 4);
  std::memcpy(out.data() + 4, &len, 4);
  std::memcpy(out.data() + 8, &in.doorbell_base, 8);
  std::memcpy(out.data() + 16, &in.doorbell_key, 8);
  std::memcpy(out.data() + kHeader, in.name.data(), in.name.size());
  return Status::Ok();
}

Status DecodeWire(std::span<const std::uint8_t> blob, WireAddress* out) {
  std::uint32_t magic = 0, len = 0;
  if (blob.size() < kHeader) return Error(Code::kArg, "DecodeWire: blob shorter than its header");
  std::memcpy(&magic, blob.data(), 4);
  std::memcpy(&len, blob.data() + 4, 4);
  if (magic != kWireMagic || kHeader + std::size_t{len} > blob.size())
    return Error(Code::kArg, "DecodeWire: not an ofi backend address (bad magic or length)");
  std::memcpy(&out->doorbell_base, blob.data() + 8, 8);
  std::memcpy(&out->doorbell_key, blob.data() + 16, 8);
  out->name.assign(blob.begin() + kHeader, blob.begin() + kHeader + len);
  return Status::Ok();
}

Status OfiEndpoint::Open(const EndpointOptions& options, std::unique_ptr<OfiEndpoint>* out) {
  PrepareFabricEnvironment(options.provider);
  std::unique_ptr<OfiEndpoint> ep(new OfiEndpoint());
  NICQ_RETURN_IF_ERROR(ep->OpenObjects(options));
  *out = std::move(ep);
  return Status::Ok();
}

Status OfiEndpoint::OpenObjects(const EndpointOptions& o) {
  // Atomics are optional (tcp;ofi_rxm only offers them when asked): try
  // with them first, then without.
  int ret = -FI_ENODATA;
  for (bool atomics : {true, false}) {
    fi_info* hints = MakeHints(o, atomics);
    if (hints == nullptr) return Error(Code::kNoMem, "fi_allocinfo: out of memory");
    ret = fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info_);
    fi_freeinfo(hints);
    if (ret == 0) break;
  }
  NICQ_RETURN_IF_ERROR(Check(ret, "fi_getinfo",
                             "provider=" + o.provider + ", RDM, tagged+RMA" +
                                 (o.triggers ? "+FI_TRIGGER+FI_RMA_EVENT" : "")));
  if (std::strncmp(info_->fabric_attr->prov_name, "shm", 3) == 0) RemoveStaleShmRegions();
  NICQ_RETURN_IF_ERROR(Check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric",
                             info_->fabric_attr->prov_name));
  NICQ_RETURN_IF_ERROR(
      Check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain", info_->domain_attr->name));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  NICQ_RETURN_IF_ERROR(Check(fi_av_open(domain_, &av_attr, &av_, nullptr), "fi_av_open"));
  fi_cq_attr cq_attr{};
  cq_attr.size = o.queue_size;
  cq_attr.format = FI_CQ_FORMAT_DATA;
  // shm (1.17) accepts a wait object but its fi_cq_sread is a sched_yield
  // loop for the whole timeout: a progress thread "blocked" there burnt half
  // a core per idle process. It gets no wait object and naps instead.
  const bool yield_wait = std::strncmp(info_->fabric_attr->prov_name, "shm", 3) == 0;
  cq_attr.wait_obj = o.cq_wait_object && !yield_wait ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
  ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  if (ret != 0 && o.cq_wait_object) {
    // No wait object here: the progress thread blocks with short sleeps instead.
    cq_attr.wait_obj = FI_WAIT_NONE;
    ret = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  }
  NICQ_RETURN_IF_ERROR(Check(ret, "fi_cq_open", "format=data"));
  cq_waitable_ = cq_attr.wait_obj != FI_WAIT_NONE;
  NICQ_RETURN_IF_ERROR(Check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint"));
  NICQ_RETURN_IF_ERROR(Check(fi_ep_bind(ep_, &av_->fid, 0), "fi_ep_bind", "av"));
  NICQ_RETURN_IF_ERROR(
      Check(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind", "cq"));
  NICQ_RETURN_IF_ERROR(Check(fi_enable(ep_), "fi_enable"));
  page_aligned_mr_ = RegistersWholePages(info_->fabric_attr->prov_name);
  if (page_aligned_mr_ && !virt_addr())
    return Error(Code::kUnsupportedOperation,
                 std::string(info_->fabric_attr->prov_name) +
                     ": page-aligned registration needs FI_MR_VIRT_ADDR remote addressing");
  NICQ_LOG(kInfo, kProvider,
           "offload endpoint on %s (%s progress, mr_mode 0x%x, %zu-byte keys, atomics %s)",
           info_->fabric_attr->prov_name, manual_progress() ? "manual" : "auto",
           info_->domain_attr->mr_mode, mr_key_bytes(), has_atomics() ? "yes" : "no");
  return Status::Ok();
}

OfiEndpoint::~OfiEndpoint() {
  if (ep_) fi_close(&ep_->fid);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) fi_freeinfo(info_);
}

std::size_t OfiEndpoint::inject_size() const {
  return UsableInjectSize(provider_name(), info_->tx_attr->inject_size);
}

Status OfiEndpoint::Name(std::vector<std::uint8_t>& out) const {
  std::size_t len = 0;
  int ret = fi_getname(&ep_->fid, nullptr, &len);
  if (ret != -FI_ETOOSMALL && ret != 0) return Check(ret, "fi_getname", "size query");
  out.resize(len);
  return Check(fi_getname(&ep_->fid, out.data(), &len), "fi_getname");
}

Status OfiEndpoint::InsertPeers(std::span<const WireAddress> peers) {
  peers_.assign(peers.size(), FI_ADDR_NOTAVAIL);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    int n = fi_av_insert(av_, peers[i].name.data(), 1, &peers_[i], 0, nullptr);
    if (n != 1) return Check(n < 0 ? n : -FI_EINVAL, "fi_av_insert", "peer " + std::to_string(i));
  }
  return Status::Ok();
}

Status OfiEndpoint::RegisterMr(void* addr, std::size_t len, std::uint64_t access, std::uint64_t key,
                               fid_mr** out, fid_cntr* counter) const {
  const std::string what = "len=" + std::to_string(len) + ", key=" + std::to_string(key);
  if (page_aligned_mr_) {
    // Remote addresses are virtual (FI_MR_VIRT_ADDR, checked at open), so
    // peers still target `addr` inside the pages around it.
    const PageSpan pages = PagesAround(addr, len);
    addr = pages.base;
    len = pages.len;
  }
  fid_mr* mr = nullptr;
  NICQ_RETURN_IF_ERROR(
      Check(fi_mr_reg(domain_, addr, len, access, 0, prov_key() ? 0 : key, 0, &mr, nullptr),
            "fi_mr_reg", what));
  // fi_mr(3) "FI_MR_ENDPOINT": bind to the endpoint, then enable; a counter
  // bound for remote writes must be bound before the enable as well.
  Status s = Status::Ok();
  if (counter != nullptr)
    s = Check(fi_mr_bind(mr, &counter->fid, FI_REMOTE_WRITE), "fi_mr_bind", "counter, " + what);
  if (s.ok() && mr_endpoint()) {
    s = Check(fi_mr_bind(mr, &ep_->fid, 0), "fi_mr_bind", "endpoint, " + what);
    if (s.ok()) s = Check(fi_mr_enable(mr), "fi_mr_enable", what);
  }
  if (!s.ok()) {
    fi_close(&mr->fid);
    return s;
  }
  *out = mr;
  return Status::Ok();
}

// The persona extension (persona_ext.h), or null where the domain has none.
static nicq_persona_dom_ops* PersonaOps(fid_domain* domain) {
  nicq_persona_dom_ops* ops = nullptr;
  if (fi_open_ops(&domain->fid, NICQ_PERSONA_DOM_OPS, 0, reinterpret_cast<void**>(&ops), nullptr) !=
          0 ||
      ops == nullptr || ops->size < sizeof(nicq_persona_dom_ops))
    return nullptr;
  return ops;
}

std::size_t OfiEndpoint::DeferredWorkDepth(bool* known) const {
  *known = false;
  nicq_persona_dom_ops* ops = PersonaOps(domain_);
  std::size_t depth = 0;
  if (ops == nullptr || ops->get_dwq_depth(&domain_->fid, &depth) != 0) return 0;
  *known = true;
  return depth;
}

std::string OfiEndpoint::CoreProvider() const {
  nicq_persona_dom_ops* ops = PersonaOps(domain_);
  const char* core = nullptr;
  if (ops != nullptr && ops->get_core_provider(&domain_->fid, &core) == 0 && core != nullptr)
    return core;
  return provider_name();
}

void OfiEndpoint::QueryAtomics(offload::Capabilities* caps) const {
  caps->atomics = false;
  if (!has_atomics()) return;
  std::size_t max_count = 0;
  for (int op = 0; op < kNumAtomicOps; ++op) {
    for (int t = 0; t < kNumAtomicTypes; ++t) {
      auto aop = static_cast<offload::AtomicOp>(op);
      auto at = static_cast<offload::AtomicType>(t);
      fi_atomic_attr attr{};
      if (fi_query_atomic(domain_, ToFiType(at), ToFiOp(aop), &attr, 0) != 0) continue;
      caps->AllowAtomic(aop, at);
      caps->atomics = true;
      if (max_count == 0 || attr.count < max_count) max_count = attr.count;
    }
  }
  caps->max_atomic_count = max_count;
}

bool OfiEndpoint::FetchesEveryAtomic(const offload::Capabilities& caps) const {
  if (!caps.atomics) return false;
  for (int op = 0; op < kNumAtomicOps; ++op) {
    for (int t = 0; t < kNumAtomicTypes; ++t) {
      auto aop = static_cast<offload::AtomicOp>(op);
      auto at = static_cast<offload::AtomicType>(t);
      if (!caps.SupportsAtomic(aop, at)) continue;
      fi_atomic_attr attr{};
      if (fi_query_atomic(domain_, ToFiType(at), ToFiOp(aop), &attr, FI_FETCH_ATOMIC) != 0 ||
          attr.count < caps.max_atomic_count)
        return false;
    }
  }
  return true;
}

}  // namespace nicq::ofi
