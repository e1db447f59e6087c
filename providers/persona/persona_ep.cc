// Endpoint of a persona: binds (receive counters through shadows on cxi),
// and the message and tagged data ops: contract checks on flags and
// descriptors, descriptor translation persona MR -> core MR, sends past the
// rendezvous threshold through the slow path, then the core op.
#include <cstring>

#include "providers/persona/persona_ep_ops.h"

namespace nicq::persona {
namespace {

using namespace ep_ops;

// ---- msg ----
ssize_t m_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_msg->recv(ep, buf, len, cd, src, ctx);
}
ssize_t m_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src, void* ctx) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_msg->recvv(ep, iov, cd, count, src, ctx);
}
ssize_t m_recvmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_msg m = *msg;
  m.desc = cd;
  return e->core_msg->recvmsg(ep, &m, flags);
}
ssize_t m_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, 0, 0, 0, ctx, false, wants_cq_entry(e, 0), nullptr);
  return e->core_msg->send(ep, buf, len, cd, dest, ctx);
}
ssize_t m_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                void* ctx) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  if (is_slow(e, iov, count))
    return post_slow_send(e, iov, cd, count, dest, 0, 0, 0, ctx, false, wants_cq_entry(e, 0),
                          nullptr);
  return e->core_msg->sendv(ep, iov, cd, count, dest, ctx);
}
ssize_t m_sendmsg(fid_ep* ep, const fi_msg* msg, uint64_t flags) {
  Ep* e = EP(msg);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  if (is_slow(e, msg->msg_iov, msg->iov_count))
    return post_slow_send(e, msg->msg_iov, cd, msg->iov_count, msg->addr, 0, msg->data, flags,
                          msg->context, false, wants_cq_entry(e, flags), nullptr);
  fi_msg m = *msg;
  m.desc = cd;
  return e->core_msg->sendmsg(ep, &m, flags);
}
// The one-buffer message of an inject's copy (fi_msg or fi_msg_tagged).
template <class Msg>
Msg inject_msg(TriggeredSend* rec, fi_addr_t dest, const uint64_t* data) {
  Msg m{};
  m.msg_iov = &rec->iov;
  m.desc = &rec->desc;
  m.iov_count = 1;
  m.addr = dest;
  m.context = rec;
  m.data = data ? *data : 0;
  return m;
}

// sockets (the core) can stall for good when a long run of its fi_inject
// sends mixes with posted sends to one peer (docs/provider-contracts.md);
// cxi's inject does not. An inject is therefore a posted send of a private
// copy whose completion the CQ read drops (fix_entries), freeing the copy.
// The buffer is reusable at return and the app sees no entry, as inject
// promises.
ssize_t inject_as_send(fid_ep* ep, Ep* e, const void* buf, size_t len, fi_addr_t dest, bool tagged,
                       uint64_t tag, const uint64_t* data) {
  Domain* d = e->dom;
  if (len > d->info->tx_attr->inject_size) return -FI_EINVAL;
  if (!e->tx_cq) {  // no entry would come back to free the copy: the core's own inject
    if (tagged)
      return data ? e->core_tagged->injectdata(ep, buf, len, *data, dest, tag)
                  : e->core_tagged->inject(ep, buf, len, dest, tag);
    return data ? e->core_msg->injectdata(ep, buf, len, *data, dest)
                : e->core_msg->inject(ep, buf, len, dest);
  }
  auto* rec = new TriggeredSend();
  rec->app_context = nullptr;
  rec->app_wants_completion = false;
  rec->payload.reset(new char[len ? len : 1]);
  if (len) std::memcpy(rec->payload.get(), buf, len);
  rec->iov = {rec->payload.get(), len};
  rec->desc = nullptr;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->sends.insert(rec);
  }
  const uint64_t flags = FI_COMPLETION | (data ? FI_REMOTE_CQ_DATA : 0);
  ssize_t ret;
  if (tagged) {
    fi_msg_tagged m = inject_msg<fi_msg_tagged>(rec, dest, data);
    m.tag = tag;
    ret = e->core_tagged->sendmsg(ep, &m, flags);
  } else {
    const fi_msg m = inject_msg<fi_msg>(rec, dest, data);
    ret = e->core_msg->sendmsg(ep, &m, flags);
  }
  if (ret) {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->sends.erase(rec);
    delete rec;
  }
  return ret;
}

ssize_t m_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  Ep* e = EP(msg);
  return inject_as_send(ep, e, buf, len, dest, false, 0, nullptr);
}
ssize_t m_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                   fi_addr_t dest, void* ctx) {
  Ep* e = EP(msg);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, 0, data, FI_REMOTE_CQ_DATA, ctx, false,
                          wants_cq_entry(e, 0), nullptr);
  return e->core_msg->senddata(ep, buf, len, cd, data, dest, ctx);
}
ssize_t m_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest) {
  Ep* e = EP(msg);
  return inject_as_send(ep, e, buf, len, dest, false, 0, &data);
}

