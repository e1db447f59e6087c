/* prov_shm_recv_race: does a libfabric provider lose a tagged match when one
 * thread posts fi_trecv while another thread reads the CQ (manual progress)
 * as the message arrives? Without nicq. Two processes (fork): the sender
 * injects one message per round; the receiver's main thread posts that
 * round's receive at about the same moment while its progress thread reads
 * the CQ. A round whose receive has not completed after 2 s is a lost match:
 * the receive stays posted and the message unexpected, each missing the
 * other. Both endpoints are FI_THREAD_SAFE.
 *
 * Measured on Debian's libfabric 1.17 shm: lost within 200-2200 rounds in
 * each of five runs; with `serialize` (the receive post and the CQ reads take
 * one mutex, as the emulated backend's ProviderCall does) no round was lost.
 *
 * usage: prov_shm_recv_race [provider=shm] [rounds=100000] [serialize]
 * exit status: 0 every match made, 1 a match was lost, 2 setup failed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMsgBytes = 128, kSpins = 4096 };
static const uint64_t kTag = 0x1000000000000006ull;

/* Shared by the two processes (an anonymous shared mapping made before fork). */
struct Shared {
  _Atomic long round_sent; /* sender: this round's message is about to go */
  _Atomic long round_done; /* receiver: this round's receive completed */
  _Atomic int lost;
  _Atomic int named;
  char name[2][256];
  size_t namelen[2];
};

static struct Shared* g_shared;
static struct fid_ep* g_ep;
static struct fid_cq* g_cq;
static int g_serialize;
static pthread_mutex_t g_provider_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_poster_waiting; /* glibc mutexes are not fair: the reader steps aside */
static _Atomic long g_completions;
static _Atomic int g_stop;

static void Check(int rc, const char* what) {
  if (rc != 0) {
    fprintf(stderr, "%s: %s\n", what, fi_strerror(rc < 0 ? -rc : rc));
    exit(2);
  }
}

/* Spins a little, then yields: the machine may have two cores. */
static void Pause(unsigned* spins) {
  if (++*spins % kSpins == 0) sched_yield();
}

