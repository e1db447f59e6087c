/* The sweep's reduction ops: every predefined op with its reference
 * computation, a commutative user op (sum), and two non-commutative ones
 * ("first": a op b = a; 2x2 matrix product) whose results depend on rank
 * order. User ops read the layout of the datatype they are given from the
 * sweep's own table, so they work on derived types with holes. */
#include <stdbool.h>
#include <string.h>

#include "sweep.h"

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt);
static void user_first(void* in, void* inout, int* len, MPI_Datatype* dt);
static void user_mat(void* in, void* inout, int* len, MPI_Datatype* dt);

OpCase sw_ops[] = {
    {"MPI_MAX", MPI_MAX, RC_MAXMIN, 1},        {"MPI_MIN", MPI_MIN, RC_MAXMIN, 1},
    {"MPI_SUM", MPI_SUM, RC_SUM, 1},           {"MPI_PROD", MPI_PROD, RC_PROD, 1},
    {"MPI_LAND", MPI_LAND, RC_LOGICAL, 1},     {"MPI_LOR", MPI_LOR, RC_LOGICAL, 1},
    {"MPI_LXOR", MPI_LXOR, RC_LOGICAL, 1},     {"MPI_BAND", MPI_BAND, RC_BITWISE, 1},
    {"MPI_BOR", MPI_BOR, RC_BITWISE, 1},       {"MPI_BXOR", MPI_BXOR, RC_BITWISE, 1},
    {"MPI_MAXLOC", MPI_MAXLOC, RC_LOC, 1},     {"MPI_MINLOC", MPI_MINLOC, RC_LOC, 1},
    {"user_sum", MPI_OP_NULL, RC_USER_SUM, 1}, {"user_first", MPI_OP_NULL, RC_USER_FIRST, 0},
    {"user_mat", MPI_OP_NULL, RC_USER_MAT, 0},
};
int sw_nops = sizeof sw_ops / sizeof sw_ops[0];

void sw_ops_init(void) {
  for (int i = 0; i < sw_nops; ++i) {
    MPI_User_function* fn = sw_ops[i].rc == RC_USER_SUM     ? user_sum
                            : sw_ops[i].rc == RC_USER_FIRST ? user_first
                            : sw_ops[i].rc == RC_USER_MAT   ? user_mat
                                                            : NULL;
    if (!fn) continue;
    SW_OK(MPI_Op_create(fn, sw_ops[i].commutative, &sw_ops[i].op));
    int commute = -1;
    SW_OK(MPI_Op_commutative(sw_ops[i].op, &commute));
    SW_CHECK(commute == sw_ops[i].commutative, "MPI_Op_commutative(%s) = %d", sw_ops[i].name,
             commute);
  }
}

void sw_ops_free(void) {
  for (int i = 0; i < sw_nops; ++i)
    if (sw_ops[i].rc >= RC_USER_SUM) SW_OK(MPI_Op_free(&sw_ops[i].op));
}

const OpCase* sw_op_by_name(const char* name) {
  for (int i = 0; i < sw_nops; ++i)
    if (strcmp(sw_ops[i].name, name) == 0) return &sw_ops[i];
  return NULL;
}

static int kind_takes(int rc, int kind) {
  const Kind* k = &sw_kinds[kind];
  int integer = k->cls == KC_SIGNED || k->cls == KC_UNSIGNED;
#ifndef SWEEP_CHAR_ARITH
  if (k->is_char) integer = 0; /* excluded until MPI_CHAR arithmetic lands */
#endif
  switch (rc) {
    case RC_MAXMIN:
      return integer || k->cls == KC_FLOAT;
    case RC_SUM:
    case RC_PROD:
      return integer || k->cls == KC_FLOAT || k->cls == KC_COMPLEX;
    case RC_LOGICAL:
      return integer || k->cls == KC_BOOL;
    case RC_BITWISE:
      return integer || k->cls == KC_BYTE;
    case RC_LOC:
      return k->cls == KC_PAIR;
    case RC_USER_SUM:
      return k->cls == KC_SIGNED || k->cls == KC_UNSIGNED || k->cls == KC_FLOAT ||
             k->cls == KC_COMPLEX;
    case RC_USER_FIRST:
      return 1;
    default:
      return 0;
  }
}

