// Memory regions of a persona: the persona's own fid_mr objects.
//
// cxi (FI_MR_ENDPOINT): registered -> fi_mr_bind(mr, ep) -> fi_mr_enable;
// the core MR exists only once enabled, so a remote access before that
// fails at the target for real, and a local use is refused here. Counters
// bound to the MR are applied to the core MR at enable.
// verbs (FI_MR_LOCAL, page-granular registration): the core MR is made at
// registration; descriptors must cover the buffers they are used with.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {
namespace {

constexpr uint64_t kMrMagic = 0x6e69637170724d52ull;  // "nicqprMR"

Mr* mr_from(fid* f) {
  return owner_of(f->ops, &Mr::fid_ops);
}

int register_core(Mr* m) {
  Domain* d = m->dom;
  iovec iov{const_cast<char*>(m->base), m->len};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = m->access;
  attr.requested_key = m->key;
  int ret = d->core_mr_ops->regattr(&d->self->fid, &attr, m->flags, &m->core);
  if (ret) return ret;
  m->mr.key = m->key;
  return 0;
}

int mr_close(fid* f) {
  Mr* m = mr_from(f);
  Domain* d = m->dom;
  d->progress();
  if (m->core) {
    int ret = fi_close(&m->core->fid);
    if (ret) return ret;
  }
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->mrs.erase(m);
  }
  m->magic = 0;
  delete m;
  return 0;
}

int mr_bind(fid* f, fid* bfid, uint64_t flags) {
  Mr* m = mr_from(f);
  Domain* d = m->dom;
  d->progress();
  if (!d->spec->cxi) {
    // No FI_MR_ENDPOINT: counters are bound to the core MR directly.
    if (bfid->fclass == FI_CLASS_CNTR && m->core) return fi_mr_bind(m->core, bfid, flags);
    return -FI_EINVAL;
  }
  if (m->state == MrState::enabled) return -FI_EINVAL;
  if (bfid->fclass == FI_CLASS_EP) {
    Ep* e = d->ep_of(bfid);
    if (!e || m->ep) return -FI_EINVAL;
    m->ep = e;
    m->state = MrState::bound;
    return 0;
  }
  if (bfid->fclass == FI_CLASS_CNTR) {
    if (!d->cntr_of(bfid)) return -FI_EINVAL;
    m->cntr_binds.emplace_back(bfid, flags);
    return 0;
  }
  return -FI_EINVAL;
}

int mr_control(fid* f, int command, void* arg) {
  Mr* m = mr_from(f);
  Domain* d = m->dom;
  d->progress();
  if (command != FI_ENABLE || !d->spec->cxi)
    return m->core ? fi_control(&m->core->fid, command, arg) : -FI_ENOSYS;
  if (m->state == MrState::enabled) return 0;
  if (m->state != MrState::bound || !m->ep) {
    note(*d->spec, "fi_mr_enable before fi_mr_bind(mr, ep) refused");
    return -FI_EINVAL;
  }
  if (int ret = register_core(m)) return ret;
  for (auto& [cntr, flags] : m->cntr_binds) {
    if (int ret = fi_mr_bind(m->core, cntr, flags)) {
      fi_close(&m->core->fid);
      m->core = nullptr;
      return ret;
    }
  }
  m->state = MrState::enabled;
  return 0;
}

bool page_aligned(const void* p) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return reinterpret_cast<uintptr_t>(p) % page == 0;
}

}  // namespace

// Every page of [base, base+len) is mapped: mincore fails with ENOMEM on a
// range that has unmapped pages.
bool mapped(const void* base, size_t len) {
  if (len == 0) return true;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = reinterpret_cast<uintptr_t>(base) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(base) + len;
  unsigned char vec[256];
  while (start < end) {
    const size_t span = std::min<uintptr_t>((end - start + page - 1) / page, sizeof vec) * page;
    if (mincore(reinterpret_cast<void*>(start), span, vec) != 0) return false;
    start += span;
  }
  return true;
}

