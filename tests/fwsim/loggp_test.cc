// LogGP arithmetic, config parsing, and that the presets match the shipped
// config files.
#include "firmware-sim/loggp.h"

#include <gtest/gtest.h>

namespace nicq::fwsim {
namespace {

LogGP Simple() {
  LogGP p;
  p.L = 1000 * kPsPerNs;
  p.o = 100 * kPsPerNs;
  p.g = 50 * kPsPerNs;
  p.G = 200;  // ps per byte
  return p;
}

TEST(LogGP, MessageTimesFollowTheModel) {
  const LogGP p = Simple();
  EXPECT_EQ(WireTime(p, 0), 0u);
  EXPECT_EQ(WireTime(p, 1), 0u);
  EXPECT_EQ(WireTime(p, 1001), 1000u * 200);
  // o + (k-1)G + L, then the target's o.
  EXPECT_EQ(ArrivalDelay(p, 8), 100'000u + 7 * 200 + 1'000'000u);
  EXPECT_EQ(OneWay(p, 8), ArrivalDelay(p, 8) + 100'000u);
  // Small messages are limited by the gap, large ones by bandwidth.
  EXPECT_EQ(InjectionBusy(p, 8), 50'000u);
  EXPECT_EQ(InjectionBusy(p, 1'000'001), 1'000'000u * 200);
}

TEST(LogGP, ParsesKeysAndRejectsUnknownOnes) {
  LogGP p;
  ASSERT_TRUE(
      ParseLogGP("# c\nname = x\nL_ns = 2.5\nG_ps_per_byte=7\ntrigger_slots = 9\n", &p).ok());
  EXPECT_EQ(p.name, "x");
  EXPECT_EQ(p.L, 2500u);
  EXPECT_EQ(p.G, 7u);
  EXPECT_EQ(p.trigger_slots, 9u);
  Status s = ParseLogGP("L_ns = 1\nbogus = 3\n", &p);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("line 2"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bogus"), std::string::npos);
  EXPECT_FALSE(ParseLogGP("L_ns 3\n", &p).ok());
  EXPECT_FALSE(ParseLogGP("L_ns = -3\n", &p).ok());
}

TEST(LogGP, PresetsMatchConfigFiles) {
  for (const char* name : {"slingshot", "infiniband"}) {
    LogGP preset, file;
    ASSERT_TRUE(PresetLogGP(name, &preset).ok());
    Status s =
        LoadLogGP(std::string(NICQ_SOURCE_DIR) + "/firmware-sim/configs/" + name + ".conf", &file);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(preset.name, file.name);
    EXPECT_EQ(preset.L, file.L);
    EXPECT_EQ(preset.o, file.o);
    EXPECT_EQ(preset.g, file.g);
    EXPECT_EQ(preset.G, file.G);
    EXPECT_EQ(preset.nic_op, file.nic_op);
    EXPECT_EQ(preset.host_op, file.host_op);
    EXPECT_EQ(preset.trigger_slots, file.trigger_slots);
  }
  LogGP p;
  EXPECT_FALSE(PresetLogGP("myrinet", &p).ok());
  EXPECT_FALSE(LoadLogGP("/nonexistent/x.conf", &p).ok());
}

}  // namespace
}  // namespace nicq::fwsim
