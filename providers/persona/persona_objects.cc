// Fabric, domain, counter and CQ of a persona: core objects whose ops
// tables are replaced by per-object copies (see persona.h). Every replaced
// entry first runs Domain::progress, the "software progress" that the
// target NIC gives only inside the application's calls.
#include <cstring>

#include "providers/persona/persona.h"
#include "providers/persona/persona_ext.h"

namespace nicq::persona {
namespace {

const Spec* g_spec = nullptr;  // one persona per shared library

template <class T>
void copy_table(T* dst, const T* src) {
  std::memset(dst, 0, sizeof(T));
  std::memcpy(dst, src, src->size < sizeof(T) ? src->size : sizeof(T));
  dst->size = sizeof(T);
}

// ---- domain ----
Domain* dom_of_ops(fid_domain* dom) {
  Domain* d = owner_of(dom->ops, &Domain::ops);
  d->progress();
  return d;
}

int d_cq_open(fid_domain* dom, fi_cq_attr* attr, fid_cq** cq, void* ctx) {
  Domain* d = dom_of_ops(dom);
  int ret = d->core_ops->cq_open(dom, attr, cq, ctx);
  if (ret) return ret;
  return wrap_queue(d, *cq, attr ? attr->format : FI_CQ_FORMAT_UNSPEC);
}

int d_cntr_open(fid_domain* dom, fi_cntr_attr* attr, fid_cntr** cntr, void* ctx) {
  Domain* d = dom_of_ops(dom);
  int ret = d->core_ops->cntr_open(dom, attr, cntr, ctx);
  if (ret) return ret;
  return wrap_counter(d, *cntr);
}

int d_endpoint2(fid_domain* dom, fi_info* info, fid_ep** ep, uint64_t flags, void* ctx) {
  Domain* d = dom_of_ops(dom);
  if (!info) return -FI_EINVAL;
  fi_info* core = core_info_for(*d->spec, info);
  if (!core) return -FI_ENODATA;
  int ret = flags ? d->core_ops->endpoint2(dom, core, ep, flags, ctx)
                  : d->core_ops->endpoint(dom, core, ep, ctx);
  fi_freeinfo(core);
  if (ret) return ret;
  return wrap_ep(d, *ep);
}

int d_endpoint(fid_domain* dom, fi_info* info, fid_ep** ep, void* ctx) {
  return d_endpoint2(dom, info, ep, 0, ctx);
}

int d_scalable_ep(fid_domain*, fi_info*, fid_ep**, void*) {
  return -FI_ENOSYS;
}

int d_query_atomic(fid_domain* dom, fi_datatype dt, fi_op op, fi_atomic_attr* attr,
                   uint64_t flags) {
  Domain* d = dom_of_ops(dom);
  int ret = d->core_ops->query_atomic(dom, dt, op, attr, flags);
  if (!ret && d->spec->amo_max_count && attr->count > d->spec->amo_max_count)
    attr->count = d->spec->amo_max_count;
  return ret;
}

Domain* dom_of_mr(fid* f) {
  auto* dom = reinterpret_cast<fid_domain*>(f);
  return owner_of(dom->mr, &Domain::mr_ops);
}
int d_mr_reg(fid* f, const void* buf, size_t len, uint64_t access, uint64_t offset,
             uint64_t requested_key, uint64_t flags, fid_mr** mr, void* ctx) {
  iovec iov{const_cast<void*>(buf), len};
  return mr_reg(dom_of_mr(f), &iov, 1, access, requested_key, flags, mr, ctx);
}
int d_mr_regv(fid* f, const iovec* iov, size_t count, uint64_t access, uint64_t offset,
              uint64_t requested_key, uint64_t flags, fid_mr** mr, void* ctx) {
  return mr_reg(dom_of_mr(f), iov, count, access, requested_key, flags, mr, ctx);
}
int d_mr_regattr(fid* f, const fi_mr_attr* attr, uint64_t flags, fid_mr** mr) {
  return mr_reg(dom_of_mr(f), attr->mr_iov, attr->iov_count, attr->access, attr->requested_key,
                flags, mr, attr->context);
}

int get_dwq_depth(fid* f, size_t* depth) {
  if (!f || f->fclass != FI_CLASS_DOMAIN || !depth) return -FI_EINVAL;
  *depth = dwq_depth();
  return 0;
}
int get_core_provider(fid* f, const char** name) {
  if (!f || f->fclass != FI_CLASS_DOMAIN || !name) return -FI_EINVAL;
  *name = owner_of(f->ops, &Domain::fid_ops)->spec->core_name;
  return 0;
}
nicq_persona_dom_ops g_dom_ext = {sizeof(nicq_persona_dom_ops), get_dwq_depth,
                                  get_core_provider};

int d_ops_open(fid* f, const char* name, uint64_t flags, void** ops, void* ctx) {
  Domain* d = owner_of(f->ops, &Domain::fid_ops);
  if (d->spec->cxi && name && std::strcmp(name, NICQ_PERSONA_DOM_OPS) == 0) {
    *ops = &g_dom_ext;
    return 0;
  }
  return d->core_fid_ops->ops_open ? d->core_fid_ops->ops_open(f, name, flags, ops, ctx)
                                   : -FI_ENOSYS;
}

int d_control(fid* f, int command, void* arg) {
  Domain* d = owner_of(f->ops, &Domain::fid_ops);
  d->progress();
  if (d->spec->cxi && command == FI_QUEUE_WORK) {
    if (!arg) return -FI_EINVAL;
    return queue_work(d, static_cast<fi_deferred_work*>(arg));
  }
  if (d->spec->cxi && command == FI_FLUSH_WORK) return flush_work(d);
  if (command == FI_QUEUE_WORK || command == FI_FLUSH_WORK) return -FI_ENOSYS;
  return d->core_fid_ops->control(f, command, arg);
}

int d_close(fid* f) {
  Domain* d = owner_of(f->ops, &Domain::fid_ops);
  if (d->spec->cxi) flush_work(d);
  close_slow_sends(d);
  if (d->sink && fi_close(&d->sink->fid) == 0) d->sink = nullptr;
  int ret = d->core_fid_ops->close(f);
  if (ret) return ret;
  dwq_detach(d);
  for (TriggeredSend* s : d->sends) delete s;
  for (fi_deferred_work* w : d->owned_work) std::free(w);
  fi_freeinfo(d->info);
  delete d;
  return 0;
}

int f_domain2(fid_fabric* fab, fi_info* info, fid_domain** dom, uint64_t flags, void* ctx) {
  Fabric* F = owner_of(fab->ops, &Fabric::ops);
  const Spec& spec = *F->spec;
  fi_info* core = core_info_for(spec, info);
  if (!core) return -FI_ENODATA;
  int ret = flags ? F->core_ops->domain2(fab, core, dom, flags, ctx)
                  : F->core_ops->domain(fab, core, dom, ctx);
  fi_freeinfo(core);
  if (ret) return ret;
  fid_domain* cd = *dom;
  Domain* d = new Domain();
  d->self = cd;
  d->fabric = F;
  d->spec = &spec;
  d->info = fi_dupinfo(info);
  const uint64_t mode = static_cast<uint64_t>(info->domain_attr->mr_mode);
  d->prov_key = mode & FI_MR_PROV_KEY;
  d->mr_local = mode & FI_MR_LOCAL;
  d->next_key = 1;
  d->core_fid_ops = cd->fid.ops;
  d->core_ops = cd->ops;
  d->core_mr_ops = cd->mr;
  copy_table(&d->fid_ops, cd->fid.ops);
  d->fid_ops.close = d_close;
  d->fid_ops.control = d_control;
  d->fid_ops.ops_open = d_ops_open;
  copy_table(&d->ops, cd->ops);
  d->ops.cq_open = d_cq_open;
  d->ops.cntr_open = d_cntr_open;
  d->ops.endpoint = d_endpoint;
  d->ops.endpoint2 = d_endpoint2;
  d->ops.scalable_ep = d_scalable_ep;
  d->ops.query_atomic = d_query_atomic;
  copy_table(&d->mr_ops, cd->mr);
  d->mr_ops.reg = d_mr_reg;
  d->mr_ops.regv = d_mr_regv;
  d->mr_ops.regattr = d_mr_regattr;
  cd->fid.ops = &d->fid_ops;
  cd->ops = &d->ops;
  cd->mr = &d->mr_ops;
  if (spec.cxi) {
    if (int r = dwq_attach(d)) {
      d_close(&cd->fid);
      *dom = nullptr;
      return r;
    }
  }
  return 0;
}

int f_domain(fid_fabric* fab, fi_info* info, fid_domain** dom, void* ctx) {
  return f_domain2(fab, info, dom, 0, ctx);
}

int f_close(fid* f) {
  Fabric* F = owner_of(f->ops, &Fabric::fid_ops);
  int ret = F->core_fid_ops->close(f);
  if (ret) return ret;
  delete F;
  return 0;
}

int prov_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* ctx) {
  const Spec& spec = *g_spec;
  fi_fabric_attr core_attr = *attr;
  core_attr.prov_name = const_cast<char*>(spec.core_name);
  int ret = fi_fabric(&core_attr, fabric, ctx);
  if (ret) return ret;
  fid_fabric* cf = *fabric;
  Fabric* F = new Fabric();
  F->self = cf;
  F->spec = &spec;
  F->core_fid_ops = cf->fid.ops;
  F->core_ops = cf->ops;
  copy_table(&F->fid_ops, cf->fid.ops);
  F->fid_ops.close = f_close;
  copy_table(&F->ops, cf->ops);
  F->ops.domain = f_domain;
  F->ops.domain2 = f_domain2;
  cf->fid.ops = &F->fid_ops;
  cf->ops = &F->ops;
  return 0;
}

int prov_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags,
                 const fi_info* hints, fi_info** info) {
  return getinfo(*g_spec, version, node, service, flags, hints, info);
}

