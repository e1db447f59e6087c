// The API side of MPI-IO (src/api/file*.cc): the handle table, the state a
// file keeps beyond the io:: engine's, and how a call's error reaches the
// file's error handler.
#pragma once

#include <cstdint>
#include <string>

#include "api/api_more.h"
#include "io/file.h"

namespace nicq::api {

struct ApiFile {
  io::File io;
  int handle = 0;
  std::uint64_t open_seq = 0;     // this process's opens, counted (RegisterFile)
  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the opening communicator
  int rank = 0;                   // in comm
  int errhandler = MPI_ERRORS_RETURN;
  Hints hints;
  bool delete_on_close = false;
  MPI_Win shared_win = MPI_WIN_NULL;  // the shared file pointer (file_shared.cc)
  // A split collective begun and not yet ended: its status bytes.
  bool split_active = false;
  std::int64_t split_bytes = 0;
};

// The file behind a handle, or nullptr (null, closed, not a file).
ApiFile* LookupFile(MPI_File handle);
// A valid file handle; records MPI_ERR_FILE on c otherwise.
bool FileArg(Call& c, MPI_File handle, ApiFile** out);
// Registers a new file and returns its handle (0 when the table is full).
int RegisterFile(ApiFile* f);
void UnregisterFile(ApiFile* f);
// MPI_Finalize: closes every file still open, collectively as
// MPI_File_close, in the order they were opened, each with a warning.
void CloseFilesLeftOpen();

// The handler of MPI_FILE_NULL: errors of calls without a valid file
// (MPI_File_open, MPI_File_delete, a bad handle) and each new file's.
int NullFileErrhandler();
// Raises c's recorded error (or st) through f's error handler (MPI_FILE_NULL's
// when f is null). MPI_SUCCESS when nothing was recorded.
int FileFail(Call& c, ApiFile* f);
int FileFail(Call& c, ApiFile* f, const Status& st);

// Collective verdict over f's communicator: the largest error class any
// member met (0 for none), so every member fails or succeeds together.
int AgreeOnClass(MPI_Comm comm, Code mine);
// A collective call's argument checks (`mine_ok`, else c's recorded error),
// agreed over f's communicator before the call's collective step, so that a
// member whose arguments are refused does not leave the others waiting in
// it: true when every member accepted; else false with the agreed class on c.
bool AgreeArgs(Call& c, ApiFile* f, bool mine_ok);

// The shared file pointer (file_shared.cc), in etypes of the view. Open and
// close are collective over f->comm; the ordered step is collective and
// gives this member's place after those of the lower ranks.
Status OpenSharedPointer(ApiFile* f);
void CloseSharedPointer(ApiFile* f);
Status SharedFetchAdd(ApiFile* f, std::int64_t add, std::int64_t* old);
Status SetSharedPointer(ApiFile* f, std::int64_t value);
Status SharedOrdered(ApiFile* f, std::int64_t mine, std::int64_t* at);

}  // namespace nicq::api
