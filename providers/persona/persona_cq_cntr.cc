// Counters and CQs of a persona: core objects with persona ops. Counter
// reads and waits, and CQ reads, are application calls: they run the
// domain's software progress (Domain::progress) first. CQ reads also hand
// the app its own contexts for deferred sends and the completions the
// persona made itself.
#include <time.h>

#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {
namespace {

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

}  // namespace

int wrap_counter(Domain* d, fid_cntr* core) {
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

int wrap_queue(Domain* d, fid_cq* core, fi_cq_format format) {
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

}  // namespace nicq::persona