static void OpenEndpoint(const char* provider, int me) {
  struct fi_info* hints = fi_allocinfo();
  struct fi_info* info = NULL;
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_SEND | FI_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->threading = FI_THREAD_SAFE;
  hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_ENDPOINT | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup(provider);
  Check(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info), "fi_getinfo");
  struct fid_fabric* fabric;
  struct fid_domain* domain;
  struct fid_av* av;
  Check(fi_fabric(info->fabric_attr, &fabric, NULL), "fi_fabric");
  Check(fi_domain(fabric, info, &domain, NULL), "fi_domain");
  struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
  Check(fi_av_open(domain, &av_attr, &av, NULL), "fi_av_open");
  struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
  Check(fi_cq_open(domain, &cq_attr, &g_cq, NULL), "fi_cq_open");
  Check(fi_endpoint(domain, info, &g_ep, NULL), "fi_endpoint");
  Check(fi_ep_bind(g_ep, &av->fid, 0), "fi_ep_bind av");
  Check(fi_ep_bind(g_ep, &g_cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
  Check(fi_enable(g_ep), "fi_enable");
  g_shared->namelen[me] = sizeof(g_shared->name[me]);
  Check(fi_getname(&g_ep->fid, g_shared->name[me], &g_shared->namelen[me]), "fi_getname");
  atomic_fetch_add(&g_shared->named, 1);
  while (atomic_load(&g_shared->named) < 2) sched_yield();
  fi_addr_t peer;
  if (fi_av_insert(av, g_shared->name[1 - me], 1, &peer, 0, NULL) != 1) Check(-FI_EINVAL, "av");
  fi_freeinfo(hints);
}

static long ReadCq(void) {
  struct fi_cq_tagged_entry e[8];
  if (g_serialize) pthread_mutex_lock(&g_provider_mu);
  const ssize_t n = fi_cq_read(g_cq, e, 8);
  if (g_serialize) pthread_mutex_unlock(&g_provider_mu);
  return n > 0 ? (long)n : 0;
}

static void* ProgressThread(void* arg) {
  (void)arg;
  unsigned spins = 0;
  while (!atomic_load(&g_stop)) {
    while (g_serialize && atomic_load(&g_poster_waiting)) sched_yield();
    const long n = ReadCq();
    if (n > 0)
      atomic_fetch_add(&g_completions, n);
    else
      Pause(&spins);
  }
  return NULL;
}

/* A few hundred cycles of random delay: the post and the arrival drift
 * across each other from round to round. */
static void Jitter(unsigned* seed) {
  const int spins = rand_r(seed) % 2000;
  for (volatile int i = 0; i < spins; ++i) {
  }
}

static int Send(long rounds) {
  static char buf[kMsgBytes];
  unsigned seed = 2, spins = 0;
  for (long r = 1; r <= rounds && !atomic_load(&g_shared->lost); ++r) {
    atomic_store(&g_shared->round_sent, r);
    Jitter(&seed);
    ssize_t rc;
    while ((rc = fi_tinject(g_ep, buf, sizeof buf, 0, kTag)) == -FI_EAGAIN) ReadCq();
    Check((int)rc, "fi_tinject");
    while (atomic_load(&g_shared->round_done) < r && !atomic_load(&g_shared->lost)) {
      ReadCq();
      Pause(&spins);
    }
  }
  return 0;
}

static int Receive(const char* provider, long rounds) {
  static char buf[kMsgBytes];
  static struct fi_context2 ctx;
  unsigned seed = 1, spins = 0;
  pthread_t progress;
  pthread_create(&progress, NULL, ProgressThread, NULL);
  int lost = 0;
  for (long r = 1; r <= rounds && !lost; ++r) {
    while (atomic_load(&g_shared->round_sent) < r) Pause(&spins);
    Jitter(&seed);
    ssize_t rc;
    do {
      if (g_serialize) {
        atomic_store(&g_poster_waiting, 1);
        pthread_mutex_lock(&g_provider_mu);
      }
      rc = fi_trecv(g_ep, buf, sizeof buf, NULL, 0, kTag, 0, &ctx);
      if (g_serialize) {
        pthread_mutex_unlock(&g_provider_mu);
        atomic_store(&g_poster_waiting, 0);
      }
    } while (rc == -FI_EAGAIN);
    Check((int)rc, "fi_trecv");
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (atomic_load(&g_completions) < r) {
      Pause(&spins);
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec - t0.tv_sec > 2) {
        printf(
            "%s%s: LOST the match of round %ld: receive posted, message injected, no "
            "completion in 2 s\n",
            provider, g_serialize ? " (serialized)" : "", r);
        atomic_store(&g_shared->lost, 1);
        lost = 1;
        break;
      }
    }
    atomic_store(&g_shared->round_done, r);
  }
  atomic_store(&g_stop, 1);
  pthread_join(progress, NULL);
  if (!lost)
    printf("%s%s: %ld rounds, every match made\n", provider, g_serialize ? " (serialized)" : "",
           rounds);
  return lost;
}

int main(int argc, char** argv) {
  const char* provider = argc > 1 ? argv[1] : "shm";
  const long rounds = argc > 2 && atol(argv[2]) > 0 ? atol(argv[2]) : 100000;
  g_serialize = argc > 3 && strcmp(argv[3], "serialize") == 0;
  g_shared =
      mmap(NULL, sizeof *g_shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (g_shared == MAP_FAILED) return 2;
  memset(g_shared, 0, sizeof *g_shared);
  const pid_t child = fork();
  if (child < 0) return 2;
  OpenEndpoint(provider, child == 0 ? 1 : 0);
  if (child == 0) return Send(rounds);
  const int lost = Receive(provider, rounds);
  int status = 0;
  waitpid(child, &status, 0);
  return lost ? 1 : 0;
}
