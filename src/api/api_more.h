// Hooks between the API files for communicator hints, user-defined error
// classes and session error handlers (kept out of api_internal.h, which
// every engine's entry points include).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "api/api_internal.h"

namespace nicq::api {

using Hints = std::vector<std::pair<std::string, std::string>>;

// Communicator hints (comm_info.cc): what MPI_Comm_set_info / dup_with_info
// stored, returned by MPI_Comm_get_info and copied by MPI_Comm_dup.
void SetCommHints(const Comm* comm, Hints hints);
Hints CommHints(const Comm* comm);
void DropCommHints(const Comm* comm);
// The pairs of an info object (MPI_INFO_NULL: none); false with the error
// recorded on c for an invalid handle.
bool InfoPairs(Call& c, MPI_Info info, Hints* out);
// A new info object holding `pairs`.
int NewInfoFrom(Call& c, const Hints& pairs, MPI_Info* out);

// User error classes and codes (error_classes.cc): the string set with
// MPI_Add_error_string; false when `code` is not user-defined.
bool UserErrorString(int code, std::string* out);

// How many error codes calls of this process have recorded (errors.cc).
std::uint64_t RecordedErrorCount();

// The message of an error code (errors.cc), as MPI_Error_string gives it.
std::string MessageFor(int code);

// Session error handlers (errors.cc): whether h was made by
// MPI_Session_create_errhandler, and calling it for a session.
bool IsSessionErrhandler(int h);
void CallSessionErrhandler(int errhandler, MPI_Session session, int code);
int NewSessionErrhandler(Call& c, MPI_Session_errhandler_function* fn, MPI_Errhandler* out);

// Window error handlers (errors.cc): made by MPI_Win_create_errhandler (or
// predefined); invoking one for a window's error returns the code, calls the
// user function, or aborts the job.
bool IsWinErrhandler(int h);
int NewWinErrhandler(Call& c, MPI_Win_errhandler_function* fn, MPI_Errhandler* out);
int InvokeWinErrhandler(int win_handle, int errhandler, int code);
// Frees, on this member alone, a window just created and never used, when
// the collective step it belongs to failed elsewhere (win.cc); *win becomes
// MPI_WIN_NULL. A no-op on MPI_WIN_NULL.
void DiscardNewWin(MPI_Win* win);

// File error handlers (errors.cc), as the window ones; an errhandler of 0
// means MPI_ERRORS_RETURN, the standard's default for files.
bool IsFileErrhandler(int h);
int NewFileErrhandler(Call& c, MPI_File_errhandler_function* fn, MPI_Errhandler* out);
int InvokeFileErrhandler(int file_handle, int errhandler, int code);

}  // namespace nicq::api
