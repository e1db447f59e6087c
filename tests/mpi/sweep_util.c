/* The sweep's failure reporting, options, values and sentinel buffers. */
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sweep.h"

int sw_world_rank = -1;
char sw_ctx[512] = "(startup)";
Options sw_opt;

void sw_set_ctx(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sw_ctx, sizeof sw_ctx, fmt, ap);
  va_end(ap);
  if (sw_opt.verbose > 1 || (sw_opt.verbose && sw_world_rank == 0))
    fprintf(stderr, "[%d] %s\n", sw_world_rank, sw_ctx);
}

void sw_fail(const char* file, int line, const char* fmt, ...) {
  char detail[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  fprintf(stderr, "SWEEP FAILURE world rank %d (%s:%d)\n  case: %s\n  what: %s\n", sw_world_rank,
          file, line, sw_ctx, detail);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  abort();
}

static void hang_report(int sig) {
  /* write(2) only: this runs in a signal handler. */
  char msg[640];
  size_t n = 0;
  const char* head = "SWEEP INTERRUPTED (hang or timeout?) in case: ";
  for (const char* s = head; *s && n < sizeof msg - 2; ++s) msg[n++] = *s;
  for (const char* s = sw_ctx; *s && n < sizeof msg - 2; ++s) msg[n++] = *s;
  msg[n++] = '\n';
  ssize_t rc = write(2, msg, n);
  (void)rc;
  signal(sig, SIG_DFL);
  raise(sig);
}

void sw_install_hang_report(void) {
  signal(SIGTERM, hang_report);
  signal(SIGINT, hang_report);
}

static const char* opt_value(const char* arg, const char* key) {
  size_t n = strlen(key);
  return strncmp(arg, key, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

void sw_parse_options(int argc, char** argv) {
  const char* env = getenv("NICQ_SWEEP_LONG");
  sw_opt.level = env && atoi(env) > 0;
  env = getenv("NICQ_SWEEP_VERBOSE");
  sw_opt.verbose = env ? atoi(env) : 0;
  sw_opt.scale = 100;
  for (int i = 1; i < argc; ++i) {
    const char* v;
    if (strcmp(argv[i], "long") == 0)
      sw_opt.level = 1;
    else if (strcmp(argv[i], "verbose") == 0)
      sw_opt.verbose = 1;
    else if (strcmp(argv[i], "slice") == 0)
      sw_opt.slice = SLICE_ALL_COMMS;
    else if (strcmp(argv[i], "slice=world") == 0)
      sw_opt.slice = SLICE_WORLD;
    else if ((v = opt_value(argv[i], "scale")))
      sw_opt.scale = atoi(v);
    else if ((v = opt_value(argv[i], "coll")))
      sw_opt.only_coll = v;
    else if ((v = opt_value(argv[i], "form")))
      sw_opt.only_form = v;
    else if ((v = opt_value(argv[i], "comm")))
      sw_opt.only_comm = v;
    else if ((v = opt_value(argv[i], "type")))
      sw_opt.only_type = v;
    else if ((v = opt_value(argv[i], "op")))
      sw_opt.only_op = v;
  }
}

/* A comma-separated list of names, or NULL for all. */
int sw_selected(const char* only, const char* name) {
  if (!only) return 1;
  size_t n = strlen(name);
  for (const char* p = only; *p;) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

unsigned sw_hash(unsigned a, unsigned b, unsigned c) {
  uint64_t x = ((uint64_t)a << 40) ^ ((uint64_t)b << 12) ^ (uint64_t)c * 0x9E3779B97F4A7C15ull;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return (unsigned)x;
}

/* ---- buffers ------------------------------------------------------------------------ */
/* Position- and buffer-dependent, so a byte copied from another buffer's
 * sentinel (a send buffer's hole) is caught too. */
static unsigned g_buf_salt;
static unsigned char sentinel_at(const Buf* b, long off) {
  return (unsigned char)(0xA5u ^ (unsigned)(off * 37) ^ b->salt);
}

void sw_buf_alloc_bytes(Buf* b, long lo, long hi) {
  lo -= SW_GUARD;
  hi += SW_GUARD;
  lo = -((-lo + 15) / 16 * 16); /* keep base 16-byte aligned */
  size_t n = (size_t)(hi - lo);
  n = (n + 15) / 16 * 16;
  b->alloc = aligned_alloc(16, n);
  b->care = malloc(n);
  SW_CHECK(b->alloc && b->care, "out of memory (%zu bytes)", n);
  b->lo = lo;
  b->hi = lo + (long)n;
  b->base = b->alloc - lo;
  b->salt = (++g_buf_salt * 101u) & 0xff;
  sw_buf_sentinel(b);
}

void sw_buf_alloc(Buf* b, const TypeCase* t, long span) {
  long lo = 0, hi = 0;
  if (span > 0) {
    lo = t->tlb < 0 ? t->tlb : 0;
    hi = (span - 1) * t->extent + t->tub;
    if (hi < 0) hi = 0;
    if ((span - 1) * t->extent + t->tlb < lo) lo = (span - 1) * t->extent + t->tlb;
  }
  sw_buf_alloc_bytes(b, lo, hi);
}

void sw_buf_free(Buf* b) {
  free(b->alloc);
  free(b->care);
  memset(b, 0, sizeof *b);
}

void sw_buf_sentinel(Buf* b) {
  for (long o = b->lo; o < b->hi; ++o) b->base[o] = sentinel_at(b, o);
  memset(b->care, 1, (size_t)(b->hi - b->lo));
}

void sw_buf_copy(Buf* dst, const Buf* src) {
  SW_CHECK(dst->lo == src->lo && dst->hi == src->hi, "internal: buffer shapes differ");
  memcpy(dst->alloc, src->alloc, (size_t)(src->hi - src->lo));
  dst->salt = src->salt;
  memcpy(dst->care, src->care, (size_t)(src->hi - src->lo));
}

/* Marks the bytes of one element at p that are not significant. */
static void mark_care(Buf* b, unsigned char* p, int kind) {
  const Kind* k = &sw_kinds[kind];
  long o = (long)(p - b->base);
  SW_CHECK(o >= b->lo + SW_GUARD / 2 && o + k->size <= b->hi - SW_GUARD / 2,
           "internal: element at offset %ld outside buffer [%ld,%ld)", o, b->lo, b->hi);
  if (k->cls == KC_PAIR) {
    const Kind* v = &sw_kinds[k->value_kind];
    for (int i = v->value_sz; i < v->size; ++i) b->care[o - b->lo + i] = 0;
  } else {
    for (int i = k->value_sz; i < k->size; ++i) b->care[o - b->lo + i] = 0;
  }
}

void sw_put_items(Buf* b, long disp, const TypeCase* t, long first, long n, unsigned stream,
                  long j0, unsigned seq, int red) {
  for (long k = 0; k < n; ++k) {
    unsigned char* item = b->base + disp + (first + k) * t->extent;
    for (int e = 0; e < t->nel; ++e) {
      unsigned char* p = item + t->off[e];
      unsigned h = sw_hash(stream, (unsigned)(j0 + k * t->nel + e), seq);
      sw_store(t->kind[e], p, h, red);
      mark_care(b, p, t->kind[e]);
    }
  }
}

void sw_put_elems(Buf* b, unsigned char* dst, const TypeCase* t, const unsigned char* src) {
  for (int e = 0; e < t->nel; ++e) {
    const Kind* k = &sw_kinds[t->kind[e]];
    long o = t->off[e];
    if (k->cls == KC_PAIR) { /* the value and the index, not the padding */
      memcpy(dst + o, src + o, (size_t)sw_kinds[k->value_kind].size);
      memcpy(dst + o + k->index_off, src + o + k->index_off, sizeof(int));
#ifndef SWEEP_STRICT_PAIR_PADDING
      /* MINLOC/MAXLOC results copy whole C pairs, padding included (see the
       * report of issue 16): not checked until the kernels copy members. */
      sw_dont_care(b, (long)(dst - b->base) + o + sw_kinds[k->value_kind].size,
                   (long)(dst - b->base) + o + k->index_off);
      sw_dont_care(b, (long)(dst - b->base) + o + k->index_off + 4,
                   (long)(dst - b->base) + o + k->size);
#endif
    } else {
      memcpy(dst + o, src + o, (size_t)k->size);
    }
    mark_care(b, dst + o, t->kind[e]);
  }
}

void sw_gen_item(unsigned char* origin, const TypeCase* t, unsigned stream, long item, unsigned seq,
                 int red) {
  for (int e = 0; e < t->nel; ++e)
    sw_store(t->kind[e], origin + t->off[e], sw_hash(stream, (unsigned)(item * t->nel + e), seq),
             red);
}

void sw_dont_care(Buf* b, long from, long to) {
  if (from < b->lo) from = b->lo;
  if (to > b->hi) to = b->hi;
  for (long o = from; o < to; ++o) b->care[o - b->lo] = 0;
}

static void format_elem(char* out, size_t n, int kind, const unsigned char* p) {
  const Kind* k = &sw_kinds[kind];
  size_t len = 0;
  for (int i = 0; i < k->size && len + 3 < n; ++i)
    len += (size_t)snprintf(out + len, n - len, "%02x", p[i]);
}

/* -0 and +0 are one value here: the grouping in which an implementation
 * combines complex products (not associative in floating point) decides
 * the sign of an exact zero part, and MPI leaves the grouping open. */
static int same_but_zero_sign(int kind, const unsigned char* x, const unsigned char* a) {
  const Kind* k = &sw_kinds[kind];
  const int part = k->cls == KC_COMPLEX ? sw_kinds[k->value_kind].size
                   : k->cls == KC_FLOAT ? k->size
                                        : 0;
  if (part != 4 && part != 8) return 0;
  for (int off = 0; off < k->size; off += part) {
    if (memcmp(x + off, a + off, (size_t)part) == 0) continue;
    double xv, av;
    if (part == 4) {
      float xf, af;
      memcpy(&xf, x + off, 4);
      memcpy(&af, a + off, 4);
      xv = xf, av = af;
    } else {
      memcpy(&xv, x + off, 8);
      memcpy(&av, a + off, 8);
    }
    if (!(xv == 0 && av == 0)) return 0;
  }
  return 1;
}

void sw_compare(const Buf* actual, const Buf* expected, const TypeCase* t, const char* what) {
  const unsigned char* a = actual->base;
  const unsigned char* x = expected->base;
  for (long o = expected->lo; o < expected->hi; ++o) {
    if (!expected->care[o - expected->lo] || a[o] == x[o]) continue;
    /* Which element of which item holds byte o? */
    for (int e = 0; e < t->nel; ++e) {
      int sz = sw_kinds[t->kind[e]].size;
      long rel = o - t->off[e];
      long k = rel >= 0 ? rel / t->extent : -((-rel + t->extent - 1) / t->extent);
      for (long kk = k - 1; kk <= k + 1; ++kk) {
        long start = kk * t->extent + t->off[e];
        if (t->extent == 0 || o < start || o >= start + sz) continue;
        if (!expected->care[start - expected->lo]) continue;
        int written = 0; /* an element the expected image holds, not just sentinel */
        for (int i = 0; i < sz && !written; ++i)
          written = x[start + i] != sentinel_at(expected, start + i);
        if (!written) continue;
        if (same_but_zero_sign(t->kind[e], x + start, a + start)) goto next_byte;
        char ex[80], ac[80];
        format_elem(ex, sizeof ex, t->kind[e], x + start);
        format_elem(ac, sizeof ac, t->kind[e], a + start);
        sw_fail(__FILE__, __LINE__,
                "%s: first wrong byte at offset %ld = item %ld element %d (%s, type %s, byte %ld "
                "of it): expected %02x got %02x; element expected %s got %s",
                what, o, kk, e, sw_kinds[t->kind[e]].name, t->name, o - start, x[o], a[o], ex, ac);
      }
    }
    sw_fail(__FILE__, __LINE__,
            "%s: byte at offset %ld (buffer [%ld,%ld) around the MPI pointer, guards of %d) "
            "is in no element of type %s (a hole, gap or guard) and was written: "
            "sentinel %02x, now %02x",
            what, o, expected->lo, expected->hi, SW_GUARD, t->name, x[o], a[o]);
  next_byte:;
  }
}
