/* Data-movement collectives with fixed counts: barrier, bcast, gather,
 * scatter, allgather, alltoall. prepare() fills the send data and builds
 * the expected receive image (the sentinel-filled buffer with the data
 * written where it must land); verify() compares byte by byte. */
#include "coll_sweep.h"

static void* snd(Case* c) {
  return c->has_sb ? (void*)c->sb.base : NULL;
}
static void* rcv(Case* c) {
  return c->has_rb ? (void*)c->rb.base : NULL;
}
static void alloc_send(Case* c, const TypeCase* t, long span) {
  sw_buf_alloc(&c->sb, t, span);
  c->has_sb = 1;
}
static void alloc_recv(Case* c, const TypeCase* t, long span) {
  sw_buf_alloc(&c->rb, t, span);
  sw_buf_alloc(&c->xb, t, span);
  c->has_rb = 1;
}
/* The expected receive image starts as the receive buffer's initial state. */
static void expect_unchanged(Case* c) {
  if (c->has_rb) sw_buf_copy(&c->xb, &c->rb);
}
static void reset(Case* c) {
  if (c->has_sb) sw_buf_sentinel(&c->sb);
  if (c->has_rb) sw_buf_sentinel(&c->rb);
}
static void put(Buf* b, const TypeCase* t, long first, long n, int src, int dst, unsigned seq) {
  sw_put_items(b, 0, t, first, n, sw_stream(src, dst), 0, seq, RC_MOVE);
}
void move_verify(Case* c, unsigned seq) {
  (void)seq;
  if (c->has_rb) sw_compare(&c->rb, &c->xb, c->rtc, "receive buffer");
}

/* ---- barrier --------------------------------------------------------------------------- */
void barrier_setup(Case* c) {
  (void)c;
}
void barrier_prepare(Case* c, unsigned seq) {
  (void)c;
  (void)seq;
}
int barrier_issue(Case* c, int form, MPI_Request* r) {
  return SW_ISSUE(form, r, Barrier, Ibarrier, c->comm);
}
void barrier_verify(Case* c, unsigned seq) {
  (void)c;
  (void)seq;
}

/* ---- bcast: the root uses the send-side type, the others the receive side ------------------- */
static const TypeCase* bcast_type(Case* c) {
  return sw_is_root(c) ? c->stc : c->rtc;
}
void bcast_setup(Case* c) {
  if (!(sw_idle(c) && c->null_at_nonroot))
    alloc_recv(c, bcast_type(c), sw_side_count(c, bcast_type(c), c->count));
}
void bcast_prepare(Case* c, unsigned seq) {
  const TypeCase* t = bcast_type(c);
  long n = sw_side_count(c, t, c->count);
  reset(c);
  if (sw_is_root(c)) put(&c->rb, t, 0, n, sw_root_id(c), 0, seq);
  expect_unchanged(c);
  if (!sw_idle(c)) put(&c->xb, t, 0, n, sw_root_id(c), 0, seq);
}
int bcast_issue(Case* c, int form, MPI_Request* r) {
  const TypeCase* t = bcast_type(c);
  return SW_ISSUE(form, r, Bcast, Ibcast, rcv(c), (int)sw_side_count(c, t, c->count), t->type,
                  sw_root_arg(c), c->comm);
}
void bcast_verify(Case* c, unsigned seq) {
  (void)seq;
  if (c->has_rb) sw_compare(&c->rb, &c->xb, bcast_type(c), "bcast buffer");
}

