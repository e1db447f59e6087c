/* Point-to-point conformance sweep (2 or more ranks; rank pairs (0,1),
 * (2,3), ... run the pairwise parts, every rank the many-to-one parts):
 *  - the four send modes, each blocking, nonblocking and persistent (two
 *    starts with new data), against blocking, nonblocking and persistent
 *    receives; derived types on both sides with different layouts of the
 *    same type signature; counts 0, 1, 7, 1000; every element and every
 *    hole of the receive buffer checked, and every status field
 *    (MPI_SOURCE, MPI_TAG, MPI_ERROR left alone, MPI_Get_count,
 *    MPI_Get_elements);
 *  - MPI_ANY_SOURCE / MPI_ANY_TAG with the status naming the real sender;
 *  - MPI_Probe / MPI_Iprobe, then a receive of exactly what was probed;
 *  - MPI_PROC_NULL (status source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0);
 *  - truncation: MPI_ERR_TRUNCATE under MPI_ERRORS_RETURN from MPI_Recv,
 *    MPI_Wait and MPI_Waitall (MPI_ERR_IN_STATUS), the status filled, and
 *    no byte written past the receive buffer;
 *  - non-overtaking: messages between one pair with one tag arrive in
 *    order, small and large (eager and rendezvous) interleaved, over all
 *    send modes.
 * Argument "slice" (the providers whose transport is all that differs from
 * a full run's): every send mode and form pair with every count, each with
 * one of the layouts in turn (every layout 16 times), instead of every
 * layout with each. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep.h"

enum { MODE_STD, MODE_BUFFERED, MODE_SYNC, MODE_READY, NMODES };
static const char* const mode_names[] = {"standard", "buffered", "synchronous", "ready"};
enum { F_BLOCKING, F_NONBLOCKING, F_PERSISTENT, NF };
static const char* const form_names[] = {"blocking", "nonblocking", "persistent"};

#define STATUS_SENTINEL 0x5eed
static MPI_Comm g_comm; /* a dup of world with MPI_ERRORS_RETURN */
static int g_rank, g_size;

static void init_status(MPI_Status* st) {
  st->MPI_SOURCE = -99;
  st->MPI_TAG = -99;
  st->MPI_ERROR = STATUS_SENTINEL;
}

/* The status of a received message: source, tag, counts; MPI_ERROR is not
 * touched by single-completion calls (MPI-4.1 3.2.5). */
static void check_status(const MPI_Status* st, int source, int tag, MPI_Datatype type, int count,
                         int elements, int error_touched_ok) {
  SW_CHECK(st->MPI_SOURCE == source, "status MPI_SOURCE %d, expected %d", st->MPI_SOURCE, source);
  SW_CHECK(st->MPI_TAG == tag, "status MPI_TAG %d, expected %d", st->MPI_TAG, tag);
  SW_CHECK(st->MPI_ERROR == STATUS_SENTINEL || (error_touched_ok && st->MPI_ERROR == MPI_SUCCESS),
           "status MPI_ERROR changed to %d by a single-completion call", st->MPI_ERROR);
  int n = -5;
  SW_OK(MPI_Get_count(st, type, &n));
  SW_CHECK(n == count, "MPI_Get_count %d, expected %d", n, count);
  SW_OK(MPI_Get_elements(st, type, &n));
  SW_CHECK(n == elements, "MPI_Get_elements %d, expected %d", n, elements);
  MPI_Count nx = -5;
  SW_OK(MPI_Get_elements_x(st, type, &nx));
  SW_CHECK(nx == elements, "MPI_Get_elements_x %lld, expected %d", (long long)nx, elements);
}

/* Bounded polling: no test waits forever, and each idle turn sleeps. */
static void nap(void) {
  struct timespec ts = {0, 20000};
  nanosleep(&ts, NULL);
}

