/* Collective conformance sweep: every collective in every form (blocking,
 * nonblocking, persistent with two starts and new data between them) over
 * world, a dup, even/odd halves, reversed order, MPI_COMM_SELF, a split of
 * size 1 and an odd-sized subset in shuffled order, and intercommunicators
 * between halves of world (first half and second, even and odd ranks) with
 * every collective defined on them (not scan/exscan, never in place; each
 * group takes turns as the root group); every predefined type
 * and derived types with holes, gaps and negative lower bounds; every
 * predefined op on the types it applies to and user ops (commutative and
 * not); MPI_IN_PLACE; counts 0, 1, 7 and 1000 (and 20000 in the long sweep). Every element of every
 * result and every hole of every receive buffer is checked.
 *
 * The full cross product is large: by default each (collective, form,
 * communicator) runs a deterministic sample of it that still covers every
 * type and every (op, type) pair on world; NICQ_SWEEP_LONG=1 (or argument
 * "long") runs all of it, scale=P runs P % of the default sample (100), "slice" adds the
 * representative slice, "slice=world" its cases on world (see slice_fresh; with scale=0: the
 * slice alone). Arguments coll=, form=,
 * comm=, type=, op= (comma lists) narrow a run to reproduce one failure; NICQ_SWEEP_VERBOSE=1
 * prints each case. */
#include "coll_sweep.h"

#include <stdlib.h>
#include <string.h>

const char* const sw_form_names[NFORMS] = {"blocking", "nonblocking", "persistent"};