int mr_reg(Domain* d, const iovec* iov, size_t count, uint64_t access, uint64_t requested_key,
           uint64_t flags, fid_mr** out, void* context) {
  d->progress();
  const Spec& spec = *d->spec;
  if (count != 1) return -FI_EINVAL;  // the personas advertise mr_iov_limit 1 (cxi) / use one
  if (spec.cxi && !d->prov_key && requested_key > UINT32_MAX) {
    // fi_cxi(7) "Memory registration modes": client keys are 32 bits.
    note(spec, "client key 0x%llx does not fit 32 bits", (unsigned long long)requested_key);
    return -FI_EKEYREJECTED;
  }
  if (spec.verbs && (!page_aligned(iov[0].iov_base) ||
                     !page_aligned(static_cast<const char*>(iov[0].iov_base) + iov[0].iov_len))) {
    note(spec, "fi_mr_reg of %p+%zu is not page aligned", iov[0].iov_base, iov[0].iov_len);
    return -FI_EINVAL;
  }
  if (!mapped(iov[0].iov_base, iov[0].iov_len)) {
    // FI_MR_ALLOCATED (fi_mr(3), both targets advertise it): only memory
    // backed by mapped pages can be registered.
    note(spec, "fi_mr_reg of %p+%zu: not allocated memory (FI_MR_ALLOCATED)", iov[0].iov_base,
         iov[0].iov_len);
    return -FI_EINVAL;
  }
  Mr* m = new Mr();
  m->magic = kMrMagic;
  m->dom = d;
  m->base = static_cast<const char*>(iov[0].iov_base);
  m->len = iov[0].iov_len;
  m->access = access;
  m->flags = flags;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    // Provider keys: high bits set so an app that stores keys in 32 bits
    // fails visibly, as on cxi (64-bit provider keys).
    if (!d->prov_key)
      m->key = requested_key;
    else if (spec.key_encodes_base)
      m->key = make_base_key(m->base, d->next_key++);
    else
      m->key = (0x5eull << 56) | (d->next_key++ << 8);
  }
  std::memset(&m->fid_ops, 0, sizeof m->fid_ops);
  m->fid_ops.size = sizeof(fi_ops);
  m->fid_ops.close = mr_close;
  m->fid_ops.bind = mr_bind;
  m->fid_ops.control = mr_control;
  m->fid_ops.ops_open = [](fid*, const char*, uint64_t, void**, void*) { return -FI_ENOSYS; };
  m->mr.fid.fclass = FI_CLASS_MR;
  m->mr.fid.context = context;
  m->mr.fid.ops = &m->fid_ops;
  m->mr.mem_desc = m;
  m->mr.key = m->key;
  if (!spec.cxi) {
    if (int ret = register_core(m)) {
      delete m;
      return ret;
    }
    m->state = MrState::enabled;
  }
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->mrs.insert(m);
  }
  *out = &m->mr;
  return 0;
}

Mr* Domain::mr_of(void* desc) {
  std::lock_guard<std::recursive_mutex> g(lock);
  auto* m = static_cast<Mr*>(desc);
  return mrs.count(m) ? m : nullptr;
}

int translate_desc(Ep* e, void* desc, const void* buf, size_t len, void** core_desc) {
  Domain* d = e->dom;
  *core_desc = nullptr;
  if (!desc) {
    // fi_mr(3) FI_MR_LOCAL: local buffers need a registered descriptor.
    if (d->mr_local && len > 0) {
      note(*d->spec, "FI_MR_LOCAL: data op without a descriptor refused");
      return -FI_EINVAL;
    }
    return 0;
  }
  Mr* m = d->mr_of(desc);
  if (!m) {
    note(*d->spec, "descriptor %p is not a memory region of this domain", desc);
    return -FI_EINVAL;
  }
  if (d->spec->cxi && (m->state != MrState::enabled || m->ep != e)) {
    // fi_mr(3) FI_MR_ENDPOINT: an MR is usable once bound to the endpoint and enabled.
    note(*d->spec, "MR %p used before fi_mr_bind(mr, this ep) + fi_mr_enable", desc);
    return -FI_EINVAL;
  }
  const char* b = static_cast<const char*>(buf);
  if (len && (b < m->base || b + len > m->base + m->len)) {
    note(*d->spec, "descriptor does not cover %p+%zu", buf, len);
    return -FI_EINVAL;
  }
  *core_desc = m->core ? fi_mr_desc(m->core) : nullptr;
  return 0;
}

}  // namespace nicq::persona
