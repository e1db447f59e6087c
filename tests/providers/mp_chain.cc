// Multi-process triggered chain over nicqrun (2 ranks):
//
//   rank 0: put(epoch e) --> rank 1's region   [gated on rank 0's arrivals >= e]
//   rank 1: put(region) --> back to rank 0     [gated on rank 1's arrivals >= e+1]
//   rank 1: remote counter add to rank 0's "done" after the last epoch
//
// Every op is posted before the first one fires; afterwards neither process
// touches the data path: rank 1 only sleeps (native, or emulated with its
// progress thread) while its NIC/emulator answers each arrival. Rank 0
// checks the data that comes back and the counters.
//
// usage: prov_ofi_mp_chain <native|emulated> [epochs]   (NICQ_PROVIDER picks the provider)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "boot/bootstrap.h"
#include "core/config.h"
#include "providers/common/backend_registry.h"
#include "providers/ofi_common/register_ofi.h"

using namespace nicq;
using offload::CounterId;
using offload::OpKind;
using offload::TriggeredOp;

namespace {

[[noreturn]] void Die(const char* what, const Status& s) {
  std::fprintf(stderr, "mp_chain: %s: %s\n", what, s.message().c_str());
  std::exit(1);
}
#define CHECK_OK(what, expr)     \
  do {                           \
    Status s_ = (expr);          \
    if (!s_.ok()) Die(what, s_); \
  } while (0)

constexpr std::size_t kWords = 1024;

// Phase 2, tagged messages: every receive and send of both ranks is posted
// up front. Rank 0's send e waits for its receive e-1 to complete; rank 1's
// echo e waits for its receive e. Neither process acts until the end.
bool PingPong(offload::OffloadBackend& b, Bootstrap& boot, int rank, int epochs, bool hands_off) {
  constexpr std::size_t kLen = 256;
  CounterId got = 0, sent = 0;
  CHECK_OK("AllocCounters", b.AllocCounters(1, &got));
  CHECK_OK("AllocCounters", b.AllocCounters(1, &sent));
  std::vector<std::vector<std::uint64_t>> out(epochs, std::vector<std::uint64_t>(kLen));
  std::vector<std::vector<std::uint64_t>> in(epochs, std::vector<std::uint64_t>(kLen, 0));
  for (int e = 0; e < epochs; ++e)
    for (std::size_t i = 0; i < kLen; ++i) out[e][i] = (rank + 1) * 1000000ull + e * 1000 + i;
  std::vector<TriggeredOp> ops;
  for (int e = 0; e < epochs; ++e) {
    TriggeredOp recv;
    recv.kind = OpKind::kRecv;
    recv.peer = 1 - rank;
    recv.tag = 77;
    recv.local_rbuf = in[e].data();
    recv.bytes = kLen * 8;
    recv.completion = got;
    ops.push_back(recv);
  }
  for (int e = 0; e < epochs; ++e) {
    TriggeredOp send;
    send.kind = OpKind::kSend;
    send.peer = 1 - rank;
    send.tag = 77;
    // Rank 1 echoes what it received in epoch e.
    send.local_buf = rank == 0 ? out[e].data() : in[e].data();
    send.bytes = kLen * 8;
    send.completion = sent;
    send.trigger = rank == 0 ? (e == 0 ? offload::kNoCounter : got) : got;
    send.threshold = rank == 0 ? e : e + 1;
    ops.push_back(send);
  }
  CHECK_OK("Post(pingpong)", b.Post(ops));
  CHECK_OK("Barrier", boot.Barrier());
  if (rank == 1 && hands_off) {
    while (b.ReadCounter(sent) < static_cast<std::uint64_t>(epochs)) usleep(2000);
  }
  CHECK_OK("WaitCounter(got)", b.WaitCounter(got, epochs, 60000));
  CHECK_OK("WaitCounter(sent)", b.WaitCounter(sent, epochs, 60000));
  if (rank == 0 && in != out) {
    std::fprintf(stderr, "mp_chain: ping-pong echoed wrong data\n");
    return false;
  }
  CHECK_OK("Barrier", boot.Barrier());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "emulated";
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 20;
  std::unique_ptr<Bootstrap> boot;
  CHECK_OK("CreateBootstrap", CreateBootstrap(boot));
  const int rank = boot->Rank();
  if (boot->Size() != 2) {
    std::fprintf(stderr, "mp_chain: needs exactly 2 ranks\n");
    return 1;
  }
  ofi::RegisterOfiBackends();
  offload::BackendOptions opts;
  opts.provider = config::GetString("NICQ_PROVIDER");
  opts.rank = rank;
  opts.world_size = 2;
  std::unique_ptr<offload::OffloadBackend> b;
  CHECK_OK("CreateBackend", offload::CreateBackend(backend, opts, &b));

  // Wire-up: allgather the fixed-size address blobs.
  std::vector<std::uint8_t> mine, all;
  CHECK_OK("LocalAddress", b->LocalAddress(mine));
  CHECK_OK("Allgather", boot->Allgather(mine.data(), mine.size(), all));
  std::vector<std::vector<std::uint8_t>> peers(2);
  for (int r = 0; r < 2; ++r)
    peers[r].assign(all.begin() + r * mine.size(), all.begin() + (r + 1) * mine.size());
  CHECK_OK("SetPeers", b->SetPeers(peers));

  CounterId arrival = 0, done = 0, sent = 0;
  CHECK_OK("AllocCounters", b->AllocCounters(1, &arrival));
  CHECK_OK("AllocCounters", b->AllocCounters(1, &done));
  CHECK_OK("AllocCounters", b->AllocCounters(1, &sent));
  std::vector<std::uint64_t> region(kWords, 0);
  offload::MemRegion mr;
  CHECK_OK("RegisterMemory", b->RegisterMemory(region.data(), kWords * 8, arrival, &mr));
  // Exchange (remote_addr, key, done counter id, arrival counter id): the
  // put names the target's arrival counter, which provider-chosen keys
  // (verbs) cannot carry.
  std::uint64_t info[4] = {mr.remote_addr, mr.key, done, arrival};
  CHECK_OK("Allgather", boot->Allgather(info, sizeof(info), all));
  std::uint64_t peer_info[4];
  std::memcpy(peer_info, all.data() + (1 - rank) * sizeof(info), sizeof(info));

  // Rank 0's payloads, one per epoch (kept alive until the end).
  std::vector<std::vector<std::uint64_t>> payload(epochs, std::vector<std::uint64_t>(kWords));
  for (int e = 0; e < epochs; ++e)
    for (std::size_t i = 0; i < kWords; ++i) payload[e][i] = (e + 1) * 100000ull + i;

  std::vector<TriggeredOp> ops;
  for (int e = 0; e < epochs; ++e) {
    TriggeredOp put;
    put.kind = OpKind::kPut;
    put.peer = 1 - rank;
    put.bytes = kWords * 8;
    put.remote_addr = peer_info[0];
    put.remote_key = peer_info[1];
    put.target_counter = static_cast<CounterId>(peer_info[3]);
    put.completion = sent;
    if (rank == 0) {
      put.local_buf = payload[e].data();
      put.trigger = e == 0 ? offload::kNoCounter : arrival;
      put.threshold = e;
    } else {
      put.local_buf = region.data();  // echo what just landed
      put.trigger = arrival;
      put.threshold = e + 1;
    }
    ops.push_back(put);
  }
  if (rank == 1) {
    TriggeredOp token;
    token.kind = OpKind::kRemoteCounterAdd;
    token.peer = 0;
    token.trigger = arrival;
    token.threshold = epochs;
    token.target_counter = static_cast<CounterId>(peer_info[2]);
    token.value = 1;
    ops.push_back(token);
  }
  CHECK_OK("Barrier", boot->Barrier());  // both sides registered before any put
  if (rank == 1) CHECK_OK("Post", b->Post(ops));
  CHECK_OK("Barrier", boot->Barrier());  // rank 1's echoes wait before rank 0 starts
  if (rank == 0) CHECK_OK("Post", b->Post(ops));

  const bool hands_off = b->Caps().native_triggers || config::GetInt("NICQ_PROGRESS_THREAD") == 1;
  if (rank == 1) {
    if (hands_off) {
      // The target sleeps: its NIC (or emulator thread) answers every arrival.
      while (b->ReadCounter(arrival) < static_cast<std::uint64_t>(epochs)) usleep(2000);
    } else {
      CHECK_OK("WaitCounter(arrival)", b->WaitCounter(arrival, epochs, 60000));
    }
    CHECK_OK("WaitCounter(sent)", b->WaitCounter(sent, epochs, 60000));
  } else {
    CHECK_OK("WaitCounter(done)", b->WaitCounter(done, 1, 60000));
    CHECK_OK("WaitCounter(arrival)", b->WaitCounter(arrival, epochs, 60000));
    CHECK_OK("WaitCounter(sent)", b->WaitCounter(sent, epochs, 60000));
    if (region != payload[epochs - 1]) {
      std::fprintf(stderr, "mp_chain: rank 0 got back wrong data (first word %llu)\n",
                   static_cast<unsigned long long>(region[0]));
      return 1;
    }
  }
  if (!PingPong(*b, *boot, rank, epochs, hands_off)) return 1;
  CHECK_OK("Flush", b->Flush());
  CHECK_OK("Barrier", boot->Barrier());
  CHECK_OK("DeregisterMemory", b->DeregisterMemory(&mr));
  b.reset();
  std::printf("mp_chain rank %d: %s on %s, %d epochs ok\n", rank, backend.c_str(),
              opts.provider.c_str(), epochs);
  CHECK_OK("Finalize", boot->Finalize());
  return 0;
}