#define COLL(n, red, rooted, inplace) \
  { #n, red, rooted, inplace, n##_setup, n##_prepare, n##_issue, n##_verify }
const Coll sw_colls[] = {
    COLL(barrier, 0, 0, 0),   COLL(bcast, 0, 1, 0),          COLL(gather, 0, 1, 1),
    COLL(gatherv, 0, 1, 1),   COLL(scatter, 0, 1, 1),        COLL(scatterv, 0, 1, 1),
    COLL(allgather, 0, 0, 1), COLL(allgatherv, 0, 0, 1),     COLL(alltoall, 0, 0, 1),
    COLL(alltoallv, 0, 0, 1), COLL(alltoallw, 0, 0, 1),      COLL(reduce, 1, 1, 1),
    COLL(allreduce, 1, 0, 1), COLL(reduce_scatter, 1, 0, 1), COLL(reduce_scatter_block, 1, 0, 1),
    COLL(scan, 1, 0, 1),      COLL(exscan, 1, 0, 1),
};
const int sw_ncolls = sizeof sw_colls / sizeof sw_colls[0];

long sw_side_count(const Case* c, const TypeCase* side, long items) {
  return items * c->t->nel / side->nel;
}

int sw_vcount(long count, int i) {
  if (count == 0) return 0;
  long n = count + (i % 3) - 1;
  return (int)(n < 0 ? 0 : n);
}

void sw_buf_alloc_blocks(Buf* b, int n, const long* disp, const TypeCase* const* types,
                         const long* counts) {
  long lo = 0, hi = 0;
  for (int i = 0; i < n; ++i) {
    if (counts[i] <= 0) continue;
    const TypeCase* t = types[i];
    long l = disp[i] + t->tlb, h = disp[i] + (counts[i] - 1) * t->extent + t->tub;
    if (l < lo) lo = l;
    if (h > hi) hi = h;
  }
  sw_buf_alloc_bytes(b, lo, hi);
}

/* ---- one case --------------------------------------------------------------------- */
static void set_ctx(const Case* c, unsigned start) {
  char comm[96], root[64];
  if (c->inter) {
    snprintf(comm, sizeof comm, "%s(local %d, remote %d, rank %d)", c->comm_name, c->size, c->rsize,
             c->rank);
    int arg = sw_root_arg(c);
    char argtxt[16];
    snprintf(argtxt, sizeof argtxt, "%d", arg);
    snprintf(root, sizeof root, "%d in the %s group (passes %s)", c->root,
             c->root_local ? "local" : "remote",
             arg == MPI_ROOT        ? "MPI_ROOT"
             : arg == MPI_PROC_NULL ? "MPI_PROC_NULL"
                                    : argtxt);
  } else {
    snprintf(comm, sizeof comm, "%s(size %d, rank %d)", c->comm_name, c->size, c->rank);
    snprintf(root, sizeof root, "%d", c->root);
  }
  sw_set_ctx(
      "coll=%s form=%s comm=%s type=%s send=%s recv=%s op=%s count=%ld root=%s inplace=%d "
      "null_at_nonroot=%d start=%u",
      sw_colls[c->coll].name, sw_form_names[c->form], comm, c->t ? c->t->name : "-",
      c->stc ? c->stc->name : "-", c->rtc ? c->rtc->name : "-", c->op ? c->op->name : "-", c->count,
      root, c->inplace, c->null_at_nonroot, start);
}

/* Runs n cases of one form together: all issued (or initialized and
 * started with MPI_Startall), then completed at once (MPI_Waitall, or
 * MPI_Wait in reverse order), then verified; persistent batches start
 * twice with new data. Blocking batches hold one case. */
#define MAX_BATCH 8
static void run_batch(Case* cs, int n) {
  const int form = cs[0].form;
  double t0 = MPI_Wtime();
  MPI_Request reqs[MAX_BATCH];
  sw_n_user_op_types = 0;
  for (int i = 0; i < n; ++i) {
    Case* c = &cs[i];
    set_ctx(c, 0);
    if (c->t) sw_user_op_types[sw_n_user_op_types++] = c->t->type;
    sw_colls[c->coll].setup(c);
    if (c->has_sb) sw_buf_alloc_bytes(&c->sbx, c->sb.lo + SW_GUARD, c->sb.hi - SW_GUARD);
    reqs[i] = MPI_REQUEST_NULL;
  }
  unsigned starts = form == FORM_PERSISTENT ? 2 : 1;
  for (unsigned s = 0; s < starts; ++s) {
    for (int i = 0; i < n; ++i) {
      Case* c = &cs[i];
      set_ctx(c, s);
      sw_colls[c->coll].prepare(c, sw_seq(c, s));
      if (c->has_sb) sw_buf_copy(&c->sbx, &c->sb);
      if (s == 0) SW_OK(sw_colls[c->coll].issue(c, form, &reqs[i]));
      if (form == FORM_PERSISTENT)
        SW_CHECK(reqs[i] != MPI_REQUEST_NULL, "the _init call returned MPI_REQUEST_NULL");
    }
    if (form != FORM_BLOCKING) {
      if (n > 1) {
        char first[sizeof sw_ctx];
        snprintf(first, sizeof first, "%s", sw_ctx);
        sw_set_ctx("%d %s cases issued together, last: %.400s", n, sw_form_names[form], first);
      }
      if (form == FORM_PERSISTENT) SW_OK(n == 1 ? MPI_Start(&reqs[0]) : MPI_Startall(n, reqs));
      if ((cs[0].salt + s) % 2 == 0) {
        MPI_Status st[MAX_BATCH];
        SW_OK(MPI_Waitall(n, reqs, st));
      } else {
        for (int i = n - 1; i >= 0; --i) SW_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
      }
      for (int i = 0; i < n; ++i) {
        if (form == FORM_NONBLOCKING)
          SW_CHECK(reqs[i] == MPI_REQUEST_NULL, "completion left nonblocking request %d", i);
        else
          SW_CHECK(reqs[i] != MPI_REQUEST_NULL, "completion freed persistent request %d", i);
      }
    }
    for (int i = 0; i < n; ++i) {
      Case* c = &cs[i];
      set_ctx(c, s);
      if (n > 1) {
        size_t len = strlen(sw_ctx);
        snprintf(sw_ctx + len, sizeof sw_ctx - len, " (case %d of %d issued together)", i + 1, n);
      }
      sw_colls[c->coll].verify(c, sw_seq(c, s));
      if (c->has_sb) sw_compare(&c->sb, &c->sbx, c->stc, "send buffer (must not change)");
    }
  }
  for (int i = 0; i < n; ++i) {
    Case* c = &cs[i];
    if (form == FORM_PERSISTENT) {
      SW_OK(MPI_Request_free(&reqs[i]));
      SW_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free left the request");
    }
    if (c->has_sb) {
      sw_buf_free(&c->sb);
      sw_buf_free(&c->sbx);
    }
    if (c->has_rb) {
      sw_buf_free(&c->rb);
      sw_buf_free(&c->xb);
    }
  }
  /* Not a failure (no wall-clock asserts), but a stall worth a look. */
  double dt = MPI_Wtime() - t0;
  if (dt > 1.0 * n && cs[0].salt > 1 && sw_world_rank == 0) /* the first case also waits */
    fprintf(stderr, "[%d] slow case (%.2f s): %s\n", sw_world_rank, dt, sw_ctx);
}

/* ---- which cases run ------------------------------------------------------------------ */
/* The long sweep adds a count past the eager/rendezvous switch of every
 * provider here. */
static const long k_counts[] = {0, 1, 7, 1000, 20000};
#define NCOUNTS (sw_opt.level > 0 ? 5 : 4)

typedef struct {
  char name[40];
  MPI_Comm comm;
  int owned;
  int permille; /* share of the sampled cross product run on it */
  int inter;    /* intercommunicator: the stream ids of the two groups' rank 0 */
  int lbase, rbase;
} CommCase;

static unsigned key_hash(const CommCase* cc, int coll, int form, int type, int op, int count,
                         int alt, int inplace) {
  unsigned h = 0;
  for (const char* p = cc->name; *p; ++p) h = h * 31u + (unsigned char)*p;
  h = sw_hash(h, (unsigned)(coll * 7 + form), (unsigned)(type * 131 + op));
  return sw_hash(h, (unsigned)count, (unsigned)(alt * 3 + inplace));
}

/* The representative slice (argument "slice", or "slice=world" for world
 * alone), for the providers whose transport is all that differs from a
 * full run's (the layers above it are the same code). A case runs when it
 * brings something no earlier case of its communicator and collective had:
 *  - per form: a count (the algorithm choice follows the count), and at a
 *    count of 7 or more (several elements with data: a case of count 0 or
 *    1 would take a feature and check little of it) in place or not, a
 *    send/receive type pairing;
 *  - on world, in any form, at 7 or more: a type class (a predefined type's kind;
 *    derived dense, with holes or gaps, with a negative lower bound) and
 *    an op;
 *  - on world, persistent: each (op, type class) pair the op applies to (a
 *    persistent reduction takes the offloaded plan where the backend has
 *    one, the NIC's atomics or a host fold per pair; the blocking and
 *    nonblocking forms combine on the host, the same code everywhere). */
enum { SLICE_TCLASSES = KC_COMPLEX + 4, SLICE_MAX_OPS = 16, SLICE_COUNTS = 5 };
typedef struct {
  unsigned char count[NFORMS][SLICE_COUNTS], inplace[NFORMS][2], alt[NFORMS][3];
  unsigned char tclass[SLICE_TCLASSES], op[SLICE_MAX_OPS], op_tclass[SLICE_MAX_OPS][SLICE_TCLASSES];
} SliceSeen;

static int type_class(int type) {
  if (type < sw_nkinds) return (int)sw_kinds[type].cls;
  const TypeCase* t = &sw_types[type];
  if (t->lb < 0 || t->tlb < 0) return KC_COMPLEX + 3;
  long bytes = 0;
  for (int e = 0; e < t->nel; ++e) bytes += sw_kinds[t->kind[e]].size;
  return bytes == t->extent && t->tub - t->tlb == t->extent ? KC_COMPLEX + 1 : KC_COMPLEX + 2;
}

/* type -1: none (barrier); op -1: not a reduction. Marks what the case
 * brings when it brings anything. */
static int slice_fresh(SliceSeen* s, const CommCase* cc, int form, int type, int op, int ci,
                       int alt, int inplace) {
  unsigned char* f[6];
  int nf = 0, fresh = 0;
  f[nf++] = &s->count[form][ci];
  if (ci >= 2) { /* the rest counts only where several elements carry data */
    f[nf++] = &s->inplace[form][inplace];
    f[nf++] = &s->alt[form][alt];
  }
  if (ci >= 2 && strcmp(cc->name, "world") == 0) {
    const int tc = type < 0 ? 0 : type_class(type);
    f[nf++] = &s->tclass[tc];
    if (op >= 0) f[nf++] = &s->op[op];
    if (op >= 0 && form == FORM_PERSISTENT) f[nf++] = &s->op_tclass[op][tc];
  }
  for (int i = 0; i < nf; ++i) fresh |= !*f[i];
  if (fresh)
    for (int i = 0; i < nf; ++i) *f[i] = 1;
  return fresh;
}

/* Every type (and every op/type pair) runs at least once per collective on
 * world, in a form chosen by its hash (unless the sample is scaled below
 * half, for slow providers); the rest is sampled. `slice`: the
 * (communicator, collective)'s slice state, NULL without "slice". */
static int keep(const CommCase* cc, SliceSeen* slice, int coll, int form, int type, int op, int ci,
                int alt, int inplace) {
  if (sw_opt.level > 0) return 1;
  if (cc->inter && coll == 0) return 1; /* barrier: one case per form */
  if (slice && (sw_opt.slice == SLICE_ALL_COMMS || strcmp(cc->name, "world") == 0) &&
      slice_fresh(slice, cc, form, coll == 0 ? -1 : type, sw_colls[coll].reduction ? op : -1, ci,
                  alt, inplace))
    return 1;
  unsigned h = key_hash(cc, coll, form, type, op, ci, alt, inplace);
  if (sw_opt.scale >= 50 && strcmp(cc->name, "world") == 0 && ci == 2 && alt == 0 && inplace == 0 &&
      (int)(sw_hash((unsigned)type, (unsigned)op, (unsigned)coll) % NFORMS) == form)
    return 1;
  return (long)(h % 100000) < (long)cc->permille * sw_opt.scale;
}

static long g_cases;

static const int k_batch[5] = {1, 2, 3, 5, 8};

static void sweep_comm(const CommCase* cc) {
  Case c, batch[MAX_BATCH];
  unsigned nflush = 0;
  int rank, size;
  SW_OK(MPI_Comm_rank(cc->comm, &rank));
  SW_OK(MPI_Comm_size(cc->comm, &size));
  int rsize = 0;
  if (cc->inter) SW_OK(MPI_Comm_remote_size(cc->comm, &rsize));
  unsigned n = 0;
  for (int ki = 0; ki < sw_ncolls; ++ki) {
    const Coll* k = &sw_colls[ki];
    if (!sw_selected(sw_opt.only_coll, k->name)) continue;
    /* MPI defines no scan on intercommunicators (refusal checked once). */
    if (cc->inter && (strcmp(k->name, "scan") == 0 || strcmp(k->name, "exscan") == 0)) continue;
    const int inplace_ok = k->inplace_ok && !cc->inter;
    SliceSeen slice_seen;
    memset(&slice_seen, 0, sizeof slice_seen);
    SliceSeen* slice = sw_opt.slice ? &slice_seen : NULL;
    for (int form = 0; form < NFORMS; ++form) {
      if (!sw_selected(sw_opt.only_form, sw_form_names[form])) continue;
      int nbatch = 0;
      int nops = k->reduction ? sw_nops : 1;
      int ntypes = ki == 0 ? 1 : sw_ntypes;
      for (int oi = 0; oi < nops; ++oi) {
        const OpCase* op = k->reduction ? &sw_ops[oi] : NULL;
        if (op && !sw_selected(sw_opt.only_op, op->name)) continue;
        for (int ti = 0; ti < ntypes; ++ti) {
          const TypeCase* t = ki == 0 ? NULL : &sw_types[ti];
          if (t && !sw_selected(sw_opt.only_type, t->name)) continue;
          if (op && !sw_op_applies(op, t)) continue;
          int nalt = k->reduction || !t || t->alt < 0 ? 1 : 3;
          for (int ci = 0; ci < (t ? NCOUNTS : 1); ++ci)
            for (int alt = 0; alt < nalt; ++alt)
              for (int ip = 0; ip <= inplace_ok; ++ip) {
                if (!keep(cc, slice, ki, form, ti, oi, ci, alt, ip)) continue;
                memset(&c, 0, sizeof c);
                c.coll = ki;
                c.form = form;
                c.comm = cc->comm;
                c.comm_name = cc->name;
                c.rank = rank;
                c.size = size;
                c.t = t;
                c.stc = c.rtc = t;
                c.alt = alt;
                if (alt == 1) c.rtc = &sw_types[t->alt];
                if (alt == 2) c.stc = &sw_types[t->alt];
                c.op = op;
                c.count = t ? k_counts[ci] : 0;
                c.root = (int)(n % (unsigned)size);
                c.null_at_nonroot = (n / (unsigned)size) % 2;
                if (cc->inter) {
                  /* The groups take turns as the root group (group 0: ids from 0). */
                  int root_group = (int)(n / 2 % 2);
                  c.inter = 1;
                  c.rsize = rsize;
                  c.lbase = cc->lbase;
                  c.rbase = cc->rbase;
                  c.root_local = root_group == (cc->lbase == 0 ? 0 : 1);
                  c.root = (int)(n % (unsigned)(c.root_local ? size : rsize));
                }
                c.inplace = ip;
                c.salt = ++n;
                batch[nbatch++] = c;
                ++g_cases;
                /* Batch sizes cycle 1, 2, 3, 5, 8 (blocking: 1). */
                if (form == FORM_BLOCKING || nbatch == k_batch[nflush % 5]) {
                  run_batch(batch, nbatch);
                  nbatch = 0;
                  ++nflush;
                }
              }
        }
      }
      if (nbatch > 0) run_batch(batch, nbatch);
    }
  }
}

/* ---- communicators --------------------------------------------------------------------- */
/* The intercommunicator between the world ranks of color 0 and color 1;
 * the remote leader is the lowest world rank of the other color. */
static MPI_Comm make_inter(int color, int remote_leader, int wrank, int tag) {
  MPI_Comm local, inter;
  SW_OK(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &local));
  SW_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, tag, &inter));
  SW_OK(MPI_Comm_free(&local));
  return inter;
}