/* ---- modes x forms x layouts ------------------------------------------------------------ */
typedef struct {
  const char* send;
  const char* recv;
} Layout;
/* Same signature, different layouts (and the same type on both ends). */
static const Layout k_layouts[] = {
    {"MPI_INT", "MPI_INT"},
    {"vector_double", "MPI_DOUBLE"},
    {"MPI_DOUBLE", "vector_double"},
    {"resized_neg_int", "struct_int_holes"},
    {"contig2_resized_neg", "contig3_int"},
    {"indexed_short", "MPI_SHORT"},
    {"struct_mixed", "struct_mixed"},
    {"contig2_double_int", "MPI_DOUBLE_INT"},
    {"hvector_int8", "MPI_INT8_T"},
};
static const long k_counts[] = {0, 1, 7, 1000};

/* One message from rank `from` to `to`: `items` items of the send layout
 * (the receive side gets the same elements as its own items). */
static void one_transfer(int from, int to, int mode, int sform, int rform, const Layout* l,
                         long items, unsigned salt) {
  const TypeCase* st = sw_type_by_name(l->send);
  const TypeCase* rt = sw_type_by_name(l->recv);
  SW_CHECK(st && rt, "internal: layout %s/%s", l->send, l->recv);
  /* `items` of the layout with more elements per item; the other side's
   * count carries the same elements. */
  long nel = items * (st->nel > rt->nel ? st->nel : rt->nel);
  long scount = nel / st->nel, rcount = nel / rt->nel;
  int tag = (int)(salt % 1000);
  sw_set_ctx("p2p mode=%s send=%s(%s x%ld) recv=%s(%s x%ld) from=%d to=%d tag=%d", mode_names[mode],
             form_names[sform], st->name, items, form_names[rform], rt->name, rcount, from, to,
             tag);
  int starts = (sform == F_PERSISTENT || rform == F_PERSISTENT) ? 2 : 1;
  if (g_rank == from) {
    Buf b;
    sw_buf_alloc(&b, st, scount);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int s = 0; s < starts; ++s) {
      sw_buf_sentinel(&b);
      sw_put_items(&b, 0, st, 0, scount, sw_stream(from, to), 0, salt * 4 + (unsigned)s, RC_MOVE);
      if (mode == MODE_READY) /* the receive is posted: wait for its token */
        SW_OK(MPI_Recv(NULL, 0, MPI_INT, to, 30001, g_comm, MPI_STATUS_IGNORE));
      int n = (int)scount;
      void* p = b.base;
      if (sform == F_BLOCKING) {
        int rc = mode == MODE_STD        ? MPI_Send(p, n, st->type, to, tag, g_comm)
                 : mode == MODE_BUFFERED ? MPI_Bsend(p, n, st->type, to, tag, g_comm)
                 : mode == MODE_SYNC     ? MPI_Ssend(p, n, st->type, to, tag, g_comm)
                                         : MPI_Rsend(p, n, st->type, to, tag, g_comm);
        SW_OK(rc);
      } else {
        if (sform == F_NONBLOCKING || s == 0) {
          int rc;
          if (sform == F_NONBLOCKING)
            rc = mode == MODE_STD        ? MPI_Isend(p, n, st->type, to, tag, g_comm, &req)
                 : mode == MODE_BUFFERED ? MPI_Ibsend(p, n, st->type, to, tag, g_comm, &req)
                 : mode == MODE_SYNC     ? MPI_Issend(p, n, st->type, to, tag, g_comm, &req)
                                         : MPI_Irsend(p, n, st->type, to, tag, g_comm, &req);
          else
            rc = mode == MODE_STD        ? MPI_Send_init(p, n, st->type, to, tag, g_comm, &req)
                 : mode == MODE_BUFFERED ? MPI_Bsend_init(p, n, st->type, to, tag, g_comm, &req)
                 : mode == MODE_SYNC     ? MPI_Ssend_init(p, n, st->type, to, tag, g_comm, &req)
                                         : MPI_Rsend_init(p, n, st->type, to, tag, g_comm, &req);
          SW_OK(rc);
        }
        if (sform == F_PERSISTENT) SW_OK(MPI_Start(&req));
        MPI_Status sst;
        init_status(&sst);
        SW_OK(MPI_Wait(&req, &sst));
      }
      /* The send buffer is unchanged. */
      Buf x;
      sw_buf_alloc(&x, st, scount);
      x.salt = b.salt;
      sw_buf_sentinel(&x);
      sw_put_items(&x, 0, st, 0, scount, sw_stream(from, to), 0, salt * 4 + (unsigned)s, RC_MOVE);
      sw_compare(&b, &x, st, "send buffer (must not change)");
      sw_buf_free(&x);
    }
    if (sform == F_PERSISTENT) SW_OK(MPI_Request_free(&req));
    sw_buf_free(&b);
  } else if (g_rank == to) {
    Buf b, x;
    sw_buf_alloc(&b, rt, rcount);
    sw_buf_alloc(&x, rt, rcount);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int s = 0; s < starts; ++s) {
      sw_buf_sentinel(&b);
      MPI_Status rst;
      init_status(&rst);
      int n = (int)rcount;
      if (rform == F_BLOCKING && mode != MODE_READY) {
        SW_OK(MPI_Recv(b.base, n, rt->type, from, tag, g_comm, &rst));
      } else {
        if (rform == F_PERSISTENT && s == 0)
          SW_OK(MPI_Recv_init(b.base, n, rt->type, from, tag, g_comm, &req));
        if (rform == F_PERSISTENT)
          SW_OK(MPI_Start(&req));
        else
          SW_OK(MPI_Irecv(b.base, n, rt->type, from, tag, g_comm, &req));
        if (mode == MODE_READY) SW_OK(MPI_Send(NULL, 0, MPI_INT, from, 30001, g_comm));
        SW_OK(MPI_Wait(&req, &rst));
      }
      sw_buf_copy(&x, &b);
      sw_buf_sentinel(&x);
      sw_put_items(&x, 0, rt, 0, rcount, sw_stream(from, to), 0, salt * 4 + (unsigned)s, RC_MOVE);
      sw_compare(&b, &x, rt, "receive buffer");
      int basics = 0; /* MPI_Get_elements counts a pair type's two members */
      for (int e = 0; e < rt->nel; ++e) basics += sw_kinds[rt->kind[e]].cls == KC_PAIR ? 2 : 1;
      check_status(&rst, from, tag, rt->type, (int)rcount, (int)(rcount * basics), 0);
    }
    if (rform == F_PERSISTENT) SW_OK(MPI_Request_free(&req));
    sw_buf_free(&b);
    sw_buf_free(&x);
  }
}

