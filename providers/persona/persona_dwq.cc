// Deferred work of the cxi persona (fi_control FI_QUEUE_WORK / FI_FLUSH_WORK):
// the checks cxi makes (cxip_dom.c), then each op in the form the core runs
// faithfully; entries are drawn from the service's budget
// (persona_dwq_budget.cc).
#include <cstdlib>
#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {
namespace {

int check_descs(Ep* e, void** desc, const iovec* iov, size_t count) {
  for (size_t i = 0; i < count; i++) {
    void* cd;
    if (int r = translate_desc(e, desc ? desc[i] : nullptr, iov[i].iov_base, iov[i].iov_len, &cd))
      return r;
  }
  return 0;
}

// Whether the app gets a CQ entry for a send it posted with these flags.
bool wants_send_entry(const Ep* e, uint64_t flags) {
  return e->tx_cq && (!e->tx_selective || (flags & FI_COMPLETION));
}

// A deferred send becomes a core FI_TRIGGER-flagged send: sockets' own
// deferred SEND deadlocks its progress thread when work is chained after it.
int post_send(Domain* d, Ep* e, fi_deferred_work* w, bool tagged) {
  const fi_msg* msg = tagged ? nullptr : &w->op.msg->msg;
  const fi_msg_tagged* tmsg = tagged ? &w->op.tagged->msg : nullptr;
  const uint64_t app_flags = tagged ? w->op.tagged->flags : w->op.msg->flags;
  const iovec* iov = tagged ? tmsg->msg_iov : msg->msg_iov;
  const size_t count = tagged ? tmsg->iov_count : msg->iov_count;
  void** desc = tagged ? tmsg->desc : msg->desc;
  auto* rec = new TriggeredSend();
  rec->tctx.event_type = FI_TRIGGER_THRESHOLD;
  rec->tctx.trigger.threshold.cntr = w->triggering_cntr;
  rec->tctx.trigger.threshold.threshold = w->threshold;
  rec->app_context = tagged ? tmsg->context : msg->context;
  rec->app_wants_completion = !e->tx_selective || (app_flags & FI_COMPLETION);
  rec->iov = count ? iov[0] : iovec{nullptr, 0};
  rec->desc = nullptr;
  if (count && translate_desc(e, desc ? desc[0] : nullptr, rec->iov.iov_base, rec->iov.iov_len,
                              &rec->desc)) {
    delete rec;
    return -FI_EINVAL;
  }
  uint64_t flags = (app_flags & ~static_cast<uint64_t>(FI_MORE)) | FI_TRIGGER;
  if (e->tx_cq) flags |= FI_COMPLETION;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->sends.insert(rec);
  }
  ssize_t ret;
  if (tagged) {
    fi_msg_tagged m = *tmsg;
    m.msg_iov = &rec->iov;
    m.desc = &rec->desc;
    m.context = rec;
    ret = e->core_tagged->sendmsg(e->self, &m, flags);
  } else {
    fi_msg m = *msg;
    m.msg_iov = &rec->iov;
    m.desc = &rec->desc;
    m.context = rec;
    ret = e->core_msg->sendmsg(e->self, &m, flags);
  }
  if (ret) {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    d->sends.erase(rec);
    delete rec;
  }
  return static_cast<int>(ret);
}

// A deferred receive (threshold 0) goes to the core's deferred work with its
// completion counter replaced by that counter's shadow: fi_cxi(7) counts
// message receives only under software progress. The core requires the op
// context to be the work item's own, so the persona posts its own copy.
int post_recv(Domain* d, Ep* e, fi_deferred_work* w, bool tagged) {
  struct Owned {
    fi_deferred_work work;
    union {
      fi_op_msg msg;
      fi_op_tagged tagged;
    } op;
    iovec iov;
    void* desc;
  };
  auto* o = static_cast<Owned*>(std::calloc(1, sizeof(Owned)));
  if (!o) return -FI_ENOMEM;
  o->work.threshold = 0;
  o->work.triggering_cntr = w->triggering_cntr;
  o->work.op_type = w->op_type;
  if (w->completion_cntr) {
    Cntr* c = d->cntr_of(&w->completion_cntr->fid);
    if (!c || ensure_cntr_shadow(c)) {
      std::free(o);
      return -FI_EINVAL;
    }
    o->work.completion_cntr = c->shadow;
  } else {
    o->work.completion_cntr = sink_cntr(d);
  }
  const size_t count = tagged ? w->op.tagged->msg.iov_count : w->op.msg->msg.iov_count;
  const iovec* iov = tagged ? w->op.tagged->msg.msg_iov : w->op.msg->msg.msg_iov;
  void** desc = tagged ? w->op.tagged->msg.desc : w->op.msg->msg.desc;
  o->iov = count ? iov[0] : iovec{nullptr, 0};
  if (count &&
      translate_desc(e, desc ? desc[0] : nullptr, o->iov.iov_base, o->iov.iov_len, &o->desc)) {
    std::free(o);
    return -FI_EINVAL;
  }
  if (tagged) {
    o->op.tagged = *w->op.tagged;
    o->op.tagged.msg.msg_iov = &o->iov;
    o->op.tagged.msg.desc = &o->desc;
    o->op.tagged.msg.iov_count = count;
    o->op.tagged.msg.context = &o->work.context;
    o->work.op.tagged = &o->op.tagged;
  } else {
    o->op.msg = *w->op.msg;
    o->op.msg.msg.msg_iov = &o->iov;
    o->op.msg.msg.desc = &o->desc;
    o->op.msg.msg.iov_count = count;
    o->op.msg.msg.context = &o->work.context;
    o->work.op.msg = &o->op.msg;
  }
  int ret = d->core_fid_ops->control(&d->self->fid, FI_QUEUE_WORK, &o->work);
  if (ret) {
    std::free(o);
    return ret;
  }
  std::lock_guard<std::recursive_mutex> g(d->lock);
  d->owned_work.push_back(&o->work);
  return 0;
}