/* What MPI leaves undefined on intercommunicators is refused, with the
 * error class and nothing started. */
static void check_inter_refusals(const CommCase* cc) {
  int x[2] = {1, 2}, y[2] = {3, 4}, cls = -1;
  MPI_Request rq = MPI_REQUEST_NULL;
  sw_set_ctx("comm=%s: refusals", cc->name);
  MPI_Error_class(MPI_Scan(x, y, 2, MPI_INT, MPI_SUM, cc->comm), &cls);
  SW_CHECK(cls == MPI_ERR_COMM, "MPI_Scan on an intercommunicator: class %d", cls);
  MPI_Error_class(MPI_Iexscan(x, y, 2, MPI_INT, MPI_SUM, cc->comm, &rq), &cls);
  SW_CHECK(cls == MPI_ERR_COMM && rq == MPI_REQUEST_NULL, "MPI_Iexscan: class %d", cls);
  MPI_Error_class(MPI_Exscan_init(x, y, 2, MPI_INT, MPI_SUM, cc->comm, MPI_INFO_NULL, &rq), &cls);
  SW_CHECK(cls == MPI_ERR_COMM && rq == MPI_REQUEST_NULL, "MPI_Exscan_init: class %d", cls);
  MPI_Error_class(MPI_Allreduce(MPI_IN_PLACE, y, 2, MPI_INT, MPI_SUM, cc->comm), &cls);
  SW_CHECK(cls == MPI_ERR_BUFFER, "in-place MPI_Allreduce: class %d", cls);
  MPI_Error_class(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, y, 1, MPI_INT, cc->comm, &rq),
                  &cls);
  SW_CHECK(cls == MPI_ERR_BUFFER && rq == MPI_REQUEST_NULL, "in-place MPI_Iallgather: class %d",
           cls);
  SW_CHECK(x[0] == 1 && x[1] == 2 && y[0] == 3 && y[1] == 4,
           "a refused call changed its buffers: %d %d %d %d", x[0], x[1], y[0], y[1]);
}