static void sweep_modes(void) {
  int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  int lo = g_rank & ~1;
  unsigned salt = 1;
  int nl = (int)(sizeof k_layouts / sizeof k_layouts[0]);
  for (int mode = 0; mode < NMODES; ++mode)
    for (int sf = 0; sf < NF; ++sf)
      for (int rf = 0; rf < NF; ++rf)
        for (int li = 0; li < nl; ++li)
          for (int ci = 0; ci < 4; ++ci) {
            ++salt;
            /* The slice: one layout per (mode, forms, count), in turn. */
            if (sw_opt.slice && li != (mode * NF * NF + sf * NF + rf + ci) % nl) continue;
            one_transfer(lo, lo + 1, mode, sf, rf, &k_layouts[li], k_counts[ci], salt);
            one_transfer(lo + 1, lo, mode, sf, rf, &k_layouts[li], k_counts[ci], salt + 5000);
          }
}

/* ---- wildcards and probes: every rank sends to rank 0 ---------------------------------- */
/* Payload: {sender, tag, n} then n ints; the status must agree with it. */
static void sweep_wildcards(int use_probe) {
  const int per_rank = 4;
  if (g_rank != 0) {
    for (int m = 0; m < per_rank; ++m) {
      int n = (g_rank * 3 + m * 5) % 9, tag = 100 + g_rank * 10 + m;
      int msg[12] = {g_rank, tag, n};
      for (int i = 0; i < n; ++i) msg[3 + i] = g_rank * 1000 + m * 100 + i;
      SW_OK(MPI_Send(msg, 3 + n, MPI_INT, 0, tag, g_comm));
    }
    SW_OK(MPI_Barrier(g_comm)); /* the next round's wildcards must not match these */
    return;
  }
  int next[SW_MAX_RANKS] = {0};
  for (int k = 0; k < per_rank * (g_size - 1); ++k) {
    MPI_Status st;
    init_status(&st);
    int msg[12];
    if (use_probe == 1) {
      SW_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_comm, &st));
    } else if (use_probe == 2) {
      int flag = 0;
      double deadline = MPI_Wtime() + 60;
      while (!flag) {
        SW_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_comm, &flag, &st));
        SW_CHECK(flag || MPI_Wtime() < deadline, "MPI_Iprobe found nothing for 60 s");
        if (!flag) nap();
      }
    }
    int src = MPI_ANY_SOURCE, tag = MPI_ANY_TAG, count = 12;
    if (use_probe) {
      SW_CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < g_size, "probe: MPI_SOURCE %d", st.MPI_SOURCE);
      SW_OK(MPI_Get_count(&st, MPI_INT, &count));
      src = st.MPI_SOURCE;
      tag = st.MPI_TAG;
      init_status(&st);
    }
    SW_OK(MPI_Recv(msg, count, MPI_INT, src, tag, g_comm, &st));
    int s = msg[0], m = next[s]++;
    int n = (s * 3 + m * 5) % 9;
    sw_set_ctx("p2p wildcard probe=%d message %d from %d", use_probe, m, s);
    SW_CHECK(s > 0 && s < g_size && msg[1] == 100 + s * 10 + m && msg[2] == n,
             "payload header {%d,%d,%d}: messages of one sender out of order?", msg[0], msg[1],
             msg[2]);
    check_status(&st, s, msg[1], MPI_INT, 3 + n, 3 + n, 0);
    for (int i = 0; i < n; ++i)
      SW_CHECK(msg[3 + i] == s * 1000 + m * 100 + i, "element %d is %d", i, msg[3 + i]);
  }
  SW_OK(MPI_Barrier(g_comm));
}

