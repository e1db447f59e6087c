// Declared-but-unsupported calls of the process-management chapter:
// dynamic processes (ports, names, spawn, join). Each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming the call, as unsupported.cc does.
#include <string>

#include "api/api_internal.h"

using namespace nicq;

namespace {

int Unsupported(const char* call, MPI_Comm comm, const char* feature) {
  api::Call c(call);
  if (comm != MPI_COMM_NULL && api::LookupComm(comm)) c.set_comm_handle(comm);
  return c.Fail(Code::kUnsupportedOperation,
                std::string("not supported: nicq does not implement ") + feature);
}

constexpr const char* kDynamic = "dynamic process management";

}  // namespace

extern "C" {

int MPI_Open_port(MPI_Info info, char* port_name) {
  return Unsupported("MPI_Open_port", MPI_COMM_NULL, kDynamic);
}
int MPI_Close_port(const char* port_name) {
  return Unsupported("MPI_Close_port", MPI_COMM_NULL, kDynamic);
}
int MPI_Comm_accept(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                    MPI_Comm* newcomm) {
  return Unsupported("MPI_Comm_accept", comm, kDynamic);
}
int MPI_Comm_connect(const char* port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm* newcomm) {
  return Unsupported("MPI_Comm_connect", comm, kDynamic);
}
int MPI_Comm_join(int fd, MPI_Comm* intercomm) {
  return Unsupported("MPI_Comm_join", MPI_COMM_NULL, kDynamic);
}
int MPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                   MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]) {
  return Unsupported("MPI_Comm_spawn", comm, kDynamic);
}
int MPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                            const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                            MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]) {
  return Unsupported("MPI_Comm_spawn_multiple", comm, kDynamic);
}
int MPI_Lookup_name(const char* service_name, MPI_Info info, char* port_name) {
  return Unsupported("MPI_Lookup_name", MPI_COMM_NULL, kDynamic);
}
int MPI_Publish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return Unsupported("MPI_Publish_name", MPI_COMM_NULL, kDynamic);
}
int MPI_Unpublish_name(const char* service_name, MPI_Info info, const char* port_name) {
  return Unsupported("MPI_Unpublish_name", MPI_COMM_NULL, kDynamic);
}

}  // extern "C"
