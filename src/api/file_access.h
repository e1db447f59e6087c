// The one path of every MPI-IO read and write (file_data.cc) and the
// access kinds its entry points (file_read.cc, file_write.cc) name.
#pragma once

#include <cstdint>

#include "api/file_internal.h"

namespace nicq::api {

// Where the access starts: an explicit offset, the individual pointer, the
// shared pointer, or the shared pointer in rank order (collective).
enum class Where { kExplicit, kIndividual, kShared, kOrdered };
// Blocking (also the _all forms: no exchange is needed), nonblocking (a
// completed request), or the _begin of a split collective.
enum class Form { kBlocking, kNonblocking, kBegin };

struct FileAccess {
  bool write;
  Where where;
  Form form;
};

// Checks the arguments, moves the data through the view and reports it as
// a's form asks (status, *request, or the split collective's saved count).
int RunFileAccess(Call& c, const FileAccess& a, MPI_File fh, MPI_Offset offset, const void* buf,
                  std::int64_t count, MPI_Datatype datatype, MPI_Status* status,
                  MPI_Request* request);
// The _end of a split collective: its status.
int EndFileAccess(Call& c, MPI_File fh, MPI_Status* status);

inline constexpr FileAccess kRead{false, Where::kIndividual, Form::kBlocking};
inline constexpr FileAccess kIread{false, Where::kIndividual, Form::kNonblocking};
inline constexpr FileAccess kReadBegin{false, Where::kIndividual, Form::kBegin};
inline constexpr FileAccess kReadAt{false, Where::kExplicit, Form::kBlocking};
inline constexpr FileAccess kIreadAt{false, Where::kExplicit, Form::kNonblocking};
inline constexpr FileAccess kReadAtBegin{false, Where::kExplicit, Form::kBegin};
inline constexpr FileAccess kWrite{true, Where::kIndividual, Form::kBlocking};
inline constexpr FileAccess kIwrite{true, Where::kIndividual, Form::kNonblocking};
inline constexpr FileAccess kWriteBegin{true, Where::kIndividual, Form::kBegin};
inline constexpr FileAccess kWriteAt{true, Where::kExplicit, Form::kBlocking};
inline constexpr FileAccess kIwriteAt{true, Where::kExplicit, Form::kNonblocking};
inline constexpr FileAccess kWriteAtBegin{true, Where::kExplicit, Form::kBegin};
inline constexpr FileAccess kReadShared{false, Where::kShared, Form::kBlocking};
inline constexpr FileAccess kIreadShared{false, Where::kShared, Form::kNonblocking};
inline constexpr FileAccess kReadOrdered{false, Where::kOrdered, Form::kBlocking};
inline constexpr FileAccess kReadOrderedBegin{false, Where::kOrdered, Form::kBegin};
inline constexpr FileAccess kWriteShared{true, Where::kShared, Form::kBlocking};
inline constexpr FileAccess kIwriteShared{true, Where::kShared, Form::kNonblocking};
inline constexpr FileAccess kWriteOrdered{true, Where::kOrdered, Form::kBlocking};
inline constexpr FileAccess kWriteOrderedBegin{true, Where::kOrdered, Form::kBegin};

}  // namespace nicq::api
