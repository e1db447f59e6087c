// prov_ofi_trigger_bench: what the ofi offload backends cost the host.
//
//   post   ns per op to post one epoch of triggered counter adds (not yet
//          firing), per backend — the cost of MPI_Start on a matched plan
//   fire   emulated, progress thread on: from AddCounter reaching the
//          threshold to a host op running (same thread: queue + dispatch),
//          and from posting a remote counter add to self until the progress
//          thread, seeing the arrival, has run the op gated on it
//
//          and, inside the progress thread, from a host op's completion
//          reaching the next op's threshold to that op running
//
// usage: prov_ofi_trigger_bench [iterations] [native|emulated]
//        (prints one line per result)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "providers/ofi_emulated/emulated_backend.h"
#include "providers/ofi_native/native_backend.h"

using namespace nicq;
using offload::CounterId;
using offload::OpKind;
using offload::TriggeredOp;
using Clock = std::chrono::steady_clock;

namespace {

std::atomic<std::int64_t> g_fired_ns{0};
void Stamp(void*) {
  g_fired_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
}
// First of a pair of chained host ops: its return is the moment its
// completion counter reaches the second op's threshold.
std::atomic<std::int64_t> g_first_ns{0};
void StampFirst(void*) {
  g_first_ns.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
}

bool Wire(offload::OffloadBackend& b) {
  std::vector<std::uint8_t> a;
  if (!b.LocalAddress(a).ok()) return false;
  std::vector<std::vector<std::uint8_t>> peers{a};
  return b.SetPeers(peers).ok();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void PostCost(const char* label, offload::OffloadBackend& b, int iters) {
  constexpr int kOps = 64;
  CounterId ids[3];
  if (!b.AllocCounters(3, ids).ok()) return;
  std::vector<TriggeredOp> epoch(kOps);
  std::vector<double> per_op;
  for (int it = 0; it < iters; ++it) {
    for (int i = 0; i < kOps; ++i) {
      epoch[i].kind = OpKind::kCounterAdd;
      epoch[i].trigger = ids[0];
      epoch[i].threshold = it + 1;
      epoch[i].target_counter = ids[1];
      epoch[i].value = 1;
      epoch[i].completion = ids[2];
    }
    const auto t0 = Clock::now();
    Status s = b.Post(epoch);
    const auto t1 = Clock::now();
    if (!s.ok()) {
      std::printf("%s post: %s\n", label, s.message().c_str());
      return;
    }
    per_op.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kOps);
    if (!b.AddCounter(ids[0], 1).ok() ||
        !b.WaitCounter(ids[2], std::uint64_t(kOps) * (it + 1), 30000).ok())
      return;
  }
  std::printf("post %-28s %8.1f ns/op (median of %d epochs of %d ops)\n", label, Median(per_op),
              iters, kOps);
}

void FireLatency(ofi::EmulatedBackend& b, int iters) {
  CounterId ids[3];
  if (!b.AllocCounters(3, ids).ok()) return;
  std::vector<double> local, remote;
  std::vector<TriggeredOp> op(1);
  op[0].kind = OpKind::kHost;
  op[0].host_fn = &Stamp;
  op[0].trigger = ids[0];
  op[0].completion = ids[1];
  std::vector<TriggeredOp> token(1);
  token[0].kind = OpKind::kRemoteCounterAdd;
  token[0].peer = 0;
  token[0].target_counter = ids[0];
  token[0].value = 1;
  std::uint64_t t = 0;
  for (int it = 0; it < iters; ++it) {
    // Same thread: the threshold is reached inside AddCounter.
    op[0].threshold = ++t;
    if (!b.Post(op).ok()) return;
    auto t0 = Clock::now().time_since_epoch().count();
    if (!b.AddCounter(ids[0], 1).ok() || !b.WaitCounter(ids[1], 2 * it + 1, 30000).ok()) return;
    local.push_back(double(g_fired_ns.load() - t0));
    // Arrival: the progress thread sees the remote counter add land.
    op[0].threshold = ++t;
    if (!b.Post(op).ok()) return;
    t0 = Clock::now().time_since_epoch().count();
    if (!b.Post(token).ok() || !b.WaitCounter(ids[1], 2 * it + 2, 30000).ok()) return;
    remote.push_back(double(g_fired_ns.load() - t0));
  }
  // Inside the progress thread: a remote counter add to self lands (the
  // thread reads the arrival), runs op A, whose completion reaches op B's
  // threshold; A -> B is the firing latency of a counter reaching its
  // threshold on the progress thread (queue + dispatch), B's stamp minus A's.
  CounterId chain[3];
  std::vector<double> in_thread;
  if (b.AllocCounters(3, chain).ok()) {
    std::vector<TriggeredOp> pair(2);
    pair[0].kind = OpKind::kHost;
    pair[0].host_fn = &StampFirst;
    pair[0].trigger = chain[0];
    pair[0].completion = chain[1];
    pair[1].kind = OpKind::kHost;
    pair[1].host_fn = &Stamp;
    pair[1].trigger = chain[1];
    pair[1].completion = chain[2];
    std::vector<TriggeredOp> kick = token;
    kick[0].target_counter = chain[0];
    for (int it = 0; it < iters; ++it) {
      pair[0].threshold = it + 1;
      pair[1].threshold = it + 1;
      if (!b.Post(pair).ok() || !b.Post(kick).ok() ||
          !b.WaitCounter(chain[2], std::uint64_t(it) + 1, 30000).ok())
        break;
      in_thread.push_back(double(g_fired_ns.load() - g_first_ns.load()));
    }
  }
  std::printf("fire emulated %-20s %8.2f us threshold reached in AddCounter -> op ran\n",
              b.provider(), Median(local) / 1000);
  std::printf(
      "fire emulated %-20s %8.2f us counter reached on the progress thread -> gated op ran\n",
      b.provider(), Median(in_thread) / 1000);
  std::printf(
      "fire emulated %-20s %8.2f us remote counter add posted -> arrival -> op ran "
      "(progress thread on PU %d)\n",
      b.provider(), Median(remote) / 1000, b.progress_thread_pu());
}

}  // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string only = argc > 2 ? argv[2] : "";  // "native" or "emulated": one family
  for (const char* prov : {"shm", "tcp;ofi_rxm"}) {
    if (only == "native") break;
    ofi::EmulatedConfig c;
    c.provider = prov;
    c.progress_thread = 0;
    std::unique_ptr<ofi::EmulatedBackend> e;
    if (ofi::EmulatedBackend::Create(c, &e).ok() && Wire(*e))
      PostCost((std::string("emulated ") + prov).c_str(), *e, iters);
    c.progress_thread = 1;
    if (ofi::EmulatedBackend::Create(c, &e).ok() && Wire(*e)) FireLatency(*e, iters);
  }
  if (only == "emulated") return 0;
  ofi::NativeConfig n;
  n.provider = "sockets";
  n.slot_budget = 256;
  std::unique_ptr<ofi::NativeBackend> nb;
  if (ofi::NativeBackend::Create(n, &nb).ok() && Wire(*nb))
    PostCost("native sockets", *nb, std::min(iters, 50));
  return 0;
}
