// The point-to-point calls' shared bodies (src/api/p2p.cc), with 64-bit
// counts, so the int and the large-count (_c) entry points are one line
// each and check and behave alike.
#pragma once

#include <cstdint>

#include "api/api_internal.h"

namespace nicq::api {

// What the argument checks looked up.
struct P2pArgs {
  Comm* comm = nullptr;
  dtype::Type* type = nullptr;
};
bool CheckSend(Call& c, const void* buf, std::int64_t count, MPI_Datatype dt, int dest, int tag,
               MPI_Comm comm, P2pArgs* a);
bool CheckRecv(Call& c, const void* buf, std::int64_t count, MPI_Datatype dt, int source, int tag,
               MPI_Comm comm, P2pArgs* a);
// A request slot filled with the operation's arguments (not posted yet);
// nullptr when the table is full.
ApiRequest* PrepareP2p(Call& c, bool is_send, SendMode mode, const void* buf, std::int64_t count,
                       const P2pArgs& a, int peer, int tag, bool persistent);
// Waits for a posted request and completes it (status may be MPI_STATUS_IGNORE).
int WaitP2p(Call& c, ApiRequest* r, MPI_Status* status);
// The byte spans of two buffers intersect.
bool Overlap(const dtype::Type& t1, const void* b1, std::int64_t n1, const dtype::Type& t2,
             const void* b2, std::int64_t n2);

int SendCall(const char* name, SendMode mode, const void* buf, std::int64_t count, MPI_Datatype dt,
             int dest, int tag, MPI_Comm comm);
// Nonblocking, or persistent (an *_init call).
int IsendCall(const char* name, SendMode mode, bool persistent, const void* buf, std::int64_t count,
              MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request* request);
int RecvCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt, int source, int tag,
             MPI_Comm comm, MPI_Status* status);
int IrecvCall(const char* name, bool persistent, void* buf, std::int64_t count, MPI_Datatype dt,
              int source, int tag, MPI_Comm comm, MPI_Request* request);
// Blocking (MPI_Sendrecv: status) or nonblocking (MPI_Isendrecv: request).
int SendrecvCall(const char* name, const void* sendbuf, std::int64_t sendcount,
                 MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 std::int64_t recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status, bool nonblocking, MPI_Request* request);
int SendrecvReplaceCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt, int dest,
                        int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status* status,
                        bool nonblocking, MPI_Request* request);
// MPI_Mrecv (status) / MPI_Imrecv (nonblocking: request).
int MrecvCall(const char* name, void* buf, std::int64_t count, MPI_Datatype dt,
              MPI_Message* message, MPI_Status* status, bool nonblocking, MPI_Request* request);

}  // namespace nicq::api
