/* Accesses of several pages to MPI_Win_create memory on the one-node direct
 * path (docs/rma.md, "One node"): one contiguous run that spans pages goes
 * through process_vm_writev/readv, one within a page through the target's
 * /proc/<pid>/mem. Rank 0's window starts off a page boundary and every run
 * starts at an odd byte, so each crosses 4 to 5 pages.
 *  - every writer (odd ranks) owns a region of rank 0's window: under an
 *    exclusive lock it puts a pattern of its own and the round's, gets it
 *    back in the same epoch and compares; at the end rank 0 finds each
 *    region holding its writer's last round, and the guard bytes around
 *    every region untouched;
 *  - a shared region every writer fills in two halves under an exclusive
 *    lock, flushing and napping between them, while the other ranks read it
 *    whole under shared locks: every read is one writer's pattern;
 *  - with argument "sleep": rank 0 stays out of MPI and watches its memory
 *    while rank 1 locks, puts a region, reads it back and unlocks: the data
 *    arrives without the target ever running MPI (bounded watch). */
#include <stdint.h>
#include <time.h>

#include "mp_check.h"

enum { PAGE = 4096, REG = 3 * PAGE + 300, GAP = 64, FIRST = 37, ROUNDS = 40, HALF = REG / 2 };
enum { REGIONS = 4 }; /* writers' regions; the shared one follows them */
#define AT(r) ((MPI_Aint)FIRST + (MPI_Aint)(r) * (REG + GAP))
#define WIN_BYTES ((size_t)AT(REGIONS + 1) + GAP)

static int rank, size;

/* Byte i of the pattern `seed`: a shifted or truncated copy differs. */
static unsigned char pat(unsigned seed, size_t i) {
  return (unsigned char)(seed * 131u + i * 7u + (i >> 8) + 1u);
}

static void fill(unsigned char* buf, unsigned seed, size_t n) {
  for (size_t i = 0; i < n; ++i) buf[i] = pat(seed, i);
}

/* The seed whose pattern `buf` holds, or -1 when it holds no single one. */
static int seed_of(const unsigned char* buf, size_t n, int seeds) {
  for (int s = 0; s < seeds; ++s) {
    size_t i = 0;
    while (i < n && buf[i] == pat((unsigned)s, i)) ++i;
    if (i == n) return s;
  }
  return -1;
}

static unsigned seed(int writer, int round) {
  return (unsigned)(writer * ROUNDS + round + 1);
}

static void owned_regions(MPI_Win win, const unsigned char* mem) {
  static unsigned char out[REG], back[REG];
  const int writer = rank % 2 == 1;
  const int region = rank / 2;
  const struct timespec nap = {0, 100000};
  for (int r = 0; writer && r < ROUNDS; ++r) {
    fill(out, seed(rank, r), REG);
    memset(back, 0, REG);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Put(out, REG, MPI_BYTE, 0, AT(region), REG, MPI_BYTE, win));
    CHECK_OK(MPI_Get(back, REG, MPI_BYTE, 0, AT(region), REG, MPI_BYTE, win));
    CHECK_OK(MPI_Win_unlock(0, win));
    for (size_t i = 0; i < REG; ++i)
      CHECK(back[i] == out[i], "round %d: byte %zu of region %d read back %u, put %u", r, i, region,
            back[i], out[i]);
    nanosleep(&nap, NULL);
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank != 0) return;
  for (int w = 1; w < size; w += 2) {
    const unsigned char* reg = mem + AT(w / 2);
    for (size_t i = 0; i < REG; ++i)
      CHECK(reg[i] == pat(seed(w, ROUNDS - 1), i),
            "region of writer %d: byte %zu is %u, expected %u", w, i, reg[i],
            pat(seed(w, ROUNDS - 1), i));
  }
  for (int r = 0; r <= REGIONS; ++r) {
    const unsigned char* guard = mem + AT(r) - (r == 0 ? FIRST : GAP);
    for (size_t i = 0; i < (r == 0 ? (size_t)FIRST : GAP); ++i)
      CHECK(guard[i] == 0, "guard byte %zu before region %d is %u", i, r, guard[i]);
  }
  for (size_t i = 0; i < GAP; ++i)
    CHECK(mem[AT(REGIONS + 1) + i] == 0, "guard byte %zu after the last region is %u", i,
          mem[AT(REGIONS + 1) + i]);
}

