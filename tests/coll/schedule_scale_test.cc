// Every collective at scale on the schedule simulator (schedule_sim.h):
// 64 and 1,000 ranks in one process, each rank's schedule built by
// coll::Build as at run time, results data-checked on every rank. The
// offloaded allreduce plan at these sizes runs on the NIC simulator
// (offload_tree_sim_test.cc).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "coll/coll.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "mpi.h"
#include "schedule_sim.h"

namespace nicq::coll {
namespace {

using Buf = std::vector<std::vector<int>>;

const dtype::Type* T(int h) {
  return dtype::Lookup(h);
}
// Rank r's item i.
int Val(int r, int i) {
  return (r * 31 + i * 7) % 101;
}
int SumVal(int ranks, int i) {
  int s = 0;
  for (int r = 0; r < ranks; ++r) s += Val(r, i);
  return s;
}
Buf Inputs(int p, int n) {
  Buf b(p, std::vector<int>(n));
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) b[r][i] = Val(r, i);
  return b;
}
// Per-rank counts (0, 1, 2, ...) and their displacements.
std::vector<int> Counts(int p) {
  std::vector<int> c(p);
  for (int r = 0; r < p; ++r) c[r] = r % 3;
  return c;
}
std::vector<int> Displs(const std::vector<int>& c) {
  std::vector<int> d(c.size());
  for (std::size_t i = 1; i < c.size(); ++i) d[i] = d[i - 1] + c[i - 1];
  return d;
}

class ScaleSim : public ::testing::TestWithParam<int> {};

TEST_P(ScaleSim, BarrierBcastReduceAllreduceScan) {
  const int p = GetParam(), n = 5;
  Sim sim(p);
  sim.Run([](int) { return Args{}; });  // barrier (Args' default kind)
  for (const char* algo : {"binomial", "knomial", "scatter_allgather"}) {
    const int root = p / 3;
    Buf buf(p, std::vector<int>(n, -1));
    for (int i = 0; i < n; ++i) buf[root][i] = Val(root, i);
    sim.Run([&](int r) {
      Args a;
      a.kind = Kind::kBcast;
      a.root = root;
      a.sendbuf = a.recvbuf = buf[r].data();
      a.scount = a.rcount = n;
      a.stype = a.rtype = T(MPI_INT);
      a.algo = algo;
      return a;
    });
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < n; ++i) ASSERT_EQ(buf[r][i], Val(root, i)) << algo << " rank " << r;
  }
  Buf in = Inputs(p, n);
  for (Kind k : {Kind::kReduce, Kind::kAllreduce, Kind::kScan, Kind::kExscan})
    for (const char* algo : {"recursive_doubling", "rabenseifner", "ring"}) {
      if (k != Kind::kAllreduce && std::string(algo) != "recursive_doubling") continue;
      Buf out(p, std::vector<int>(n, -1));
      sim.Run([&](int r) {
        Args a;
        a.kind = k;
        a.root = p - 1;
        a.sendbuf = in[r].data();
        a.recvbuf = out[r].data();
        a.scount = a.rcount = n;
        a.stype = a.rtype = T(MPI_INT);
        a.op = MPI_SUM;
        a.algo = algo;
        return a;
      });
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) {
          if (k == Kind::kReduce && r != p - 1) continue;
          if (k == Kind::kExscan && r == 0) continue;
          const int want = k == Kind::kScan     ? SumVal(r + 1, i)
                           : k == Kind::kExscan ? SumVal(r, i)
                                                : SumVal(p, i);
          ASSERT_EQ(out[r][i], want) << KindName(k) << " " << algo << " rank " << r;
        }
    }
}

TEST_P(ScaleSim, GatherScatterAndV) {
  const int p = GetParam(), n = 2;
  Sim sim(p);
  Buf in = Inputs(p, n * p);
  Buf all(p, std::vector<int>(n * p, -1)), mine(p, std::vector<int>(n, -1));
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kGather;
    a.root = 1;
    a.sendbuf = in[r].data();
    a.recvbuf = all[r].data();
    a.scount = a.rcount = n;
    a.stype = a.rtype = T(MPI_INT);
    return a;
  });
  for (int k = 0; k < p; ++k)
    for (int i = 0; i < n; ++i) ASSERT_EQ(all[1][k * n + i], Val(k, i)) << "gather";
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kScatter;
    a.root = 2;
    a.sendbuf = in[r].data();
    a.recvbuf = mine[r].data();
    a.scount = a.rcount = n;
    a.stype = a.rtype = T(MPI_INT);
    return a;
  });
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < n; ++i) ASSERT_EQ(mine[r][i], Val(2, r * n + i)) << "scatter";
  const std::vector<int> c = Counts(p), d = Displs(c);
  const int total = d[p - 1] + c[p - 1];
  Buf vin = Inputs(p, total), vout(p, std::vector<int>(total + 1, -1));
  for (Kind k : {Kind::kGatherv, Kind::kAllgatherv}) {
    sim.Run([&](int r) {
      Args a;
      a.kind = k;
      a.root = 0;
      a.sendbuf = vin[r].data();
      a.recvbuf = vout[r].data();
      a.scount = c[r];
      a.stype = a.rtype = T(MPI_INT);
      a.rcounts = c.data();
      a.rdispls = d.data();
      return a;
    });
    for (int r = 0; r < p; ++r) {
      if (k == Kind::kGatherv && r != 0) continue;
      for (int s = 0; s < p; ++s)
        for (int i = 0; i < c[s]; ++i) ASSERT_EQ(vout[r][d[s] + i], Val(s, i)) << KindName(k);
    }
  }
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kScatterv;
    a.root = p - 1;
    a.sendbuf = vin[r].data();
    a.recvbuf = vout[r].data();
    a.rcount = c[r];
    a.stype = a.rtype = T(MPI_INT);
    a.scounts = c.data();
    a.sdispls = d.data();
    return a;
  });
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < c[r]; ++i) ASSERT_EQ(vout[r][i], Val(p - 1, d[r] + i)) << "scatterv";
}

