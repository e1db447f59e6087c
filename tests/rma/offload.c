/* PSCW epochs on the counter path (docs/rma.md, "PSCW on counters"): run
 * with NICQ_RMA_SHM=off so the window is on the active-message path, where
 * an offload backend with remote counters takes contiguous PSCW puts as RMA
 * writes and the epoch's synchronization as counters.
 *  - all to all: every rank exposes to and accesses every other rank each
 *    round, putting 8 B, 1 KiB and 64 KiB into its own slot of each target
 *    (several origins per target), ended by wait or by a test loop; the
 *    target checks every origin's bytes right after;
 *  - an epoch with no operation at all;
 *  - a mixed epoch: a contiguous put, a get and a strided (non-contiguous)
 *    put to the same target; the get and the strided put go as messages;
 *  - fence, lock and lock_all epochs, whose contiguous puts go as RMA
 *    writes as well (fence_and_lock_epochs);
 *  - counters: MPI_Win_get_info's nicq_rma_counter_* entries say how many
 *    puts went as RMA writes and how many landed (the target's arrival
 *    counter), exactly as many as this program issued on that path.
 * argv[1] is the path every window must report: "counters" or
 * "active_messages" (NICQ_RMA_OFFLOAD=off); argv[2] "create" uses
 * MPI_Win_create memory instead of MPI_Win_allocate. */
#include <stdlib.h>
#include <string.h>

#include "mp_check.h"

enum {
  ROUNDS = 24,
  SMALL = 8,
  MEDIUM = 1024,
  LARGE = 65536,
  SLOT = SMALL + MEDIUM + LARGE, /* bytes per origin in every target */
  STRIDED = 16                   /* ints of the mixed epoch's strided put */
};

static int rank, size;
static int counters; /* the counter path is expected */

static unsigned char byte_of(int origin, int target, int round, size_t i) {
  return (unsigned char)(origin * 37 + target * 11 + round * 7 + i * 13 + (i >> 8));
}

static void check_path(MPI_Win win, const char* want) {
  MPI_Info info;
  CHECK_OK(MPI_Win_get_info(win, &info));
  char value[64] = "";
  int flag = 0;
  CHECK_OK(MPI_Info_get(info, "nicq_rma_path", sizeof value - 1, value, &flag));
  CHECK_OK(MPI_Info_free(&info));
  CHECK(flag && strcmp(value, want) == 0, "window path %s, expected %s", flag ? value : "(none)",
        want);
}

static MPI_Group others_group(void) {
  MPI_Group world, others;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_OK(MPI_Group_excl(world, 1, &rank, &others));
  CHECK_OK(MPI_Group_free(&world));
  return others;
}

static void end_exposure(MPI_Win win, int by_test) {
  if (!by_test) {
    CHECK_OK(MPI_Win_wait(win));
    return;
  }
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Win_test(win, &flag));
}

