// Hierarchical schedules (coll/algo_hier.cc) in the one-process simulator:
// every node layout of a few shapes (blocks, round robin, one big node and
// single ranks), every root; the schedules must pick the hierarchy where it
// pays, deliver the right data and never deadlock.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/coll.h"
#include "coll/node_layout.h"
#include "dtype/datatype.h"
#include "mpi.h"
#include "schedule_sim.h"

namespace nicq::coll {
namespace {

const dtype::Type* T(int h) {
  return dtype::Lookup(h);
}
int Val(int r, int i) {
  return (r + 1) * 1000 + i * 7;
}

// Named node layouts for p ranks.
std::vector<std::pair<std::string, std::vector<int>>> Layouts(int p) {
  std::vector<std::pair<std::string, std::vector<int>>> out;
  std::vector<int> blocks2(p), blocks3(p), rr(p), big(p);
  for (int r = 0; r < p; ++r) {
    blocks2[r] = r / 2;
    blocks3[r] = r / 3;
    rr[r] = r % 2;
    big[r] = r < p / 2 + 1 ? 0 : r;  // one node of half the ranks, the rest alone
  }
  out.push_back({"blocks of 2", blocks2});
  out.push_back({"blocks of 3", blocks3});
  out.push_back({"round robin over 2", rr});
  out.push_back({"one big node", big});
  return out;
}

// The algorithm a layout must get: the hierarchy where more than one node
// is used and some node holds two ranks.
std::string Expected(const std::vector<int>& nodes, const char* flat) {
  std::vector<int> count(nodes.size() + 1, 0);
  int distinct = 0;
  bool shared = false;
  for (int id : nodes) {
    if (count[std::size_t(id)]++ == 0) ++distinct;
    shared |= count[std::size_t(id)] > 1;
  }
  return distinct > 1 && shared && nodes.size() > 2 ? "hierarchical" : flat;
}

class Hier : public ::testing::TestWithParam<int> {};

TEST_P(Hier, AllreducePicksTheHierarchyAndSumsRight) {
  const int p = GetParam();
  for (const auto& [name, nodes] : Layouts(p))
    for (int n : {1, 5, 20000}) {  // 20000 ints: the leaders' bandwidth algorithms
      Sim sim(p);
      sim.SetNodes(nodes);
      std::vector<std::vector<int>> in(p, std::vector<int>(n)), out(p, std::vector<int>(n, -1));
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) in[r][i] = Val(r, i);
      std::vector<std::string> algos(p);
      sim.Run(
          [&](int r) {
            Args a;
            a.kind = Kind::kAllreduce;
            a.sendbuf = in[r].data();
            a.recvbuf = out[r].data();
            a.scount = a.rcount = n;
            a.stype = a.rtype = T(MPI_INT);
            a.op = MPI_SUM;
            return a;
          },
          &algos);
      for (int r = 0; r < p; ++r) {
        ASSERT_EQ(algos[r] == std::string("hierarchical"), Expected(nodes, "flat") != "flat")
            << name << " p=" << p << ": " << algos[r];
        for (int i = 0; i < n; ++i) {
          int sum = 0;
          for (int k = 0; k < p; ++k) sum += Val(k, i);
          ASSERT_EQ(out[r][i], sum) << name << " p=" << p << " n=" << n << " r=" << r << " i=" << i;
        }
      }
    }
}

TEST_P(Hier, BcastFromEveryRoot) {
  const int p = GetParam();
  for (const auto& [name, nodes] : Layouts(p))
    for (int root = 0; root < p; ++root)
      for (int n : {3, 70000}) {  // 70000 ints: scatter+allgather inside the groups
        Sim sim(p);
        sim.SetNodes(nodes);
        std::vector<std::vector<int>> buf(p, std::vector<int>(n, -1));
        for (int i = 0; i < n; ++i) buf[root][i] = Val(root, i);
        std::vector<std::string> algos(p);
        sim.Run(
            [&](int r) {
              Args a;
              a.kind = Kind::kBcast;
              a.root = root;
              a.sendbuf = a.recvbuf = buf[r].data();
              a.scount = a.rcount = n;
              a.stype = a.rtype = T(MPI_INT);
              return a;
            },
            &algos);
        for (int r = 0; r < p; ++r) {
          ASSERT_NE(algos[r] == std::string("hierarchical"), Expected(nodes, "flat") == "flat");
          for (int i = 0; i < n; ++i)
            ASSERT_EQ(buf[r][i], Val(root, i))
                << name << " p=" << p << " root=" << root << " r=" << r << " i=" << i;
        }
      }
}

TEST_P(Hier, BarrierCompletes) {
  const int p = GetParam();
  for (const auto& [name, nodes] : Layouts(p)) {
    Sim sim(p);
    sim.SetNodes(nodes);
    std::vector<std::string> algos(p);
    sim.Run(
        [&](int) {
          Args a;
          a.kind = Kind::kBarrier;
          return a;
        },
        &algos);
    for (int r = 0; r < p; ++r) ASSERT_EQ(algos[r], Expected(nodes, "dissemination")) << name;
  }
}

// One node, or every rank on a node of its own: nothing to gain, the flat
// algorithms stay.
TEST(HierSelection, FlatWhereNoNodeIsShared) {
  for (const std::vector<int>& nodes :
       {std::vector<int>{0, 0, 0, 0}, std::vector<int>{0, 1, 2, 3}}) {
    Sim sim(4);
    sim.SetNodes(nodes);
    std::vector<int> in(4, 1), out(4 * 4);
    std::vector<std::string> algos(4);
    sim.Run(
        [&](int r) {
          Args a;
          a.kind = Kind::kAllreduce;
          a.sendbuf = &in[r];
          a.recvbuf = &out[r * 4];
          a.scount = a.rcount = 1;
          a.stype = a.rtype = T(MPI_INT);
          a.op = MPI_SUM;
          return a;
        },
        &algos);
    for (const std::string& algo : algos) EXPECT_NE(algo, "hierarchical");
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, Hier, ::testing::Values(3, 4, 5, 7, 8, 13));

}  // namespace
}  // namespace nicq::coll
