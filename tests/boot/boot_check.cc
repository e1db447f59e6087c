// A plain program (no MPI) that exercises whichever bootstrap the launcher
// provides: checks rank/size against the expectation given on the command
// line, runs Allgathers of several sizes (0 bytes, one int, 64 KiB) and
// Barriers, and verifies every byte. Exit status 0 and "boot_check OK" on
// rank 0 on success.
//
// usage: boot_check <expected-name|any> <expected-size|0> [rounds]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "boot/bootstrap.h"

namespace {

int Fail(int rank, const std::string& what) {
  std::fprintf(stderr, "boot_check rank %d: FAIL: %s\n", rank, what.c_str());
  return 1;
}

// Byte i of rank r's contribution in round k: distinct per rank, round, byte.
std::uint8_t Pattern(int r, int k, std::size_t i) {
  return static_cast<std::uint8_t>((r * 131 + k * 17 + i * 7 + (i >> 8)) & 0xff);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: boot_check <name|any> <size|0> [rounds]\n");
    return 2;
  }
  const std::string want_name = argv[1];
  const int want_size = std::atoi(argv[2]);
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;

  std::unique_ptr<nicq::Bootstrap> boot;
  nicq::Status st = nicq::CreateBootstrap(boot);
  if (!st.ok()) return Fail(-1, "CreateBootstrap: " + st.message());
  const int rank = boot->Rank(), size = boot->Size();
  if (want_name != "any" && want_name != boot->Name())
    return Fail(rank, std::string("bootstrap is ") + boot->Name() + ", expected " + want_name);
  if (want_size > 0 && size != want_size)
    return Fail(rank, "size " + std::to_string(size) + ", expected " + std::to_string(want_size));
  if (rank < 0 || rank >= size) return Fail(rank, "rank out of range");
  if (boot->LocalRank() < 0 || boot->LocalRank() >= boot->LocalSize() || boot->LocalSize() > size)
    return Fail(rank, "local rank/size inconsistent");

  // Everyone must agree on the size and see each rank exactly once.
  std::vector<std::uint8_t> all;
  int id[2] = {rank, size};
  st = boot->Allgather(id, sizeof(id), all);
  if (!st.ok()) return Fail(rank, st.message());
  if (all.size() != sizeof(id) * size) return Fail(rank, "allgather result has wrong length");
  for (int r = 0; r < size; ++r) {
    int got[2];
    std::memcpy(got, all.data() + r * sizeof(id), sizeof(got));
    if (got[0] != r || got[1] != size)
      return Fail(rank, "slot " + std::to_string(r) + " holds rank " + std::to_string(got[0]));
  }

  const std::size_t lens[] = {0, 1, 13, 4096, 65536};
  for (int k = 0; k < rounds; ++k) {
    const std::size_t len = lens[k % 5];
    std::vector<std::uint8_t> mine(len);
    for (std::size_t i = 0; i < len; ++i) mine[i] = Pattern(rank, k, i);
    st = boot->Allgather(mine.data(), len, all);
    if (!st.ok()) return Fail(rank, "round " + std::to_string(k) + ": " + st.message());
    if (all.size() != len * size) return Fail(rank, "round " + std::to_string(k) + ": length");
    for (int r = 0; r < size; ++r)
      for (std::size_t i = 0; i < len; ++i)
        if (all[r * len + i] != Pattern(r, k, i))
          return Fail(rank, "round " + std::to_string(k) + ": rank " + std::to_string(r) +
                                " byte " + std::to_string(i) + " differs");
    st = boot->Barrier();
    if (!st.ok()) return Fail(rank, "barrier: " + st.message());
  }
  if (rank == 0)
    std::printf("boot_check OK: %s bootstrap, %d ranks, %d rounds\n", boot->Name(), size, rounds);
  st = boot->Finalize();
  if (!st.ok()) return Fail(rank, "Finalize: " + st.message());
  return 0;
}