TEST_P(ScaleSim, AllgatherAlltoallReduceScatter) {
  const int p = GetParam(), n = 1;
  Sim sim(p);
  Buf in = Inputs(p, n * p), out(p, std::vector<int>(n * p, -1));
  for (const char* algo : {"ring", "recursive_doubling"}) {
    sim.Run([&](int r) {
      Args a;
      a.kind = Kind::kAllgather;
      a.sendbuf = in[r].data();
      a.recvbuf = out[r].data();
      a.scount = a.rcount = n;
      a.stype = a.rtype = T(MPI_INT);
      a.algo = algo;
      return a;
    });
    for (int r = 0; r < p; ++r)
      for (int s = 0; s < p; ++s) ASSERT_EQ(out[r][s], Val(s, 0)) << "allgather " << algo;
  }
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kAlltoall;
    a.sendbuf = in[r].data();
    a.recvbuf = out[r].data();
    a.scount = a.rcount = n;
    a.stype = a.rtype = T(MPI_INT);
    return a;
  });
  for (int r = 0; r < p; ++r)
    for (int s = 0; s < p; ++s) ASSERT_EQ(out[r][s], Val(s, r)) << "alltoall";
  // alltoallv/w: rank r sends (r + j) % 2 items to rank j, from offset 2j.
  std::vector<std::vector<int>> sc(p, std::vector<int>(p)), sd = sc, rc = sc, rd = sc, sdb = sc,
                                                            rdb = sc;
  for (int r = 0; r < p; ++r)
    for (int j = 0; j < p; ++j) {
      sc[r][j] = (r + j) % 2;
      sd[r][j] = 2 * j;
      rc[r][j] = (j + r) % 2;
      rd[r][j] = 2 * j;
      sdb[r][j] = sd[r][j] * int(sizeof(int));
      rdb[r][j] = rd[r][j] * int(sizeof(int));
    }
  Buf win = Inputs(p, 2 * p);
  std::vector<const dtype::Type*> types(p, T(MPI_INT));
  for (Kind k : {Kind::kAlltoallv, Kind::kAlltoallw}) {
    Buf wout(p, std::vector<int>(2 * p, -1));
    const bool w = k == Kind::kAlltoallw;
    sim.Run([&](int r) {
      Args a;
      a.kind = k;
      a.sendbuf = win[r].data();
      a.recvbuf = wout[r].data();
      a.scounts = sc[r].data();
      a.rcounts = rc[r].data();
      a.sdispls = w ? sdb[r].data() : sd[r].data();
      a.rdispls = w ? rdb[r].data() : rd[r].data();
      a.stype = a.rtype = T(MPI_INT);
      if (w) a.stypes = a.rtypes = types.data();
      return a;
    });
    for (int r = 0; r < p; ++r)
      for (int j = 0; j < p; ++j)
        if (rc[r][j]) {
          ASSERT_EQ(wout[r][2 * j], Val(j, 2 * r)) << KindName(k) << " rank " << r;
        }
  }
  const std::vector<int> c = Counts(p), d = Displs(c);
  const int total = d[p - 1] + c[p - 1];
  Buf rin = Inputs(p, total), rout(p, std::vector<int>(3, -1));
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kReduceScatter;
    a.sendbuf = rin[r].data();
    a.recvbuf = rout[r].data();
    a.rcounts = c.data();
    a.stype = a.rtype = T(MPI_INT);
    a.op = MPI_SUM;
    return a;
  });
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < c[r]; ++i) ASSERT_EQ(rout[r][i], SumVal(p, d[r] + i)) << "reduce_scatter";
  sim.Run([&](int r) {
    Args a;
    a.kind = Kind::kReduceScatterBlock;
    a.sendbuf = in[r].data();
    a.recvbuf = rout[r].data();
    a.rcount = 1;
    a.stype = a.rtype = T(MPI_INT);
    a.op = MPI_SUM;
    return a;
  });
  for (int r = 0; r < p; ++r) ASSERT_EQ(rout[r][0], SumVal(p, r)) << "reduce_scatter_block";
}

INSTANTIATE_TEST_SUITE_P(Ranks, ScaleSim, ::testing::Values(64, 1000));

}  // namespace
}  // namespace nicq::coll
