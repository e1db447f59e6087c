// getinfo of a persona: the core provider's infos, re-labelled with the
// persona's name and rewritten to the target NIC's contract (caps, mr_mode
// variants, progress, limits), after refusing hints the target refuses.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {

void fatal(const Spec& spec, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "%s: ", spec.name);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  std::fflush(stderr);
  std::abort();
}

void note(const Spec& spec, const char* fmt, ...) {
  if (!std::getenv("NICQ_PERSONA_VERBOSE")) return;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "%s: ", spec.name);
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

namespace {

constexpr uint64_t kBasicMap = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;

// The mr_mode variants the target offers to hints supporting hint_mode
// (hint_mode ~0 when the app gave no domain hints), in the target's order.
std::vector<uint64_t> mr_variants(const Spec& spec, uint64_t hint_mode, bool have_hints) {
  std::vector<uint64_t> out;
  if (spec.cxi) {
    // cxip_info.c: every info carries FI_MR_ENDPOINT; provider keys first.
    const uint64_t prov = FI_MR_ENDPOINT | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    const uint64_t client = FI_MR_ENDPOINT | FI_MR_ALLOCATED;
    if ((hint_mode & prov) == prov) out.push_back(prov);
    if ((hint_mode & client) == client) out.push_back(client);
  } else {
    // verbs_info.c: OFI_MR_BASIC_MAP | FI_MR_LOCAL; rxm_init.c rxm_getinfo:
    // an app that supports FI_MR_LOCAL gets that info first, then a copy
    // without it; any other app only the copy without it.
    if ((hint_mode & kBasicMap) != kBasicMap) return out;
    if (have_hints && (hint_mode & FI_MR_LOCAL)) out.push_back(kBasicMap | FI_MR_LOCAL);
    out.push_back(kBasicMap);
  }
  return out;
}

bool hints_refused(const Spec& spec, const fi_info* hints) {
  if (!hints) return false;
  if (hints->ep_attr && hints->ep_attr->type != FI_EP_UNSPEC && hints->ep_attr->type != FI_EP_RDM)
    return true;
  if (hints->caps & (spec.forbidden_caps | ~spec.caps)) return true;
  if (hints->domain_attr && spec.cxi) {
    const auto* d = hints->domain_attr;
    if (d->data_progress == FI_PROGRESS_AUTO || d->control_progress == FI_PROGRESS_AUTO)
      return true;
    if (d->cq_data_size > spec.cq_data_size) return true;
  }
  return false;
}

void strip_for_core(const Spec& spec, fi_info* h) {
  std::free(h->fabric_attr->prov_name);
  h->fabric_attr->prov_name = strdup(spec.core_name);
  h->fabric_attr->prov_version = 0;
  h->domain_attr->mr_mode = static_cast<int>(spec.core_mr_mode);
  h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
  h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
  h->domain_attr->mr_key_size = 0;
  h->domain_attr->cq_data_size = 0;
  h->domain_attr->mr_iov_limit = 0;
  h->ep_attr->type = FI_EP_RDM;
  if (h->tx_attr) h->tx_attr->op_flags = 0;
  if (h->rx_attr) h->rx_attr->op_flags = 0;
}

}  // namespace

int getinfo(const Spec& spec, uint32_t version, const char* node, const char* service,
            uint64_t flags, const fi_info* hints, fi_info** info) {
  *info = nullptr;
  if (hints_refused(spec, hints)) return -FI_ENODATA;
  const bool have_domain_hints = hints && hints->domain_attr;
  const uint64_t hint_mode =
      have_domain_hints ? static_cast<uint64_t>(hints->domain_attr->mr_mode) : ~0ull;
  // FI_MR_BASIC / FI_MR_SCALABLE are pre-1.5 enums, not mode bits: the
  // targets require bits such an app does not know about.
  if (have_domain_hints &&
      (hints->domain_attr->mr_mode == FI_MR_BASIC || hints->domain_attr->mr_mode == FI_MR_SCALABLE))
    return -FI_ENODATA;
  const auto variants = mr_variants(spec, hint_mode, hints != nullptr);
  if (variants.empty()) return -FI_ENODATA;

  fi_info* core_hints = hints ? fi_dupinfo(hints) : fi_allocinfo();
  if (!core_hints) return -FI_ENOMEM;
  strip_for_core(spec, core_hints);
  fi_info* core = nullptr;
  int ret = fi_getinfo(version, node, service, flags, core_hints, &core);
  fi_freeinfo(core_hints);
  if (ret) return ret;

  fi_info* head = nullptr;
  fi_info** tail = &head;
  for (fi_info* c = core; c; c = c->next) {
    for (uint64_t mode : variants) {
      fi_info* p = fi_dupinfo(c);
      if (!p) continue;
      p->next = nullptr;
      std::free(p->fabric_attr->prov_name);
      p->fabric_attr->prov_name = nullptr;  // libfabric names it after us
      p->caps &= spec.caps;
      if (p->tx_attr) p->tx_attr->caps &= spec.caps;
      if (p->rx_attr) p->rx_attr->caps &= spec.caps;
      p->domain_attr->mr_mode = static_cast<int>(mode);
      p->domain_attr->cq_data_size = spec.cq_data_size;
      if (spec.cxi) {
        p->domain_attr->data_progress = FI_PROGRESS_MANUAL;
        p->domain_attr->control_progress = FI_PROGRESS_MANUAL;
        p->domain_attr->mr_key_size = (mode & FI_MR_PROV_KEY) ? 8 : 4;
        p->domain_attr->mr_iov_limit = 1;
        if (p->tx_attr) p->tx_attr->rma_iov_limit = 1;
      }
      *tail = p;
      tail = &p->next;
    }
  }
  fi_freeinfo(core);
  if (!head) return -FI_ENODATA;
  *info = head;
  return 0;
}

fi_info* core_info_for(const Spec& spec, const fi_info* info) {
  fi_info* h = fi_dupinfo(info);
  if (!h) return nullptr;
  const uint64_t tx_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
  const uint64_t rx_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
  strip_for_core(spec, h);
  fi_info* core = nullptr;
  int ret =
      fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), nullptr, nullptr, 0, h, &core);
  fi_freeinfo(h);
  if (ret || !core) return nullptr;
  if (core->next) {
    fi_freeinfo(core->next);
    core->next = nullptr;
  }
  if (core->tx_attr) core->tx_attr->op_flags = tx_flags;
  if (core->rx_attr) core->rx_attr->op_flags = rx_flags;
  return core;
}

}  // namespace nicq::persona
