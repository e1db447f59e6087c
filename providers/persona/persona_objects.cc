// Fabric, domain, counter and CQ of a persona: core objects whose ops
// tables are replaced by per-object copies (see persona.h). Every replaced
// entry first runs Domain::progress, the "software progress" that the
// target NIC gives only inside the application's calls.
#include <time.h>

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

// ---- counter ----
Cntr* cntr_ops(fid_cntr* c) {
  Cntr* p = owner_of(c->ops, &Cntr::ops);
  p->dom->progress();
  return p;
}
uint64_t c_read(fid_cntr* c) {
  return cntr_ops(c)->core_ops->read(c);
}
uint64_t c_readerr(fid_cntr* c) {
  return cntr_ops(c)->core_ops->readerr(c);
}
// Writes do not progress: sockets itself calls fi_cntr_add/set on these
// counters from its own thread when deferred counter work fires, and that
// must not count as an application call.
const fi_ops_cntr* core_cntr(fid_cntr* c) {
  return owner_of(c->ops, &Cntr::ops)->core_ops;
}
int c_add(fid_cntr* c, uint64_t v) {
  return core_cntr(c)->add(c, v);
}
int c_set(fid_cntr* c, uint64_t v) {
  return core_cntr(c)->set(c, v);
}
int c_adderr(fid_cntr* c, uint64_t v) {
  return core_cntr(c)->adderr(c, v);
}
int c_seterr(fid_cntr* c, uint64_t v) {
  return core_cntr(c)->seterr(c, v);
}

