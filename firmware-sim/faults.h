// Fault injection for the simulator: every decision comes from one seeded
// generator consumed in event order, so a seed reproduces a run exactly.
// Print FaultPlan::Describe() when a test fails to make it reproducible.
#pragma once

#include <cstdint>
#include <string>

namespace nicq::fwsim {

struct FaultPlan {
  std::uint64_t seed = 1;
  // Each one-sided message (put, atomic, remote counter add) is delayed by
  // up to delay_max_ns with this probability (per mille).
  unsigned delay_permille = 0;
  std::uint64_t delay_max_ns = 0;
  // Reorder across counters: one-sided messages get a random jitter of up to
  // reorder_max_ns so that arrivals to different counters interleave.
  // Tagged sends are never reordered (matching needs per-pair order).
  std::uint64_t reorder_max_ns = 0;
  // Each transmission of a one-sided message is lost with this probability
  // (per mille) and retransmitted after LogGP::retry_timeout; after
  // LogGP::max_retries losses the op fails (error on its completion counter).
  unsigned drop_permille = 0;
  // Trigger slots per NIC (0: LogGP::trigger_slots): exhaust them on purpose.
  std::size_t slot_limit = 0;
  // A NIC that is dead from the start: it fires nothing, and messages to it
  // are lost, so the senders' ops fail after their retries.
  std::int64_t dead_nic = -1;

  bool Any() const {
    return delay_permille || reorder_max_ns || drop_permille || slot_limit || dead_nic >= 0;
  }
  std::string Describe() const {
    return "FaultPlan{seed=" + std::to_string(seed) + " delay=" + std::to_string(delay_permille) +
           "/1000 up to " + std::to_string(delay_max_ns) +
           "ns reorder<=" + std::to_string(reorder_max_ns) +
           "ns drop=" + std::to_string(drop_permille) +
           "/1000 slots=" + std::to_string(slot_limit) + " dead_nic=" + std::to_string(dead_nic) +
           "}";
  }
};

// splitmix64: tiny, fast, and identical on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool Permille(unsigned p) { return p != 0 && Below(1000) < p; }

 private:
  std::uint64_t state_;
};

}  // namespace nicq::fwsim