// RMA and atomics go to the core's deferred work as the app wrote them, with
// two core requirements met for the duration of the call only (the core
// copies both at queue time): the op's context must be the work item's own,
// and a completion counter must exist.
int post_other(Domain* d, fi_deferred_work* w, void** op_context) {
  void* const saved_context = *op_context;
  fid_cntr* const saved_cntr = w->completion_cntr;
  *op_context = &w->context;
  if (!w->completion_cntr) w->completion_cntr = sink_cntr(d);
  if (!w->completion_cntr) return -FI_ENOMEM;
  int ret = d->core_fid_ops->control(&d->self->fid, FI_QUEUE_WORK, w);
  *op_context = saved_context;
  w->completion_cntr = saved_cntr;
  return ret;
}

int post_cntr_op(Domain* d, fi_deferred_work* w) {
  return d->core_fid_ops->control(&d->self->fid, FI_QUEUE_WORK, w);
}

}  // namespace

int flush_work(Domain* d) {
  std::lock_guard<std::recursive_mutex> g(d->lock);
  d->core_fid_ops->control(&d->self->fid, FI_FLUSH_WORK, nullptr);
  d->dwq_pending.clear();
  dwq_release(d, d->dwq_held);
  return 0;
}

int queue_work(Domain* d, fi_deferred_work* w) {
  const Spec& spec = *d->spec;
  // cxip_dom.c cxip_dom_dwq_queue_work_validate and the per-op checks.
  if (!w->triggering_cntr) return -FI_EINVAL;
  Cntr* trig = d->cntr_of(&w->triggering_cntr->fid);
  if (!trig) return -FI_EINVAL;
  Ep* e = nullptr;
  bool uses_entry = true;
  bool slow_send = false;    // at or past the rendezvous threshold
  bool own_counter = false;  // eager, counted on a completion counter of its own
  // A C caller may put any value in op_type: check it as an integer before
  // it is read as the enum (reading an out-of-range enum is undefined).
  int raw_type = 0;
  static_assert(sizeof raw_type == sizeof w->op_type);
  std::memcpy(&raw_type, &w->op_type, sizeof raw_type);
  if (raw_type < FI_OP_RECV || raw_type > FI_OP_CNTR_ADD) return -FI_EINVAL;
  switch (w->op_type) {
    case FI_OP_SEND:
    case FI_OP_TSEND: {
      const bool tagged = w->op_type == FI_OP_TSEND;
      if (tagged ? !w->op.tagged : !w->op.msg) return -FI_EINVAL;
      e = d->ep_of(tagged ? &w->op.tagged->ep->fid : &w->op.msg->ep->fid);
      const size_t count = tagged ? w->op.tagged->msg.iov_count : w->op.msg->msg.iov_count;
      const uint64_t flags = tagged ? w->op.tagged->flags : w->op.msg->flags;
      if (!e || count > 1 || (flags & FI_INJECT)) return -FI_EINVAL;
      const iovec* iov = tagged ? w->op.tagged->msg.msg_iov : w->op.msg->msg.msg_iov;
      slow_send = count && iov[0].iov_len >= rdzv_threshold();
      own_counter = !slow_send && w->completion_cntr &&
                    (!e->send_cntr || &e->send_cntr->self->fid != &w->completion_cntr->fid);
      if (own_counter && !d->cntr_of(&w->completion_cntr->fid)) return -FI_EINVAL;
      break;
    }
    case FI_OP_RECV:
    case FI_OP_TRECV: {
      const bool tagged = w->op_type == FI_OP_TRECV;
      if (tagged ? !w->op.tagged : !w->op.msg) return -FI_EINVAL;
      e = d->ep_of(tagged ? &w->op.tagged->ep->fid : &w->op.msg->ep->fid);
      const size_t count = tagged ? w->op.tagged->msg.iov_count : w->op.msg->msg.iov_count;
      // "Non-zero thresholds for triggered receives are not supported."
      if (!e || count > 1 || w->threshold) return -FI_EINVAL;
      uses_entry = false;  // posted at once, no trigger-list entry
      break;
    }
    case FI_OP_READ:
    case FI_OP_WRITE: {
      fi_op_rma* r = w->op.rma;
      if (!r || !r->msg.msg_iov || r->msg.iov_count > 1 || !r->msg.rma_iov ||
          r->msg.rma_iov_count != 1)
        return -FI_EINVAL;
      e = d->ep_of(&r->ep->fid);
      if (!e) return -FI_EINVAL;
      if (int ret = check_descs(e, r->msg.desc, r->msg.msg_iov, r->msg.iov_count)) return ret;
      break;
    }
    case FI_OP_ATOMIC:
    case FI_OP_FETCH_ATOMIC:
    case FI_OP_COMPARE_ATOMIC: {
      const fi_msg_atomic* m = w->op_type == FI_OP_ATOMIC
                                   ? (w->op.atomic ? &w->op.atomic->msg : nullptr)
                               : w->op_type == FI_OP_FETCH_ATOMIC
                                   ? (w->op.fetch_atomic ? &w->op.fetch_atomic->msg : nullptr)
                                   : (w->op.compare_atomic ? &w->op.compare_atomic->msg : nullptr);
      if (!m) return -FI_EINVAL;
      fid_ep* ep = w->op_type == FI_OP_ATOMIC         ? w->op.atomic->ep
                   : w->op_type == FI_OP_FETCH_ATOMIC ? w->op.fetch_atomic->ep
                                                      : w->op.compare_atomic->ep;
      e = d->ep_of(&ep->fid);
      if (!e || m->iov_count != 1 || !m->msg_iov) return -FI_EINVAL;
      if (spec.amo_max_count && m->msg_iov[0].count > spec.amo_max_count) return -FI_EINVAL;
      break;
    }
    case FI_OP_CNTR_SET:
    case FI_OP_CNTR_ADD:
      // "Completion counter must be NULL."
      if (!w->op.cntr || !w->op.cntr->cntr || w->completion_cntr) return -FI_EINVAL;
      if (!d->cntr_of(&w->op.cntr->cntr->fid)) return -FI_EINVAL;
      break;
    default:
      return -FI_EINVAL;
  }

  if (uses_entry && !dwq_reserve(d)) {
    const char* limit = std::getenv("NICQ_PERSONA_TRIG_OP_LIMIT");
    if (limit && std::strcmp(limit, "1") == 0) return -FI_ENOSPC;
    dwq_exhausted(d);
  }

  int ret;
  switch (w->op_type) {
    case FI_OP_SEND:
    case FI_OP_TSEND: {
      const bool tagged = w->op_type == FI_OP_TSEND;
      if (!slow_send && !own_counter) {
        ret = post_send(d, e, w, tagged);
        break;
      }
      const fi_msg m = tagged ? fi_msg{w->op.tagged->msg.msg_iov,   w->op.tagged->msg.desc,
                                       w->op.tagged->msg.iov_count, w->op.tagged->msg.addr,
                                       w->op.tagged->msg.context,   w->op.tagged->msg.data}
                              : w->op.msg->msg;
      void* cd = nullptr;
      ret = translate_desc(e, m.desc ? m.desc[0] : nullptr, m.msg_iov[0].iov_base,
                           m.msg_iov[0].iov_len, &cd);
      if (!ret)
        ret = static_cast<int>(post_slow_send(
            e, m.msg_iov, &cd, 1, m.addr, tagged ? w->op.tagged->msg.tag : 0, m.data,
            tagged ? w->op.tagged->flags : w->op.msg->flags, m.context, tagged,
            own_counter && wants_send_entry(e, tagged ? w->op.tagged->flags : w->op.msg->flags), w,
            own_counter));
      break;
    }
    case FI_OP_RECV:
      ret = post_recv(d, e, w, false);
      break;
    case FI_OP_TRECV:
      ret = post_recv(d, e, w, true);
      break;
    case FI_OP_READ:
    case FI_OP_WRITE:
      ret = post_other(d, w, &w->op.rma->msg.context);
      break;
    case FI_OP_ATOMIC:
      ret = post_other(d, w, &w->op.atomic->msg.context);
      break;
    case FI_OP_FETCH_ATOMIC:
      ret = post_other(d, w, &w->op.fetch_atomic->msg.context);
      break;
    case FI_OP_COMPARE_ATOMIC:
      ret = post_other(d, w, &w->op.compare_atomic->msg.context);
      break;
    default:
      ret = post_cntr_op(d, w);
      break;
  }
  if (!uses_entry) return ret;
  if (ret) {
    dwq_release(d, 1);
    return ret;
  }
  std::lock_guard<std::recursive_mutex> g(d->lock);
  d->dwq_pending[trig].insert(w->threshold);
  return 0;
}

}  // namespace nicq::persona
