// The collective algorithms on 1..17 ranks in one process, played by the
// schedule simulator (schedule_sim.h): every algorithm and root.
#include "schedule_sim.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/coll.h"
#include "dtype/datatype.h"
#include "dtype/reduce.h"
#include "mpi.h"

namespace nicq::coll {
namespace {

struct Affine {
  unsigned a, b;
};
void AffineOp(void* in, void* inout, int* len, int*) {
  auto* x = static_cast<Affine*>(in);
  auto* y = static_cast<Affine*>(inout);
  for (int i = 0; i < *len; ++i) y[i] = {x[i].a * y[i].a, x[i].b * y[i].a + y[i].b};
}
Affine Aff(int r, int i) {
  return {2u * r + 3u + unsigned(i % 5), unsigned(r + i)};
}
Affine Fold(int from, int to, int i) {
  Affine acc{1, 0};
  for (int r = from; r < to; ++r) {
    Affine f = Aff(r, i);
    acc = {acc.a * f.a, acc.b * f.a + f.b};
  }
  return acc;
}
int Val(int r, int i) {
  return (r * 31 + i * 7) % 101;
}

const dtype::Type* T(int h) {
  return dtype::Lookup(h);
}
const int kSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17};

int AffineOpHandle() {
  static int h = [] {
    int out = 0;
    EXPECT_TRUE(dtype::OpCreate(&AffineOp, false, &out).ok());
    return out;
  }();
  return h;
}

TEST(ScheduleSim, AllreduceEveryAlgorithm) {
  for (int p : kSizes)
    for (const char* algo : {"recursive_doubling", "rabenseifner", "ring"})
      for (int n : {1, 7, 40}) {
        Sim sim(p);
        std::vector<std::vector<int>> in(p, std::vector<int>(n)), out(p, std::vector<int>(n, -1));
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < n; ++i) in[r][i] = Val(r, i);
        sim.Run([&](int r) {
          Args a;
          a.kind = Kind::kAllreduce;
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
            int sum = 0;
            for (int k = 0; k < p; ++k) sum += Val(k, i);
            ASSERT_EQ(out[r][i], sum) << algo << " p=" << p << " n=" << n << " r=" << r;
          }
        // Non-commutative: algorithms that cannot keep rank order fall back.
        std::vector<std::vector<Affine>> fa(p, std::vector<Affine>(n)), fo = fa;
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < n; ++i) fa[r][i] = Aff(r, i);
        sim.Run([&](int r) {
          Args a;
          a.kind = Kind::kAllreduce;
          a.sendbuf = fa[r].data();
          a.recvbuf = fo[r].data();
          a.scount = a.rcount = n;
          a.stype = a.rtype = T(MPI_2INT);
          a.op = AffineOpHandle();
          a.algo = algo;
          return a;
        });
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < n; ++i) {
            Affine x = Fold(0, p, i);
            ASSERT_TRUE(fo[r][i].a == x.a && fo[r][i].b == x.b) << algo << " p=" << p;
          }
      }
}

TEST(ScheduleSim, BcastEveryAlgorithmAndRoot) {
  for (int p : kSizes)
    for (const char* algo : {"binomial", "knomial", "scatter_allgather"})
      for (int root = 0; root < p; ++root)
        for (int n : {1, 13, 100}) {
          Sim sim(p);
          std::vector<std::vector<int>> buf(p, std::vector<int>(n, -1));
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
            for (int i = 0; i < n; ++i)
              ASSERT_EQ(buf[r][i], Val(root, i)) << algo << " p=" << p << " root=" << root;
        }
}

