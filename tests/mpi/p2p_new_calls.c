/* Point-to-point calls being implemented (not registered in CMake until
 * they land): matched probe (MPI_Mprobe, MPI_Improbe, MPI_Mrecv,
 * MPI_Imrecv, MPI_MESSAGE_NO_PROC), MPI_Cancel of receives and sends, and
 * MPI_BOTTOM with absolute addresses. Pairs of ranks (0,1), (2,3), ...;
 * run on 2 or more ranks. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep.h"

static MPI_Comm g_comm;
static int g_rank, g_size;

static void nap(void) {
  struct timespec ts = {0, 20000};
  nanosleep(&ts, NULL);
}

/* ---- matched probe ------------------------------------------------------------------------ */
/* A matched message is removed from matching: a later MPI_Recv with the
 * same envelope gets the next message, even one sent first by nobody else. */
static void matched_probe(int partner) {
  for (int how = 0; how < 4; ++how) { /* Mprobe+Mrecv, Mprobe+Imrecv, Improbe+Mrecv, +Imrecv */
    sw_set_ctx("matched probe: %s + %s", how < 2 ? "MPI_Mprobe" : "MPI_Improbe",
               how % 2 ? "MPI_Imrecv" : "MPI_Mrecv");
    if (g_rank & 1) {
      int a[3] = {how, 11, 12}, b[5] = {how, 21, 22, 23, 24};
      SW_OK(MPI_Send(a, 3, MPI_INT, partner, 40, g_comm));
      SW_OK(MPI_Send(b, 5, MPI_INT, partner, 40, g_comm));
      continue;
    }
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (how < 2) {
      SW_OK(MPI_Mprobe(MPI_ANY_SOURCE, 40, g_comm, &msg, &st));
    } else {
      int flag = 0;
      double deadline = MPI_Wtime() + 60;
      while (!flag) {
        SW_OK(MPI_Improbe(partner, MPI_ANY_TAG, g_comm, &flag, &msg, &st));
        SW_CHECK(flag || MPI_Wtime() < deadline, "MPI_Improbe found nothing for 60 s");
        if (!flag) nap();
      }
    }
    SW_CHECK(msg != MPI_MESSAGE_NULL, "matched probe returned MPI_MESSAGE_NULL");
    SW_CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 40, "probe status %d/%d", st.MPI_SOURCE,
             st.MPI_TAG);
    int n = -1;
    SW_OK(MPI_Get_count(&st, MPI_INT, &n));
    SW_CHECK(n == 3, "probed count %d, expected 3 (the first message)", n);
    /* The second message must not be taken by the matched one. */
    int b[5] = {0};
    MPI_Status st2;
    SW_OK(MPI_Recv(b, 5, MPI_INT, partner, 40, g_comm, &st2));
    SW_CHECK(b[1] == 21 && b[4] == 24,
             "MPI_Recv after a matched probe got {%d,%d,..}: the "
             "matched message was received again",
             b[0], b[1]);
    int a[3] = {0};
    st.MPI_SOURCE = st.MPI_TAG = -9;
    if (how % 2) {
      MPI_Request r;
      SW_OK(MPI_Imrecv(a, 3, MPI_INT, &msg, &r));
      SW_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv left the message handle");
      SW_OK(MPI_Wait(&r, &st));
    } else {
      SW_OK(MPI_Mrecv(a, 3, MPI_INT, &msg, &st));
      SW_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle");
    }
    SW_CHECK(a[0] == how && a[1] == 11 && a[2] == 12, "matched receive got {%d,%d,%d}", a[0], a[1],
             a[2]);
    SW_CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 40, "matched receive status %d/%d",
             st.MPI_SOURCE, st.MPI_TAG);
  }
  /* MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, and receiving it is a no-op. */
  sw_set_ctx("matched probe of MPI_PROC_NULL");
  MPI_Message msg;
  MPI_Status st;
  SW_OK(MPI_Mprobe(MPI_PROC_NULL, 3, g_comm, &msg, &st));
  SW_CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) gave message %d", (int)msg);
  SW_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "status %d/%d",
           st.MPI_SOURCE, st.MPI_TAG);
  int x = 5;
  SW_OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
  SW_CHECK(x == 5 && msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL,
           "MPI_Mrecv of MPI_MESSAGE_NO_PROC: x %d msg %d source %d", x, (int)msg, st.MPI_SOURCE);
}

