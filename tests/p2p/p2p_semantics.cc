// MPI point-to-point semantics over rt::, one scenario per run (argv[1]).
#include <cinttypes>
#include <thread>

#include "mp_util.h"

using namespace nicq;
using namespace nicq::test;

namespace {

Comm* W() {
  return rt::World();
}

// Every ordered pair exchanges messages around the eager/rendezvous switch.
void Sizes() {
  const std::size_t e = rt::EagerLimit();
  const std::size_t sizes[] = {0, 1, 7, 64, e - 1, e, e + 1, 3 * e + 5, 1 << 20};
  const int n = W()->size, me = W()->rank;
  for (int idx = 0; idx < int(std::size(sizes)); ++idx) {
    const std::size_t sz = sizes[idx];
    std::vector<std::vector<std::uint8_t>> in(n, std::vector<std::uint8_t>(sz)),
        out(n, std::vector<std::uint8_t>(sz));
    std::vector<Request> rr(n), sr(n);
    for (int p = 0; p < n; ++p) MP_OK(rt::Irecv(in[p].data(), sz, p, idx, W(), &rr[p]));
    for (int p = 0; p < n; ++p) {
      Fill(out[p], me, p, idx);
      MP_OK(rt::Isend(out[p].data(), sz, p, idx, W(), SendMode::kStandard, &sr[p]));
    }
    for (int p = 0; p < n; ++p) {
      MP_OK(rt::Wait(&sr[p]));
      MP_OK(rt::Wait(&rr[p]));
      MP_CHECK(rr[p].status.error == 0, "size %zu from %d: error %d", sz, p, rr[p].status.error);
      MP_CHECK(rr[p].status.bytes == sz, "size %zu from %d: got %zu", sz, p, rr[p].status.bytes);
      MP_CHECK(rr[p].status.source == p && rr[p].status.tag == idx, "status %d/%d",
               rr[p].status.source, rr[p].status.tag);
      long long bad = FirstBad(in[p].data(), sz, p, me, idx);
      MP_CHECK(bad < 0, "size %zu from %d: byte %lld wrong", sz, p, bad);
    }
  }
}

// Example 3.13 and a stress version: sends from one source match receives
// in order even with MPI_ANY_TAG, across eager and rendezvous messages.
void Order() {
  const int n = W()->size, me = W()->rank;
  const int K = 200;
  const std::size_t e = rt::EagerLimit();
  auto size_of = [&](int k) { return (k % 7 == 3) ? e + 100 + k : std::size_t(8 + k % 13); };
  if (me != 0) {
    std::vector<std::vector<std::uint8_t>> bufs(K);
    std::vector<Request> r(K);
    for (int k = 0; k < K; ++k) {
      bufs[k].resize(size_of(k));
      Fill(bufs[k], me, 0, k);
      MP_OK(rt::Isend(bufs[k].data(), bufs[k].size(), 0, k % 5, W(), SendMode::kStandard, &r[k]));
    }
    for (auto& q : r) MP_OK(rt::Wait(&q));
  } else {
    // Per source: alternate ANY_TAG and the exact tag; all must arrive in order.
    for (int src = 1; src < n; ++src) {
      std::vector<std::vector<std::uint8_t>> bufs(K);
      std::vector<Request> r(K);
      for (int k = 0; k < K; ++k) {
        bufs[k].resize(size_of(k));
        MP_OK(rt::Irecv(bufs[k].data(), bufs[k].size(), src, (k % 2) ? rt::kAnyTag : k % 5, W(),
                        &r[k]));
      }
      for (int k = 0; k < K; ++k) {
        MP_OK(rt::Wait(&r[k]));
        MP_CHECK(r[k].status.tag == k % 5, "msg %d from %d has tag %d", k, src, r[k].status.tag);
        MP_CHECK(FirstBad(bufs[k].data(), bufs[k].size(), src, 0, k) < 0, "msg %d from %d", k, src);
      }
    }
    // ANY_SOURCE: per-source order still holds.
  }
  Barrier(W());
  if (me != 0) {
    for (int k = 0; k < 50; ++k) {
      std::uint32_t v = std::uint32_t(me * 1000 + k);
      Send(&v, sizeof v, 0, 7, W());
    }
  } else {
    std::vector<int> next(n, 0);
    for (int k = 0; k < 50 * (n - 1); ++k) {
      std::uint32_t v = 0;
      RequestStatus st = Recv(&v, sizeof v, rt::kAnySource, 7, W());
      MP_CHECK(st.source >= 1 && int(v) == st.source * 1000 + next[st.source], "got %u from %d", v,
               st.source);
      ++next[st.source];
    }
  }
}

// Example 3.14: must not deadlock (the ssend completes once the irecv is posted).
void Progress() {
  if (W()->size < 2 || W()->rank > 1) return;
  double a = 1.5, b = 2.5;
  if (W()->rank == 0) {
    Send(&a, sizeof a, 1, 0, W(), SendMode::kSynchronous);
    Send(&b, sizeof b, 1, 1, W());
  } else {
    double ra = 0, rb = 0;
    Request r;
    MP_OK(rt::Irecv(&ra, sizeof ra, 0, 0, W(), &r));
    Recv(&rb, sizeof rb, 0, 1, W());
    MP_OK(rt::Wait(&r));
    MP_CHECK(ra == 1.5 && rb == 2.5, "%g %g", ra, rb);
  }
}

// A synchronous send does not complete before its receive is posted: the
// receiver posts only after it got a token that the sender sends after
// observing its ssend still incomplete.
void Ssend() {
  if (W()->size < 2 || W()->rank > 1) return;
  const std::size_t sizes[] = {16, rt::EagerLimit() + 1000};
  for (std::size_t sz : sizes) {
    std::vector<std::uint8_t> buf(sz);
    if (W()->rank == 0) {
      Fill(buf, 0, 1, 5);
      Request r;
      MP_OK(rt::Isend(buf.data(), sz, 1, 5, W(), SendMode::kSynchronous, &r));
      for (int i = 0; i < 2000; ++i) {
        bool done = true;
        MP_OK(rt::Test(&r, &done));
        MP_CHECK(!done, "ssend of %zu bytes completed before the receive was posted", sz);
      }
      int token = 1;
      Send(&token, sizeof token, 1, 6, W());
      MP_OK(rt::Wait(&r));
    } else {
      int token = 0;
      Recv(&token, sizeof token, 0, 6, W());  // overtakes the ssend: different tag
      RequestStatus st = Recv(buf.data(), sz, 0, 5, W());
      MP_CHECK(st.bytes == sz && FirstBad(buf.data(), sz, 0, 1, 5) < 0, "ssend data");
    }
  }
}

// Buffered sends complete locally; detach waits until they are delivered.
void Bsend() {
  if (W()->size < 2 || W()->rank > 1) return;
  const int K = 20;
  const std::size_t sz = 3000, big = rt::EagerLimit() * 2;
  if (W()->rank == 0) {
    std::vector<std::uint8_t> attach(K * (sz + rt::kBsendOverhead) + big + rt::kBsendOverhead);
    MP_OK(rt::BufferAttach(attach.data(), attach.size()));
    std::vector<std::uint8_t> m(sz);
    for (int k = 0; k < K; ++k) {
      Fill(m, 0, 1, k);
      Request r;
      MP_OK(rt::Isend(m.data(), sz, 1, k, W(), SendMode::kBuffered, &r));
      MP_CHECK(r.IsDone(), "bsend %d not complete at once", k);
      std::fill(m.begin(), m.end(), 0);  // the copy must already be taken
    }
    std::vector<std::uint8_t> mb(big);
    Fill(mb, 0, 1, 99);
    Request rb;
    MP_OK(rt::Isend(mb.data(), big, 1, 99, W(), SendMode::kBuffered, &rb));
    MP_CHECK(rb.IsDone(), "large bsend not complete at once");
    std::fill(mb.begin(), mb.end(), 0);
    // The large copy waits for its receiver (unmatched until the token), so
    // its block stays taken; the small ones may already be free (a
    // transport that copied them out, like the shm rings, releases them at
    // once). A message needing all the rest of the buffer cannot fit.
    std::vector<std::uint8_t> too_big(attach.size() - big - 2 * rt::kBsendOverhead + 1);
    Request over;
    Status s = rt::Isend(too_big.data(), too_big.size(), 1, 100, W(), SendMode::kBuffered, &over);
    MP_CHECK(s.code() == Code::kBuffer, "overflowing the bsend buffer gave code %d", int(s.code()));
    int token = 1;
    Send(&token, sizeof token, 1, 1000, W());
    void* p = nullptr;
    std::size_t psz = 0;
    MP_OK(rt::BufferDetach(&p, &psz));
    MP_CHECK(p == attach.data() && psz == attach.size(), "detach returned another buffer");
  } else {
    int token = 0;
    Recv(&token, sizeof token, 0, 1000, W());  // the bsends are all unexpected by now
    std::vector<std::uint8_t> m(sz);
    for (int k = 0; k < K; ++k) {
      RequestStatus st = Recv(m.data(), sz, 0, k, W());
      MP_CHECK(st.bytes == sz && FirstBad(m.data(), sz, 0, 1, k) < 0, "bsend %d data", k);
    }
    std::vector<std::uint8_t> mb(big);
    Recv(mb.data(), big, 0, 99, W());
    MP_CHECK(FirstBad(mb.data(), big, 0, 1, 99) < 0, "large bsend data");
  }
}

// Probe reports the real size (also for rendezvous messages).
void Probe() {
  if (W()->size < 2 || W()->rank > 1) return;
  const std::size_t sizes[] = {0, 100, rt::EagerLimit() + 1000, 1 << 20};
  if (W()->rank == 0) {
    // Nonblocking: the receiver probes the last one first, and a standard
    // rendezvous send only completes once it is received.
    std::vector<std::vector<std::uint8_t>> m(4);
    std::vector<Request> r(4);
    for (int i = 0; i < 4; ++i) {
      m[i].resize(sizes[i]);
      Fill(m[i], 0, 1, i);
      MP_OK(rt::Isend(m[i].data(), m[i].size(), 1, 40 + i, W(), SendMode::kStandard, &r[i]));
    }
    for (auto& q : r) MP_OK(rt::Wait(&q));
  } else {
    for (int i = 3; i >= 0; --i) {
      RequestStatus st;
      MP_OK(rt::Probe(rt::kAnySource, 40 + i, W(), &st));
      MP_CHECK(st.bytes == sizes[i] && st.source == 0 && st.tag == 40 + i, "probe %d: %zu bytes", i,
               st.bytes);
      bool flag = false;
      MP_OK(rt::Iprobe(0, 40 + i, W(), &flag, &st));
      MP_CHECK(flag && st.bytes == sizes[i], "iprobe %d", i);
      std::vector<std::uint8_t> m(st.bytes);
      st = Recv(m.data(), m.size(), st.source, st.tag, W());
      MP_CHECK(FirstBad(m.data(), m.size(), 0, 1, i) < 0, "probed message %d data", i);
    }
    bool flag = true;
    RequestStatus st;
    for (int i = 0; i < 4; ++i) {  // each was received once; ANY_TAG could see the barrier
      MP_OK(rt::Iprobe(0, 40 + i, W(), &flag, &st));
      MP_CHECK(!flag, "message %d probed again after its receive", i);
    }
  }
}

// Cancel a posted receive; truncation; MPI_PROC_NULL.
void CancelTruncate() {
  Request c;
  int dummy = 0;
  MP_OK(rt::Irecv(&dummy, sizeof dummy, rt::kAnySource, 777, W(), &c));
  MP_OK(rt::Cancel(&c));
  MP_OK(rt::Wait(&c));
  MP_CHECK(c.status.cancelled, "receive not cancelled");
  Request pn;
  MP_OK(rt::Irecv(&dummy, sizeof dummy, rt::kProcNull, 1, W(), &pn));
  MP_CHECK(pn.IsDone() && pn.status.source == rt::kProcNull && pn.status.tag == rt::kAnyTag &&
               pn.status.bytes == 0,
           "PROC_NULL receive");
  MP_OK(rt::Isend(&dummy, sizeof dummy, rt::kProcNull, 1, W(), SendMode::kStandard, &pn));
  MP_CHECK(pn.IsDone(), "PROC_NULL send");
  if (W()->size < 2 || W()->rank > 1) return;
  const std::size_t e = rt::EagerLimit();
  const std::size_t full[] = {1000, e + 5000, 10, 200};
  const std::size_t cap[] = {500, e + 10, 0, 7};
  if (W()->rank == 0) {
    for (int i = 0; i < 4; ++i) {
      std::vector<std::uint8_t> m(full[i]);
      Fill(m, 0, 1, i);
      Send(m.data(), m.size(), 1, 60 + i, W());
    }
  } else {
    for (int i = 0; i < 4; ++i) {
      std::vector<std::uint8_t> m(cap[i] + 16, 0xEE);
      Request r;
      MP_OK(rt::Irecv(m.data(), cap[i], 0, 60 + i, W(), &r));
      MP_OK(rt::Wait(&r));
      MP_CHECK(r.status.error == int(Code::kTruncate) && r.status.bytes == cap[i],
               "truncation %d: error %d bytes %zu", i, r.status.error, r.status.bytes);
      MP_CHECK(FirstBad(m.data(), cap[i], 0, 1, i) < 0, "truncated prefix %d", i);
      for (std::size_t j = cap[i]; j < m.size(); ++j)
        MP_CHECK(m[j] == 0xEE, "wrote past the buffer");
    }
  }
}

// Dup and split communicators keep their traffic apart.
void Comms() {
  const int n = W()->size, me = W()->rank;
  Comm* dup = nullptr;
  MP_OK(rt::CommDup(W(), &dup));
  MP_CHECK(dup->size == n && dup->rank == me && dup->context_id != W()->context_id, "dup");
  if (n >= 2 && me < 2) {
    const int peer = 1 - me;
    int a = 100 + me, b = 200 + me, ra = 0, rb = 0;
    Request s1, s2, r1, r2;
    MP_OK(rt::Isend(&a, sizeof a, peer, 3, W(), SendMode::kStandard, &s1));
    MP_OK(rt::Isend(&b, sizeof b, peer, 3, dup, SendMode::kStandard, &s2));
    MP_OK(rt::Irecv(&rb, sizeof rb, rt::kAnySource, rt::kAnyTag, dup, &r2));
    MP_OK(rt::Irecv(&ra, sizeof ra, rt::kAnySource, rt::kAnyTag, W(), &r1));
    for (Request* q : {&s1, &s2, &r1, &r2}) MP_OK(rt::Wait(q));
    MP_CHECK(ra == 100 + peer && rb == 200 + peer, "comm separation: %d %d", ra, rb);
  }
  // Split by parity, reversed key order; ring inside each part.
  Comm* part = nullptr;
  MP_OK(rt::CommSplit(W(), me % 2, -me, &part));
  const int psize = (n - me % 2 + 1) / 2;
  MP_CHECK(part && part->size == psize, "split size %d want %d", part ? part->size : -1, psize);
  MP_CHECK(part->WorldRank(part->rank) == me, "split rank mapping");
  const int right = (part->rank + 1) % part->size,
            left = (part->rank - 1 + part->size) % part->size;
  int v = me, got = -1;
  Request s, r;
  MP_OK(rt::Irecv(&got, sizeof got, rt::kAnySource, 9, part, &r));
  MP_OK(rt::Isend(&v, sizeof v, right, 9, part, SendMode::kStandard, &s));
  MP_OK(rt::Wait(&s));
  MP_OK(rt::Wait(&r));
  MP_CHECK(r.status.source == left && got == part->WorldRank(left), "split ring: from %d value %d",
           r.status.source, got);
  Comm* none = reinterpret_cast<Comm*>(1);
  MP_OK(rt::CommSplit(W(), me == 0 ? -1 : 0, 0, &none));
  MP_CHECK((me == 0) == (none == nullptr), "MPI_UNDEFINED color");
  if (none) MP_OK(rt::CommFree(none));
  MP_OK(rt::CommFree(part));
  MP_OK(rt::CommFree(dup));
  // Freed ids are reused and still agreed on.
  MP_OK(rt::CommDup(W(), &dup));
  int x = me, y = -1;
  Request s3, r3;
  MP_OK(rt::Irecv(&y, sizeof y, (me - 1 + n) % n, 0, dup, &r3));
  MP_OK(rt::Isend(&x, sizeof x, (me + 1) % n, 0, dup, SendMode::kStandard, &s3));
  MP_OK(rt::Wait(&s3));
  MP_OK(rt::Wait(&r3));
  MP_CHECK(y == (me - 1 + n) % n, "dup after free");
  MP_OK(rt::CommFree(dup));
  // Self.
  int z = 42, zz = 0;
  Request s4, r4;
  MP_OK(rt::Irecv(&zz, sizeof zz, 0, 1, rt::Self(), &r4));
  MP_OK(rt::Isend(&z, sizeof z, 0, 1, rt::Self(), SendMode::kStandard, &s4));
  MP_OK(rt::Wait(&s4));
  MP_OK(rt::Wait(&r4));
  MP_CHECK(zz == 42 && r4.status.source == 0, "self");
  std::vector<std::uint8_t> big(rt::EagerLimit() * 4 + 3), bigin(big.size());
  Fill(big, me, me, 77);
  MP_OK(rt::Irecv(bigin.data(), bigin.size(), 0, 2, rt::Self(), &r4));
  MP_OK(rt::Isend(big.data(), big.size(), 0, 2, rt::Self(), SendMode::kSynchronous, &s4));
  MP_OK(rt::Wait(&s4));
  MP_OK(rt::Wait(&r4));
  MP_CHECK(FirstBad(bigin.data(), bigin.size(), me, me, 77) < 0, "large self message");
  // A communicator from an explicit rank list (reversed world order).
  std::vector<int> rev(n);
  for (int i = 0; i < n; ++i) rev[i] = n - 1 - i;
  Comm* rc = nullptr;
  MP_OK(rt::CommCreateFromRanks(W(), rev.data(), n, &rc));
  MP_CHECK(rc && rc->rank == n - 1 - me, "created comm rank %d", rc ? rc->rank : -1);
  int q = me, qq = -1;
  MP_OK(rt::Irecv(&qq, sizeof qq, rt::kAnySource, 3, rc, &r4));
  MP_OK(rt::Isend(&q, sizeof q, (rc->rank + 1) % n, 3, rc, SendMode::kStandard, &s4));
  MP_OK(rt::Wait(&s4));
  MP_OK(rt::Wait(&r4));
  MP_CHECK(r4.status.source == (rc->rank - 1 + n) % n && qq == rc->WorldRank(r4.status.source),
           "created comm source %d value %d", r4.status.source, qq);
  MP_OK(rt::CommFree(rc));
}

// MPI_THREAD_MULTIPLE: two threads per rank exchange with both ring
// neighbours at once, each on its own tag, all waits concurrent.
void Threads() {
  MP_CHECK(rt::ThreadLevel() == 3, "thread level %d", rt::ThreadLevel());
  const int n = W()->size, me = W()->rank;
  auto body = [&](int t) {
    const int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int i = 0; i < 120; ++i) {
      std::vector<std::uint8_t> out(i % 3 == 0 ? rt::EagerLimit() + 64 : 40 + i), in(out.size());
      Fill(out, me, t, i);
      Request s, r;
      MP_OK(rt::Irecv(in.data(), in.size(), left, 100 + t, W(), &r));
      MP_OK(rt::Isend(out.data(), out.size(), right, 100 + t, W(), SendMode::kStandard, &s));
      MP_OK(rt::Wait(&r));
      MP_OK(rt::Wait(&s));
      MP_CHECK(FirstBad(in.data(), in.size(), left, t, i) < 0, "thread %d message %d", t, i);
    }
  };
  std::thread a(body, 0), b(body, 1);
  a.join();
  b.join();
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  std::string what = argc > 1 ? argv[1] : "all";
  MP_OK(rt::Init(what == "threads" ? 3 : 0, &provided));
  auto run = [&](const char* name, void (*f)()) {
    if (what != "all" && what != name) return;
    f();
    Barrier(W());
    if (W()->rank == 0)
      std::printf("p2p %s: ok on %s with %d ranks\n", name, rt::ProviderName(), W()->size);
  };
  run("sizes", Sizes);
  run("order", Order);
  run("progress", Progress);
  run("ssend", Ssend);
  run("bsend", Bsend);
  run("probe", Probe);
  run("cancel", CancelTruncate);
  run("comms", Comms);
  if (what == "threads") run("threads", Threads);
  MP_OK(rt::Finalize());
  return 0;
}
