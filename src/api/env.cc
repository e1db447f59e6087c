// Environment: MPI_Init/Finalize, thread levels, timers, version strings, abort.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>

#include "api/api_internal.h"
#include "coll/hier_node.h"
#include "core/log.h"
#include "core/node_name.h"
#include "runtime/async_progress.h"
#include "runtime/runtime.h"

static_assert(MPI_ERR_BUFFER == static_cast<int>(nicq::Code::kBuffer));
static_assert(MPI_ERR_TRUNCATE == static_cast<int>(nicq::Code::kTruncate));
static_assert(MPI_ERR_IN_STATUS == static_cast<int>(nicq::Code::kInStatus));
static_assert(MPI_ERR_PENDING == static_cast<int>(nicq::Code::kPending));
static_assert(MPI_ERR_INFO == static_cast<int>(nicq::Code::kInfo));
static_assert(MPI_ERR_NO_MEM == static_cast<int>(nicq::Code::kNoMem));
static_assert(MPI_ERR_UNSUPPORTED_OPERATION == static_cast<int>(nicq::Code::kUnsupportedOperation));
static_assert(MPI_ERR_PROC_FAILED == static_cast<int>(nicq::Code::kProcFailed));
static_assert(MPI_ANY_SOURCE == nicq::rt::kAnySource && MPI_PROC_NULL == nicq::rt::kProcNull &&
              MPI_ANY_TAG == nicq::rt::kAnyTag);
static_assert(MPI_BSEND_OVERHEAD == nicq::rt::kBsendOverhead);

// The offload context (src/runtime/offload_context.h) is created in MPI_Init
// because its creation is collective. Weak references: the API unit tests
// link env.cc without the offload context, where these resolve to null.
namespace nicq::rt {
[[gnu::weak]] Status InitOffloadContext();
[[gnu::weak]] Status FinalizeOffloadContext();
}  // namespace nicq::rt

// MPI-IO's files left open (src/api/file.cc, layer nicq_io): absent, and
// null here, where that layer is not linked.
namespace nicq::api {
[[gnu::weak]] void CloseFilesLeftOpen();
}  // namespace nicq::api

namespace nicq::api {
namespace {

std::thread::id g_main_thread;

}  // namespace

std::atomic<Phase> g_phase{Phase::kBefore};
bool g_threads_concurrent = true;

}  // namespace nicq::api

using namespace nicq;

extern "C" {

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  api::Call c("MPI_Init_thread");
  if (api::IsInitialized()) return c.Fail(Code::kOther, "MPI is already initialized");
  if (api::IsFinalized())
    return c.Fail(Code::kOther, "MPI cannot be initialized again after MPI_Finalize");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return c.Fail(Code::kArg, "invalid thread level required=" + std::to_string(required));
  int got = MPI_THREAD_SINGLE;
  Status st = rt::Init(required, &got);
  if (!st.ok()) {
    // No communicator exists yet: MPI_ERRORS_ARE_FATAL applies to init failures.
    std::fprintf(stderr, "nicq: fatal error: MPI_Init: %s\n", st.message().c_str());
    std::exit(1);
  }
  api::RegisterPredefinedComms(rt::World(), rt::Self());
  // Makes the datatype registry, so that the inline lookup of predefined
  // types (dtype::LookupPredefined) answers from the first call on.
  (void)dtype::Lookup(MPI_BYTE);
  if (&rt::InitOffloadContext != nullptr) (void)rt::InitOffloadContext();  // failure kept
  // World's node group (when it spans nodes), so that its first collective
  // may be nonblocking and still run its node phases on the shared areas.
  st = coll::MakeNodeGroupAtCreation(rt::World());
  if (!st.ok()) {
    std::fprintf(stderr, "nicq: fatal error: MPI_Init: %s\n", st.message().c_str());
    std::exit(1);
  }
  api::g_main_thread = std::this_thread::get_id();
  api::g_threads_concurrent = got == MPI_THREAD_MULTIPLE;
  api::g_phase.store(api::Phase::kRunning, std::memory_order_release);
  if (provided) *provided = got;
  return MPI_SUCCESS;
}