void prov_cleanup() {}

}  // namespace

Cntr* Domain::cntr_of(fid* f) {
  if (!f || f->fclass != FI_CLASS_CNTR) return nullptr;
  std::lock_guard<std::recursive_mutex> g(lock);
  for (Cntr* c : cntrs)
    if (&c->self->fid == f) return c;
  return nullptr;
}

Ep* Domain::ep_of(fid* f) {
  if (!f || f->fclass != FI_CLASS_EP) return nullptr;
  std::lock_guard<std::recursive_mutex> g(lock);
  for (Ep* e : eps)
    if (&e->self->fid == f) return e;
  return nullptr;
}

// The target NIC's software progress: runs inside every application call on
// the domain. Events counted by shadows reach the app's counters here (and
// may fire deferred work gated on them); fired deferred work gives its
// entries back to the service.
//
// A thread that finds another one progressing leaves it the work: waiting
// would invert lock order with the core's own locks (the core may call into
// this persona while holding them).
void Domain::progress() {
  if (!spec->cxi) return;
  std::unique_lock<std::recursive_mutex> g(lock, std::try_to_lock);
  if (!g.owns_lock()) return;
  progress_slow_sends(this);
  for (Cntr* c : cntrs) {
    if (!c->shadow) continue;
    const uint64_t v = fi_cntr_read(c->shadow);
    if (v != c->shadow_seen) {
      c->core_ops->add(c->self, v - c->shadow_seen);
      c->shadow_seen = v;
    }
    const uint64_t e = fi_cntr_readerr(c->shadow);
    if (e != c->shadow_err_seen) {
      c->core_ops->adderr(c->self, e - c->shadow_err_seen);
      c->shadow_err_seen = e;
    }
  }
  dwq_release_fired(this);
}

fi_provider make_provider(const Spec& spec) {
  g_spec = &spec;
  fi_provider p{};
  p.version = FI_VERSION(1, 0);
  p.fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
  p.name = spec.name;
  p.getinfo = prov_getinfo;
  p.fabric = prov_fabric;
  p.cleanup = prov_cleanup;
  return p;
}

}  // namespace nicq::persona