// Waiting is itself an application call: progress runs on every poll, so a
// receive counted through a shadow advances while the app waits. Polls back
// off to 1 ms so a waiting thread never starves the core's own thread.
int c_wait(fid_cntr* c, uint64_t threshold, int timeout_ms) {
  Cntr* p = owner_of(c->ops, &Cntr::ops);
  const uint64_t err0 = p->core_ops->readerr(c);
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  long sleep_ns = 2000;
  for (;;) {
    p->dom->progress();
    if (p->core_ops->read(c) >= threshold) return 0;
    if (p->core_ops->readerr(c) != err0) return -FI_EAVAIL;
    if (timeout_ms >= 0) {
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      const long elapsed_ms =
          (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (elapsed_ms >= timeout_ms) return -FI_ETIMEDOUT;
    }
    timespec ts{0, sleep_ns};
    nanosleep(&ts, nullptr);
    if (sleep_ns < 1000000) sleep_ns *= 2;
  }
}

int cntr_close(fid* f) {
  Cntr* p = owner_of(f->ops, &Cntr::fid_ops);
  Domain* d = p->dom;
  std::lock_guard<std::recursive_mutex> g(d->lock);
  int ret = p->core_fid_ops->close(f);
  if (ret) return ret;
  if (p->shadow) fi_close(&p->shadow->fid);
  d->cntrs.erase(p);
  d->dwq_pending.erase(p);
  delete p;
  return 0;
}

int wrap_cntr(Domain* d, fid_cntr* core) {
  Cntr* p = new Cntr();
  p->self = core;
  p->dom = d;
  p->core_fid_ops = core->fid.ops;
  p->core_ops = core->ops;
  copy_table(&p->fid_ops, core->fid.ops);
  p->fid_ops.close = cntr_close;
  copy_table(&p->ops, core->ops);
  p->ops.read = c_read;
  p->ops.readerr = c_readerr;
  p->ops.add = c_add;
  p->ops.set = c_set;
  p->ops.wait = c_wait;
  p->ops.adderr = c_adderr;
  p->ops.seterr = c_seterr;
  core->fid.ops = &p->fid_ops;
  core->ops = &p->ops;
  std::lock_guard<std::recursive_mutex> g(d->lock);
  d->cntrs.insert(p);
  return 0;
}

// ---- CQ ----
size_t entry_size(fi_cq_format f) {
  switch (f) {
    case FI_CQ_FORMAT_MSG:
      return sizeof(fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA:
      return sizeof(fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED:
      return sizeof(fi_cq_tagged_entry);
    default:
      return sizeof(fi_cq_entry);
  }
}

// Completions of deferred sends carry the persona's record as context:
// give the app its own context back, and drop those it did not ask for.
ssize_t fix_entries(Cq* q, char* buf, ssize_t n, fi_addr_t* src) {
  Domain* d = q->dom;
  if (n <= 0) return n;
  std::lock_guard<std::recursive_mutex> g(d->lock);
  if (d->sends.empty()) return n;
  const size_t esz = q->entry_size;
  ssize_t out = 0;
  for (ssize_t i = 0; i < n; i++) {
    char* e = buf + i * esz;
    void* ctx;
    std::memcpy(&ctx, e, sizeof ctx);  // op_context is the first field of every format
    auto* rec = static_cast<TriggeredSend*>(ctx);
    bool keep = true;
    if (d->sends.count(rec)) {
      keep = rec->app_wants_completion;
      std::memcpy(e, &rec->app_context, sizeof ctx);
      d->sends.erase(rec);
      delete rec;
    }
    if (!keep) continue;
    if (out != i) {
      std::memmove(buf + out * esz, e, esz);
      if (src) src[out] = src[i];
    }
    out++;
  }
  return out ? out : -FI_EAGAIN;
}

Cq* cq_ops(fid_cq* c) {
  Cq* q = owner_of(c->ops, &Cq::ops);
  q->dom->progress();
  return q;
}
// Completions the persona made itself come first.
ssize_t read_synthetic(Cq* q, void* buf, size_t count, fi_addr_t* src) {
  std::lock_guard<std::recursive_mutex> g(q->dom->lock);
  size_t n = 0;
  for (; n < count && !q->synthetic.empty(); n++) {
    std::memcpy(static_cast<char*>(buf) + n * q->entry_size, &q->synthetic.front(), q->entry_size);
    if (src) src[n] = FI_ADDR_NOTAVAIL;
    q->synthetic.pop_front();
  }
  return static_cast<ssize_t>(n);
}
ssize_t q_read(fid_cq* c, void* buf, size_t count) {
  Cq* q = cq_ops(c);
  if (ssize_t n = read_synthetic(q, buf, count, nullptr)) return n;
  return fix_entries(q, static_cast<char*>(buf), q->core_ops->read(c, buf, count), nullptr);
}
ssize_t q_readfrom(fid_cq* c, void* buf, size_t count, fi_addr_t* src) {
  Cq* q = cq_ops(c);
  if (ssize_t n = read_synthetic(q, buf, count, src)) return n;
  return fix_entries(q, static_cast<char*>(buf), q->core_ops->readfrom(c, buf, count, src), src);
}
ssize_t q_readerr(fid_cq* c, fi_cq_err_entry* buf, uint64_t flags) {
  Cq* q = cq_ops(c);
  ssize_t ret = q->core_ops->readerr(c, buf, flags);
  if (ret > 0) {
    std::lock_guard<std::recursive_mutex> g(q->dom->lock);
    auto* rec = static_cast<TriggeredSend*>(buf->op_context);
    if (q->dom->sends.count(rec)) {
      buf->op_context = rec->app_context;
      q->dom->sends.erase(rec);
      delete rec;
    }
  }
  return ret;
}
// Blocking reads poll with progress (see c_wait).
ssize_t q_sreadfrom(fid_cq* c, void* buf, size_t count, fi_addr_t* src, const void* cond,
                    int timeout_ms) {
  long sleep_ns = 2000;
  long waited_ns = 0;
  for (;;) {
    ssize_t n = src ? q_readfrom(c, buf, count, src) : q_read(c, buf, count);
    if (n != -FI_EAGAIN) return n;
    if (timeout_ms >= 0 && waited_ns / 1000000 >= timeout_ms) return -FI_EAGAIN;
    timespec ts{0, sleep_ns};
    nanosleep(&ts, nullptr);
    waited_ns += sleep_ns;
    if (sleep_ns < 1000000) sleep_ns *= 2;
  }
}
ssize_t q_sread(fid_cq* c, void* buf, size_t count, const void* cond, int timeout_ms) {
  return q_sreadfrom(c, buf, count, nullptr, cond, timeout_ms);
}

int cq_close(fid* f) {
  Cq* q = owner_of(f->ops, &Cq::fid_ops);
  int ret = q->core_fid_ops->close(f);
  if (ret) return ret;
  delete q;
  return 0;
}

int wrap_cq(Domain* d, fid_cq* core, fi_cq_format format) {
  Cq* q = new Cq();
  q->self = core;
  q->dom = d;
  q->entry_size = entry_size(format);
  q->core_fid_ops = core->fid.ops;
  q->core_ops = core->ops;
  copy_table(&q->fid_ops, core->fid.ops);
  q->fid_ops.close = cq_close;
  copy_table(&q->ops, core->ops);
  q->ops.read = q_read;
  q->ops.readfrom = q_readfrom;
  q->ops.readerr = q_readerr;
  q->ops.sread = q_sread;
  q->ops.sreadfrom = q_sreadfrom;
  core->fid.ops = &q->fid_ops;
  core->ops = &q->ops;
  return 0;
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
  return wrap_cq(d, *cq, attr ? attr->format : FI_CQ_FORMAT_UNSPEC);
}

int d_cntr_open(fid_domain* dom, fi_cntr_attr* attr, fid_cntr** cntr, void* ctx) {
  Domain* d = dom_of_ops(dom);
  int ret = d->core_ops->cntr_open(dom, attr, cntr, ctx);
  if (ret) return ret;
  return wrap_cntr(d, *cntr);
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
nicq_persona_dom_ops g_dom_ext = {sizeof(nicq_persona_dom_ops), get_dwq_depth};

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