int sw_op_applies(const OpCase* o, const TypeCase* t) {
#ifndef SWEEP_USER_OP_DERIVED
  /* Excluded until fixed (issue 16 report): user ops on derived types are
   * called with the type's basic unit instead of the user's datatype. */
  if (o->rc >= RC_USER_SUM && t - sw_types >= sw_nkinds) return 0;
#endif
  if (o->rc == RC_USER_MAT) return t->user_mat;
  if (o->rc >= RC_USER_SUM) {
    for (int e = 0; e < t->nel; ++e)
      if (!kind_takes(o->rc, t->kind[e])) return 0;
    return 1;
  }
  /* Predefined ops: predefined types, and derived ones of a single kind. */
  if (!t->single_kind || t->kind[0] == sw_kind_of(MPI_PACKED)) return 0;
#ifndef SWEEP_PADDED_PAIR_DERIVED_REDUCE
  /* Excluded until fixed (issue 16 report): derived types of pairs with C
   * padding (MPI_DOUBLE_INT: 12 bytes of data, 16 of struct) reduce wrongly. */
  {
    const Kind* k = &sw_kinds[t->kind[0]];
    if (t - sw_types >= sw_nkinds && k->cls == KC_PAIR &&
        sw_kinds[k->value_kind].size + 4 != k->size)
      return 0;
  }
#endif
  return kind_takes(o->rc, t->kind[0]);
}

