#include "boot/pmix_bootstrap.h"

#include <pmix.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "core/log.h"

extern char** environ;

namespace nicq {

struct PmixBootstrap::State {
  pmix_proc_t me;
  pmix_proc_t all;  // my namespace, wildcard rank: the job
};

static std::string PmixError(const char* call, pmix_status_t rc) {
  return std::string("PmixBootstrap: ") + call + ": " + PMIx_Error_string(rc) + " (" +
         std::to_string(rc) + ")";
}

bool PmixEnvironmentPresent() {
  if (std::getenv("PMIX_RANK") || std::getenv("PMIX_NAMESPACE")) return true;
  // PMIX_SERVER_URI, PMIX_SERVER_URI2, PMIX_SERVER_URI21, ...: any version.
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "PMIX_SERVER_URI", 15) == 0) return true;
  return false;
}

// Job-level values come back as uint16 or uint32 depending on the server;
// accept any unsigned integer type.
static bool ValueToInt(const pmix_value_t* v, int& out) {
  switch (v->type) {
    case PMIX_UINT16:
      out = v->data.uint16;
      return true;
    case PMIX_UINT32:
      out = static_cast<int>(v->data.uint32);
      return true;
    case PMIX_UINT64:
      out = static_cast<int>(v->data.uint64);
      return true;
    case PMIX_INT:
      out = v->data.integer;
      return true;
    case PMIX_UINT:
      out = static_cast<int>(v->data.uint);
      return true;
    default:
      return false;
  }
}

static Status GetInt(const pmix_proc_t* proc, const char* key, int& out) {
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(proc, key, nullptr, 0, &val);
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError(key, rc));
  bool ok = ValueToInt(val, out);
  PMIX_VALUE_RELEASE(val);
  if (!ok)
    return Error(Code::kOther, std::string("PmixBootstrap: ") + key + " has unexpected type");
  return Status::Ok();
}

PmixBootstrap::PmixBootstrap(std::unique_ptr<State> state) : st_(std::move(state)) {}

PmixBootstrap::~PmixBootstrap() {
  if (!finalized_) Finalize().IgnoreError();
}

Status PmixBootstrap::Create(std::unique_ptr<Bootstrap>& out, bool& unreachable) {
  unreachable = false;
  auto st = std::make_unique<State>();
  pmix_status_t rc = PMIx_Init(&st->me, nullptr, 0);
  if (rc == PMIX_ERR_UNREACH) unreachable = true;
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError("PMIx_Init", rc));
  PMIX_LOAD_PROCID(&st->all, st->me.nspace, PMIX_RANK_WILDCARD);
  std::unique_ptr<PmixBootstrap> b(new PmixBootstrap(std::move(st)));
  b->rank_ = static_cast<int>(b->st_->me.rank);
  NICQ_RETURN_IF_ERROR(GetInt(&b->st_->all, PMIX_JOB_SIZE, b->size_));
  // Local placement is advisory: a server that does not publish it gets the
  // conservative "alone on the node" answer rather than a failed init.
  if (!GetInt(&b->st_->me, PMIX_LOCAL_RANK, b->local_rank_).ok()) b->local_rank_ = 0;
  if (!GetInt(&b->st_->all, PMIX_LOCAL_SIZE, b->local_size_).ok()) b->local_size_ = 1;
  NICQ_LOG(kDebug, kBoot, "pmix bootstrap: rank %d of %d in namespace %s", b->rank_, b->size_,
           b->st_->me.nspace);
  out = std::move(b);
  return Status::Ok();
}

static Status Fence(const pmix_proc_t* job, bool collect) {
  pmix_info_t info;
  bool yes = true;
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
  pmix_status_t rc = PMIx_Fence(job, 1, collect ? &info : nullptr, collect ? 1 : 0);
  PMIX_INFO_DESTRUCT(&info);
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError("PMIx_Fence", rc));
  return Status::Ok();
}

Status PmixBootstrap::Allgather(const void* mine, std::size_t len, std::vector<std::uint8_t>& all) {
  std::lock_guard<std::mutex> lock(mu_);
  if (finalized_) return Error(Code::kOther, "PmixBootstrap::Allgather: called after Finalize");
  const std::string key = "nicq.ag." + std::to_string(seq_++);
  all.assign(len * static_cast<std::size_t>(size_), 0);
  if (len == 0) return Fence(&st_->all, false).WithContext("PmixBootstrap::Allgather");

  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = static_cast<char*>(const_cast<void*>(mine));
  v.data.bo.size = len;
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);  // copies the bytes
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError("PMIx_Put", rc));
  rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError("PMIx_Commit", rc));
  NICQ_RETURN_IF_ERROR(Fence(&st_->all, true).WithContext("PmixBootstrap::Allgather"));

  for (int r = 0; r < size_; ++r) {
    pmix_proc_t peer;
    PMIX_LOAD_PROCID(&peer, st_->me.nspace, static_cast<pmix_rank_t>(r));
    pmix_value_t* got = nullptr;
    rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &got);
    if (rc != PMIX_SUCCESS)
      return Error(
          Code::kOther,
          PmixError(("PMIx_Get(rank " + std::to_string(r) + ", " + key + ")").c_str(), rc));
    bool ok = got->type == PMIX_BYTE_OBJECT && got->data.bo.size == len;
    if (ok) std::memcpy(all.data() + len * r, got->data.bo.bytes, len);
    PMIX_VALUE_RELEASE(got);
    if (!ok)
      return Error(Code::kArg, "PmixBootstrap::Allgather: rank " + std::to_string(r) +
                                   " contributed a different length than " + std::to_string(len));
  }
  return Status::Ok();
}

Status PmixBootstrap::Barrier() {
  std::lock_guard<std::mutex> lock(mu_);
  return Fence(&st_->all, false).WithContext("PmixBootstrap::Barrier");
}

void PmixBootstrap::Abort(int code, const std::string& why) {
  // Launchers differ in whether they show PMIx_Abort's message, so say it
  // here; PMIx_Abort then ends every process of our namespace.
  std::fprintf(stderr, "nicq[%d]: abort (code %d): %s\n", rank_, code, why.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  const int status = code != 0 ? code : 1;
  // Open MPI 4.1's mpirun (ORTE) mishandles PMIx_Abort when the machine is
  // loaded: after every rank is gone, its PMIx server deadlocks or crashes in
  // PMIx_server_finalize (3 to 11 of 40 runs of boot.pmix.ompi.abort with four
  // busy loops beside it), so the job hangs or reports a segfault instead of
  // our code. ORTE ends the whole job with the code of any rank that exits
  // nonzero without finalizing (40 of 40 under the same load), so under ORTE
  // that exit is the abort.
  if (std::getenv("OMPI_MCA_orte_hnp_uri") != nullptr) ::_exit(status);
  // PMIx_Abort waits for the server's answer, and a loaded launcher may never
  // give one. It runs on its own thread; if it has not ended us within a few
  // seconds we exit with the code, which makes the launcher end the job.
  std::thread([code, why] {
    (void)PMIx_Abort(code, why.c_str(), nullptr, 0);
    ::_exit(code != 0 ? code : 1);
  }).detach();
  ::sleep(3);
  ::_exit(status);
}

Status PmixBootstrap::Finalize() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finalized_) return Status::Ok();
  finalized_ = true;
  pmix_status_t rc = PMIx_Finalize(nullptr, 0);
  if (rc != PMIX_SUCCESS) return Error(Code::kOther, PmixError("PMIx_Finalize", rc));
  return Status::Ok();
}

}  // namespace nicq
