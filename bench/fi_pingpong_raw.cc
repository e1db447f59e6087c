// The floor under nicq's latency: a tagged ping-pong written directly on
// libfabric (RDM endpoint, fi_tsend/fi_trecv, one CQ), with no matching
// engine, requests or progress thread of nicq's in the way. Ranks find each
// other through nicq's bootstrap (run it under nicqrun -n 2).
//
// usage: nicqrun -n 2 fi_pingpong_raw [-p provider] [-m min:max] [-i iters] [-x warmup] [-b]
//   -p   libfabric provider (default $NICQ_PROVIDER, else tcp;ofi_rxm)
//   -b   block in fi_cq_sread instead of polling (sockets needs it on 2 cores:
//        its progress thread starves when both ranks poll)
// Output as osu_latency: "# Size  Latency (us)".
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "boot/bootstrap.h"

namespace {

struct Options {
  std::string provider;
  long min_size = 1, max_size = 4L << 20;
  int iters = 10000, warmup = 200;
  bool block = false;
  bool histogram = false;  // -H: per-iteration round trips, log2 buckets (stderr)
};

[[noreturn]] void Die(const char* call, int rc) {
  std::fprintf(stderr, "fi_pingpong_raw: %s: %s (%d)\n", call, fi_strerror(-rc), rc);
  std::exit(1);
}

#define CHECK(call)                \
  do {                             \
    int rc_ = (call);              \
    if (rc_ != 0) Die(#call, rc_); \
  } while (0)

struct Fabric {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  fid_mr* mr = nullptr;
  void* desc = nullptr;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  bool block = false;
};

void Open(Fabric& f, const Options& o, std::vector<char>& buf) {
  fi_info* hints = fi_allocinfo();
  hints->caps = FI_TAGGED;
  hints->ep_attr->type = FI_EP_RDM;
  hints->mode = FI_CONTEXT;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  hints->fabric_attr->prov_name = strdup(o.provider.c_str());
  CHECK(fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &f.info));
  fi_freeinfo(hints);
  CHECK(fi_fabric(f.info->fabric_attr, &f.fabric, nullptr));
  CHECK(fi_domain(f.fabric, f.info, &f.domain, nullptr));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  CHECK(fi_av_open(f.domain, &av_attr, &f.av, nullptr));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = 128;
  cq_attr.wait_obj = o.block ? FI_WAIT_UNSPEC : FI_WAIT_NONE;
  CHECK(fi_cq_open(f.domain, &cq_attr, &f.cq, nullptr));
  CHECK(fi_endpoint(f.domain, f.info, &f.ep, nullptr));
  CHECK(fi_ep_bind(f.ep, &f.cq->fid, FI_TRANSMIT | FI_RECV));
  CHECK(fi_ep_bind(f.ep, &f.av->fid, 0));
  CHECK(fi_enable(f.ep));
  if (f.info->domain_attr->mr_mode & FI_MR_LOCAL) {
    CHECK(fi_mr_reg(f.domain, buf.data(), buf.size(), FI_SEND | FI_RECV, 0, 0, 0, &f.mr, nullptr));
    f.desc = fi_mr_desc(f.mr);
  }
  f.block = o.block;
}

void Close(Fabric& f) {
  if (f.mr) fi_close(&f.mr->fid);
  fi_close(&f.ep->fid);
  fi_close(&f.cq->fid);
  fi_close(&f.av->fid);
  fi_close(&f.domain->fid);
  fi_close(&f.fabric->fid);
  fi_freeinfo(f.info);
}

// Reads what the CQ has (blocking when asked and `may_block`); returns the
// number of completions. Providers with manual progress advance only here.
int Progress(Fabric& f, bool may_block) {
  fi_cq_tagged_entry e[4];
  ssize_t got =
      f.block && may_block ? fi_cq_sread(f.cq, e, 4, nullptr, -1) : fi_cq_read(f.cq, e, 4);
  if (got > 0) return static_cast<int>(got);
  if (got == -FI_EAGAIN) return 0;
  if (got == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    fi_cq_readerr(f.cq, &err, 0);
    std::fprintf(stderr, "fi_pingpong_raw: completion error: %s\n",
                 fi_cq_strerror(f.cq, err.prov_errno, err.err_data, nullptr, 0));
    std::exit(1);
  }
  Die("fi_cq_read", static_cast<int>(got));
}

// Waits for `n` more completions than `done` counted: poll with a yield now
// and then so that a provider's own progress thread gets the core, or block.
void WaitCompletions(Fabric& f, int& done, int n) {
  int spins = 0;
  while (done < n) {
    int got = Progress(f, true);
    done += got;
    if (got == 0 && ++spins % 4096 == 0) sched_yield();
  }
}

// Posts with retry: -FI_EAGAIN means the provider needs progress first.
template <typename Op>
void Post(Fabric& f, int& done, const char* what, Op op) {
  for (;;) {
    ssize_t rc = op();
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) Die(what, static_cast<int>(rc));
    done += Progress(f, false);
    sched_yield();
  }
}

