// Shared by the C entry points in src/api/coll_*.cc: argument checks that
// fill a coll::Args, and the dispatch to the three forms.
#pragma once

#include "api/api_internal.h"
#include "coll/coll.h"

namespace nicq::coll::capi {

enum class Form { kBlocking, kNonblocking, kPersistent };

// Init + communicator (scan/exscan refuse intercommunicators) and the
// request pointer for the nonblocking and persistent forms.
bool Begin(api::Call& c, Kind k, MPI_Comm comm, Form f, MPI_Request* request, Args* a);
// A (buffer, count, datatype) triple; in_place_ok: MPI_IN_PLACE accepted.
bool Data(api::Call& c, const void* buf, int count, MPI_Datatype dt, const dtype::Type** t,
          const char* what, bool in_place_ok);
bool Root(api::Call& c, int root, Args* a);
bool OpArg(api::Call& c, MPI_Op op, const dtype::Type* t, Args* a);
// An array of comm-size counts (non-negative) or displacements.
bool Counts(api::Call& c, const int* counts, int n, const char* what, bool nonneg);

// Runs the collective in the given form.
int Run(api::Call& c, Args& a, Form f, MPI_Info info, MPI_Request* request);

}  // namespace nicq::coll::capi

// Bodies of the three forms of a collective: FILL is a boolean expression
// that checks the arguments and fills `a`.
#define NICQ_COLL_BODY(NAME, KIND, COMM, FORM, INFO, REQ, FILL)              \
  ::nicq::api::Call c(NAME);                                                 \
  ::nicq::coll::Args a;                                                      \
  if (!::nicq::coll::capi::Begin(c, ::nicq::coll::Kind::KIND, COMM,          \
                                 ::nicq::coll::capi::Form::FORM, REQ, &a) || \
      !(FILL))                                                               \
    return c.Fail();                                                         \
  return ::nicq::coll::capi::Run(c, a, ::nicq::coll::capi::Form::FORM, INFO, REQ)

#define NICQ_COLL_BLOCKING(NAME, KIND, COMM, FILL) \
  NICQ_COLL_BODY(NAME, KIND, COMM, kBlocking, MPI_INFO_NULL, nullptr, FILL)
#define NICQ_COLL_NONBLOCKING(NAME, KIND, COMM, REQ, FILL) \
  NICQ_COLL_BODY(NAME, KIND, COMM, kNonblocking, MPI_INFO_NULL, REQ, FILL)
#define NICQ_COLL_PERSISTENT(NAME, KIND, COMM, INFO, REQ, FILL) \
  NICQ_COLL_BODY(NAME, KIND, COMM, kPersistent, INFO, REQ, FILL)
