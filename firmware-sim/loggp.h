// LogGP network model of the simulated fabric, and the arithmetic the
// simulator uses for every message (kept here, pure, so tests can check it).
//
// Times are integer picoseconds so that event ordering never depends on
// floating-point rounding: same parameters, same seed, same trace.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace nicq::fwsim {

using Time = std::uint64_t;  // picoseconds
inline constexpr Time kPsPerNs = 1000;

struct LogGP {
  std::string name = "default";
  Time L = 1000 * kPsPerNs;          // wire latency between any two NICs
  Time o = 100 * kPsPerNs;           // NIC processing overhead per message, each side
  Time g = 50 * kPsPerNs;            // minimum gap between two injections of one NIC
  Time G = 100;                      // per-byte gap (ps/byte): 100 ps/B = 10 GB/s
  Time nic_op = 20 * kPsPerNs;       // fire latency of a triggered op (trigger list -> execute)
  Time host_op = 500 * kPsPerNs;     // host step: wake-up and call overhead
  Time host_byte = 100;              // host step cost per byte (local reduce/copy), ps/byte
  std::size_t trigger_slots = 4096;  // trigger-list entries per NIC
  std::size_t max_retries = 4;       // retransmissions of a dropped packet before an error
  Time retry_timeout = 20000 * kPsPerNs;
  // Counter width: sockets' counters are signed 32-bit (31 usable bits).
  // An increment past 2^bits - 1 is recorded as an error on the counter
  // rather than wrapping silently, so a plan that forgets to rebase fails loudly.
  unsigned counter_bits = 64;
  std::uint64_t CounterMax() const {
    return counter_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << counter_bits) - 1;
  }
};

// Parses "key = value" lines ('#' comments). Keys: name, L_ns, o_ns, g_ns,
// G_ps_per_byte, nic_op_ns, host_op_ns, host_byte_ps, trigger_slots,
// max_retries, retry_timeout_ns, counter_bits. Unknown keys are an error naming the line.
Status ParseLogGP(const std::string& text, LogGP* out);
Status LoadLogGP(const std::string& path, LogGP* out);
// Built-in presets matching firmware-sim/configs/{slingshot,infiniband}.conf.
Status PresetLogGP(const std::string& name, LogGP* out);

// Bytes occupy the wire for (bytes - 1) * G after the first (LogGP's k-1).
inline Time WireTime(const LogGP& p, std::uint64_t bytes) {
  return bytes > 1 ? (bytes - 1) * p.G : 0;
}
// Time from injection start until the last byte has arrived at the target NIC.
inline Time ArrivalDelay(const LogGP& p, std::uint64_t bytes) {
  return p.o + WireTime(p, bytes) + p.L;
}
// How long a message keeps the sender's injection port busy.
inline Time InjectionBusy(const LogGP& p, std::uint64_t bytes) {
  const Time w = WireTime(p, bytes);
  return w > p.g ? w : p.g;
}
// One-way time of a k-byte message between idle NICs: o + (k-1)G + L + o.
inline Time OneWay(const LogGP& p, std::uint64_t bytes) {
  return ArrivalDelay(p, bytes) + p.o;
}

}  // namespace nicq::fwsim