bool Parse(int argc, char** argv, Options& o) {
  const char* env = std::getenv("NICQ_PROVIDER");
  o.provider = env && *env && std::strcmp(env, "auto") != 0 ? env : "tcp;ofi_rxm";
  int c;
  while ((c = getopt(argc, argv, "p:m:i:x:bhH")) != -1) {
    switch (c) {
      case 'p':
        o.provider = optarg;
        break;
      case 'm': {
        const char* colon = std::strchr(optarg, ':');
        if (colon) {
          if (colon != optarg) o.min_size = std::atol(optarg);
          if (colon[1]) o.max_size = std::atol(colon + 1);
        } else {
          o.max_size = std::atol(optarg);
        }
        break;
      }
      case 'i':
        o.iters = std::atoi(optarg);
        break;
      case 'x':
        o.warmup = std::atoi(optarg);
        break;
      case 'b':
        o.block = true;
        break;
      case 'H':
        o.histogram = true;
        break;
      default:
        return false;
    }
  }
  return o.min_size >= 1 && o.max_size >= o.min_size && o.iters > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: %s [-p provider] [-m min:max] [-i iters] [-x warmup] [-b] [-H]\n",
                 argv[0]);
    return 2;
  }
  std::unique_ptr<nicq::Bootstrap> boot;
  nicq::Status st = nicq::CreateBootstrap(boot);
  if (!st.ok() || boot->Size() != 2) {
    std::fprintf(stderr, "fi_pingpong_raw: run with nicqrun -n 2 (%s)\n", st.message().c_str());
    return 2;
  }
  const int rank = boot->Rank();
  std::vector<char> buf(2 * o.max_size, 'x');  // [send | recv]
  Fabric f;
  Open(f, o, buf);

  char name[256];
  size_t len = sizeof(name);
  std::memset(name, 0, sizeof(name));
  CHECK(fi_getname(&f.ep->fid, name, &len));
  std::vector<std::uint8_t> names;
  if (!boot->Allgather(name, sizeof(name), names).ok()) return 1;
  fi_addr_t addrs[2];
  for (int r = 0; r < 2; ++r)  // one at a time: each name sits in a 256-byte slot
    if (fi_av_insert(f.av, names.data() + r * sizeof(name), 1, &addrs[r], 0, nullptr) != 1)
      Die("fi_av_insert", -FI_EOTHER);
  f.peer = addrs[1 - rank];

  char* sbuf = buf.data();
  char* rbuf = buf.data() + o.max_size;
  fi_context ctx[2];
  if (rank == 0) {
    std::printf("# fi_pingpong_raw: libfabric %s tagged ping-pong (%s)\n", o.provider.c_str(),
                o.block ? "fi_cq_sread" : "polling");
    std::printf("# %-10s%18s\n", "Size", "Latency (us)");
    std::fflush(stdout);
  }
  for (long n = o.min_size; n <= o.max_size; n *= 2) {
    const int iters = n > 8192 ? std::max(10, o.iters / 10) : o.iters;
    const int warmup = n > 8192 ? o.warmup / 10 : o.warmup;
    if (!boot->Barrier().ok()) return 1;
    auto t0 = std::chrono::steady_clock::now();
    // Round trips by power-of-two bucket of ns (-H): an average hides
    // whether every iteration is slower or a few stall.
    long hist[40] = {};
    auto ti = t0;
    for (int i = 0; i < iters + warmup; ++i) {
      if (i == warmup) t0 = std::chrono::steady_clock::now();
      if (o.histogram && i >= warmup) {
        const auto now = std::chrono::steady_clock::now();
        if (i > warmup) {
          long ns = long(std::chrono::duration_cast<std::chrono::nanoseconds>(now - ti).count());
          int b = 0;
          while (ns > 1 && b < 39) ns >>= 1, ++b;
          ++hist[b];
        }
        ti = now;
      }
      // The receive is always posted before the peer can send to it.
      int done = 0;
      auto recv = [&] { return fi_trecv(f.ep, rbuf, n, f.desc, f.peer, 7, 0, &ctx[0]); };
      auto send = [&] { return fi_tsend(f.ep, sbuf, n, f.desc, f.peer, 7, &ctx[1]); };
      Post(f, done, "fi_trecv", recv);
      if (rank == 0) {
        Post(f, done, "fi_tsend", send);
        WaitCompletions(f, done, 2);
      } else {
        WaitCompletions(f, done, 1);
        Post(f, done, "fi_tsend", send);
        WaitCompletions(f, done, 2);
      }
    }
    std::chrono::duration<double, std::micro> us = std::chrono::steady_clock::now() - t0;
    if (rank == 0) {
      std::printf("%-10ld%18.2f\n", n, us.count() / (2.0 * iters));
      if (o.histogram) {
        std::fprintf(stderr, "# %ld B round trips (ns, log2 buckets):", n);
        for (int b = 0; b < 40; ++b)
          if (hist[b]) std::fprintf(stderr, " <%ld:%ld", 2L << b, hist[b]);
        std::fprintf(stderr, "\n");
      }
      std::fflush(stdout);
    }
  }
  if (!boot->Barrier().ok()) return 1;
  Close(f);
  (void)boot->Finalize();
  return 0;
}
