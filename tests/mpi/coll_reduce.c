/* Reductions: reduce, allreduce, reduce_scatter(_block), scan, exscan.
 * Rank r contributes stream r's values of the op's value class; the
 * expected result is folded here in rank order (left operand = lower
 * rank), which is what MPI requires of non-commutative ops. On an
 * intercommunicator a group's result is the fold of the other group's
 * contributions, in that group's rank order. */
#include <string.h>

#include "coll_sweep.h"

static void* snd(Case* c) {
  return c->has_sb ? (void*)c->sb.base : NULL;
}
static void* rcv(Case* c) {
  return c->has_rb ? (void*)c->rb.base : NULL;
}
static void alloc_send(Case* c, long span) {
  sw_buf_alloc(&c->sb, c->t, span);
  c->has_sb = 1;
}
static void alloc_recv(Case* c, long span) {
  sw_buf_alloc(&c->rb, c->t, span);
  sw_buf_alloc(&c->xb, c->t, span);
  c->has_rb = 1;
}
static void contribute(Case* c, Buf* b, long n, unsigned seq) {
  sw_buf_sentinel(b);
  sw_put_items(b, 0, c->t, 0, n, sw_stream(sw_me(c), 0), 0, seq, c->op->rc);
}

void sw_fold(const Case* c, Buf* x, long disp, long pos, long item, long n, int from, int to,
             unsigned seq) {
  unsigned char acc_mem[512], cur_mem[512];
  unsigned char* acc = acc_mem + 256;
  unsigned char* cur = cur_mem + 256;
  for (long k = 0; k < n; ++k) {
    memset(acc_mem, 0, sizeof acc_mem);
    sw_gen_item(acc, c->t, sw_stream(from, 0), item + k, seq, c->op->rc);
    for (int r = from + 1; r < to; ++r) {
      memset(cur_mem, 0, sizeof cur_mem);
      sw_gen_item(cur, c->t, sw_stream(r, 0), item + k, seq, c->op->rc);
      sw_ref_combine(c->op, c->t, acc, cur, acc);
    }
    sw_put_elems(x, x->base + disp + (pos + k) * c->t->extent, c->t, acc);
  }
}

/* The fold over the ranks whose contributions this rank's result holds. */
static void fold_peers(const Case* c, Buf* x, long pos, long item, long n, unsigned seq) {
  sw_fold(c, x, 0, pos, item, n, sw_peer(c, 0), sw_peer(c, 0) + sw_npeers(c), seq);
}

static void red_verify(Case* c) {
  if (c->has_rb) sw_compare(&c->rb, &c->xb, c->t, "receive buffer");
}

/* ---- reduce -------------------------------------------------------------------------- */
void reduce_setup(Case* c) {
  int root = sw_is_root(c);
  if (c->inter ? !c->root_local : !(root && c->inplace)) alloc_send(c, c->count);
  if (root || !c->null_at_nonroot) alloc_recv(c, c->count);
}
void reduce_prepare(Case* c, unsigned seq) {
  if (c->has_sb) contribute(c, &c->sb, c->count, seq);
  if (c->has_rb) sw_buf_sentinel(&c->rb);
  int root = sw_is_root(c);
  if (root && c->inplace) contribute(c, &c->rb, c->count, seq);
  if (c->has_rb) sw_buf_copy(&c->xb, &c->rb);
  if (root) fold_peers(c, &c->xb, 0, 0, c->count, seq);
}
int reduce_issue(Case* c, int form, MPI_Request* r) {
  const void* s = sw_is_root(c) && c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Reduce, Ireduce, s, rcv(c), (int)c->count, c->t->type, c->op->op,
                  sw_root_arg(c), c->comm);
}
void reduce_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}

/* ---- allreduce ---------------------------------------------------------------------- */
void allreduce_setup(Case* c) {
  if (!c->inplace) alloc_send(c, c->count);
  alloc_recv(c, c->count);
}
void allreduce_prepare(Case* c, unsigned seq) {
  if (c->has_sb) contribute(c, &c->sb, c->count, seq);
  sw_buf_sentinel(&c->rb);
  if (c->inplace) contribute(c, &c->rb, c->count, seq);
  sw_buf_copy(&c->xb, &c->rb);
  fold_peers(c, &c->xb, 0, 0, c->count, seq);
}
int allreduce_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Allreduce, Iallreduce, s, rcv(c), (int)c->count, c->t->type, c->op->op,
                  c->comm);
}
void allreduce_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}

