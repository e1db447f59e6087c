// Smaller environment and communicator calls built on the others:
// MPI_Info_create_env, MPI_Get_hw_resource_info, MPI_Comm_get_parent,
// MPI_Comm_disconnect, and the MPI-1 attribute names MPI-4.1 still lists
// (MPI_Keyval_create, MPI_Attr_put, ...) as aliases of the MPI_Comm_ ones.
#include <string>

#include "api/api_more.h"
#include "runtime/runtime.h"

using namespace nicq;
using api::Call;

extern "C" {

// "command" and "argv" from the arguments; "maxprocs" and "thread_level"
// once the runtime runs. Callable before MPI_Init.
int MPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  Call c("MPI_Info_create_env");
  if (!c.NotNull(info, "info") ||
      !c.Check(argc >= 0, Code::kArg, "negative argc " + std::to_string(argc)) ||
      !c.NotNull(argc > 0 ? static_cast<const void*>(argv) : info, "argv"))
    return c.Fail();
  api::Hints env;
  if (argc > 0 && argv[0]) env.emplace_back("command", argv[0]);
  std::string args;
  for (int i = 1; i < argc && argv[i]; ++i) args += (i > 1 ? " " : "") + std::string(argv[i]);
  if (argc > 1) env.emplace_back("argv", args);
  if (api::IsInitialized()) {
    env.emplace_back("maxprocs", std::to_string(rt::WorldSize()));
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    constexpr const char* kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                       "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    env.emplace_back("thread_level", kLevels[level & 3]);
  }
  return api::NewInfoFrom(c, env, info);
}

// nicq describes no hardware resources: an empty info.
int MPI_Get_hw_resource_info(MPI_Info* hw_info) {
  Call c("MPI_Get_hw_resource_info");
  if (!c.NotNull(hw_info, "hw_info")) return c.Fail();
  return api::NewInfoFrom(c, {}, hw_info);
}

// No nicq process is spawned by another, so there is never a parent.
int MPI_Comm_get_parent(MPI_Comm* parent) {
  Call c("MPI_Comm_get_parent");
  if (!c.Init() || !c.NotNull(parent, "parent")) return c.Fail();
  *parent = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

// Point-to-point completes at the waits and collectives are blocking or
// waited, so nothing is pending on comm beyond what the program waits
// for: disconnecting is freeing.
int MPI_Comm_disconnect(MPI_Comm* comm) {
  return PMPI_Comm_free(comm);
}

int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                      void* extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int MPI_Keyval_free(int* keyval) {
  return PMPI_Comm_free_keyval(keyval);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return PMPI_Comm_delete_attr(comm, keyval);
}

}  // extern "C"