/* ---- cancel --------------------------------------------------------------------------------- */
static void cancel(int partner) {
  sw_set_ctx("MPI_Cancel of an unmatched receive");
  int buf[4] = {7, 7, 7, 7}, flag = -1;
  MPI_Request r;
  MPI_Status st;
  SW_OK(MPI_Irecv(buf, 4, MPI_INT, partner, 55, g_comm, &r));
  SW_OK(MPI_Cancel(&r));
  SW_OK(MPI_Wait(&r, &st));
  SW_OK(MPI_Test_cancelled(&st, &flag));
  SW_CHECK(flag == 1 && buf[0] == 7, "cancelled receive: flag %d buf[0] %d", flag, buf[0]);

  /* A send may or may not be cancelled; the receiver must see exactly what
   * was not: it probes for the message after a handshake. */
  sw_set_ctx("MPI_Cancel of a send (to a rank that has not received)");
  int cancelled = 0;
  if (g_rank & 1) {
    int small[4] = {0, 1, 2, 3}; /* small: an uncancelled send completes without the receiver */
    SW_OK(MPI_Isend(small, 4, MPI_INT, partner, 56, g_comm, &r));
    SW_OK(MPI_Cancel(&r));
    SW_OK(MPI_Wait(&r, &st));
    SW_OK(MPI_Test_cancelled(&st, &flag));
    cancelled = flag;
    SW_OK(MPI_Send(&cancelled, 1, MPI_INT, partner, 57, g_comm));
  } else {
    SW_OK(MPI_Recv(&cancelled, 1, MPI_INT, partner, 57, g_comm, &st));
    int there = 0;
    SW_OK(MPI_Iprobe(partner, 56, g_comm, &there, &st));
    if (!cancelled && !there) { /* it must still arrive */
      SW_OK(MPI_Probe(partner, 56, g_comm, &st));
      there = 1;
    }
    SW_CHECK(!(cancelled && there), "a send reported cancelled was still delivered");
    if (there) {
      int small[4] = {0};
      SW_OK(MPI_Recv(small, 4, MPI_INT, partner, 56, g_comm, &st));
      SW_CHECK(small[3] == 3, "uncancelled send's data");
    }
  }
}

/* ---- MPI_BOTTOM with absolute addresses ---------------------------------------------------- */
static void bottom(int partner) {
  sw_set_ctx("MPI_BOTTOM with a struct of absolute addresses");
  double d[3];
  int i[2];
  MPI_Aint addr[2];
  SW_OK(MPI_Get_address(d, &addr[0]));
  SW_OK(MPI_Get_address(i, &addr[1]));
  MPI_Datatype t;
  SW_OK(MPI_Type_create_struct(2, (int[]){3, 2}, addr, (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &t));
  SW_OK(MPI_Type_commit(&t));
  if (g_rank & 1) {
    d[0] = 1.5, d[1] = -2.5, d[2] = 3.25, i[0] = 42, i[1] = -7;
    SW_OK(MPI_Send(MPI_BOTTOM, 1, t, partner, 60, g_comm));
  } else {
    memset(d, 0, sizeof d);
    memset(i, 0, sizeof i);
    MPI_Status st;
    SW_OK(MPI_Recv(MPI_BOTTOM, 1, t, partner, 60, g_comm, &st));
    SW_CHECK(d[0] == 1.5 && d[1] == -2.5 && d[2] == 3.25 && i[0] == 42 && i[1] == -7,
             "MPI_BOTTOM receive: %g %g %g %d %d", d[0], d[1], d[2], i[0], i[1]);
    int n = -1;
    SW_OK(MPI_Get_elements(&st, t, &n));
    SW_CHECK(n == 5, "MPI_Get_elements %d", n);
  }
  SW_OK(MPI_Type_free(&t));
}

int main(int argc, char** argv) {
  SW_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  sw_world_rank = g_rank;
  sw_install_hang_report();
  sw_parse_options(argc, argv);
  SW_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  SW_OK(MPI_Comm_dup(MPI_COMM_WORLD, &g_comm));
  SW_OK(MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN));
  int partner = g_rank ^ 1;
  if (partner < g_size) {
    matched_probe(partner);
    cancel(partner);
    bottom(partner);
  }
  sw_set_ctx("teardown");
  SW_OK(MPI_Comm_free(&g_comm));
  SW_OK(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) printf("p2p new calls: %d ranks: OK\n", g_size);
  SW_OK(MPI_Finalize());
  return 0;
}
