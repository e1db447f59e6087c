// The fixture and helpers shared by the datatype API tests (type_*_test.cc):
// MPI over the fake runtime, errors returned, derived types counted for leaks.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dtype/datatype.h"
#include "mpi.h"

namespace nicq_type_test {

inline int ErrorClass(int code) {
  int cls = -1;
  EXPECT_EQ(MPI_Error_class(code, &cls), MPI_SUCCESS);
  return cls;
}

inline std::string ErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  EXPECT_EQ(MPI_Error_string(code, buf, &len), MPI_SUCCESS);
  return buf;
}

class ApiType : public ::testing::Test {
 protected:
  void SetUp() override {
    int init = 0, fini = 0;
    MPI_Finalized(&fini);
    if (fini) GTEST_SKIP() << "MPI already finalized in this process";
    MPI_Initialized(&init);
    if (!init) {
      ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
    }
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    live_ = nicq::dtype::LiveDerivedTypes();
  }
  void TearDown() override { EXPECT_EQ(nicq::dtype::LiveDerivedTypes(), live_) << "leaked types"; }

  // The ints that one item of `type` selects from `src`, in type-map order.
  static std::vector<int> PackInts(MPI_Datatype type, const int* src) {
    int size = 0, pos = 0;
    EXPECT_EQ(MPI_Pack_size(1, type, MPI_COMM_WORLD, &size), MPI_SUCCESS);
    std::vector<int> out(static_cast<std::size_t>(size) / sizeof(int));
    EXPECT_EQ(MPI_Pack(src, 1, type, out.data(), size, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(pos, size);
    return out;
  }
  static void Extent(MPI_Datatype t, MPI_Aint* lb, MPI_Aint* ext, MPI_Aint* tlb, MPI_Aint* text) {
    ASSERT_EQ(MPI_Type_get_extent(t, lb, ext), MPI_SUCCESS);
    ASSERT_EQ(MPI_Type_get_true_extent(t, tlb, text), MPI_SUCCESS);
  }

  int live_ = 0;
};

}  // namespace nicq_type_test