/* Every rank puts three sizes into its own slot of every other rank. */
static void all_to_all(MPI_Win win, unsigned char* mem) {
  MPI_Group others = others_group();
  unsigned char* src = malloc((size_t)SLOT * size);
  const long long puts_before = mp_win_info_value(win, "nicq_rma_counter_puts");
  const long long arrivals_before = mp_win_info_value(win, "nicq_rma_counter_arrivals");
  const long long epochs_before = mp_win_info_value(win, "nicq_rma_counter_epochs");
  for (int round = 0; round < ROUNDS; ++round) {
    CHECK_OK(MPI_Win_post(others, 0, win));
    CHECK_OK(MPI_Win_start(others, 0, win));
    for (int t = 0; t < size; ++t) {
      if (t == rank) continue;
      unsigned char* s = src + (size_t)SLOT * t;
      for (size_t i = 0; i < SLOT; ++i) s[i] = byte_of(rank, t, round, i);
      const MPI_Aint at = (MPI_Aint)SLOT * rank;
      CHECK_OK(MPI_Put(s, SMALL, MPI_BYTE, t, at, SMALL, MPI_BYTE, win));
      CHECK_OK(MPI_Put(s + SMALL, MEDIUM, MPI_BYTE, t, at + SMALL, MEDIUM, MPI_BYTE, win));
      CHECK_OK(MPI_Put(s + SMALL + MEDIUM, LARGE / 8, MPI_DOUBLE, t, at + SMALL + MEDIUM, LARGE / 8,
                       MPI_DOUBLE, win));
    }
    CHECK_OK(MPI_Win_complete(win));
    /* The origin may reuse its buffers once complete returned. */
    memset(src, 0xee, (size_t)SLOT * size);
    end_exposure(win, round % 3 == 2);
    for (int o = 0; o < size; ++o) {
      if (o == rank) continue;
      const unsigned char* got = mem + (size_t)SLOT * o;
      for (size_t i = 0; i < SLOT; ++i)
        CHECK(got[i] == byte_of(o, rank, round, i),
              "round %d: byte %zu from rank %d is %u, expected %u", round, i, o, got[i],
              byte_of(o, rank, round, i));
    }
  }
  if (counters) {
    const long long puts = mp_win_info_value(win, "nicq_rma_counter_puts") - puts_before;
    const long long arrivals =
        mp_win_info_value(win, "nicq_rma_counter_arrivals") - arrivals_before;
    const long long epochs = mp_win_info_value(win, "nicq_rma_counter_epochs") - epochs_before;
    const long long want = (long long)ROUNDS * 3 * (size - 1);
    CHECK(puts == want, "%lld puts went as RMA writes, expected %lld", puts, want);
    /* A put larger than the provider's message limit lands in chunks. */
    CHECK(arrivals >= want, "the arrival counter grew by %lld, expected at least %lld", arrivals,
          want);
    CHECK(epochs == ROUNDS, "%lld exposure epochs ended on counters, expected %d", epochs, ROUNDS);
  } else {
    CHECK(mp_win_info_value(win, "nicq_rma_counter_puts") == -1,
          "counter entries without counters");
  }
  free(src);
  CHECK_OK(MPI_Group_free(&others));
}

/* An epoch without operations still ends on both sides, changing nothing. */
static void empty_epoch(MPI_Win win, unsigned char* mem) {
  MPI_Group others = others_group();
  const unsigned char before = mem[SLOT * (rank == 0 ? 1 : 0)];
  const long long epochs_before = mp_win_info_value(win, "nicq_rma_counter_epochs");
  for (int round = 0; round < 3; ++round) {
    CHECK_OK(MPI_Win_post(others, 0, win));
    CHECK_OK(MPI_Win_start(others, 0, win));
    CHECK_OK(MPI_Win_complete(win));
    end_exposure(win, round == 1);
  }
  CHECK(mem[SLOT * (rank == 0 ? 1 : 0)] == before, "an empty epoch changed the window");
  if (counters)
    CHECK(mp_win_info_value(win, "nicq_rma_counter_epochs") == epochs_before + 3,
          "empty epochs did not end on counters");
  CHECK_OK(MPI_Group_free(&others));
}

