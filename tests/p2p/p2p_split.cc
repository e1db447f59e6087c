// Split copies of large same-node messages (NICQ_SHM_SPLIT_MIN): the
// receiver offers the first part of its buffer to the sender and reads the
// rest itself. Rank 0 sends to rank 1 in three situations, every byte and
// the guard bytes after each receive buffer checked:
//   - the sender waits inside MPI: it writes the offered part (counted at
//     the receiver, which asks for at least 3 such copies);
//   - the sender sleeps without any MPI call: the receiver takes the offer
//     back and copies everything (exactly one such copy);
//   - the receive buffer is shorter than the message (truncation): only
//     the buffer is written, never the guard after it.
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "mp_util.h"
#include "runtime/runtime_state.h"

using namespace nicq;
using namespace nicq::test;

namespace {

constexpr std::size_t kMessage = (4u << 20) + 123;  // not a page multiple
constexpr std::size_t kGuard = 8192;
constexpr std::uint8_t kGuardByte = 0xa5;

struct Counts {
  std::uint64_t by_sender, kept;
};
Counts Now() {
  const p2p::Engine& e = rt::detail::S().engine;
  return {e.split_by_sender(), e.split_kept()};
}

// A receive buffer at an odd offset inside a larger allocation, followed by
// guard bytes that must stay untouched.
struct RecvBuffer {
  std::vector<std::uint8_t> mem;
  std::uint8_t* data;
  std::size_t len;
  explicit RecvBuffer(std::size_t n) : mem(n + kGuard + 64, 0), data(mem.data() + 37), len(n) {
    std::memset(data + len, kGuardByte, kGuard);
  }
  long long GuardBroken() const {
    for (std::size_t i = 0; i < kGuard; ++i)
      if (data[len + i] != kGuardByte) return (long long)i;
    return -1;
  }
};

void CheckReceived(const RecvBuffer& b, std::size_t expect, int idx, const char* what) {
  const long long bad = FirstBad(b.data, expect, 0, 1, idx);
  MP_CHECK(bad < 0, "%s, message %d: byte %lld of %zu is wrong", what, idx, bad, expect);
  const long long guard = b.GuardBroken();
  MP_CHECK(guard < 0, "%s, message %d: guard byte %lld after the buffer was written", what, idx,
           guard);
}

void SenderInsideMpi(std::vector<std::uint8_t>& out) {
  const int me = rt::WorldRank();
  RecvBuffer in(kMessage);
  const Counts before = Now();
  int rounds = 0;
  for (int idx = 0; idx < 200; ++idx) {
    int more = 1;
    if (me == 0) {
      Fill(out, 0, 1, idx);
      Send(out.data(), kMessage, 1, 1, rt::World());
      Recv(&more, sizeof more, 1, 2, rt::World());
    } else {
      std::memset(in.data, 0, kMessage);
      const RequestStatus st = Recv(in.data, kMessage, 0, 1, rt::World());
      MP_CHECK(st.bytes == kMessage && st.error == 0, "got %zu bytes, error %d", st.bytes,
               st.error);
      CheckReceived(in, kMessage, idx, "sender inside MPI");
      more = Now().by_sender - before.by_sender < 3;
      Send(&more, sizeof more, 0, 2, rt::World());
    }
    ++rounds;
    if (!more) break;
  }
  if (me == 1) {
    const Counts after = Now();
    std::printf(
        "sender inside MPI: %d messages, sender wrote %llu first parts, receiver kept %llu\n",
        rounds, (unsigned long long)(after.by_sender - before.by_sender),
        (unsigned long long)(after.kept - before.kept));
    MP_CHECK(after.by_sender - before.by_sender >= 3,
             "the sender wrote no more than %llu offered parts in %d messages",
             (unsigned long long)(after.by_sender - before.by_sender), rounds);
  }
}

void SenderAsleep(std::vector<std::uint8_t>& out) {
  const int me = rt::WorldRank();
  const int idx = 1000;
  if (me == 0) {
    Fill(out, 0, 1, idx);
    Request r;
    MP_OK(rt::Isend(out.data(), kMessage, 1, 3, rt::World(), SendMode::kStandard, &r));
    usleep(300 * 1000);  // no MPI call: the receiver must not wait for us
    MP_OK(rt::Wait(&r));
    return;
  }
  RecvBuffer in(kMessage);
  const Counts before = Now();
  const RequestStatus st = Recv(in.data, kMessage, 0, 3, rt::World());
  MP_CHECK(st.bytes == kMessage && st.error == 0, "got %zu bytes, error %d", st.bytes, st.error);
  CheckReceived(in, kMessage, idx, "sender asleep");
  const Counts after = Now();
  MP_CHECK(after.kept - before.kept == 1 && after.by_sender == before.by_sender,
           "sender asleep: receiver kept %llu, sender wrote %llu (expected 1 and 0)",
           (unsigned long long)(after.kept - before.kept),
           (unsigned long long)(after.by_sender - before.by_sender));
}

void Truncated(std::vector<std::uint8_t>& out) {
  const int me = rt::WorldRank();
  const std::size_t fits = (3u << 20) + 5;
  for (int idx = 2000; idx < 2010; ++idx) {
    if (me == 0) {
      Fill(out, 0, 1, idx);
      Request r;
      MP_OK(rt::Isend(out.data(), kMessage, 1, 4, rt::World(), SendMode::kStandard, &r));
      MP_OK(rt::Wait(&r));
    } else {
      RecvBuffer in(fits);
      const RequestStatus st = Recv(in.data, fits, 0, 4, rt::World());
      MP_CHECK(st.error != 0, "a %zu-byte message into %zu bytes reported no error", kMessage,
               fits);
      CheckReceived(in, fits, idx, "truncated");
    }
  }
}

}  // namespace

int main() {
  MP_OK(rt::Init(0, nullptr));
  MP_CHECK(rt::WorldSize() == 2, "needs 2 ranks");
  std::vector<std::uint8_t> out(kMessage);
  SenderInsideMpi(out);
  Barrier(rt::World());
  SenderAsleep(out);
  Barrier(rt::World());
  Truncated(out);
  Barrier(rt::World());
  if (rt::WorldRank() == 0) std::printf("p2p split: ok\n");
  MP_OK(rt::Finalize());
  return 0;
}