/* ---- reference values -------------------------------------------------------------- */
static long long load_s(const unsigned char* p, int size) {
  switch (size) {
    case 1:
      return *(const int8_t*)p;
    case 2: {
      int16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      int32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v;
    }
  }
}
static unsigned long long load_u(const unsigned char* p, int size) {
  uint64_t v = 0;
  memcpy(&v, p, (size_t)size);
  return v;
}
static long double load_f(const unsigned char* p, int size) {
  if (size == 4) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  if (size == 8) {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  long double x = 0;
  memcpy(&x, p, 10);
  return x;
}
static void store_u(unsigned char* p, int size, unsigned long long v) {
  memcpy(p, &v, (size_t)size);
}
static void store_f(unsigned char* p, int size, long double v) {
  if (size == 4) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else if (size == 8) {
    double d = (double)v;
    memcpy(p, &d, 8);
  } else {
    memset(p, 0, 16);
    memcpy(p, &v, 10);
  }
}

/* out = a op b for one element of kind k (a is the left operand). */
static void combine_elem(int rc, MPI_Op op, int kind, const unsigned char* a,
                         const unsigned char* b, unsigned char* out) {
  const Kind* k = &sw_kinds[kind];
  if (rc == RC_USER_FIRST) {
    memcpy(out, a, (size_t)k->size);
    return;
  }
  if (k->cls == KC_PAIR) {
    const Kind* v = &sw_kinds[k->value_kind];
    int cmp;
    if (v->cls == KC_FLOAT) {
      long double x = load_f(a, v->size), y = load_f(b, v->size);
      cmp = x < y ? -1 : x > y;
    } else {
      long long x = load_s(a, v->size), y = load_s(b, v->size);
      cmp = x < y ? -1 : x > y;
    }
    int ia, ib;
    memcpy(&ia, a + k->index_off, 4);
    memcpy(&ib, b + k->index_off, 4);
    int take_a = op == MPI_MAXLOC ? cmp > 0 : cmp < 0;
    if (cmp == 0) take_a = ia < ib;
    memcpy(out, take_a ? a : b, (size_t)k->size);
    return;
  }
  if (k->cls == KC_COMPLEX) { /* (a+bi)(c+di) = (ac-bd) + (ad+bc)i, in the part's precision */
    const int n = sw_kinds[k->value_kind].size;
    long double ar = load_f(a, n), ai = load_f(a + n, n), br = load_f(b, n), bi = load_f(b + n, n);
    long double re = ar + br, im = ai + bi;
    if (op == MPI_PROD) re = ar * br - ai * bi, im = ar * bi + ai * br;
    store_f(out, n, re);
    store_f(out + n, n, im);
    return;
  }
  if (k->cls == KC_FLOAT) {
    long double x = load_f(a, k->size), y = load_f(b, k->size), r = 0;
    if (op == MPI_MAX)
      r = x > y ? x : y;
    else if (op == MPI_MIN)
      r = x < y ? x : y;
    else if (op == MPI_SUM || rc == RC_USER_SUM)
      r = x + y;
    else if (op == MPI_PROD)
      r = x * y;
    store_f(out, k->size, r);
    return;
  }
  if (k->cls == KC_BOOL) {
    bool x = load_u(a, k->size) != 0, y = load_u(b, k->size) != 0, r = 0;
    if (op == MPI_LAND)
      r = x && y;
    else if (op == MPI_LOR)
      r = x || y;
    else if (op == MPI_LXOR)
      r = x != y;
    const unsigned long long wide = r; /* little-endian: the low k->size bytes */
    memcpy(out, &wide, (size_t)k->size);
    return;
  }
  int sgn = k->cls == KC_SIGNED;
  unsigned long long ua = load_u(a, k->size), ub = load_u(b, k->size), r = 0;
  long long sa = sgn ? load_s(a, k->size) : (long long)ua,
            sb = sgn ? load_s(b, k->size) : (long long)ub;
  if (op == MPI_MAX)
    r = sgn ? (unsigned long long)(sa > sb ? sa : sb) : (ua > ub ? ua : ub);
  else if (op == MPI_MIN)
    r = sgn ? (unsigned long long)(sa < sb ? sa : sb) : (ua < ub ? ua : ub);
  else if (op == MPI_SUM || rc == RC_USER_SUM)
    r = ua + ub;
  else if (op == MPI_PROD)
    r = ua * ub;
  else if (op == MPI_LAND)
    r = ua && ub;
  else if (op == MPI_LOR)
    r = ua || ub;
  else if (op == MPI_LXOR)
    r = !ua != !ub;
  else if (op == MPI_BAND)
    r = ua & ub;
  else if (op == MPI_BOR)
    r = ua | ub;
  else if (op == MPI_BXOR)
    r = ua ^ ub;
  store_u(out, k->size, r);
}

static void mat_mul(const unsigned* l, const unsigned* r, unsigned* out) {
  unsigned m[4] = {l[0] * r[0] + l[1] * r[2], l[0] * r[1] + l[1] * r[3], l[2] * r[0] + l[3] * r[2],
                   l[2] * r[1] + l[3] * r[3]};
  memcpy(out, m, sizeof m);
}

static void combine_item(int rc, MPI_Op op, const TypeCase* t, const unsigned char* a,
                         const unsigned char* b, unsigned char* out) {
  if (rc == RC_USER_MAT) {
    unsigned l[4], r[4], m[4];
    for (int e = 0; e < 4; ++e) {
      memcpy(&l[e], a + t->off[e], 4);
      memcpy(&r[e], b + t->off[e], 4);
    }
    mat_mul(l, r, m);
    for (int e = 0; e < 4; ++e) memcpy(out + t->off[e], &m[e], 4);
    return;
  }
  for (int e = 0; e < t->nel; ++e) {
    unsigned char tmp[32];
    const Kind* k = &sw_kinds[t->kind[e]];
    combine_elem(rc, op, t->kind[e], a + t->off[e], b + t->off[e], tmp);
    memcpy(out + t->off[e], tmp, (size_t)k->size);
  }
}

void sw_ref_combine(const OpCase* o, const TypeCase* t, const unsigned char* left,
                    const unsigned char* right, unsigned char* out) {
  combine_item(o->rc, o->op, t, left, right, out);
}

/* ---- user functions ------------------------------------------------------------------- */
MPI_Datatype sw_user_op_types[8];
int sw_n_user_op_types;

static const TypeCase* user_type(MPI_Datatype* dt, int len, const char* op) {
  const TypeCase* t = sw_type_by_handle(*dt);
  int ok = 0;
  for (int i = 0; i < sw_n_user_op_types; ++i) ok |= *dt == sw_user_op_types[i];
  const TypeCase* want = sw_n_user_op_types ? sw_type_by_handle(sw_user_op_types[0]) : NULL;
  SW_CHECK(t && ok,
           "user op %s called with datatype %s (handle %d, len %d), not the %s given to the call",
           op, t ? t->name : "(unknown)", (int)*dt, len, want ? want->name : "(none)");
  return t;
}

static void apply(int rc, void* in, void* inout, int* len, MPI_Datatype* dt, const char* name) {
  const TypeCase* t = user_type(dt, *len, name);
  SW_CHECK(*len >= 0, "user op %s called with len %d", name, *len);
  for (int i = 0; i < *len; ++i) {
    const unsigned char* a = (const unsigned char*)in + (long)i * t->extent;
    unsigned char* b = (unsigned char*)inout + (long)i * t->extent;
    combine_item(rc, MPI_OP_NULL, t, a, b, b);
  }
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  apply(RC_USER_SUM, in, inout, len, dt, "user_sum");
}
static void user_first(void* in, void* inout, int* len, MPI_Datatype* dt) {
  apply(RC_USER_FIRST, in, inout, len, dt, "user_first");
}
static void user_mat(void* in, void* inout, int* len, MPI_Datatype* dt) {
  apply(RC_USER_MAT, in, inout, len, dt, "user_mat");
}
