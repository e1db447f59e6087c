/* Ping-pong data checks between rank 0 and every other rank over sizes from
 * 0 bytes to 4 MiB, including both sides of the eager/rendezvous switch
 * (NICQ_EAGER_LIMIT, 16 KiB by default), in all send modes, blocking and
 * nonblocking. Run alone (one process) it ping-pongs with itself. */
#include "mp_check.h"

enum Mode { kSend, kSsend, kBsend, kRsend, kIsend, kIssend, kIbsend, kIrsend, kModes };
static const char* const kModeNames[] = {"MPI_Send",  "MPI_Ssend",  "MPI_Bsend",  "MPI_Rsend",
                                         "MPI_Isend", "MPI_Issend", "MPI_Ibsend", "MPI_Irsend"};
#define READY_TAG 7
#define DATA_TAG 8
#define BSEND_MAX (64 * 1024)

/* Sends buf under `mode`. Ready modes first wait for the receiver's token so
 * the matching receive is known to be posted. */
static void send_mode(int mode, unsigned char* buf, int n, int peer) {
  MPI_Request r;
  if (mode == kRsend || mode == kIrsend) {
    int token;
    CHECK_OK(MPI_Recv(&token, 1, MPI_INT, peer, READY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  }
  switch (mode) {
    case kSend:
      CHECK_OK(MPI_Send(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD));
      return;
    case kSsend:
      CHECK_OK(MPI_Ssend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD));
      return;
    case kBsend:
      CHECK_OK(MPI_Bsend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD));
      return;
    case kRsend:
      CHECK_OK(MPI_Rsend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD));
      return;
    case kIsend:
      CHECK_OK(MPI_Isend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD, &r));
      break;
    case kIssend:
      CHECK_OK(MPI_Issend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD, &r));
      break;
    case kIbsend:
      CHECK_OK(MPI_Ibsend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD, &r));
      break;
    default:
      CHECK_OK(MPI_Irsend(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD, &r));
      break;
  }
  CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  CHECK(r == MPI_REQUEST_NULL, "%s: request not reset to MPI_REQUEST_NULL", kModeNames[mode]);
}

/* Receives n bytes from peer; ready modes post first, then tell the sender. */
static void recv_mode(int mode, unsigned char* buf, int n, int peer, int seq) {
  MPI_Request r;
  MPI_Status st;
  memset(buf, 0xEE, (size_t)n);
  CHECK_OK(MPI_Irecv(buf, n, MPI_BYTE, peer, DATA_TAG, MPI_COMM_WORLD, &r));
  if (mode == kRsend || mode == kIrsend) {
    int token = 1;
    CHECK_OK(MPI_Send(&token, 1, MPI_INT, peer, READY_TAG, MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Wait(&r, &st));
  int count = -1;
  CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &count));
  CHECK(count == n, "%s: received %d bytes, expected %d", kModeNames[mode], count, n);
  CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == DATA_TAG, "%s: status source %d tag %d",
        kModeNames[mode], st.MPI_SOURCE, st.MPI_TAG);
  mp_verify(buf, (size_t)n, seq, kModeNames[mode]);
}

/* One round trip: `initiator` sends then receives; the other echoes back. */
static void round_trip(int initiator, int peer, int mode, unsigned char* sbuf, unsigned char* rbuf,
                       int n, int seq) {
  if (initiator) {
    mp_fill(sbuf, (size_t)n, seq);
    send_mode(mode, sbuf, n, peer);
    recv_mode(mode, rbuf, n, peer, seq + 1);
  } else {
    recv_mode(mode, rbuf, n, peer, seq);
    mp_fill(sbuf, (size_t)n, seq + 1);
    send_mode(mode, sbuf, n, peer);
  }
}

/* Alone: every mode to self. The receive is posted first, so by the
 * progress rule even a blocking synchronous send to self must complete. */
