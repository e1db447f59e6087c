/* Data-movement collectives with per-rank counts and displacements:
 * gatherv, scatterv, allgatherv, alltoallv, alltoallw. Blocks sit in
 * reverse rank order with a gap after each, so displacements are really
 * used and gaps must stay untouched; some counts are 0. alltoallw mixes the
 * case's type and its predefined equivalent per peer, at byte
 * displacements. */
#include "coll_sweep.h"

void move_verify(Case* c, unsigned seq);

static void* snd(Case* c) {
  return c->has_sb ? (void*)c->sb.base : NULL;
}
static void* rcv(Case* c) {
  return c->has_rb ? (void*)c->rb.base : NULL;
}
static void reset(Case* c) {
  if (c->has_sb) sw_buf_sentinel(&c->sb);
  if (c->has_rb) sw_buf_sentinel(&c->rb);
}
static void expect_unchanged(Case* c) {
  if (c->has_rb) sw_buf_copy(&c->xb, &c->rb);
}
static void put(Buf* b, const TypeCase* t, long first, long n, int src, int dst, unsigned seq) {
  sw_put_items(b, 0, t, first, n, sw_stream(src, dst), 0, seq, RC_MOVE);
}

/* counts[i] items of t for block i (vc of i, in t's units); reversed
 * displacements with a one-item gap; returns the span in items. */
static long layout(const Case* c, const TypeCase* t, int* counts, int* displs) {
  long d = 0;
  for (int i = sw_npeers(c) - 1; i >= 0; --i) {
    counts[i] = (int)sw_side_count(c, t, sw_vcount(c->count, i));
    displs[i] = (int)d;
    d += counts[i] + 1;
  }
  return d;
}

/* ---- gatherv ---------------------------------------------------------------------------- */
void gatherv_setup(Case* c) {
  int root = sw_is_root(c);
  long span = layout(c, c->rtc, c->rcounts, c->rdispls);
  if (c->inter ? !c->root_local : !(root && c->inplace)) {
    sw_buf_alloc(&c->sb, c->stc, sw_side_count(c, c->stc, sw_vcount(c->count, c->rank)));
    c->has_sb = 1;
  }
  if (root || !c->null_at_nonroot) {
    sw_buf_alloc(&c->rb, c->rtc, span);
    sw_buf_alloc(&c->xb, c->rtc, span);
    c->has_rb = 1;
  }
}
void gatherv_prepare(Case* c, unsigned seq) {
  reset(c);
  if (c->has_sb)
    put(&c->sb, c->stc, 0, sw_side_count(c, c->stc, sw_vcount(c->count, c->rank)), sw_me(c), 0,
        seq);
  if (!sw_is_root(c)) {
    expect_unchanged(c);
    return;
  }
  if (c->inplace) put(&c->rb, c->rtc, c->rdispls[c->rank], c->rcounts[c->rank], c->rank, 0, seq);
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i)
    put(&c->xb, c->rtc, c->rdispls[i], c->rcounts[i], sw_peer(c, i), 0, seq);
}
int gatherv_issue(Case* c, int form, MPI_Request* r) {
  int root = sw_is_root(c);
  const void* s = root && c->inplace ? MPI_IN_PLACE : snd(c);
  int sc = (int)sw_side_count(c, c->stc, sw_vcount(c->count, c->rank));
  int nul = !root && c->null_at_nonroot;
  return SW_ISSUE(form, r, Gatherv, Igatherv, s, sc, c->stc->type, rcv(c), nul ? NULL : c->rcounts,
                  nul ? NULL : c->rdispls, nul ? MPI_DATATYPE_NULL : c->rtc->type, sw_root_arg(c),
                  c->comm);
}
void gatherv_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- scatterv --------------------------------------------------------------------------- */
void scatterv_setup(Case* c) {
  int root = sw_is_root(c);
  long span = layout(c, c->stc, c->scounts, c->sdispls);
  if (root || !c->null_at_nonroot) {
    sw_buf_alloc(&c->sb, c->stc, root ? span : 1);
    c->has_sb = 1;
  }
  if (c->inter ? !c->root_local : !(root && c->inplace)) {
    long rc = sw_side_count(c, c->rtc, sw_vcount(c->count, c->rank));
    sw_buf_alloc(&c->rb, c->rtc, rc);
    sw_buf_alloc(&c->xb, c->rtc, rc);
    c->has_rb = 1;
  }
}
void scatterv_prepare(Case* c, unsigned seq) {
  reset(c);
  if (sw_is_root(c))
    for (int i = 0; i < sw_npeers(c); ++i)
      put(&c->sb, c->stc, c->sdispls[i], c->scounts[i], sw_root_id(c), sw_peer(c, i), seq);
  expect_unchanged(c);
  if (c->has_rb)
    put(&c->xb, c->rtc, 0, sw_side_count(c, c->rtc, sw_vcount(c->count, c->rank)), sw_root_id(c),
        sw_me(c), seq);
}
int scatterv_issue(Case* c, int form, MPI_Request* r) {
  int root = sw_is_root(c);
  void* rb = root && c->inplace ? MPI_IN_PLACE : rcv(c);
  int rc = (int)sw_side_count(c, c->rtc, sw_vcount(c->count, c->rank));
  int nul = !root && c->null_at_nonroot;
  return SW_ISSUE(form, r, Scatterv, Iscatterv, snd(c), nul ? NULL : c->scounts,
                  nul ? NULL : c->sdispls, nul ? MPI_DATATYPE_NULL : c->stc->type, rb, rc,
                  c->rtc->type, sw_root_arg(c), c->comm);
}
void scatterv_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- allgatherv ------------------------------------------------------------------------- */
void allgatherv_setup(Case* c) {
  long span = layout(c, c->rtc, c->rcounts, c->rdispls);
  if (!c->inplace) {
    sw_buf_alloc(&c->sb, c->stc, sw_side_count(c, c->stc, sw_vcount(c->count, c->rank)));
    c->has_sb = 1;
  }
  sw_buf_alloc(&c->rb, c->rtc, span);
  sw_buf_alloc(&c->xb, c->rtc, span);
  c->has_rb = 1;
}
void allgatherv_prepare(Case* c, unsigned seq) {
  reset(c);
  if (c->has_sb)
    put(&c->sb, c->stc, 0, sw_side_count(c, c->stc, sw_vcount(c->count, c->rank)), sw_me(c), 0,
        seq);
  if (c->inplace) put(&c->rb, c->rtc, c->rdispls[c->rank], c->rcounts[c->rank], c->rank, 0, seq);
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i)
    put(&c->xb, c->rtc, c->rdispls[i], c->rcounts[i], sw_peer(c, i), 0, seq);
}
int allgatherv_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  int sc = (int)sw_side_count(c, c->stc, sw_vcount(c->count, c->rank));
  return SW_ISSUE(form, r, Allgatherv, Iallgatherv, s, sc, c->stc->type, rcv(c), c->rcounts,
                  c->rdispls, c->rtc->type, c->comm);
}
void allgatherv_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

