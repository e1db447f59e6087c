/* The sweep's datatypes: every predefined type, and derived types with
 * gaps, holes, non-monotonic type maps, negative lower bounds and nesting,
 * each with its layout written out here (not asked of the library). */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "sweep.h"

#define SIGNED_CHAR_CLS (CHAR_MIN < 0 ? KC_SIGNED : KC_UNSIGNED)
/* Order matters: pair kinds name their value kind by index. */
const Kind sw_kinds[] = {
    {"MPI_CHAR", MPI_CHAR, SIGNED_CHAR_CLS, 1, 1, -1, 0, 1},
    {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, KC_SIGNED, 1, 1, -1, 0, 0},
    {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, KC_UNSIGNED, 1, 1, -1, 0, 0},
    {"MPI_BYTE", MPI_BYTE, KC_BYTE, 1, 1, -1, 0, 0},
    {"MPI_SHORT", MPI_SHORT, KC_SIGNED, 2, 2, -1, 0, 0},
    {"MPI_UNSIGNED_SHORT", MPI_UNSIGNED_SHORT, KC_UNSIGNED, 2, 2, -1, 0, 0},
    {"MPI_INT", MPI_INT, KC_SIGNED, 4, 4, -1, 0, 0},
    {"MPI_UNSIGNED", MPI_UNSIGNED, KC_UNSIGNED, 4, 4, -1, 0, 0},
    {"MPI_LONG", MPI_LONG, KC_SIGNED, sizeof(long), sizeof(long), -1, 0, 0},
    {"MPI_UNSIGNED_LONG", MPI_UNSIGNED_LONG, KC_UNSIGNED, sizeof(long), sizeof(long), -1, 0, 0},
    {"MPI_LONG_LONG", MPI_LONG_LONG, KC_SIGNED, 8, 8, -1, 0, 0},
    {"MPI_UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG, KC_UNSIGNED, 8, 8, -1, 0, 0},
    {"MPI_FLOAT", MPI_FLOAT, KC_FLOAT, 4, 4, -1, 0, 0},                                /* 12 */
    {"MPI_DOUBLE", MPI_DOUBLE, KC_FLOAT, 8, 8, -1, 0, 0},                              /* 13 */
    {"MPI_LONG_DOUBLE", MPI_LONG_DOUBLE, KC_FLOAT, sizeof(long double), 10, -1, 0, 0}, /* 14 */
    {"MPI_C_BOOL", MPI_C_BOOL, KC_BOOL, sizeof(bool), 1, -1, 0, 0},
    {"MPI_WCHAR", MPI_WCHAR, KC_WCHAR, sizeof(wchar_t), sizeof(wchar_t), -1, 0, 0},
    {"MPI_INT8_T", MPI_INT8_T, KC_SIGNED, 1, 1, -1, 0, 0},
    {"MPI_INT16_T", MPI_INT16_T, KC_SIGNED, 2, 2, -1, 0, 0},
    {"MPI_INT32_T", MPI_INT32_T, KC_SIGNED, 4, 4, -1, 0, 0},
    {"MPI_INT64_T", MPI_INT64_T, KC_SIGNED, 8, 8, -1, 0, 0},
    {"MPI_UINT8_T", MPI_UINT8_T, KC_UNSIGNED, 1, 1, -1, 0, 0},
    {"MPI_UINT16_T", MPI_UINT16_T, KC_UNSIGNED, 2, 2, -1, 0, 0},
    {"MPI_UINT32_T", MPI_UINT32_T, KC_UNSIGNED, 4, 4, -1, 0, 0},
    {"MPI_UINT64_T", MPI_UINT64_T, KC_UNSIGNED, 8, 8, -1, 0, 0},
    {"MPI_AINT", MPI_AINT, KC_SIGNED, sizeof(MPI_Aint), sizeof(MPI_Aint), -1, 0, 0},
    {"MPI_COUNT", MPI_COUNT, KC_SIGNED, sizeof(MPI_Count), sizeof(MPI_Count), -1, 0, 0},
    {"MPI_OFFSET", MPI_OFFSET, KC_SIGNED, sizeof(MPI_Offset), sizeof(MPI_Offset), -1, 0, 0},
    {"MPI_PACKED", MPI_PACKED, KC_BYTE, 1, 1, -1, 0, 0},
    {"MPI_FLOAT_INT", MPI_FLOAT_INT, KC_PAIR, 8, 8, 12, 4, 0},
    {"MPI_DOUBLE_INT", MPI_DOUBLE_INT, KC_PAIR, 16, 12, 13, 8, 0},
    {"MPI_LONG_INT", MPI_LONG_INT, KC_PAIR, 16, 12, 8, 8, 0},
    {"MPI_2INT", MPI_2INT, KC_PAIR, 8, 8, 6, 4, 0},
    {"MPI_SHORT_INT", MPI_SHORT_INT, KC_PAIR, 8, 6, 4, 4, 0},
    {"MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE_INT, KC_PAIR, 2 * sizeof(long double), 20, 14,
     sizeof(long double), 0},
    /* Complex kinds name their part's kind in value_kind. The long double
     * ones are left out: their padding sits inside the element (after each
     * 10-byte part), which the buffers' don't-care mask cannot describe. */
    {"MPI_C_FLOAT_COMPLEX", MPI_C_FLOAT_COMPLEX, KC_COMPLEX, 8, 8, 12, 0, 0},
    {"MPI_C_DOUBLE_COMPLEX", MPI_C_DOUBLE_COMPLEX, KC_COMPLEX, 16, 16, 13, 0, 0},
    {"MPI_CXX_DOUBLE_COMPLEX", MPI_CXX_DOUBLE_COMPLEX, KC_COMPLEX, 16, 16, 13, 0, 0},
    {"MPI_CXX_BOOL", MPI_CXX_BOOL, KC_BOOL, 1, 1, -1, 0, 0},
    /* Fortran's named types from C, one of each kind of layout (the other
     * sized ones share these kernels; tests/api/mp_fortran_types.c checks
     * every one's size and name, and the pairs whose index is not an int). */
    {"MPI_INTEGER", MPI_INTEGER, KC_SIGNED, 4, 4, -1, 0, 0},
    {"MPI_DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, KC_FLOAT, 8, 8, -1, 0, 0},
    {"MPI_COMPLEX", MPI_COMPLEX, KC_COMPLEX, 8, 8, 12, 0, 0},
    {"MPI_LOGICAL", MPI_LOGICAL, KC_BOOL, 4, 4, -1, 0, 0},
    {"MPI_2INTEGER", MPI_2INTEGER, KC_PAIR, 8, 8, 6, 4, 0},
};
const int sw_nkinds = sizeof sw_kinds / sizeof sw_kinds[0];

int sw_kind_of(MPI_Datatype t) {
  for (int i = 0; i < sw_nkinds; ++i)
    if (sw_kinds[i].type == t) return i;
  return -1;
}

/* ---- values ------------------------------------------------------------------------- */
static void store_int(void* p, int size, long long v) {
  uint64_t u = (uint64_t)v; /* little-endian: the low `size` bytes */
  memcpy(p, &u, (size_t)size);
}

static void store_float(int kind, void* p, long long v) {
  if (sw_kinds[kind].size == 4) {
    float f = (float)v;
    memcpy(p, &f, 4);
  } else if (sw_kinds[kind].size == 8) {
    double d = (double)v;
    memcpy(p, &d, 8);
  } else {
    long double x = (long double)v;
    memset(p, 0, sizeof x);
    memcpy(p, &x, 10);
  }
}

/* The value of class `red` (RC_*) for hash h. Reduction values are small
 * enough that no sum or product over 5 ranks leaves even an 8-bit type. */
static long long gen(int red, KindClass cls, unsigned h) {
  int sgn = cls == KC_SIGNED || cls == KC_FLOAT;
  switch (red) {
    case RC_MAXMIN:
      return sgn ? (long long)(h % 201) - 100 : (long long)(h % 200);
    case RC_SUM:
    case RC_USER_SUM:
      return sgn ? (long long)(h % 16) - 4 : (long long)(h % 16);
    case RC_PROD: {
      static const int s[3] = {-1, 1, 2}, u[3] = {1, 2, 3};
      return sgn ? s[h % 3] : u[h % 3];
    }
    case RC_LOGICAL:
      return h % 4 == 0 ? 0 : (long long)(h % 7) + 1;
    case RC_LOC:
      return (long long)(h % 4);
    default: /* movement, bitwise, first, matrix: any bits */
      if (cls == KC_FLOAT) return (long long)(h % 200001) - 100000;
      return (long long)(((uint64_t)h << 32) | sw_hash(h, 7, 11));
  }
}

void sw_store(int kind, void* p, unsigned h, int red) {
  const Kind* k = &sw_kinds[kind];
  switch (k->cls) {
    case KC_FLOAT:
      store_float(kind, p, gen(red, KC_FLOAT, h));
      break;
    case KC_BOOL: { /* 0 or 1 in the kind's width (C's bool, Fortran's LOGICAL) */
      bool b = red == RC_LOGICAL ? gen(red, KC_BOOL, h) != 0 : (h & 1);
      store_int(p, k->size, b);
      break;
    }
    case KC_WCHAR:
      store_int(p, k->size, (long long)(h & 0x7fff));
      break;
    case KC_COMPLEX: { /* each part a value of the float kind, from its own hash */
      const int part = sw_kinds[k->value_kind].size;
      store_float(k->value_kind, p, gen(red, KC_FLOAT, h));
      store_float(k->value_kind, (unsigned char*)p + part, gen(red, KC_FLOAT, sw_hash(h, 5, 9)));
      break;
    }
    case KC_PAIR: {
      const Kind* v = &sw_kinds[k->value_kind];
      long long val = red == RC_LOC ? gen(RC_LOC, v->cls, h) : (long long)(h % 1000);
      if (v->cls == KC_FLOAT)
        store_float(k->value_kind, p, val);
      else
        store_int(p, v->size, val);
      int index = (int)((h >> 8) % 50);
      memcpy((unsigned char*)p + k->index_off, &index, sizeof index);
      break;
    }
    default:
      store_int(p, k->size, gen(red, k->cls, h));
  }
}

/* ---- type cases -------------------------------------------------------------------- */
#define MAX_TYPES 96
TypeCase sw_types[MAX_TYPES];
int sw_ntypes;

static int kind_index(MPI_Datatype t) {
  int k = sw_kind_of(t);
  SW_CHECK(k >= 0, "internal: %d is not a predefined kind", (int)t);
  return k;
}

static void finish(TypeCase* t) {
  t->tlb = t->off[0];
  t->tub = t->off[0];
  t->single_kind = 1;
  for (int e = 0; e < t->nel; ++e) {
    long lo = t->off[e], hi = t->off[e] + sw_kinds[t->kind[e]].size;
    if (lo < t->tlb) t->tlb = lo;
    if (hi > t->tub) t->tub = hi;
    if (t->kind[e] != t->kind[0]) t->single_kind = 0;
  }
  t->alt = -1;
  if (t->single_kind && t->nel > 1) t->alt = t->kind[0]; /* predefined cases come first */
  /* The library must agree with the layout written here. */
  MPI_Aint lb, extent;
  int size, want = 0;
  for (int e = 0; e < t->nel; ++e) {
    const Kind* k = &sw_kinds[t->kind[e]];
    want += k->cls == KC_PAIR ? sw_kinds[k->value_kind].size + 4 : k->size;
  }
  SW_OK(MPI_Type_get_extent(t->type, &lb, &extent));
  SW_OK(MPI_Type_size(t->type, &size));
  SW_CHECK(extent == t->extent && lb == t->lb && size == want,
           "type %s: MPI_Type_get_extent/size give lb %ld extent %ld size %d, expected lb %ld "
           "extent %ld size %d",
           t->name, (long)lb, (long)extent, size, t->lb, t->extent, want);
}

static TypeCase* add(const char* name, MPI_Datatype type, long extent) {
  SW_CHECK(sw_ntypes < MAX_TYPES, "internal: too many type cases");
  TypeCase* t = &sw_types[sw_ntypes++];
  memset(t, 0, sizeof *t);
  t->name = name;
  t->type = type;
  t->extent = extent;
  return t;
}

static void elems(TypeCase* t, MPI_Datatype kind, int n, const long* offs) {
  for (int i = 0; i < n; ++i) {
    t->kind[t->nel] = kind_index(kind);
    t->off[t->nel++] = offs[i];
  }
}

static MPI_Datatype commit(MPI_Datatype t) {
  SW_OK(MPI_Type_commit(&t));
  return t;
}

void sw_types_init(void) {
  sw_ntypes = 0;
  for (int k = 0; k < sw_nkinds; ++k) {
    TypeCase* t = add(sw_kinds[k].name, sw_kinds[k].type, sw_kinds[k].size);
    t->kind[0] = k;
    t->nel = 1;
    finish(t);
  }
  MPI_Datatype d, tmp;
  TypeCase* t;

  SW_OK(MPI_Type_contiguous(3, MPI_INT, &d));
  t = add("contig3_int", commit(d), 12);
  elems(t, MPI_INT, 3, (long[]){0, 4, 8});
  finish(t);

  SW_OK(MPI_Type_dup(MPI_DOUBLE, &d));
  t = add("dup_double", commit(d), 8);
  elems(t, MPI_DOUBLE, 1, (long[]){0});
  finish(t);

  /* Two blocks of two doubles, stride 3: a gap of one double inside. */
  SW_OK(MPI_Type_vector(2, 2, 3, MPI_DOUBLE, &d));
  t = add("vector_double", commit(d), 40);
  elems(t, MPI_DOUBLE, 4, (long[]){0, 8, 24, 32});
  finish(t);

  /* Byte stride 5: unaligned, odd extent. */
  SW_OK(MPI_Type_create_hvector(3, 1, 5, MPI_INT8_T, &d));
  t = add("hvector_int8", commit(d), 11);
  elems(t, MPI_INT8_T, 3, (long[]){0, 5, 10});
  finish(t);

  /* Type map out of address order: shorts at 6, 8, 0, 10. */
  SW_OK(MPI_Type_indexed(3, (int[]){2, 1, 1}, (int[]){3, 0, 5}, MPI_SHORT, &d));
  t = add("indexed_short", commit(d), 12);
  elems(t, MPI_SHORT, 4, (long[]){6, 8, 0, 10});
  finish(t);

#ifdef SWEEP_HAVE_INDEXED_BLOCK
  SW_OK(MPI_Type_create_indexed_block(3, 2, (int[]){4, 0, 8}, MPI_FLOAT, &d));
  t = add("indexed_block_float", commit(d), 40);
  elems(t, MPI_FLOAT, 6, (long[]){16, 20, 0, 4, 32, 36});
  finish(t);
#endif

  /* char, double, 2 shorts, int with holes; extent padded to 8. */
  SW_OK(MPI_Type_create_struct(4, (int[]){1, 1, 2, 1}, (MPI_Aint[]){0, 8, 16, 24},
                               (MPI_Datatype[]){MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT}, &d));
  t = add("struct_mixed", commit(d), 32);
  elems(t, MPI_CHAR, 1, (long[]){0});
  elems(t, MPI_DOUBLE, 1, (long[]){8});
  elems(t, MPI_SHORT, 2, (long[]){16, 18});
  elems(t, MPI_INT, 1, (long[]){24});
  finish(t);

  SW_OK(MPI_Type_create_struct(2, (int[]){1, 2}, (MPI_Aint[]){0, 8},
                               (MPI_Datatype[]){MPI_INT, MPI_INT}, &d));
  t = add("struct_int_holes", commit(d), 16);
  elems(t, MPI_INT, 3, (long[]){0, 8, 12});
  finish(t);

  /* Data at negative offsets; lb -16, extent 24. */
  SW_OK(MPI_Type_create_hindexed(2, (int[]){2, 1}, (MPI_Aint[]){-12, 4}, MPI_INT, &tmp));
  SW_OK(MPI_Type_create_resized(tmp, -16, 24, &d));
  SW_OK(MPI_Type_free(&tmp));
  t = add("resized_neg_int", commit(d), 24);
  t->lb = -16;
  elems(t, MPI_INT, 3, (long[]){-12, -8, 4});
  finish(t);
  MPI_Datatype resized_neg = d;

  /* Nesting: two of the above (lb -16, extent 48). */
  SW_OK(MPI_Type_contiguous(2, resized_neg, &d));
  t = add("contig2_resized_neg", commit(d), 48);
  t->lb = -16;
  elems(t, MPI_INT, 6, (long[]){-12, -8, 4, 12, 16, 28});
  finish(t);

  SW_OK(MPI_Type_contiguous(2, MPI_2INT, &d));
  t = add("contig2_2int", commit(d), 16);
  elems(t, MPI_2INT, 2, (long[]){0, 8});
  finish(t);

  SW_OK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &d));
  t = add("contig2_double_int", commit(d), 32);
  elems(t, MPI_DOUBLE_INT, 2, (long[]){0, 16});
  finish(t);

  /* 2x2 matrices for the non-commutative user op, packed and strided. */
  SW_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &d));
  t = add("mat_contig", commit(d), 16);
  elems(t, MPI_UNSIGNED, 4, (long[]){0, 4, 8, 12});
  finish(t);
  t->user_mat = 1;
  SW_OK(MPI_Type_vector(4, 1, 2, MPI_UNSIGNED, &d));
  t = add("mat_vector", commit(d), 28);
  elems(t, MPI_UNSIGNED, 4, (long[]){0, 8, 16, 24});
  finish(t);
  t->user_mat = 1;
}

void sw_types_free(void) {
  for (int i = sw_nkinds; i < sw_ntypes; ++i) SW_OK(MPI_Type_free(&sw_types[i].type));
}

const TypeCase* sw_type_by_handle(MPI_Datatype h) {
  for (int i = 0; i < sw_ntypes; ++i)
    if (sw_types[i].type == h) return &sw_types[i];
  return NULL;
}

const TypeCase* sw_type_by_name(const char* name) {
  for (int i = 0; i < sw_ntypes; ++i)
    if (strcmp(sw_types[i].name, name) == 0) return &sw_types[i];
  return NULL;
}