static void self_test(unsigned char* sbuf, unsigned char* rbuf, const int* sizes, int nsizes) {
  for (int s = 0; s < nsizes; ++s) {
    int n = sizes[s];
    for (int mode = 0; mode < kModes; ++mode) {
      if ((mode == kBsend || mode == kIbsend) && n > BSEND_MAX) continue;
      MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      mp_fill(sbuf, (size_t)n, s + mode);
      memset(rbuf, 0xEE, (size_t)n);
      CHECK_OK(MPI_Irecv(rbuf, n, MPI_BYTE, 0, DATA_TAG, MPI_COMM_WORLD, &reqs[0]));
      MPI_Comm w = MPI_COMM_WORLD;
      switch (mode) {
        case kSend:
          CHECK_OK(MPI_Send(sbuf, n, MPI_BYTE, 0, DATA_TAG, w));
          break;
        case kSsend:
          CHECK_OK(MPI_Ssend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w));
          break;
        case kBsend:
          CHECK_OK(MPI_Bsend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w));
          break;
        case kRsend:
          CHECK_OK(MPI_Rsend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w));
          break;
        case kIsend:
          CHECK_OK(MPI_Isend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w, &reqs[1]));
          break;
        case kIssend:
          CHECK_OK(MPI_Issend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w, &reqs[1]));
          break;
        case kIbsend:
          CHECK_OK(MPI_Ibsend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w, &reqs[1]));
          break;
        default:
          CHECK_OK(MPI_Irsend(sbuf, n, MPI_BYTE, 0, DATA_TAG, w, &reqs[1]));
          break;
      }
      CHECK_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
      mp_verify(rbuf, (size_t)n, s + mode, kModeNames[mode]);
    }
  }
}

int main(int argc, char** argv) {
  int rank, size;
  mp_init(&argc, &argv, &rank, &size);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const int sizes[] = {0,     1,     2,     3,     8,      64,     1000,    4096,   16383,
                       16384, 16385, 32768, 65536, 100000, 262144, 1 << 20, 4 << 20};
  const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
  const int max = 4 << 20;
  const char* prov = getenv("NICQ_PROVIDER");
  const int slow = prov && strcmp(prov, "sockets") == 0;
  unsigned char* sbuf = malloc((size_t)max);
  unsigned char* rbuf = malloc((size_t)max);
  int bsize = 2 * (BSEND_MAX + MPI_BSEND_OVERHEAD);
  void* battach = malloc((size_t)bsize);
  CHECK_OK(MPI_Buffer_attach(battach, bsize));

  if (size == 1) {
    self_test(sbuf, rbuf, sizes, nsizes);
  } else {
    for (int peer = 1; peer < size; ++peer) {
      if (rank != 0 && rank != peer) continue;
      int seq = peer * 1000; /* both sides count the same messages */
      int other = rank == 0 ? peer : 0;
      for (int s = 0; s < nsizes; ++s) {
        int n = sizes[s];
        for (int mode = 0; mode < kModes; ++mode) {
          if ((mode == kBsend || mode == kIbsend) && n > BSEND_MAX) continue;
          /* Large messages: standard mode only, the others were shown above
           * (on sockets, the slow functional path, above the eager switch). */
          int large = slow ? 16385 : 1 << 18;
          if (n > large && mode != kSend && mode != kIsend) continue;
          round_trip(rank == 0, other, mode, sbuf, rbuf, n, seq);
          seq += 2;
        }
      }
    }
  }
  /* Noncontiguous both ways, eager and rendezvous: every other int of a
   * strided buffer goes out packed and lands unpacked in the same layout. */
  if (size > 1 && rank < 2) {
    const int counts[] = {16, 1 << 18};
    for (int k = 0; k < 2; ++k) {
      int n = counts[k], other = 1 - rank;
      MPI_Datatype strided;
      CHECK_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &strided));
      CHECK_OK(MPI_Type_commit(&strided));
      int* out = malloc(sizeof(int) * 2 * (size_t)n);
      int* in = malloc(sizeof(int) * 2 * (size_t)n);
      for (int i = 0; i < 2 * n; ++i) {
        out[i] = rank * 1000000 + i;
        in[i] = -1;
      }
      MPI_Request reqs[2];
      MPI_Status st[2];
      CHECK_OK(MPI_Irecv(in, 1, strided, other, 40 + k, MPI_COMM_WORLD, &reqs[0]));
      CHECK_OK(MPI_Isend(out, 1, strided, other, 40 + k, MPI_COMM_WORLD, &reqs[1]));
      CHECK_OK(MPI_Waitall(2, reqs, st));
      int elems = -1;
      CHECK_OK(MPI_Get_elements(&st[0], strided, &elems));
      CHECK(elems == n, "MPI_Get_elements %d, expected %d", elems, n);
      for (int i = 0; i < 2 * n; ++i)
        CHECK(in[i] == (i % 2 ? -1 : other * 1000000 + i), "strided %d ints: [%d] = %d", n, i,
              in[i]);
      CHECK_OK(MPI_Type_free(&strided));
      free(out);
      free(in);
    }
  }

  void* back = NULL;
  int back_size = 0;
  CHECK_OK(MPI_Buffer_detach(&back, &back_size));
  CHECK(back == battach && back_size == bsize, "MPI_Buffer_detach returned %p/%d", back, back_size);
  mp_barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("pingpong OK (%d ranks)\n", size);
  free(battach);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