/* ---- alltoallv / alltoallw ------------------------------------------------------------ */
/* Items of c->t from rank i to rank j; symmetric in place (MPI requires it). */
static long pair_count(const Case* c, int i, int j) {
  return sw_vcount(c->count, c->inplace ? i + j : i * 5 + j * 3);
}
/* alltoallw: the type of the block from i to j on the sending (side 0) or
 * receiving (side 1) end: the case's type or its predefined equivalent. */
static const TypeCase* w_type(const Case* c, int i, int j, int side) {
  if (c->alt == 0 || c->t->alt < 0) return c->t;
  int pick = side == 0 ? (i + j + c->alt) % 2 : (i * 3 + j + c->alt) % 2;
  if (c->inplace) pick = (i + j + c->alt) % 2; /* both ends read the recv-side description */
  return pick ? &sw_types[c->t->alt] : c->t;
}

/* Byte displacements: blocks in `order` (reversed or forward), 16-aligned,
 * 8 free bytes after each. */
static void w_layout(const Case* c, int recv, long* disp, long* cnt, const TypeCase** types) {
  long d = 0;
  for (int n = 0; n < sw_npeers(c); ++n) {
    int peer = recv ? n : sw_npeers(c) - 1 - n;
    const TypeCase* t = recv ? w_type(c, peer, c->rank, 1) : w_type(c, c->rank, peer, 0);
    long items = recv ? pair_count(c, peer, c->rank) : pair_count(c, c->rank, peer);
    long k = sw_side_count(c, t, items);
    long start = d - (t->tlb < 0 ? t->tlb : 0);
    start = (start + 15) / 16 * 16;
    disp[peer] = start;
    cnt[peer] = k;
    types[peer] = t;
    d = k > 0 ? start + (k - 1) * t->extent + t->tub + 8 : start + 8;
  }
}