// ---- tagged ----
ssize_t t_recv(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag,
               uint64_t ignore, void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_tagged->recv(ep, buf, len, cd, src, tag, ignore, ctx);
}
ssize_t t_recvv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                uint64_t tag, uint64_t ignore, void* ctx) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_tagged->recvv(ep, iov, cd, count, src, tag, ignore, ctx);
}
ssize_t t_recvmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_msg_tagged m = *msg;
  m.desc = cd;
  return e->core_tagged->recvmsg(ep, &m, flags);
}
ssize_t t_send(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag,
               void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, tag, 0, 0, ctx, true, wants_cq_entry(e, 0), nullptr);
  return e->core_tagged->send(ep, buf, len, cd, dest, tag, ctx);
}
ssize_t t_sendv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                uint64_t tag, void* ctx) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  if (is_slow(e, iov, count))
    return post_slow_send(e, iov, cd, count, dest, tag, 0, 0, ctx, true, wants_cq_entry(e, 0),
                          nullptr);
  return e->core_tagged->sendv(ep, iov, cd, count, dest, tag, ctx);
}
ssize_t t_sendmsg(fid_ep* ep, const fi_msg_tagged* msg, uint64_t flags) {
  Ep* e = EP(tagged);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  if (is_slow(e, msg->msg_iov, msg->iov_count))
    return post_slow_send(e, msg->msg_iov, cd, msg->iov_count, msg->addr, msg->tag, msg->data,
                          flags, msg->context, true, wants_cq_entry(e, flags), nullptr);
  fi_msg_tagged m = *msg;
  m.desc = cd;
  return e->core_tagged->sendmsg(ep, &m, flags);
}
ssize_t t_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) {
  Ep* e = EP(tagged);
  return inject_as_send(ep, e, buf, len, dest, true, tag, nullptr);
}
ssize_t t_senddata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                   fi_addr_t dest, uint64_t tag, void* ctx) {
  Ep* e = EP(tagged);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  const iovec v{const_cast<void*>(buf), len};
  if (is_slow(e, &v, 1))
    return post_slow_send(e, &v, &cd, 1, dest, tag, data, FI_REMOTE_CQ_DATA, ctx, true,
                          wants_cq_entry(e, 0), nullptr);
  return e->core_tagged->senddata(ep, buf, len, cd, data, dest, tag, ctx);
}
ssize_t t_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                     uint64_t tag) {
  Ep* e = EP(tagged);
  return inject_as_send(ep, e, buf, len, dest, true, tag, &data);
}

// ---- fid ----
int ep_close(fid* f) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  Domain* d = e->dom;
  int ret = e->core_fid_ops->close(f);
  if (ret) return ret;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->eps.erase(e);
    for (Mr* m : d->mrs)
      if (m->ep == e) m->ep = nullptr;
  }
  delete e;
  return 0;
}

int ensure_shadow(Cntr* c) {
  if (c->shadow) return 0;
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_UNSPEC;
  Domain* d = c->dom;
  return d->core_ops->cntr_open(d->self, &attr, &c->shadow, nullptr);
}

int ep_bind(fid* f, fid* bfid, uint64_t flags) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  Domain* d = e->dom;
  d->progress();
  if (bfid->fclass == FI_CLASS_CQ && (flags & FI_TRANSMIT)) {
    e->tx_cq = true;
    e->tx_selective = flags & FI_SELECTIVE_COMPLETION;
    e->tx_cq_obj = owner_of(reinterpret_cast<fid_cq*>(bfid)->ops, &Cq::ops);
  }
  if (bfid->fclass != FI_CLASS_CNTR) return e->core_fid_ops->bind(f, bfid, flags);
  Cntr* c = d->cntr_of(bfid);
  if (!c) return -FI_EINVAL;
  if (flags & FI_SEND) e->send_cntr = c;
  // fi_cxi(7) "Counters": receive counting events are not offloaded; they
  // reach the app's counter only during its calls (Domain::progress).
  if (d->spec->cxi && (flags & FI_RECV)) {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    if (int ret = ensure_shadow(c)) return ret;
    if (int ret = e->core_fid_ops->bind(f, &c->shadow->fid, FI_RECV)) return ret;
    flags &= ~static_cast<uint64_t>(FI_RECV);
    if (!flags) return 0;
  }
  return e->core_fid_ops->bind(f, bfid, flags);
}

int ep_control(fid* f, int command, void* arg) {
  Ep* e = owner_of(f->ops, &Ep::fid_ops);
  e->dom->progress();
  return e->core_fid_ops->control(f, command, arg);
}

template <class T>
void copy_table(T* dst, const T* src) {
  std::memset(dst, 0, sizeof(T));
  std::memcpy(dst, src, src->size < sizeof(T) ? src->size : sizeof(T));
}

}  // namespace

int ensure_cntr_shadow(Cntr* c) {
  return ensure_shadow(c);
}

int wrap_ep(Domain* dom, fid_ep* core) {
  Ep* e = new Ep();
  e->self = core;
  e->dom = dom;
  e->core_fid_ops = core->fid.ops;
  copy_table(&e->fid_ops, core->fid.ops);
  e->fid_ops.close = ep_close;
  e->fid_ops.bind = ep_bind;
  e->fid_ops.control = ep_control;
  core->fid.ops = &e->fid_ops;
  if (core->msg) {
    e->core_msg = core->msg;
    copy_table(&e->msg, core->msg);
    e->msg = {sizeof(fi_ops_msg), m_recv,   m_recvv,    m_recvmsg,   m_send, m_sendv,
              m_sendmsg,          m_inject, m_senddata, m_injectdata};
    core->msg = &e->msg;
  }
  if (core->tagged) {
    e->core_tagged = core->tagged;
    e->tagged = {sizeof(fi_ops_tagged),
                 t_recv,
                 t_recvv,
                 t_recvmsg,
                 t_send,
                 t_sendv,
                 t_sendmsg,
                 t_inject,
                 t_senddata,
                 t_injectdata};
    core->tagged = &e->tagged;
  }
  install_rma_atomic(e, core);
  std::lock_guard<std::recursive_mutex> g(dom->lock);
  dom->eps.insert(e);
  return 0;
}

}  // namespace nicq::persona
