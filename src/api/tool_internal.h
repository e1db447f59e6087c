// The tool information interface's shared state (tool.cc: initialisation,
// control variables, categories; tool_pvar.cc: performance variables,
// sessions, events). MPI_T calls may come before MPI_Init and after
// MPI_Finalize, from any thread, and never call an error handler: each
// returns MPI_SUCCESS or an MPI_T_ERR_* class.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <mutex>

namespace nicq::api::tool {

// Guards every MPI_T call's state (none of them is on a hot path).
std::mutex& Lock();
// Whether MPI_T_init_thread was called more often than MPI_T_finalize.
// Caller holds Lock().
bool Initialized();

// Copies `text` out as MPI-4.1 15.3.3 asks of every MPI_T string argument:
// nothing when `len` is null; when `buf` is null or *len is 0, only the
// length the full string needs (with its terminating null); otherwise at
// most *len - 1 characters and a null, with *len set to what was written.
void CopyString(const char* text, char* buf, int* len);

// A performance variable: one value of `datatype`, read by `read`.
struct PvarInfo {
  const char* name;
  const char* desc;
  int verbosity;
  int var_class;  // MPI_T_PVAR_CLASS_*
  MPI_Datatype datatype;
  bool continuous;  // always running: no start/stop
  bool readonly;    // no write, no reset
  std::uint64_t (*read)();
};
int PvarCount();
const PvarInfo& Pvar(int index);

// Called by MPI_T_finalize's last call: frees every session and its handles.
void DropSessions();

}  // namespace nicq::api::tool

// Opens every MPI_T call but MPI_T_init_thread: takes the lock, refuses a
// call outside MPI_T_init_thread .. MPI_T_finalize.
#define NICQ_T_ENTER()                                            \
  std::lock_guard<std::mutex> tool_lock(nicq::api::tool::Lock()); \
  if (!nicq::api::tool::Initialized()) return MPI_T_ERR_NOT_INITIALIZED