static void v_setup(Case* c, int w) {
  long sdisp[SW_MAX_RANKS], scnt[SW_MAX_RANKS], rdisp[SW_MAX_RANKS], rcnt[SW_MAX_RANKS];
  const TypeCase* st[SW_MAX_RANKS];
  w_layout(c, 0, sdisp, scnt, st);
  w_layout(c, 1, rdisp, rcnt, c->rtcs);
  const int np = sw_npeers(c);
  for (int i = 0; i < np; ++i) {
    if (!w) { /* alltoallv: one type per side, displacements in items of it */
      st[i] = c->stc;
      c->rtcs[i] = c->rtc;
      scnt[i] = sw_side_count(c, c->stc, pair_count(c, c->rank, i));
      rcnt[i] = sw_side_count(c, c->rtc, pair_count(c, i, c->rank));
    }
    c->scounts[i] = (int)scnt[i];
    c->rcounts[i] = (int)rcnt[i];
    c->stypes[i] = st[i]->type;
    c->rtypes[i] = c->rtcs[i]->type;
  }
  if (!w) {
    /* Items of the side's type: sends reversed with a gap of 1, receives
     * forward with a gap of 2. */
    long d = 0;
    for (int i = np - 1; i >= 0; --i) c->sdispls[i] = (int)d, d += scnt[i] + 1;
    d = 0;
    for (int i = 0; i < np; ++i) c->rdispls[i] = (int)d, d += rcnt[i] + 2;
    for (int i = 0; i < np; ++i) {
      sdisp[i] = c->sdispls[i] * c->stc->extent;
      rdisp[i] = c->rdispls[i] * c->rtc->extent;
    }
  } else {
    for (int i = 0; i < np; ++i) c->sdispls[i] = (int)sdisp[i], c->rdispls[i] = (int)rdisp[i];
  }
  if (!c->inplace) {
    sw_buf_alloc_blocks(&c->sb, np, sdisp, st, scnt);
    c->has_sb = 1;
  }
  sw_buf_alloc_blocks(&c->rb, np, rdisp, c->rtcs, rcnt);
  sw_buf_alloc_blocks(&c->xb, np, rdisp, c->rtcs, rcnt);
  c->has_rb = 1;
}

static long disp_bytes(const Case* c, int w, int recv, int i) {
  if (w) return recv ? c->rdispls[i] : c->sdispls[i];
  return recv ? (long)c->rdispls[i] * c->rtc->extent : (long)c->sdispls[i] * c->stc->extent;
}

static void v_prepare(Case* c, int w, unsigned seq) {
  reset(c);
  for (int j = 0; j < sw_npeers(c); ++j) {
    if (c->inplace) {
      sw_put_items(&c->rb, disp_bytes(c, w, 1, j), c->rtcs[j], 0, c->rcounts[j],
                   sw_stream(c->rank, j), 0, seq, RC_MOVE);
    } else {
      const TypeCase* st = w ? w_type(c, c->rank, j, 0) : c->stc;
      sw_put_items(&c->sb, disp_bytes(c, w, 0, j), st, 0, c->scounts[j],
                   sw_stream(sw_me(c), sw_peer(c, j)), 0, seq, RC_MOVE);
    }
  }
  expect_unchanged(c);
  for (int i = 0; i < sw_npeers(c); ++i)
    sw_put_items(&c->xb, disp_bytes(c, w, 1, i), c->rtcs[i], 0, c->rcounts[i],
                 sw_stream(sw_peer(c, i), sw_me(c)), 0, seq, RC_MOVE);
}

void alltoallv_setup(Case* c) {
  v_setup(c, 0);
}
void alltoallv_prepare(Case* c, unsigned seq) {
  v_prepare(c, 0, seq);
}
int alltoallv_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Alltoallv, Ialltoallv, s, c->scounts, c->sdispls, c->stc->type, rcv(c),
                  c->rcounts, c->rdispls, c->rtc->type, c->comm);
}
void alltoallv_verify(Case* c, unsigned seq) {
  move_verify(c, seq);
}

void alltoallw_setup(Case* c) {
  v_setup(c, 1);
}
void alltoallw_prepare(Case* c, unsigned seq) {
  v_prepare(c, 1, seq);
}
int alltoallw_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Alltoallw, Ialltoallw, s, c->scounts, c->sdispls, c->stypes, rcv(c),
                  c->rcounts, c->rdispls, c->rtypes, c->comm);
}
void alltoallw_verify(Case* c, unsigned seq) {
  (void)seq;
  sw_compare(&c->rb, &c->xb, c->t, "receive buffer");
}
