// The one-process simulator of collective schedules shared by the
// schedule tests: each rank's Schedule is built by coll::Build exactly as
// at run time, then Simulate plays all of them against each other
// (per-pair FIFO channels, receives matched in posting order, sizes
// checked), running the local steps with the real kernels. Catches
// deadlocks, size mismatches and wrong data without any fabric.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "coll/coll.h"
#include "coll/node_layout.h"
#include "coll/schedule.h"

namespace nicq::coll {

// Plays the schedules; returns "" or what went wrong.
inline std::string Simulate(std::vector<Schedule*>& s) {
  const int p = static_cast<int>(s.size());
  struct Recv {
    void* dst;
    std::size_t bytes;
    int src;
    bool done;
  };
  std::vector<std::size_t> phase(p, 0);
  std::vector<bool> entered(p, false);
  std::vector<std::vector<Recv>> recvs(p);
  // Channel src -> dst, keyed src * p + dst (hashed: 1,000 ranks make a
  // million possible pairs, few of them used).
  std::unordered_map<std::uint64_t, std::deque<std::vector<char>>> chan;
  auto key = [p](int src, int dst) { return std::uint64_t(src) * std::uint64_t(p) + dst; };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto& ends = s[r]->phase_ends();
      const auto& steps = s[r]->step_list();
      if (phase[r] >= ends.size()) continue;
      if (!entered[r]) {
        const std::size_t from = phase[r] ? ends[phase[r] - 1] : 0;
        for (std::size_t i = from; i < ends[phase[r]]; ++i) {
          const Step& st = steps[i];
          if (st.kind == Step::kSend) {
            if (st.peer < 0 || st.peer >= p || st.peer == r) return "bad send peer";
            const char* b = static_cast<const char*>(st.src);
            chan[key(r, st.peer)].emplace_back(b, b + st.bytes);
          } else if (st.kind == Step::kRecv) {
            if (st.peer < 0 || st.peer >= p || st.peer == r) return "bad recv peer";
            recvs[r].push_back({st.dst, st.bytes, st.peer, false});
          } else {
            Status x = s[r]->RunLocal(st);
            if (!x.ok()) return x.message();
          }
        }
        entered[r] = true;
        progress = true;
      }
      bool all = true;
      for (Recv& rv : recvs[r]) {
        if (rv.done) continue;
        auto& q = chan[key(rv.src, r)];
        if (q.empty()) {
          all = false;
          continue;
        }
        if (q.front().size() != rv.bytes)
          return "rank " + std::to_string(r) + " expects " + std::to_string(rv.bytes) +
                 " bytes from " + std::to_string(rv.src) + ", message has " +
                 std::to_string(q.front().size());
        if (rv.bytes) std::memcpy(rv.dst, q.front().data(), rv.bytes);
        q.pop_front();
        rv.done = true;
        progress = true;
      }
      if (all) {
        recvs[r].clear();
        ++phase[r];
        entered[r] = false;
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r)
    if (phase[r] < s[r]->phase_ends().size())
      return "deadlock: rank " + std::to_string(r) + " stuck in phase " + std::to_string(phase[r]);
  for (auto& [k, q] : chan)
    if (!q.empty())
      return "unreceived message " + std::to_string(k / p) + "->" + std::to_string(k % p);
  return "";
}

class Sim {
 public:
  explicit Sim(int p) : p_(p), comms_(p), scheds_(p) {
    for (int r = 0; r < p; ++r) {
      comms_[r].rank = r;
      comms_[r].size = p;
      for (int i = 0; i < p; ++i) comms_[r].world_ranks.push_back(i);
      scheds_[r] = std::make_unique<Schedule>();
    }
  }
  // Places comm rank r on node node_of_rank[r] (hierarchical schedules).
  void SetNodes(const std::vector<int>& node_of_rank) {
    for (Comm& c : comms_) SetNodeLayout(&c, node_of_rank);
  }
  // Builds every rank's schedule from make(rank) and simulates.
  // algorithms: if given, each rank's Schedule::algorithm.
  void Run(const std::function<Args(int)>& make, std::vector<std::string>* algorithms = nullptr) {
    std::vector<Schedule*> s;
    for (int r = 0; r < p_; ++r) {
      Args a = make(r);
      a.comm = &comms_[r];
      scheds_[r]->Reset();
      Status st = Build(a, scheds_[r].get());
      ASSERT_TRUE(st.ok()) << st.message();
      if (algorithms) (*algorithms)[std::size_t(r)] = scheds_[r]->algorithm;
      scheds_[r]->EndPhase();
      s.push_back(scheds_[r].get());
    }
    ASSERT_EQ(Simulate(s), "") << "p=" << p_;
  }

 private:
  int p_;
  std::vector<Comm> comms_;
  std::vector<std::unique_ptr<Schedule>> scheds_;
};

}  // namespace nicq::coll
