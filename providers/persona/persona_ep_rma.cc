// RMA and atomic data ops of a persona endpoint: descriptor checks and
// translation, one element per atomic on cxi, and on verbs_persona the
// app's virtual remote address turned into the core's offset.
#include <cstring>

#include "providers/persona/persona_ep_ops.h"

namespace nicq::persona {
namespace {

using namespace ep_ops;

// ---- rma ----
// The core's remote address for the app's (see Spec::key_encodes_base).
uint64_t raddr(Ep* e, uint64_t addr, uint64_t key) {
  return e->dom->spec->key_encodes_base ? addr - key_base(key) : addr;
}
template <class Iov>
int xlat_rma_iov(Ep* e, const Iov* in, size_t count, Iov* out) {
  if (count > kMaxIov) return -FI_EINVAL;
  for (size_t i = 0; i < count; i++) {
    out[i] = in[i];
    out[i].addr = raddr(e, in[i].addr, in[i].key);
  }
  return 0;
}
int check_rma_iov(Ep* e, size_t rma_iov_count) {
  // cxi: one remote iov per RMA (rma_iov_limit 1 in the persona's info).
  if (e->dom->spec->cxi && rma_iov_count > 1) return -FI_EINVAL;
  return 0;
}
ssize_t r_read(fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t addr,
               uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->read(ep, buf, len, cd, src, raddr(e, addr, key), key, ctx);
}
ssize_t r_readv(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t src,
                uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_rma->readv(ep, iov, cd, count, src, raddr(e, addr, key), key, ctx);
}
ssize_t r_readmsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = check_rma_iov(e, msg->rma_iov_count)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_rma_iov riov[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, riov)) return r;
  fi_msg_rma m = *msg;
  m.desc = cd;
  m.rma_iov = riov;
  return e->core_rma->readmsg(ep, &m, flags);
}
ssize_t r_write(fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t addr,
                uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->write(ep, buf, len, cd, dest, raddr(e, addr, key), key, ctx);
}
ssize_t r_writev(fid_ep* ep, const iovec* iov, void** desc, size_t count, fi_addr_t dest,
                 uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = xlat_iov(e, desc, iov, count, cd)) return r;
  return e->core_rma->writev(ep, iov, cd, count, dest, raddr(e, addr, key), key,
                             ctx);
}
ssize_t r_writemsg(fid_ep* ep, const fi_msg_rma* msg, uint64_t flags) {
  Ep* e = EP(rma);
  void* cd[kMaxIov];
  if (int r = check_flags(e, flags)) return r;
  if (int r = check_rma_iov(e, msg->rma_iov_count)) return r;
  if (int r = xlat_iov(e, msg->desc, msg->msg_iov, msg->iov_count, cd)) return r;
  fi_rma_iov riov[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, riov)) return r;
  fi_msg_rma m = *msg;
  m.desc = cd;
  m.rma_iov = riov;
  return e->core_rma->writemsg(ep, &m, flags);
}
ssize_t r_inject(fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t addr,
                 uint64_t key) {
  Ep* e = EP(rma);
  return e->core_rma->inject(ep, buf, len, dest, raddr(e, addr, key), key);
}
ssize_t r_writedata(fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                    fi_addr_t dest, uint64_t addr, uint64_t key, void* ctx) {
  Ep* e = EP(rma);
  void* cd;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  return e->core_rma->writedata(ep, buf, len, cd, data, dest, raddr(e, addr, key),
                                key, ctx);
}
ssize_t r_injectdata(fid_ep* ep, const void* buf, size_t len, uint64_t data, fi_addr_t dest,
                     uint64_t addr, uint64_t key) {
  Ep* e = EP(rma);
  return e->core_rma->injectdata(ep, buf, len, data, dest, raddr(e, addr, key), key);
}