/* ---- MPI_PROC_NULL ------------------------------------------------------------------------ */
static void check_proc_null_status(const MPI_Status* st, const char* call) {
  SW_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG,
           "%s from MPI_PROC_NULL: status source %d tag %d, expected MPI_PROC_NULL/MPI_ANY_TAG",
           call, st->MPI_SOURCE, st->MPI_TAG);
  int n = -5;
  SW_OK(MPI_Get_count(st, MPI_INT, &n));
  SW_CHECK(n == 0, "%s from MPI_PROC_NULL: count %d", call, n);
}

static void sweep_proc_null(void) {
  sw_set_ctx("p2p MPI_PROC_NULL");
  int buf[4] = {1, 2, 3, 4};
  MPI_Status st;
  MPI_Request r;
  SW_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm));
  SW_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm));
  SW_OK(MPI_Bsend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm));
  SW_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm));
  init_status(&st);
  SW_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm, &st));
  check_proc_null_status(&st, "MPI_Recv");
  SW_CHECK(buf[0] == 1 && buf[3] == 4, "MPI_Recv from MPI_PROC_NULL wrote the buffer");
  SW_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, g_comm, &r));
  init_status(&st);
  SW_OK(MPI_Wait(&r, &st));
  check_proc_null_status(&st, "MPI_Irecv+MPI_Wait");
  SW_OK(MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm, &r));
  for (int s = 0; s < 2; ++s) {
    SW_OK(MPI_Start(&r));
    int flag = 0;
    init_status(&st);
    SW_OK(MPI_Test(&r, &flag, &st));
    SW_CHECK(flag, "persistent receive from MPI_PROC_NULL not complete at once (start %d)", s);
    check_proc_null_status(&st, "MPI_Recv_init+MPI_Start+MPI_Test");
  }
  SW_OK(MPI_Request_free(&r));
  SW_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, g_comm, &r));
  SW_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  init_status(&st);
  SW_OK(MPI_Probe(MPI_PROC_NULL, MPI_ANY_TAG, g_comm, &st));
  check_proc_null_status(&st, "MPI_Probe");
  int flag = 0;
  init_status(&st);
  SW_OK(MPI_Iprobe(MPI_PROC_NULL, 3, g_comm, &flag, &st));
  SW_CHECK(flag, "MPI_Iprobe(MPI_PROC_NULL) flag 0");
  check_proc_null_status(&st, "MPI_Iprobe");
  init_status(&st);
  int rbuf[4] = {9, 9, 9, 9};
  SW_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1, rbuf, 4, MPI_INT, MPI_PROC_NULL, 1, g_comm,
                     &st));
  SW_CHECK(rbuf[0] == 9 && rbuf[3] == 9, "MPI_Sendrecv from MPI_PROC_NULL wrote the buffer");
  check_proc_null_status(&st, "MPI_Sendrecv");
}