TEST(ScheduleSim, RootedReduceGatherScatter) {
  for (int p : kSizes)
    for (int root = 0; root < p; ++root) {
      const int n = 3;
      Sim sim(p);
      std::vector<std::vector<Affine>> fa(p, std::vector<Affine>(n)), fo = fa;
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) fa[r][i] = Aff(r, i);
      sim.Run([&](int r) {
        Args a;
        a.kind = Kind::kReduce;
        a.root = root;
        a.sendbuf = fa[r].data();
        a.recvbuf = fo[r].data();
        a.scount = a.rcount = n;
        a.stype = a.rtype = T(MPI_2INT);
        a.op = AffineOpHandle();
        return a;
      });
      for (int i = 0; i < n; ++i) {
        Affine x = Fold(0, p, i);
        ASSERT_TRUE(fo[root][i].a == x.a && fo[root][i].b == x.b) << "reduce p=" << p;
      }
      std::vector<std::vector<int>> mine(p, std::vector<int>(n)),
          all(p, std::vector<int>(n * p, -1));
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) mine[r][i] = Val(r, i);
      sim.Run([&](int r) {
        Args a;
        a.kind = Kind::kGather;
        a.root = root;
        a.sendbuf = mine[r].data();
        a.recvbuf = all[r].data();
        a.scount = a.rcount = n;
        a.stype = a.rtype = T(MPI_INT);
        return a;
      });
      for (int k = 0; k < p; ++k)
        for (int i = 0; i < n; ++i) ASSERT_EQ(all[root][k * n + i], Val(k, i)) << "gather p=" << p;
      std::vector<std::vector<int>> got(p, std::vector<int>(n, -1));
      sim.Run([&](int r) {
        Args a;
        a.kind = Kind::kScatter;
        a.root = root;
        a.sendbuf = all[r].data();
        a.recvbuf = got[r].data();
        a.scount = a.rcount = n;
        a.stype = a.rtype = T(MPI_INT);
        return a;
      });
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) ASSERT_EQ(got[r][i], Val(r, i)) << "scatter p=" << p;
    }
}

TEST(ScheduleSim, AllgatherAlltoallScanReduceScatter) {
  for (int p : kSizes) {
    const int n = 5;
    Sim sim(p);
    std::vector<std::vector<int>> in(p, std::vector<int>(n * p)),
        out(p, std::vector<int>(n * p, -1));
    for (int r = 0; r < p; ++r)
      for (int i = 0; i < n * p; ++i) in[r][i] = Val(r * p + i / n, i % n);
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
        for (int i = 0; i < n * p; ++i)
          ASSERT_EQ(out[r][i], in[i / n][i % n]) << algo << " p=" << p;
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
      for (int s = 0; s < p; ++s)
        for (int i = 0; i < n; ++i) ASSERT_EQ(out[r][s * n + i], in[s][r * n + i]) << "alltoall";
    for (Kind k : {Kind::kScan, Kind::kExscan}) {
      std::vector<std::vector<Affine>> fa(p, std::vector<Affine>(n)), fo = fa;
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) fa[r][i] = Aff(r, i);
      sim.Run([&](int r) {
        Args a;
        a.kind = k;
        a.sendbuf = fa[r].data();
        a.recvbuf = fo[r].data();
        a.scount = a.rcount = n;
        a.stype = a.rtype = T(MPI_2INT);
        a.op = AffineOpHandle();
        return a;
      });
      for (int r = k == Kind::kExscan ? 1 : 0; r < p; ++r)
        for (int i = 0; i < n; ++i) {
          Affine x = Fold(0, k == Kind::kExscan ? r : r + 1, i);
          ASSERT_TRUE(fo[r][i].a == x.a && fo[r][i].b == x.b) << "scan p=" << p << " r=" << r;
        }
    }
    std::vector<int> counts(p);
    for (int r = 0; r < p; ++r) counts[r] = r % 3;
    sim.Run([&](int r) {
      Args a;
      a.kind = Kind::kReduceScatter;
      a.sendbuf = in[r].data();
      a.recvbuf = out[r].data();
      a.rcounts = counts.data();
      a.stype = a.rtype = T(MPI_INT);
      a.op = MPI_SUM;
      return a;
    });
    for (int r = 0, off = 0; r < p; off += counts[r], ++r)
      for (int i = 0; i < counts[r]; ++i) {
        int sum = 0;
        for (int k = 0; k < p; ++k) sum += in[k][off + i];
        ASSERT_EQ(out[r][i], sum) << "reduce_scatter p=" << p;
      }
    sim.Run([&](int r) {
      Args a;
      a.kind = Kind::kBarrier;
      return a;
    });
  }
}

TEST(ScheduleSim, BruckAllgather) {
  for (int p : kSizes) {
    std::vector<Schedule> s(p);
    std::vector<std::vector<long>> out(p, std::vector<long>(p, -1));
    std::vector<long> mine(p);
    std::vector<Schedule*> ptrs;
    for (int r = 0; r < p; ++r) {
      mine[r] = 1000 + r;
      BuildAllgatherBruck(s[r], r, p, &mine[r], reinterpret_cast<char*>(out[r].data()),
                          sizeof(long));
      ptrs.push_back(&s[r]);
    }
    ASSERT_EQ(Simulate(ptrs), "");
    for (int r = 0; r < p; ++r)
      for (int k = 0; k < p; ++k) ASSERT_EQ(out[r][k], 1000 + k) << "p=" << p;
  }
}

}  // namespace
}  // namespace nicq::coll
