/* The collective sweep: one case is (collective, form, communicator, type
 * pairing, op, count, root, in-place). Each collective supplies setup
 * (buffers and count/displacement arrays), prepare (fill for start number
 * `seq`), issue (one call in the case's form) and verify. */
#ifndef NICQ_TESTS_MPI_COLL_SWEEP_H
#define NICQ_TESTS_MPI_COLL_SWEEP_H

#include "sweep.h"

enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, NFORMS };
extern const char* const sw_form_names[NFORMS];

typedef struct Case {
  int coll;
  int form;
  MPI_Comm comm;
  const char* comm_name;
  int rank, size;
  /* Intercommunicators: the remote group's size, the stream ids of rank 0
   * of the local and the remote group, and whether the rooted case's root
   * (c->root, a rank of the root group) is in the local group. */
  int inter, rsize, lbase, rbase, root_local;
  const TypeCase* t;   /* the case's type */
  const TypeCase* stc; /* send side: t or its predefined alternative */
  const TypeCase* rtc; /* receive side */
  int alt;             /* 0 both t; 1 receive as t->alt; 2 send as t->alt */
  const OpCase* op;    /* reductions */
  long count;          /* items of t per block */
  int root;
  int inplace;
  int null_at_nonroot; /* insignificant buffers passed as NULL (and types NULL) */
  unsigned salt;
  /* buffers and arrays, set up by the collective */
  Buf sb, rb, sbx, xb; /* send, receive; the send snapshot and the expected receive */
  int has_sb, has_rb;
  int scounts[SW_MAX_RANKS], sdispls[SW_MAX_RANKS], rcounts[SW_MAX_RANKS], rdispls[SW_MAX_RANKS];
  MPI_Datatype stypes[SW_MAX_RANKS], rtypes[SW_MAX_RANKS];
  const TypeCase* rtcs[SW_MAX_RANKS];
} Case;

typedef struct {
  const char* name;
  int reduction;
  int rooted;
  int inplace_ok;
  void (*setup)(Case* c);
  void (*prepare)(Case* c, unsigned seq);
  int (*issue)(Case* c, int form, MPI_Request* req);
  void (*verify)(Case* c, unsigned seq);
} Coll;

extern const Coll sw_colls[];
extern const int sw_ncolls;

/* Items of the side's type that carry `items` items of c->t. */
long sw_side_count(const Case* c, const TypeCase* side, long items);
/* Count of block i in the v-variants: varies with i, 0 for some i. */
int sw_vcount(long count, int i);
/* Allocates b for blocks at byte displacements of items of the given types. */
void sw_buf_alloc_blocks(Buf* b, int n, const long* disp, const TypeCase* const* types,
                         const long* counts);

/* Ranks data is exchanged with (the remote group on an intercommunicator)
 * and the stream ids of this rank, of peer i and of the root. */
static inline int sw_npeers(const Case* c) {
  return c->inter ? c->rsize : c->size;
}
static inline int sw_me(const Case* c) {
  return c->inter ? c->lbase + c->rank : c->rank;
}
static inline int sw_peer(const Case* c, int i) {
  return c->inter ? c->rbase + i : i;
}
static inline int sw_root_id(const Case* c) {
  return c->inter ? (c->root_local ? c->lbase : c->rbase) + c->root : c->root;
}
/* Rooted collectives: this rank is the root; the root argument it passes
 * (on an intercommunicator MPI_ROOT, MPI_PROC_NULL in the rest of the root
 * group, the root's remote rank in the other group); it takes part in the
 * data flow at all (the root group's non-roots do not). */
static inline int sw_is_root(const Case* c) {
  return (!c->inter || c->root_local) && c->rank == c->root;
}
static inline int sw_root_arg(const Case* c) {
  if (!c->inter) return c->root;
  if (!c->root_local) return c->root;
  return c->rank == c->root ? MPI_ROOT : MPI_PROC_NULL;
}
static inline int sw_idle(const Case* c) {
  return c->inter && c->root_local && c->rank != c->root;
}

static inline unsigned sw_seq(const Case* c, unsigned start) {
  return c->salt * 4u + start;
}

/* Data-movement collectives (coll_move.c, coll_move_v.c) and reductions (coll_reduce.c). */
#define SW_DECLARE(n)                               \
  void n##_setup(Case* c);                          \
  void n##_prepare(Case* c, unsigned seq);          \
  int n##_issue(Case* c, int form, MPI_Request* r); \
  void n##_verify(Case* c, unsigned seq);
SW_DECLARE(barrier)
SW_DECLARE(bcast)
SW_DECLARE(gather)
SW_DECLARE(gatherv)
SW_DECLARE(scatter)
SW_DECLARE(scatterv)
SW_DECLARE(allgather)
SW_DECLARE(allgatherv)
SW_DECLARE(alltoall)
SW_DECLARE(alltoallv)
SW_DECLARE(alltoallw)
SW_DECLARE(reduce)
SW_DECLARE(allreduce)
SW_DECLARE(reduce_scatter)
SW_DECLARE(reduce_scatter_block)
SW_DECLARE(scan)
SW_DECLARE(exscan)

/* Reduction helper: writes at item positions [pos, pos+n) of x (at byte
 * offset disp) the fold over the stream ids [from, to) (ranks, or a remote
 * group's ids) of items [item, item+n) of the reduction vector. */
void sw_fold(const Case* c, Buf* x, long disp, long pos, long item, long n, int from, int to,
             unsigned seq);

/* Picks the form's entry point: MPI_X, MPI_Ix or MPI_X_init. */
#define SW_ISSUE(form, req, X, IX, ...)                        \
  ((form) == FORM_BLOCKING      ? MPI_##X(__VA_ARGS__)         \
   : (form) == FORM_NONBLOCKING ? MPI_##IX(__VA_ARGS__, (req)) \
                                : MPI_##X##_init(__VA_ARGS__, MPI_INFO_NULL, (req)))

#endif
