// Key layouts of the ofi backends (providers/ofi_common/mr_key.h): keys must
// fit the provider's client-key width (cxi: 32 bits, fi_cxi(7) "Memory
// registration modes") and doorbell and user keys must never collide.
#include "providers/ofi_common/mr_key.h"

#include <gtest/gtest.h>

#include <set>

namespace nicq::ofi {
namespace {

TEST(MrKeyLayout, NarrowKeysFitThirtyTwoBitsAndNeverCollide) {
  const MrKeyLayout keys(4);
  ASSERT_TRUE(keys.narrow());
  std::set<std::uint64_t> seen;
  for (offload::CounterId id : {0u, 1u, 4095u, 0x7fffffffu}) {
    const std::uint64_t k = keys.DoorbellKey(id);
    EXPECT_LE(k, 0xffffffffu) << "doorbell key of counter " << id;
    EXPECT_TRUE(seen.insert(k).second);
  }
  for (std::uint32_t seq : {1u, 2u, 0x7ffffffeu}) {
    const std::uint64_t k = keys.UserKey(7, seq);
    EXPECT_LE(k, 0x7fffffffu) << "user key " << seq;
    EXPECT_TRUE(seen.insert(k).second) << "user key " << seq << " collides with a doorbell";
    // Narrow keys carry no arrival counter: ops must name it.
    EXPECT_EQ(keys.ArrivalCounterOfKey(k), offload::kNoCounter);
  }
  EXPECT_EQ(keys.MaxCounters(), std::uint64_t{1} << 31);
}

TEST(MrKeyLayout, WideKeysCarryTheArrivalCounter) {
  const MrKeyLayout keys(8);
  ASSERT_FALSE(keys.narrow());
  EXPECT_EQ(keys.ArrivalCounterOfKey(keys.UserKey(42, 9)), 42u);
  EXPECT_EQ(keys.ArrivalCounterOfKey(keys.UserKey(offload::kNoCounter, 9)), offload::kNoCounter);
  EXPECT_EQ(keys.ArrivalCounterOfKey(keys.DoorbellKey(42)), offload::kNoCounter);
  EXPECT_NE(keys.DoorbellKey(3), keys.UserKey(3, 3));
  // A provider that does not report its key size gets the wide layout.
  EXPECT_FALSE(MrKeyLayout(0).narrow());
}

}  // namespace
}  // namespace nicq::ofi