static int make_comms(CommCase* out, int wrank, int wsize) {
  int n = 0;
  MPI_Comm c;
#define ADD(nm, comm_, owned_, pm)                                    \
  do {                                                                \
    if ((comm_) != MPI_COMM_NULL) {                                   \
      snprintf(out[n].name, sizeof out[n].name, "%s", nm);            \
      out[n].comm = (comm_);                                          \
      out[n].owned = (owned_);                                        \
      out[n].permille = (pm);                                         \
      out[n].inter = 0;                                               \
      SW_OK(MPI_Comm_set_errhandler(out[n].comm, MPI_ERRORS_RETURN)); \
      ++n;                                                            \
    }                                                                 \
  } while (0)
  ADD("world", MPI_COMM_WORLD, 0, 120);
  if (wsize >= 2) {
    /* Halves of world: first and second (unequal at odd sizes), even and odd ranks. */
    int half = wsize / 2, color = wrank >= half;
    c = make_inter(color, color ? 0 : half, wrank, 601);
    ADD("inter_halves", c, 1, 200);
    out[n - 1].inter = 1, out[n - 1].lbase = color * 32, out[n - 1].rbase = (1 - color) * 32;
    color = wrank % 2;
    c = make_inter(color, color ? 0 : 1, wrank, 602);
    ADD("inter_evenodd", c, 1, 200);
    out[n - 1].inter = 1, out[n - 1].lbase = color * 32, out[n - 1].rbase = (1 - color) * 32;
  }
  SW_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  ADD("dup", c, 1, 40);
  SW_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c));
  ADD(wrank % 2 ? "split_odd" : "split_even", c, 1, 40);
  SW_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c));
  ADD("reversed", c, 1, 50);
  ADD("self", MPI_COMM_SELF, 0, 20);
  SW_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank, 0, &c));
  ADD("split_single", c, 1, 20);
  /* The largest odd subset short of world, highest ranks, in shuffled order. */
  int m = wsize % 2 ? wsize - 2 : wsize - 1;
  if (m >= 1 && wsize > 1) {
    int member = wrank >= wsize - m;
    SW_OK(MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, (wrank * 7) % wsize, &c));
    ADD("odd_subset", c, 1, 50);
    SW_CHECK(member == (c != MPI_COMM_NULL), "MPI_Comm_split membership of odd_subset");
  }
  return n;
