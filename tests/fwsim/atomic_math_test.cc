#include "firmware-sim/atomic_math.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace nicq::fwsim {
namespace {

TEST(FwsimAlu, AppliesOpsElementWise) {
  std::int32_t d[3] = {5, -2, 7};
  const std::int32_t s[3] = {1, 4, -9};
  AluApply(AluOp::kSum, AluType::kInt32, d, s, sizeof(d));
  EXPECT_EQ(d[0], 6);
  EXPECT_EQ(d[1], 2);
  EXPECT_EQ(d[2], -2);
  AluApply(AluOp::kMin, AluType::kInt32, d, s, sizeof(d));
  EXPECT_EQ(d[2], -9);
  double x[2] = {1.5, 2.0};
  const double y[2] = {2.0, 8.0};
  AluApply(AluOp::kProd, AluType::kDouble, x, y, sizeof(x));
  EXPECT_EQ(x[0], 3.0);
  EXPECT_EQ(x[1], 16.0);
  AluApply(AluOp::kMax, AluType::kDouble, x, y, sizeof(x));
  EXPECT_EQ(x[1], 16.0);
  std::uint8_t b = 0xf0;
  const std::uint8_t m = 0x3c;
  AluApply(AluOp::kBxor, AluType::kUint8, &b, &m, 1);
  EXPECT_EQ(b, 0xcc);
}

TEST(FwsimAlu, NoBitwiseOpsOnFloats) {
  EXPECT_FALSE(AluSupports(AluOp::kBand, AluType::kDouble));
  EXPECT_TRUE(AluSupports(AluOp::kSum, AluType::kFloat));
  EXPECT_TRUE(AluSupports(AluOp::kBor, AluType::kUint64));
  EXPECT_EQ(AluTypeSize(AluType::kInt16), 2u);
}

}  // namespace
}  // namespace nicq::fwsim