// ---- atomic ----
ssize_t a_write(fid_ep* ep, const void* buf, size_t count, void* desc, fi_addr_t dest,
                uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void* cd;
  if (int r = check_amo(e, count)) return r;
  if (int r = xlat_one(e, desc, buf, count * datatype_size(dt), &cd)) return r;
  return e->core_atomic->write(ep, buf, count, cd, dest, raddr(e, addr, key), key,
                               dt, op, ctx);
}
ssize_t a_writev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count, fi_addr_t dest,
                 uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void* cd[kMaxIov];
  size_t n;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = check_amo(e, n)) return r;
  return e->core_atomic->writev(ep, iov, cd, count, dest, raddr(e, addr, key), key,
                                dt, op, ctx);
}
ssize_t a_writemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  Ep* e = EP(atomic);
  void* cd[kMaxIov];
  size_t n;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = check_amo(e, n)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->writemsg(ep, &m, flags);
}
ssize_t a_inject(fid_ep* ep, const void* buf, size_t count, fi_addr_t dest, uint64_t addr,
                 uint64_t key, fi_datatype dt, fi_op op) {
  Ep* e = EP(atomic);
  if (int r = check_amo(e, count)) return r;
  return e->core_atomic->inject(ep, buf, count, dest, raddr(e, addr, key), key, dt,
                                op);
}
ssize_t a_readwrite(fid_ep* ep, const void* buf, size_t count, void* desc, void* result,
                    void* result_desc, fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt,
                    fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd = nullptr, *rd;
  if (int r = check_amo(e, count)) return r;
  if (buf || desc)
    if (int r = xlat_one(e, desc, buf, count * datatype_size(dt), &cd)) return r;
  if (int r = xlat_one(e, result_desc, result, count * datatype_size(dt), &rd)) return r;
  return e->core_atomic->readwrite(ep, buf, count, cd, result, rd, dest,
                                   raddr(e, addr, key), key, dt, op, ctx);
}
ssize_t a_readwritev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count, fi_ioc* resultv,
                     void** result_desc, size_t result_count, fi_addr_t dest, uint64_t addr,
                     uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *rd[kMaxIov];
  size_t n, rn;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, dt, rd, &rn)) return r;
  if (int r = check_amo(e, n > rn ? n : rn)) return r;
  return e->core_atomic->readwritev(ep, iov, cd, count, resultv, rd, result_count, dest,
                                    raddr(e, addr, key), key, dt, op, ctx);
}
ssize_t a_readwritemsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv, void** result_desc,
                       size_t result_count, uint64_t flags) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *rd[kMaxIov];
  size_t n, rn;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, msg->datatype, rd, &rn)) return r;
  if (int r = check_amo(e, n > rn ? n : rn)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->readwritemsg(ep, &m, resultv, rd, result_count, flags);
}
ssize_t a_compwrite(fid_ep* ep, const void* buf, size_t count, void* desc, const void* compare,
                    void* compare_desc, void* result, void* result_desc, fi_addr_t dest,
                    uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd, *kd, *rd;
  const size_t len = count * datatype_size(dt);
  if (int r = check_amo(e, count)) return r;
  if (int r = xlat_one(e, desc, buf, len, &cd)) return r;
  if (int r = xlat_one(e, compare_desc, compare, len, &kd)) return r;
  if (int r = xlat_one(e, result_desc, result, len, &rd)) return r;
  return e->core_atomic->compwrite(ep, buf, count, cd, compare, kd, result, rd, dest,
                                   raddr(e, addr, key), key, dt, op, ctx);
}
ssize_t a_compwritev(fid_ep* ep, const fi_ioc* iov, void** desc, size_t count,
                     const fi_ioc* comparev, void** compare_desc, size_t compare_count,
                     fi_ioc* resultv, void** result_desc, size_t result_count, fi_addr_t dest,
                     uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *kd[kMaxIov], *rd[kMaxIov];
  size_t n, kn, rn;
  if (int r = xlat_ioc(e, desc, iov, count, dt, cd, &n)) return r;
  if (int r = xlat_ioc(e, compare_desc, comparev, compare_count, dt, kd, &kn)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, dt, rd, &rn)) return r;
  if (int r = check_amo(e, n)) return r;
  return e->core_atomic->compwritev(ep, iov, cd, count, comparev, kd, compare_count, resultv, rd,
                                    result_count, dest, raddr(e, addr, key), key, dt, op, ctx);
}
ssize_t a_compwritemsg(fid_ep* ep, const fi_msg_atomic* msg, const fi_ioc* comparev,
                       void** compare_desc, size_t compare_count, fi_ioc* resultv,
                       void** result_desc, size_t result_count, uint64_t flags) {
  Ep* e = EP(atomic);
  void *cd[kMaxIov], *kd[kMaxIov], *rd[kMaxIov];
  size_t n, kn, rn;
  if (int r = check_flags(e, flags)) return r;
  if (int r = xlat_ioc(e, msg->desc, msg->msg_iov, msg->iov_count, msg->datatype, cd, &n)) return r;
  if (int r = xlat_ioc(e, compare_desc, comparev, compare_count, msg->datatype, kd, &kn)) return r;
  if (int r = xlat_ioc(e, result_desc, resultv, result_count, msg->datatype, rd, &rn)) return r;
  if (int r = check_amo(e, n)) return r;
  fi_rma_ioc rioc[kMaxIov];
  if (int r = xlat_rma_iov(e, msg->rma_iov, msg->rma_iov_count, rioc)) return r;
  fi_msg_atomic m = *msg;
  m.desc = cd;
  m.rma_iov = rioc;
  return e->core_atomic->compwritemsg(ep, &m, comparev, kd, compare_count, resultv, rd,
                                      result_count, flags);
}
int clamp_valid(Ep* e, int ret, size_t* count) {
  const size_t max = e->dom->spec->amo_max_count;
  if (!ret && count && max && *count > max) *count = max;
  return ret;
}
int a_writevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->writevalid(ep, dt, op, count), count);
}
int a_readwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->readwritevalid(ep, dt, op, count), count);
}
int a_compwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) {
  Ep* e = EP(atomic);
  return clamp_valid(e, e->core_atomic->compwritevalid(ep, dt, op, count), count);
}

}  // namespace

void install_rma_atomic(Ep* e, fid_ep* core) {
  if (core->rma) {
    e->core_rma = core->rma;
    e->rma = {sizeof(fi_ops_rma), r_read,     r_readv,  r_readmsg,   r_write,
              r_writev,           r_writemsg, r_inject, r_writedata, r_injectdata};
    core->rma = &e->rma;
  }
  if (core->atomic) {
    e->core_atomic = core->atomic;
    e->atomic = {
        sizeof(fi_ops_atomic), a_write,      a_writev,         a_writemsg,      a_inject,
        a_readwrite,           a_readwritev, a_readwritemsg,   a_compwrite,     a_compwritev,
        a_compwritemsg,        a_writevalid, a_readwritevalid, a_compwritevalid};
    core->atomic = &e->atomic;
  }
}

}  // namespace nicq::persona
