// Sends the cxi persona completes itself: those at or past the rendezvous
// threshold, and deferred eager sends with a completion counter of their own.
//
// fi_cxi(7) "Counters": the NIC counts sends below the rendezvous threshold
// (FI_CXI_RDZV_THRESHOLD, 16 KiB) by itself; a rendezvous send completes,
// and is counted, only under software progress. The persona posts such a
// send through the core's deferred work (the core then counts it on a
// private counter only and reports no CQ entry) and turns that count into
// the app-visible effects: the endpoint's send counter (or the deferred
// op's completion counter) and the CQ entry the app asked for.
//
// Who does that is the difference. A rendezvous send is finished in the
// app's calls (Domain::progress). A deferred eager send is finished by the
// domain's send agent, a thread that plays the NIC's counting engine: cxi
// counts such a send on any completion counter the work names, with every
// host thread asleep, and work chained on that counter fires. The core
// cannot be asked for this directly: sockets counts its FI_TRIGGER-flagged
// sends only on the endpoint's counter, and its progress thread deadlocks
// when work is chained on the completion counter of its own deferred send
// (the agent's add runs outside the core's trigger processing).
#include <time.h>

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

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
  bool nic_counts;  // finished by the send agent, not in the app's calls
};

struct SendAgent {
  std::mutex mu;
  std::condition_variable wake;
  std::vector<SlowSend*> pending;  // guarded by mu
  bool stop = false;
  std::thread thread;
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

bool finished(SlowSend* s) {
  return fi_cntr_read(s->done) || fi_cntr_readerr(s->done);
}

// The counting event: may fire deferred work gated on the counter, in the
// calling thread, so no persona lock is held around it.
void count(SlowSend* s) {
  if (!s->count_to) return;
  if (fi_cntr_readerr(s->done))
    s->count_to->core_ops->adderr(s->count_to->self, 1);
  else
    s->count_to->core_ops->add(s->count_to->self, 1);
}

// The CQ entry (read by the app in its calls only) and the record's end.
// Domain lock held.
void retire(Domain* d, SlowSend* s) {
  if (s->cq && !fi_cntr_readerr(s->done)) {
    fi_cq_tagged_entry entry{};
    entry.op_context = s->app_context;
    entry.flags = s->cq_flags;
    s->cq->synthetic.push_back(entry);
  }
  give_back(d, s->done);
  delete s;
}

// The send agent's loop: finish every send whose private counter moved.
// While sends are pending it naps from 1 us up to 64 us between looks (the
// core completes sends on its own thread and offers no wait object that
// covers many counters at once); with none, it sleeps until a post wakes it.
void run_send_agent(Domain* d, SendAgent* a) {
  std::vector<SlowSend*> done;
  long nap_ns = 1000;
  std::unique_lock<std::mutex> lk(a->mu);
  while (!a->stop) {
    if (a->pending.empty()) {
      a->wake.wait(lk);
      nap_ns = 1000;
      continue;
    }
    done.clear();
    auto& v = a->pending;
    for (size_t i = 0; i < v.size();) {
      if (finished(v[i])) {
        done.push_back(v[i]);
        v[i] = v.back();
        v.pop_back();
      } else {
        i++;
      }
    }
    lk.unlock();
    if (done.empty()) {
      timespec ts{0, nap_ns};
      nanosleep(&ts, nullptr);
      if (nap_ns < 64000) nap_ns *= 2;
    } else {
      nap_ns = 1000;
      for (SlowSend* s : done) count(s);
      std::lock_guard<std::recursive_mutex> g(d->lock);
      for (SlowSend* s : done) retire(d, s);
    }
    lk.lock();
  }
}

SendAgent* start_send_agent(Domain* d) {
  std::lock_guard<std::recursive_mutex> g(d->lock);
  if (d->send_agent) return d->send_agent;
  auto* a = new SendAgent();
  try {
    a->thread = std::thread(run_send_agent, d, a);
  } catch (...) {
    delete a;
    return nullptr;
  }
  d->send_agent = a;
  return a;
}

// Sends still pending when the domain closes never completed: their
// counters go with them.
void stop_send_agent(Domain* d) {
  SendAgent* a;
  {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    a = d->send_agent;
    d->send_agent = nullptr;
  }
  if (!a) return;
  {
    std::lock_guard<std::mutex> lk(a->mu);
    a->stop = true;
  }
  a->wake.notify_one();
  a->thread.join();
  for (SlowSend* s : a->pending) {
    fi_close(&s->done->fid);
    delete s;
  }
  delete a;
}

// Hands the agent the send before the core may complete it, then queues
// the core's deferred work.
int queue_agent_send(Domain* d, SlowSend* s) {
  SendAgent* a = start_send_agent(d);
  if (!a) {
    std::lock_guard<std::recursive_mutex> g(d->lock);
    give_back(d, s->done);
    delete s;
    return -FI_ENOMEM;
  }
  {
    std::lock_guard<std::mutex> g(a->mu);
    a->pending.push_back(s);
  }
  a->wake.notify_one();
  const int ret = d->core_fid_ops->control(&d->self->fid, FI_QUEUE_WORK, &s->work);
  if (ret) {
    {
      std::lock_guard<std::mutex> g(a->mu);
      auto& v = a->pending;
      for (size_t i = 0; i < v.size(); i++)
        if (v[i] == s) {
          v[i] = v.back();
          v.pop_back();
          break;
        }
    }
    std::lock_guard<std::recursive_mutex> g(d->lock);
    give_back(d, s->done);
    delete s;
  }
  return ret;
}

}  // namespace

ssize_t post_slow_send(Ep* e, const iovec* iov, void* const* core_desc, size_t count,
                       fi_addr_t dest, uint64_t tag, uint64_t data, uint64_t flags, void* context,
                       bool tagged, bool cq_entry, fi_deferred_work* deferred, bool nic_counts) {
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
  s->nic_counts = nic_counts;
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
  if (nic_counts) return queue_agent_send(d, s);
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
    if (!finished(s)) {
      i++;
      continue;
    }
    count(s);
    retire(d, s);
    v[i] = v.back();
    v.pop_back();
  }
}

void close_slow_sends(Domain* d) {
  stop_send_agent(d);
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