/* Ring: a contiguous put, a get and a strided put to the right neighbour. */
static void mixed_epoch(MPI_Win win, unsigned char* mem, MPI_Datatype strided) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world, to_right, from_left;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_OK(MPI_Group_incl(world, 1, &right, &to_right));
  CHECK_OK(MPI_Group_incl(world, 1, &left, &from_left));
  /* Slot `size` of every window: [contig 64 B][fixed int][strided 2*STRIDED ints]. */
  const MPI_Aint base = (MPI_Aint)SLOT * size;
  int* fixed = (int*)(mem + base + 64);
  *fixed = 4242 + rank;
  int* strided_at = (int*)(mem + base + 64 + sizeof(int));
  for (int i = 0; i < 2 * STRIDED; ++i) strided_at[i] = -1;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  const long long puts_before = mp_win_info_value(win, "nicq_rma_counter_puts");
  for (int round = 0; round < 4; ++round) {
    unsigned char contig[64];
    int ints[STRIDED];
    for (int i = 0; i < 64; ++i) contig[i] = byte_of(rank, right, round + 100, (size_t)i);
    for (int i = 0; i < STRIDED; ++i) ints[i] = rank * 1000 + round * 100 + i;
    int got = -1;
    CHECK_OK(MPI_Win_post(from_left, 0, win));
    CHECK_OK(MPI_Win_start(to_right, 0, win));
    CHECK_OK(MPI_Put(contig, 64, MPI_BYTE, right, base, 64, MPI_BYTE, win));
    CHECK_OK(MPI_Get(&got, 1, MPI_INT, right, base + 64, 1, MPI_INT, win));
    CHECK_OK(MPI_Put(ints, STRIDED, MPI_INT, right, base + 64 + sizeof(int), 1, strided, win));
    CHECK_OK(MPI_Win_complete(win));
    CHECK(got == 4242 + right, "round %d: get read %d, expected %d", round, got, 4242 + right);
    end_exposure(win, round % 2);
    for (int i = 0; i < 64; ++i)
      CHECK(mem[base + i] == byte_of(left, rank, round + 100, (size_t)i),
            "round %d: contiguous byte %d from rank %d wrong", round, i, left);
    for (int i = 0; i < STRIDED; ++i) {
      CHECK(strided_at[2 * i] == left * 1000 + round * 100 + i,
            "round %d: strided int %d is %d, expected %d", round, i, strided_at[2 * i],
            left * 1000 + round * 100 + i);
      CHECK(strided_at[2 * i + 1] == -1, "round %d: the strided put wrote a gap", round);
    }
  }
  if (counters)
    CHECK(mp_win_info_value(win, "nicq_rma_counter_puts") == puts_before + 4,
          "mixed epochs: only the contiguous puts go as RMA writes");
  CHECK_OK(MPI_Group_free(&world));
  CHECK_OK(MPI_Group_free(&to_right));
  CHECK_OK(MPI_Group_free(&from_left));
}

/* Puts into my slot of every other rank, one put of each size. */
static void put_slots(MPI_Win win, unsigned char* src, int t, int round) {
  unsigned char* s = src + (size_t)SLOT * t;
  for (size_t i = 0; i < SLOT; ++i) s[i] = byte_of(rank, t, round, i);
  const MPI_Aint at = (MPI_Aint)SLOT * rank;
  /* The small put leaves from a buffer overwritten as soon as MPI_Put
   * returns (strictly, MPI forbids that until the flush; nicq copies small
   * puts so that such programs still work, as the active messages do). */
  unsigned char transient[SMALL];
  memcpy(transient, s, SMALL);
  CHECK_OK(MPI_Put(transient, SMALL, MPI_BYTE, t, at, SMALL, MPI_BYTE, win));
  memset(transient, 0xee, SMALL);
  CHECK_OK(MPI_Put(s + SMALL, MEDIUM, MPI_BYTE, t, at + SMALL, MEDIUM, MPI_BYTE, win));
  CHECK_OK(
      MPI_Put(s + SMALL + MEDIUM, LARGE, MPI_BYTE, t, at + SMALL + MEDIUM, LARGE, MPI_BYTE, win));
}

static void check_slots(const unsigned char* mem, int round, const char* epoch) {
  for (int o = 0; o < size; ++o) {
    if (o == rank) continue;
    const unsigned char* got = mem + (size_t)SLOT * o;
    for (size_t i = 0; i < SLOT; ++i)
      CHECK(got[i] == byte_of(o, rank, round, i),
            "%s round %d: byte %zu from rank %d is %u, expected %u", epoch, round, i, o, got[i],
            byte_of(o, rank, round, i));
  }
}

/* Fence and lock epochs (docs/rma.md, "Fence and lock epochs on
 * counters"): their contiguous puts go as RMA writes too, and the closing
 * fence, unlock or flush returns only once they landed. Each round checks
 * the target's memory right after the synchronization; under lock_all a
 * get (an active message) right after MPI_Win_flush must read the put's
 * bytes back. */