static void shared_region(MPI_Win win) {
  static unsigned char buf[REG];
  const int writer = rank % 2 == 1;
  const int seeds = (int)seed(size, 0);
  const struct timespec write_nap = {0, 200000}, read_nap = {0, 50000};
  for (int r = 0; r < (writer ? ROUNDS : 4 * ROUNDS); ++r) {
    if (writer) {
      fill(buf, seed(rank, r), REG);
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
      CHECK_OK(MPI_Put(buf, HALF, MPI_BYTE, 0, AT(REGIONS), HALF, MPI_BYTE, win));
      CHECK_OK(MPI_Win_flush(0, win));
      nanosleep(&write_nap, NULL); /* half written: a reader let in now sees it */
      CHECK_OK(MPI_Put(buf + HALF, REG - HALF, MPI_BYTE, 0, AT(REGIONS) + HALF, REG - HALF,
                       MPI_BYTE, win));
      CHECK_OK(MPI_Win_unlock(0, win));
    } else {
      CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
      CHECK_OK(MPI_Get(buf, REG, MPI_BYTE, 0, AT(REGIONS), REG, MPI_BYTE, win));
      CHECK_OK(MPI_Win_unlock(0, win));
      /* Zero before the first writer's epoch; afterwards one writer's pattern. */
      size_t zeros = 0;
      while (zeros < REG && buf[zeros] == 0) ++zeros;
      CHECK(zeros == REG || seed_of(buf, REG, seeds) >= 0,
            "read %d: not one writer's pattern (bytes 0, %d, %d: %u %u %u)", r, HALF - 1, HALF,
            buf[0], buf[HALF - 1], buf[HALF]);
      nanosleep(&read_nap, NULL);
    }
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 0 never calls MPI while rank 1 writes a region of its window. */
static void sleeping_target(MPI_Win win, const unsigned char* mem) {
  static unsigned char out[REG], back[REG];
  fill(out, 77, REG);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 1) {
    CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    CHECK_OK(MPI_Put(out, REG, MPI_BYTE, 0, AT(1), REG, MPI_BYTE, win));
    CHECK_OK(MPI_Get(back, REG, MPI_BYTE, 0, AT(1), REG, MPI_BYTE, win));
    CHECK_OK(MPI_Win_unlock(0, win));
    CHECK(memcmp(back, out, REG) == 0, "the region read back differs from the put");
  } else if (rank == 0) {
    /* At most 20 s of 1 ms naps: only a target that is not needed passes. */
    const volatile unsigned char* watched = mem + AT(1);
    const struct timespec nap = {0, 1000000};
    int naps = 0;
    while (watched[REG - 1] != out[REG - 1] && naps < 20000) {
      nanosleep(&nap, NULL);
      ++naps;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    CHECK(memcmp(mem + AT(1), out, REG) == 0,
          "the put never arrived whole while the target stayed out of MPI");
  }
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mp_rank = rank;
  const int sleep_test = argc > 1 && strcmp(argv[1], "sleep") == 0;
  CHECK(size <= 2 * REGIONS, "at most %d ranks (one region per writer)", 2 * REGIONS);
  /* 100 bytes past an allocation: the window starts off a page boundary. */
  unsigned char* own = calloc(1, WIN_BYTES + 100);
  unsigned char* mem = own + 100;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, (MPI_Aint)WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  if (sleep_test) {
    if (size > 1) sleeping_target(win, mem);
  } else {
    owned_regions(win, mem);
    shared_region(win);
  }
  CHECK_OK(MPI_Win_free(&win));
  free(own);
  if (rank == 0) printf("rma_pages%s: %d ranks OK\n", sleep_test ? " sleep" : "", size);
  MPI_Finalize();
  return 0;
}
