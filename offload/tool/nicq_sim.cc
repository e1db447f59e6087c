// nicq_sim: run an allreduce plan on P simulated NICs and print what the
// model predicts (completion time, messages) and what the plan costs the
// NICs (trigger slots, counters).
//
//   nicq_sim --algo recursive_doubling|nic_tree -n RANKS --bytes N
//            [--type int64|double] [--radix K] [--epochs E]
//            [--config slingshot|infiniband|FILE] [--seed S] [--drop PERMILLE]
//            [--delay PERMILLE:MAX_NS] [--reorder MAX_NS] [--slots N] [--dead RANK]
//            [--dump text|dot] [--dump-rank R] [--per-nic] [--no-check]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/config.h"
#include "offload/tool/sim_driver.h"

using namespace nicq;
using namespace nicq::offload;

namespace {

int Usage(const char* why) {
  std::fprintf(
      stderr,
      "nicq_sim: %s\nusage: nicq_sim --algo recursive_doubling|nic_tree -n RANKS --bytes N\n"
      "  [--type int64|double] [--radix K] [--epochs E] [--config slingshot|infiniband|FILE]\n"
      "  [--seed S] [--drop PERMILLE] [--delay PERMILLE:MAX_NS] [--reorder MAX_NS]\n"
      "  [--slots N] [--dead RANK] [--dump text|dot] [--dump-rank R] [--per-nic] [--no-check]\n",
      why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  SimRunConfig cfg;
  std::size_t bytes = 8;
  int epochs = 1, dump_rank = 0;
  bool per_nic = false;
  std::string model = config::GetString("NICQ_SIM_CONFIG"), dump;  // --config overrides
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--per-nic") {
      per_nic = true;
      continue;
    }
    if (a == "--no-check") {
      cfg.check = false;
      continue;
    }
    if (a == "-h" || a == "--help") return Usage("help");
    if ((v = next()) == nullptr) return Usage(("missing value for " + a).c_str());
    if (a == "--algo")
      cfg.algo = v;
    else if (a == "-n" || a == "--ranks")
      cfg.ranks = std::atoi(v);
    else if (a == "--bytes")
      bytes = std::strtoull(v, nullptr, 10);
    else if (a == "--type") {
      if (!ParseSimType(v, &cfg.type)) return Usage("--type: int64 or double");
    } else if (a == "--radix")
      cfg.radix = std::atoi(v);
    else if (a == "--epochs")
      epochs = std::atoi(v);
    else if (a == "--config")
      model = v;
    else if (a == "--seed")
      cfg.faults.seed = std::strtoull(v, nullptr, 10);
    else if (a == "--drop")
      cfg.faults.drop_permille = static_cast<unsigned>(std::atoi(v));
    else if (a == "--delay") {
      cfg.faults.delay_permille = static_cast<unsigned>(std::atoi(v));
      const char* colon = std::strchr(v, ':');
      cfg.faults.delay_max_ns = colon ? std::strtoull(colon + 1, nullptr, 10) : 1000;
    } else if (a == "--reorder")
      cfg.faults.reorder_max_ns = std::strtoull(v, nullptr, 10);
    else if (a == "--slots")
      cfg.faults.slot_limit = std::strtoull(v, nullptr, 10);
    else if (a == "--dead")
      cfg.faults.dead_nic = std::atoll(v);
    else if (a == "--dump")
      dump = v;
    else if (a == "--dump-rank")
      dump_rank = std::atoi(v);
    else
      return Usage(("unknown option " + a).c_str());
  }
  if (cfg.ranks < 1 || epochs < 1) return Usage("ranks and epochs must be >= 1");
  const std::size_t esize = AtomicTypeSize(cfg.type);
  cfg.count = bytes < esize ? 1 : bytes / esize;
  Status s = fwsim::PresetLogGP(model, &cfg.params);
  if (!s.ok()) s = fwsim::LoadLogGP(model, &cfg.params);
  if (!s.ok()) return Usage(s.message().c_str());