/* ---- gather ---------------------------------------------------------------------------- */
void gather_setup(Case* c) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  int root = sw_is_root(c);
  if (c->inter ? !c->root_local : !(root && c->inplace)) alloc_send(c, c->stc, sc);
  if (root || !c->null_at_nonroot) alloc_recv(c, c->rtc, sw_npeers(c) * rc);
}
void gather_prepare(Case* c, unsigned seq) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  reset(c);
  if (c->has_sb) put(&c->sb, c->stc, 0, sc, sw_me(c), 0, seq);
  if (!sw_is_root(c)) {
    expect_unchanged(c);
    return;
  }
  if (c->inplace) put(&c->rb, c->rtc, c->rank * rc, rc, c->rank, 0, seq);
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i) put(&c->xb, c->rtc, i * rc, rc, sw_peer(c, i), 0, seq);
}
int gather_issue(Case* c, int form, MPI_Request* r) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  int root = sw_is_root(c);
  const void* s = root && c->inplace ? MPI_IN_PLACE : snd(c);
  int nul = !root && c->null_at_nonroot;
  return SW_ISSUE(form, r, Gather, Igather, s, (int)sc, c->stc->type, rcv(c), nul ? 0 : (int)rc,
                  nul ? MPI_DATATYPE_NULL : c->rtc->type, sw_root_arg(c), c->comm);
}
void gather_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- scatter --------------------------------------------------------------------------- */
void scatter_setup(Case* c) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  int root = sw_is_root(c);
  if (root || !c->null_at_nonroot) alloc_send(c, c->stc, sw_npeers(c) * sc);
  if (c->inter ? !c->root_local : !(root && c->inplace)) alloc_recv(c, c->rtc, rc);
}
void scatter_prepare(Case* c, unsigned seq) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  reset(c);
  if (sw_is_root(c))
    for (int i = 0; i < sw_npeers(c); ++i)
      put(&c->sb, c->stc, i * sc, sc, sw_root_id(c), sw_peer(c, i), seq);
  expect_unchanged(c);
  if (c->has_rb) put(&c->xb, c->rtc, 0, rc, sw_root_id(c), sw_me(c), seq);
}
int scatter_issue(Case* c, int form, MPI_Request* r) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  int root = sw_is_root(c);
  void* rb = root && c->inplace ? MPI_IN_PLACE : rcv(c);
  int nul = !root && c->null_at_nonroot;
  return SW_ISSUE(form, r, Scatter, Iscatter, snd(c), nul ? 0 : (int)sc,
                  nul ? MPI_DATATYPE_NULL : c->stc->type, rb, (int)rc, c->rtc->type, sw_root_arg(c),
                  c->comm);
}
void scatter_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- allgather ------------------------------------------------------------------------- */
void allgather_setup(Case* c) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  if (!c->inplace) alloc_send(c, c->stc, sc);
  alloc_recv(c, c->rtc, sw_npeers(c) * rc);
}
void allgather_prepare(Case* c, unsigned seq) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  reset(c);
  if (c->has_sb) put(&c->sb, c->stc, 0, sc, sw_me(c), 0, seq);
  if (c->inplace) put(&c->rb, c->rtc, c->rank * rc, rc, c->rank, 0, seq);
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i) put(&c->xb, c->rtc, i * rc, rc, sw_peer(c, i), 0, seq);
}
int allgather_issue(Case* c, int form, MPI_Request* r) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Allgather, Iallgather, s, (int)sc, c->stc->type, rcv(c), (int)rc,
                  c->rtc->type, c->comm);
}
void allgather_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- alltoall: in place, the receive buffer holds what is sent (receive-side type) ---------- */
void alltoall_setup(Case* c) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  if (!c->inplace) alloc_send(c, c->stc, sw_npeers(c) * sc);
  alloc_recv(c, c->rtc, sw_npeers(c) * rc);
}
void alltoall_prepare(Case* c, unsigned seq) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  reset(c);
  for (int j = 0; j < sw_npeers(c); ++j) {
    if (c->inplace)
      put(&c->rb, c->rtc, j * rc, rc, c->rank, j, seq);
    else
      put(&c->sb, c->stc, j * sc, sc, sw_me(c), sw_peer(c, j), seq);
  }
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i)
    put(&c->xb, c->rtc, i * rc, rc, sw_peer(c, i), sw_me(c), seq);
}
int alltoall_issue(Case* c, int form, MPI_Request* r) {
  long sc = sw_side_count(c, c->stc, c->count), rc = sw_side_count(c, c->rtc, c->count);
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Alltoall, Ialltoall, s, (int)sc, c->stc->type, rcv(c), (int)rc,
                  c->rtc->type, c->comm);
}
void alltoall_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}