/* ---- truncation -------------------------------------------------------------------------- */
static void expect_truncate(int rc, const char* call) {
  int cls = -1;
  SW_CHECK(rc != MPI_SUCCESS, "%s of a too long message succeeded", call);
  MPI_Error_class(rc, &cls);
  SW_CHECK(cls == MPI_ERR_TRUNCATE, "%s: error class %d, expected MPI_ERR_TRUNCATE", call, cls);
}

static void sweep_truncate(void) {
  int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  const long sizes[] = {10, 5000}; /* eager and (likely) rendezvous */
  for (int si = 0; si < 2; ++si)
    for (int how = 0; how < 3; ++how) { /* Recv, Irecv+Wait, Irecv+Waitall */
      long n = sizes[si], got = n / 2;
      sw_set_ctx("p2p truncation: %ld ints into %ld, %s", n, got,
                 how == 0   ? "MPI_Recv"
                 : how == 1 ? "MPI_Wait"
                            : "MPI_Waitall");
      const TypeCase* t = sw_type_by_name("MPI_INT");
      if (g_rank & 1) {
        Buf b;
        sw_buf_alloc(&b, t, n);
        sw_put_items(&b, 0, t, 0, n, 7, 0, (unsigned)si, RC_MOVE);
        SW_OK(MPI_Send(b.base, (int)n, MPI_INT, partner, 77, g_comm));
        sw_buf_free(&b);
        continue;
      }
      Buf b, x;
      sw_buf_alloc(&b, t, got);
      sw_buf_alloc(&x, t, got);
      sw_buf_copy(&x, &b);
      MPI_Status st;
      init_status(&st);
      MPI_Request r;
      if (how == 0) {
        expect_truncate(MPI_Recv(b.base, (int)got, MPI_INT, partner, 77, g_comm, &st), "MPI_Recv");
      } else {
        SW_OK(MPI_Irecv(b.base, (int)got, MPI_INT, partner, 77, g_comm, &r));
        if (how == 1) {
          expect_truncate(MPI_Wait(&r, &st), "MPI_Wait");
        } else {
          int rc = MPI_Waitall(1, &r, &st), cls = -1;
          MPI_Error_class(rc, &cls);
          SW_CHECK(cls == MPI_ERR_IN_STATUS, "MPI_Waitall: class %d, expected MPI_ERR_IN_STATUS",
                   cls);
          expect_truncate(st.MPI_ERROR, "MPI_Waitall's status");
        }
        SW_CHECK(r == MPI_REQUEST_NULL, "the failed request was not released");
      }
      SW_CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 77,
               "truncated receive: status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
      /* The data that fits may land; nothing past the buffer may. */
      sw_dont_care(&x, 0, got * 4);
      sw_compare(&b, &x, t, "truncated receive buffer (bytes past its end must stay)");
      sw_buf_free(&b);
      sw_buf_free(&x);
    }
}