static void fence_and_lock_epochs(MPI_Win win, unsigned char* mem) {
  enum { EPOCH_ROUNDS = 6 };
  unsigned char* src = malloc((size_t)SLOT * size);
  unsigned char* back = malloc(SLOT);
  const long long before = mp_win_info_value(win, "nicq_rma_counter_epoch_puts");
  for (int round = 0; round < EPOCH_ROUNDS; ++round) {
    CHECK_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; ++t)
      if (t != rank) put_slots(win, src, t, round);
    CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    check_slots(mem, round, "fence");
  }
  /* Every rank checked the last fence round before lock epochs write again. */
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int round = EPOCH_ROUNDS; round < 2 * EPOCH_ROUNDS; ++round) {
    for (int t = 0; t < size; ++t) {
      if (t == rank) continue;
      CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
      put_slots(win, src, t, round);
      CHECK_OK(MPI_Win_unlock(t, win));
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_slots(mem, round, "lock");
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  for (int round = 2 * EPOCH_ROUNDS; round < 3 * EPOCH_ROUNDS; ++round) {
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int t = 0; t < size; ++t) {
      if (t == rank) continue;
      put_slots(win, src, t, round);
      CHECK_OK(MPI_Win_flush(t, win));
      const MPI_Aint at = (MPI_Aint)SLOT * rank;
      CHECK_OK(MPI_Get(back, SLOT, MPI_BYTE, t, at, SLOT, MPI_BYTE, win));
      CHECK_OK(MPI_Win_flush(t, win));
      for (size_t i = 0; i < SLOT; ++i)
        CHECK(back[i] == byte_of(rank, t, round, i),
              "lock_all round %d: byte %zu read back from rank %d after the flush is %u, "
              "expected %u",
              round, i, t, back[i], byte_of(rank, t, round, i));
    }
    CHECK_OK(MPI_Win_unlock_all(win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    check_slots(mem, round, "lock_all");
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  }
  const long long puts = mp_win_info_value(win, "nicq_rma_counter_epoch_puts");
  if (counters) {
    const long long want = 3LL * EPOCH_ROUNDS * 3 * (size - 1);
    CHECK(puts - before == want, "%lld fence and lock epoch puts went as RMA writes, expected %lld",
          puts - before, want);
  } else {
    CHECK(puts == -1, "counter entries without counters");
  }
  free(back);
  free(src);
}

int main(int argc, char** argv) {
  mp_init(&argc, &argv, &rank, &size);
  CHECK(argc >= 2, "usage: rma_offload counters|active_messages [create]");
  counters = strcmp(argv[1], "counters") == 0;
  const int create = argc >= 3 && strcmp(argv[2], "create") == 0;
  const MPI_Aint bytes = (MPI_Aint)SLOT * size + 64 + sizeof(int) * (1 + 2 * STRIDED);
  unsigned char* mem = NULL;
  MPI_Win win;
  if (create) {
    mem = malloc((size_t)bytes);
    CHECK_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  } else {
    CHECK_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  }
  memset(mem, 0, (size_t)bytes);
  check_path(win, size > 1 || !counters ? argv[1] : "counters");
  MPI_Datatype strided;
  CHECK_OK(MPI_Type_vector(STRIDED, 1, 2, MPI_INT, &strided));
  CHECK_OK(MPI_Type_commit(&strided));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (size > 1) {
    all_to_all(win, mem);
    empty_epoch(win, mem);
    mixed_epoch(win, mem, strided);
    fence_and_lock_epochs(win, mem);
  }
  CHECK_OK(MPI_Type_free(&strided));
  CHECK_OK(MPI_Win_free(&win));
  if (create) free(mem);
  if (rank == 0)
    printf("rma_offload (%s, %s): %d ranks OK\n", argv[1], create ? "create" : "allocate", size);
  MPI_Finalize();
  return 0;
}