/* ---- reduce_scatter(_block): block i of the vector goes to rank i -----------------------------
 * On an intercommunicator each group scatters the other group's vector
 * over itself, so both groups' counts must add up to the same length:
 * reduce_scatter_block takes count * (remote size) items per rank,
 * reduce_scatter that much on average, alternately half more and half
 * less. */
static long rs_total(Case* c, int block) {
  if (c->inter) {
    long base = c->count * c->rsize, total = 0;
    for (int i = 0; i < c->size; ++i) {
      long d = block || (i == c->size - 1 && c->size % 2) ? 0 : base / 2;
      c->rcounts[i] = (int)(i % 2 ? base - d : base + d);
      c->rdispls[i] = (int)total;
      total += c->rcounts[i];
    }
    return total;
  }
  long total = 0;
  for (int i = 0; i < c->size; ++i) {
    c->rcounts[i] = block ? (int)c->count : sw_vcount(c->count, i);
    c->rdispls[i] = (int)total; /* the block's first item in the vector */
    total += c->rcounts[i];
  }
  return total;
}
static void rs_setup(Case* c, int block) {
  long total = rs_total(c, block);
  if (!c->inplace) alloc_send(c, total);
  alloc_recv(c, c->inplace ? total : c->rcounts[c->rank]);
}
static void rs_prepare(Case* c, int block, unsigned seq) {
  long total = rs_total(c, block), mine = c->rcounts[c->rank];
  if (c->has_sb) contribute(c, &c->sb, total, seq);
  sw_buf_sentinel(&c->rb);
  if (c->inplace) contribute(c, &c->rb, total, seq);
  sw_buf_copy(&c->xb, &c->rb);
  fold_peers(c, &c->xb, 0, c->rdispls[c->rank], mine, seq);
  /* In place, the rest of the buffer (the input) may be used as scratch. */
  if (c->inplace) sw_dont_care(&c->xb, mine * c->t->extent + c->t->lb, c->xb.hi - SW_GUARD);
}
void reduce_scatter_setup(Case* c) {
  rs_setup(c, 0);
}
void reduce_scatter_prepare(Case* c, unsigned seq) {
  rs_prepare(c, 0, seq);
}
int reduce_scatter_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Reduce_scatter, Ireduce_scatter, s, rcv(c), c->rcounts, c->t->type,
                  c->op->op, c->comm);
}
void reduce_scatter_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}
void reduce_scatter_block_setup(Case* c) {
  rs_setup(c, 1);
}
void reduce_scatter_block_prepare(Case* c, unsigned seq) {
  rs_prepare(c, 1, seq);
}
int reduce_scatter_block_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Reduce_scatter_block, Ireduce_scatter_block, s, rcv(c), c->rcounts[0],
                  c->t->type, c->op->op, c->comm);
}
void reduce_scatter_block_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}

/* ---- scan / exscan (exscan's result on rank 0 is undefined) --------------------------------- */
static void scan_setup_any(Case* c) {
  if (!c->inplace) alloc_send(c, c->count);
  alloc_recv(c, c->count);
}
static void scan_prepare_any(Case* c, int exclusive, unsigned seq) {
  if (c->has_sb) contribute(c, &c->sb, c->count, seq);
  sw_buf_sentinel(&c->rb);
  if (c->inplace) contribute(c, &c->rb, c->count, seq);
  sw_buf_copy(&c->xb, &c->rb);
  int upto = exclusive ? c->rank : c->rank + 1;
  if (upto > 0)
    sw_fold(c, &c->xb, 0, 0, 0, c->count, 0, upto, seq);
  else
    sw_dont_care(&c->xb, c->xb.lo, c->xb.hi);
}
void scan_setup(Case* c) {
  scan_setup_any(c);
}
void scan_prepare(Case* c, unsigned seq) {
  scan_prepare_any(c, 0, seq);
}
int scan_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Scan, Iscan, s, rcv(c), (int)c->count, c->t->type, c->op->op, c->comm);
}
void scan_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}
void exscan_setup(Case* c) {
  scan_setup_any(c);
}
void exscan_prepare(Case* c, unsigned seq) {
  scan_prepare_any(c, 1, seq);
}
int exscan_issue(Case* c, int form, MPI_Request* r) {
  const void* s = c->inplace ? MPI_IN_PLACE : snd(c);
  return SW_ISSUE(form, r, Exscan, Iexscan, s, rcv(c), (int)c->count, c->t->type, c->op->op,
                  c->comm);
}
void exscan_verify(Case* c, unsigned seq) {
  (void)seq;
  red_verify(c);
}