/* ---- non-overtaking ------------------------------------------------------------------------- */
static void sweep_order(void) {
  int partner = g_rank ^ 1;
  if (partner >= g_size) return;
  enum { N = 12 };
  const int len[N] = {1, 70000, 3, 0, 40000, 2, 1, 100000, 5, 9, 0, 65536};
  sw_set_ctx("p2p non-overtaking: %d messages, one tag, mixed sizes and modes", N);
  int** bufs = malloc(sizeof(int*) * N);
  for (int i = 0; i < N; ++i) bufs[i] = malloc(sizeof(int) * (size_t)(len[i] + 1));
  MPI_Request reqs[N];
  if (g_rank & 1) {
    for (int i = 0; i < N; ++i) {
      for (int k = 0; k <= len[i]; ++k) bufs[i][k] = i * 1000003 + k;
      int mode = i % 3;
      if (mode == 0)
        SW_OK(MPI_Isend(bufs[i], len[i] + 1, MPI_INT, partner, 9, g_comm, &reqs[i]));
      else if (mode == 1)
        SW_OK(MPI_Issend(bufs[i], len[i] + 1, MPI_INT, partner, 9, g_comm, &reqs[i]));
      else
        SW_OK(MPI_Ibsend(bufs[i], len[i] + 1, MPI_INT, partner, 9, g_comm, &reqs[i]));
    }
    SW_OK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE));
  } else {
    /* Receives of the largest size and any tag: only order decides. */
    for (int i = 0; i < N; ++i) {
      free(bufs[i]);
      bufs[i] = malloc(sizeof(int) * 100001);
      SW_OK(
          MPI_Irecv(bufs[i], 100001, MPI_INT, partner, i % 2 ? MPI_ANY_TAG : 9, g_comm, &reqs[i]));
    }
    MPI_Status st[N];
    SW_OK(MPI_Waitall(N, reqs, st));
    for (int i = 0; i < N; ++i) {
      int n = -1;
      SW_OK(MPI_Get_count(&st[i], MPI_INT, &n));
      SW_CHECK(n == len[i] + 1 && bufs[i][0] == i * 1000003,
               "receive %d got %d ints starting %d: expected message %d (%d ints); overtaken", i, n,
               bufs[i][0], i, len[i] + 1);
      for (int k = 0; k <= len[i]; ++k)
        SW_CHECK(bufs[i][k] == i * 1000003 + k, "message %d element %d is %d", i, k, bufs[i][k]);
    }
  }
  for (int i = 0; i < N; ++i) free(bufs[i]);
  free(bufs);
}

int main(int argc, char** argv) {
  SW_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  sw_world_rank = g_rank;
  SW_CHECK(g_size <= SW_MAX_RANKS, "at most %d ranks", SW_MAX_RANKS);
  sw_install_hang_report();
  sw_parse_options(argc, argv);
  SW_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  SW_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comm));
  SW_OK(MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN));
  sw_types_init();
  int bsize = 8 << 20;
  void* bbuf = malloc((size_t)bsize);
  SW_OK(MPI_Buffer_attach(bbuf, bsize));
  double t0 = MPI_Wtime();
  sweep_proc_null();
  sweep_modes();
  for (int p = 0; p < 3; ++p) sweep_wildcards(p);
  sweep_truncate();
  sweep_order();
  sw_set_ctx("teardown");
  void* detached;
  int dsize;
  SW_OK(MPI_Buffer_detach(&detached, &dsize));
  SW_CHECK(detached == bbuf && dsize == bsize, "MPI_Buffer_detach gave %p/%d", detached, dsize);
  free(bbuf);
  sw_types_free();
  SW_OK(MPI_Comm_free(&g_comm));
  SW_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) printf("p2p sweep: %d ranks in %.1f s: OK\n", g_size, MPI_Wtime() - t0);
  SW_OK(MPI_Finalize());
  return 0;
}