  const auto wall0 = std::chrono::steady_clock::now();
  AllreduceSim sim;
  s = sim.Setup(cfg);
  if (!s.ok()) {
    std::fprintf(stderr, "nicq_sim: setup: %s\n", s.message().c_str());
    return 1;
  }
  if (!dump.empty() && dump_rank >= 0 && dump_rank < cfg.ranks) {
    const TriggerPlan& p = sim.plan(dump_rank);
    std::fputs((dump == "dot" ? p.DumpDot() : p.DumpText()).c_str(), stdout);
  }
  std::printf("nicq_sim: allreduce %s, %d ranks, %zu bytes (%zu x %s), network %s, %s\n",
              cfg.algo.c_str(), cfg.ranks, cfg.count * esize, cfg.count,
              cfg.type == AtomicType::kInt64 ? "int64" : "double", cfg.params.name.c_str(),
              cfg.faults.Any() ? cfg.faults.Describe().c_str() : "no faults");
  bool all_ok = true;
  for (int e = 0; e < epochs; ++e) {
    EpochResult r;
    s = sim.RunEpoch(static_cast<std::uint64_t>(e), &r);
    if (!s.ok()) {
      std::fprintf(stderr, "nicq_sim: %s\n", s.message().c_str());
      return 1;
    }
    std::printf("epoch %d: predicted completion %.3f us, data %s%s\n", e,
                static_cast<double>(r.elapsed) / 1e6,
                !cfg.check  ? "not checked"
                : r.data_ok ? "ok"
                            : "WRONG: ",
                r.data_ok ? "" : r.mismatch.c_str());
    all_ok &= r.data_ok;
  }
  std::uint64_t msgs = 0, max_msgs = 0, retries = 0;
  std::size_t max_slots = 0, max_counters = 0;
  fwsim::World& w = sim.fw();
  for (int r = 0; r < cfg.ranks; ++r) {
    const fwsim::NicStats& st = w.Stats(static_cast<std::uint32_t>(r));
    msgs += st.messages;
    retries += st.retries;
    max_msgs = std::max(max_msgs, st.messages);
    max_slots = std::max(max_slots, st.slots_high_water);
    max_counters = std::max(max_counters, st.counters_allocated);
  }
  if (per_nic) {
    std::printf("%8s %10s %12s %8s %10s %10s %8s %14s\n", "nic", "messages", "bytes", "fired",
                "slots_max", "counters", "errors", "last_done_us");
    for (int r = 0; r < cfg.ranks; ++r) {
      const fwsim::NicStats& st = w.Stats(static_cast<std::uint32_t>(r));
      std::printf("%8d %10llu %12llu %8llu %10zu %10zu %8llu %14.3f\n", r,
                  static_cast<unsigned long long>(st.messages),
                  static_cast<unsigned long long>(st.bytes),
                  static_cast<unsigned long long>(st.fired), st.slots_high_water,
                  st.counters_allocated, static_cast<unsigned long long>(st.errors),
                  static_cast<double>(st.last_completion) / 1e6);
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf(
      "messages: %llu total, %.2f per NIC per epoch (max %llu per NIC over %d epochs), %llu "
      "retries\n",
      static_cast<unsigned long long>(msgs), static_cast<double>(msgs) / cfg.ranks / epochs,
      static_cast<unsigned long long>(max_msgs), epochs, static_cast<unsigned long long>(retries));
  std::printf("trigger slots per NIC: max %zu in use (limit %zu); ops per plan: max %zu\n",
              max_slots, w.SlotLimit(0), sim.max_ops_per_rank());
  std::printf("counters per NIC: max %zu\n", max_counters);
  std::printf("simulated %llu events in %.2f s wall\n",
              static_cast<unsigned long long>(w.EventsProcessed()), wall);
  return all_ok ? 0 : 1;
}