int MPI_Init(int* argc, char*** argv) {
  int provided;
  return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int MPI_Finalize(void) {
  api::Call c("MPI_Finalize");
  if (!c.Init()) return c.Fail();
  // MPI: MPI_COMM_SELF's attributes are deleted first, so libraries can
  // hook their own shutdown on a delete callback. A failing callback is
  // reported through the handler but does not stop the job's finalize.
  (void)api::DeleteCommAttrs(c, MPI_COMM_SELF, rt::Self());
  // Files the program left open are closed as MPI_File_close would (their
  // descriptors, MPI_MODE_DELETE_ON_CLOSE, the shared pointer's window)
  // while the communication they need still runs (docs/mpi-api.md).
  if (&api::CloseFilesLeftOpen != nullptr) api::CloseFilesLeftOpen();
  api::SweepOrphans(/*wait_all=*/true);
  // The host progress thread runs the queue's and the collectives' hooks:
  // stopped before the offload context they use is closed.
  rt::StopAsyncProgress();
  if (&rt::FinalizeOffloadContext != nullptr) {
    Status off = rt::FinalizeOffloadContext();
    if (!off.ok()) NICQ_LOG(kWarn, kQueue, "MPI_Finalize: %s", off.message().c_str());
  }
  Status st = rt::Finalize();
  api::g_phase.store(api::Phase::kFinalized, std::memory_order_release);
  api::ResetCommTable();
  if (!st.ok()) return c.Fail(st);
  return MPI_SUCCESS;
}

int MPI_Initialized(int* flag) {
  api::Call c("MPI_Initialized");
  if (!c.NotNull(flag, "flag")) return c.Fail();
  *flag = api::IsInitialized() || api::IsFinalized();
  return MPI_SUCCESS;
}

int MPI_Finalized(int* flag) {
  api::Call c("MPI_Finalized");
  if (!c.NotNull(flag, "flag")) return c.Fail();
  *flag = api::IsFinalized();
  return MPI_SUCCESS;
}

int MPI_Query_thread(int* provided) {
  api::Call c("MPI_Query_thread");
  if (!c.Init() || !c.NotNull(provided, "provided")) return c.Fail();
  *provided = rt::ThreadLevel();
  return MPI_SUCCESS;
}

int MPI_Is_thread_main(int* flag) {
  api::Call c("MPI_Is_thread_main");
  if (!c.Init() || !c.NotNull(flag, "flag")) return c.Fail();
  *flag = std::this_thread::get_id() == api::g_main_thread;
  return MPI_SUCCESS;
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
  std::string why =
      "MPI_Abort(" + api::RankText() + ") called with error code " + std::to_string(errorcode);
  std::fprintf(stderr, "nicq: %s\n", why.c_str());
  std::fflush(stderr);
  if (api::IsInitialized()) rt::Abort(errorcode, why.c_str());
  std::_Exit(errorcode);
}

double MPI_Wtime(void) {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);  // vDSO: no syscall
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double MPI_Wtick(void) {
  timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

int MPI_Get_processor_name(char* name, int* resultlen) {
  api::Call c("MPI_Get_processor_name");
  if (!c.NotNull(name, "name") || !c.NotNull(resultlen, "resultlen")) return c.Fail();
  // The node as every locality decision sees it (virtual nodes included);
  // world rank -1 before MPI_Init, where only the host name is known.
  const std::string node = NodeName(rt::Initialized() ? rt::WorldRank() : -1);
  const std::size_t n = std::min(node.size(), std::size_t(MPI_MAX_PROCESSOR_NAME - 1));
  std::memcpy(name, node.data(), n);
  name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

int MPI_Get_version(int* version, int* subversion) {
  api::Call c("MPI_Get_version");
  if (!c.NotNull(version, "version") || !c.NotNull(subversion, "subversion")) return c.Fail();
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int MPI_Get_library_version(char* version, int* resultlen) {
  api::Call c("MPI_Get_library_version");
  if (!c.NotNull(version, "version") || !c.NotNull(resultlen, "resultlen")) return c.Fail();
  int n = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                        "nicq 0.1.0 (MPI %d.%d subset over libfabric, NIC triggered operations)",
                        MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
  return MPI_SUCCESS;
}

int MPI_Get_address(const void* location, MPI_Aint* address) {
  api::Call c("MPI_Get_address");
  if (!c.NotNull(address, "address")) return c.Fail();
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

}  // extern "C"
