/* A word of memory every rank of a one-host job shares, for checks that
 * compare what ranks saw across a collective (a late rank writes the
 * barrier's number before it enters; every rank must read it after it
 * leaves), and a plain sleep. Header-only, for the mp_* programs that
 * include coll_check.h first. */
#ifndef NICQ_TESTS_COLL_JOB_WORD_H
#define NICQ_TESTS_COLL_JOB_WORD_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void SleepMs(int ms) {
  struct timespec ts = {0, (long)ms * 1000000L};
  nanosleep(&ts, NULL);
}

/* Collective over MPI_COMM_WORLD: rank 0 makes a POSIX shm object named
 * after `prefix` and its pid, every rank maps it, and it is unlinked once
 * all have (unmap the 4096 bytes at the end). */
static volatile int* MapJobWord(const char* prefix) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char name[64] = {0};
  if (rank == 0) snprintf(name, sizeof name, "/%s-%ld", prefix, (long)getpid());
  CHECK_OK(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD));
  int fd = rank == 0 ? shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600) : -1;
  if (rank == 0) CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "cannot make %s", name);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank != 0) fd = shm_open(name, O_RDWR, 0);
  CHECK(fd >= 0, "cannot open %s", name);
  void* m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  CHECK(m != MAP_FAILED, "cannot map %s", name);
  close(fd);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) shm_unlink(name);
  return (volatile int*)m;
}

#endif
