// Partitioned point-to-point requests (partitioned.cc), as the rest of the
// API layer needs to tell them apart.
#pragma once

#include "api/api_internal.h"

namespace nicq::api {

struct Partitioned;
// A request made by MPI_Psend_init or MPI_Precv_init. Such a request is
// matched from its creation (draft chapter 13, MPI_Is_matched).
bool IsPartitioned(const ApiRequest* r);

}  // namespace nicq::api
