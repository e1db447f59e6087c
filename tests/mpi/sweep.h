/* The MPI conformance sweep's shared pieces (C11, MPI only).
 *
 * Every datatype the sweep uses is a TypeCase: an MPI handle plus its
 * layout written out by the test itself (the elements of one item, each a
 * basic kind at a byte offset that may be negative), so expected receive
 * buffers are built byte by byte without asking the library. Buffers are
 * filled with a position-dependent sentinel first; bytes no element covers
 * (holes, gaps, the guard zones around the buffer) must still hold it after
 * the call.
 *
 * Every failure prints the case (collective or call, form, communicator,
 * types, op, count, root, in-place, start number), the world rank and the
 * first wrong byte with the element it belongs to, then aborts the job. */
#ifndef NICQ_TESTS_MPI_SWEEP_H
#define NICQ_TESTS_MPI_SWEEP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- failures ---------------------------------------------------------------------- */
extern int sw_world_rank;
extern char sw_ctx[512]; /* the case being run, set by sw_set_ctx */

void sw_set_ctx(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void sw_fail(const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* Prints sw_ctx from a SIGTERM/SIGALRM handler, so a hang names its case. */
void sw_install_hang_report(void);

#define SW_CHECK(cond, ...)                                \
  do {                                                     \
    if (!(cond)) sw_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

/* Communicators run under MPI_ERRORS_RETURN; a failed call is reported with
 * the case and the library's message. */
#define SW_OK(call)                                                         \
  do {                                                                      \
    int rc_ = (call);                                                       \
    if (rc_ != MPI_SUCCESS) {                                               \
      char msg_[MPI_MAX_ERROR_STRING];                                      \
      int len_ = 0;                                                         \
      msg_[0] = 0;                                                          \
      MPI_Error_string(rc_, msg_, &len_);                                   \
      sw_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, rc_, msg_); \
    }                                                                       \
  } while (0)

/* ---- basic kinds (the predefined datatypes) ------------------------------------------ */
typedef enum {
  KC_SIGNED,   /* C signed integers (incl. MPI_CHAR where char is signed) */
  KC_UNSIGNED, /* C unsigned integers */
  KC_FLOAT,
  KC_BOOL,
  KC_BYTE,   /* MPI_BYTE, MPI_PACKED */
  KC_WCHAR,  /* data movement only */
  KC_PAIR,   /* value + int index, MINLOC/MAXLOC */
  KC_COMPLEX /* real and imaginary part of the kind's `value_kind`: SUM, PROD */
} KindClass;

typedef struct {
  const char* name;
  MPI_Datatype type;
  KindClass cls;
  int size;       /* bytes the element spans in memory (C sizeof) */
  int value_sz;   /* significant bytes of the value (long double: 10) */
  int value_kind; /* pairs: the kind of the value part; -1 otherwise */
  int index_off;  /* pairs: offset of the int index */
  int is_char;    /* MPI_CHAR: arithmetic only when SWEEP_CHAR_ARITH */
} Kind;

extern const Kind sw_kinds[];
extern const int sw_nkinds;
int sw_kind_of(MPI_Datatype t); /* -1 when not predefined */

/* ---- type cases ------------------------------------------------------------------------ */
#define SW_MAX_ELEMS 8
typedef struct {
  const char* name;
  MPI_Datatype type;
  int nel;
  int kind[SW_MAX_ELEMS];
  long off[SW_MAX_ELEMS]; /* element offsets from the item's origin */
  long extent, lb;
  long tlb, tub;   /* true bounds of the data in one item */
  int single_kind; /* every element of one kind: predefined ops apply */
  int alt;         /* index of the predefined case with the same signature unit, or -1 */
  int user_mat;    /* four unsigned elements: the matrix op applies */
} TypeCase;

extern TypeCase sw_types[];
extern int sw_ntypes;
void sw_types_init(void); /* builds and commits the derived types */
void sw_types_free(void);
const TypeCase* sw_type_by_handle(MPI_Datatype t);
const TypeCase* sw_type_by_name(const char* name);

/* ---- buffers with sentinels -------------------------------------------------------------- */
#define SW_GUARD 64
typedef struct {
  unsigned char* alloc;
  unsigned char* base; /* the pointer passed to MPI (offset 0) */
  unsigned char* care; /* per byte: 1 compared, 0 don't care (long double padding) */
  long lo, hi;         /* byte range around base, guards included */
  unsigned salt;       /* varies the sentinel between buffers */
} Buf;

/* Room for items [0, span) of t (span may be 0), plus guards. */
void sw_buf_alloc(Buf* b, const TypeCase* t, long span);
/* Room for `bytes` raw bytes (alltoallw's byte displacements) plus guards. */
void sw_buf_alloc_bytes(Buf* b, long lo, long hi);
void sw_buf_free(Buf* b);
void sw_buf_sentinel(Buf* b); /* sentinel everywhere, every byte compared */
void sw_buf_copy(Buf* dst, const Buf* src);

/* Writes items [first, first+n) of type t at byte offset `disp` from base:
 * element e of item k (k counted from `first`) holds the value of stream
 * `stream` at flat position j0 + (k-first)*nel + e. `red` selects the
 * reduction value generator for op class red (0: data movement values). */
void sw_put_items(Buf* b, long disp, const TypeCase* t, long first, long n, unsigned stream,
                  long j0, unsigned seq, int red);
/* Writes the elements of one item of t from src (an item origin) to dst (an
 * item origin inside b), marking long double padding as don't-care. */
void sw_put_elems(Buf* b, unsigned char* dst, const TypeCase* t, const unsigned char* src);
/* Generates item `item` of stream `stream` at origin (values as sw_put_items). */
void sw_gen_item(unsigned char* origin, const TypeCase* t, unsigned stream, long item, unsigned seq,
                 int red);
/* Marks bytes [from, to) (offsets from base) as don't-care. */
void sw_dont_care(Buf* b, long from, long to);
/* Compares actual against expected over the whole buffer; on the first
 * difference fails naming the byte, and the item/element it belongs to
 * (t, at byte offset disp). `what` names the buffer. */
void sw_compare(const Buf* actual, const Buf* expected, const TypeCase* t, const char* what);

#define SW_MAX_RANKS 64
/* Data streams: the values rank `src` sends to rank `dst`. */
static inline unsigned sw_stream(int src, int dst) {
  return (unsigned)(src * SW_MAX_RANKS + dst + 1);
}

/* ---- values ----------------------------------------------------------------------------- */
unsigned sw_hash(unsigned a, unsigned b, unsigned c);
void sw_store(int kind, void* p, unsigned h, int red);

/* ---- reductions -------------------------------------------------------------------------- */
enum {
  RC_MOVE = 0, /* not a reduction */
  RC_MAXMIN,
  RC_SUM,
  RC_PROD,
  RC_LOGICAL,
  RC_BITWISE,
  RC_LOC,
  RC_USER_SUM,
  RC_USER_FIRST,
  RC_USER_MAT
};
typedef struct {
  const char* name;
  MPI_Op op; /* set at init for user ops */
  int rc;    /* value class */
  int commutative;
} OpCase;
extern OpCase sw_ops[];
/* The datatypes the running reductions passed; user ops check they get one. */
extern MPI_Datatype sw_user_op_types[8];
extern int sw_n_user_op_types;
extern int sw_nops;
void sw_ops_init(void);
void sw_ops_free(void);
const OpCase* sw_op_by_name(const char* name);
/* Does the sweep reduce type t with op o? */
int sw_op_applies(const OpCase* o, const TypeCase* t);
/* out = left op right for one item of t (elements at its offsets). */
void sw_ref_combine(const OpCase* o, const TypeCase* t, const unsigned char* left,
                    const unsigned char* right, unsigned char* out);

/* ---- options ---------------------------------------------------------------------------- */
/* none; "slice=world"; "slice" */
enum { SLICE_NONE, SLICE_WORLD, SLICE_ALL_COMMS };
typedef struct {
  int level; /* 0 default, 1 long (NICQ_SWEEP_LONG=1 or argument "long") */
  int verbose;
  int scale; /* percent of the default sample to run (default 100) */
  int slice; /* SLICE_*: the representative slice (coll_sweep.c) added to the sample */
  const char* only_coll;
  const char* only_form;
  const char* only_comm;
  const char* only_type;
  const char* only_op;
} Options;
extern Options sw_opt;
void sw_parse_options(int argc, char** argv);
int sw_selected(const char* only, const char* name);

#endif