#undef ADD
}

int main(int argc, char** argv) {
  SW_OK(MPI_Init(&argc, &argv));
  int wrank, wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  sw_world_rank = wrank;
  SW_CHECK(wsize <= SW_MAX_RANKS, "at most %d ranks", SW_MAX_RANKS);
  sw_install_hang_report();
  sw_parse_options(argc, argv);
  SW_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  sw_types_init();
  sw_ops_init();
  SW_CHECK(sw_nops <= SLICE_MAX_OPS, "%d ops, the slice tracks %d", sw_nops, SLICE_MAX_OPS);
  CommCase comms[12];
  int ncomms = make_comms(comms, wrank, wsize);
  double t0 = MPI_Wtime();
  for (int i = 0; i < ncomms; ++i) {
    if (!sw_selected(sw_opt.only_comm, comms[i].name) &&
        !(sw_opt.only_comm && strncmp(comms[i].name, "split_", 6) == 0 &&
          sw_selected(sw_opt.only_comm, "split")))
      continue;
    double c0 = MPI_Wtime();
    long before = g_cases;
    if (comms[i].inter) check_inter_refusals(&comms[i]);
    sweep_comm(&comms[i]);
    if (sw_opt.verbose || wrank == 0)
      fprintf(stderr, "[%d] comm %s: %ld cases in %.1f s\n", wrank, comms[i].name, g_cases - before,
              MPI_Wtime() - c0);
  }
  sw_set_ctx("teardown");
  for (int i = 0; i < ncomms; ++i)
    if (comms[i].owned) SW_OK(MPI_Comm_free(&comms[i].comm));
  sw_ops_free();
  sw_types_free();
  SW_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (wrank == 0)
    printf("coll sweep: %d ranks, %ld cases on rank 0 in %.1f s: OK\n", wsize, g_cases,
           MPI_Wtime() - t0);
  SW_OK(MPI_Finalize());
  return 0;
}
