// Sends at or past the rendezvous threshold on the cxi persona.
//
// fi_cxi(7) "Counters": the NIC counts sends below the rendezvous threshold
// (FI_CXI_RDZV_THRESHOLD, 16 KiB) by itself; a rendezvous send completes,
// and is counted, only under software progress. The persona posts such a
// send through the core's deferred work at threshold 0 (the core then
// counts it on a private counter only and reports no CQ entry), and in the
// app's calls (Domain::progress) turns that count into the app-visible
// effects: the endpoint's send counter (or the deferred op's completion
// counter) and the CQ entry the app asked for.
#include <cstdlib>
#include <cstring>

#include "providers/persona/persona.h"

namespace nicq::persona {

namespace {
constexpr size_t kMaxIov = 16;
}

struct SlowSend {
  fi_deferred_work work;
  union {
    fi_op_msg msg;
    fi_op_tagged tagged;
  } op;
  iovec iov[kMaxIov];
  void* desc[kMaxIov];
  fid_cntr* done;  // private core counter: 1 once the core completed the send
  Cntr* count_to;  // app counter to advance on completion, or null
  Cq* cq;          // where the app's completion goes, or null
  void* app_context;
  uint64_t cq_flags;
  size_t len;
};

size_t rdzv_threshold() {
  static const size_t threshold = [] {
    const char* s = std::getenv("NICQ_PERSONA_RDZV_THRESHOLD");
    return s && *s ? static_cast<size_t>(std::strtoull(s, nullptr, 10)) : size_t{16384};
  }();
  return threshold;
}

fid_cntr* sink_cntr(Domain* d) {
  std::lock_guard<std::recursive_mutex> g(d->lock);
  if (!d->sink) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = FI_WAIT_UNSPEC;
    if (d->core_ops->cntr_open(d->self, &attr, &d->sink, nullptr)) d->sink = nullptr;
  }
  return d->sink;
}

namespace {

fid_cntr* take_done_cntr(Domain* d) {
  std::lock_guard<std::recursive_mutex> g(d->lock);
  if (!d->done_pool.empty()) {
    fid_cntr* c = d->done_pool.back();
    d->done_pool.pop_back();
    return c;
  }
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_UNSPEC;
  fid_cntr* c = nullptr;
  return d->core_ops->cntr_open(d->self, &attr, &c, nullptr) == 0 ? c : nullptr;
}

void give_back(Domain* d, fid_cntr* c) {
  fi_cntr_set(c, 0);
  fi_cntr_seterr(c, 0);
  d->done_pool.push_back(c);
}

}  // namespace

ssize_t post_slow_send(Ep* e, const iovec* iov, void* const* core_desc, size_t count,
                       fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void* context,
                       bool tagged, bool cq_entry, fi_deferred_work* deferred) {
  Domain* d = e->dom;
  if (count > kMaxIov) return -FI_EINVAL;
  fid_cntr* trigger = deferred ? deferred->triggering_cntr : sink_cntr(d);
  fid_cntr* done = take_done_cntr(d);
  if (!trigger || !done) return -FI_ENOMEM;
  auto* s = new SlowSend();
  s->done = done;
  s->count_to =
      deferred ? (deferred->completion_cntr ? d->cntr_of(&deferred->completion_cntr->fid) : nullptr)
               : e->send_cntr;
  s->cq = cq_entry ? e->tx_cq_obj : nullptr;
  s->app_context = context;
  s->cq_flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
  s->len = 0;
  for (size_t i = 0; i < count; i++) {
    s->iov[i] = iov[i];
    s->desc[i] = core_desc ? core_desc[i] : nullptr;
    s->len += iov[i].iov_len;
  }
  s->work.threshold = deferred ? deferred->threshold : 0;
  s->work.triggering_cntr = trigger;
  s->work.completion_cntr = done;
  const uint64_t core_flags = flags & FI_REMOTE_CQ_DATA;
  if (tagged) {
    s->work.op_type = FI_OP_TSEND;
    s->op.tagged = {};
    s->op.tagged.ep = e->self;
    s->op.tagged.msg = {s->iov, s->desc, count, dest, tag, 0, &s->work.context, data};
    s->op.tagged.flags = core_flags;
    s->work.op.tagged = &s->op.tagged;
  } else {
    s->work.op_type = FI_OP_SEND;
    s->op.msg = {};
    s->op.msg.ep = e->self;
    s->op.msg.msg = {s->iov, s->desc, count, dest, &s->work.context, data};
    s->op.msg.flags = core_flags;
    s->work.op.msg = &s->op.msg;
  }
  std::lock_guard<std::recursive_mutex> g(d->lock);
  d->slow_sends.push_back(s);
  int ret = d->core_fid_ops->control(&d->self->fid, FI_QUEUE_WORK, &s->work);
  if (ret) {
    d->slow_sends.pop_back();
    give_back(d, done);
    delete s;
  }
  return ret;
}

// Runs inside Domain::progress (domain lock held).
void progress_slow_sends(Domain* d) {
  auto& v = d->slow_sends;
  for (size_t i = 0; i < v.size();) {
    SlowSend* s = v[i];
    const uint64_t ok = fi_cntr_read(s->done);
    const uint64_t err = fi_cntr_readerr(s->done);
    if (!ok && !err) {
      i++;
      continue;
    }
    if (s->count_to) {
      if (err)
        s->count_to->core_ops->adderr(s->count_to->self, 1);
      else
        s->count_to->core_ops->add(s->count_to->self, 1);
    }
    if (s->cq && !err) {
      fi_cq_tagged_entry entry{};
      entry.op_context = s->app_context;
      entry.flags = s->cq_flags;
      s->cq->synthetic.push_back(entry);
    }
    give_back(d, s->done);
    delete s;
    v[i] = v.back();
    v.pop_back();
  }
}

void close_slow_sends(Domain* d) {
  std::lock_guard<std::recursive_mutex> g(d->lock);
  for (SlowSend* s : d->slow_sends) {
    fi_close(&s->done->fid);
    delete s;
  }
  d->slow_sends.clear();
  for (fid_cntr* c : d->done_pool) fi_close(&c->fid);
  d->done_pool.clear();
}

}  // namespace nicq::persona
