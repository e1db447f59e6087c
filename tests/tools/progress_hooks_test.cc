// The progress hook table (src/core/progress_hooks.cc): every registered
// hook runs exactly once per pass, wherever its slot is, and an
// unregistered one never again.
#include "core/progress_hooks.h"

#include <gtest/gtest.h>

namespace progress = nicq::progress;

namespace {

int calls[progress::kMaxHooks];

bool Count(void* arg) {
  ++*static_cast<int*>(arg);
  return true;
}

}  // namespace

TEST(ProgressHooks, EveryHookRunsOncePerPassInAnySlot) {
  EXPECT_FALSE(progress::PollAll());  // none registered
  for (int i = 0; i < progress::kMaxHooks; ++i)
    ASSERT_TRUE(progress::RegisterHook(&Count, &calls[i]));
  int extra = 0;
  EXPECT_FALSE(progress::RegisterHook(&Count, &extra));  // full
  EXPECT_TRUE(progress::PollAll());
  for (int i = 0; i < progress::kMaxHooks; ++i) EXPECT_EQ(calls[i], 1) << "slot " << i;

  // Free every slot but the last: the last still runs, the others not.
  for (int i = 0; i + 1 < progress::kMaxHooks; ++i) progress::UnregisterHook(&Count, &calls[i]);
  EXPECT_TRUE(progress::PollAll());
  for (int i = 0; i + 1 < progress::kMaxHooks; ++i) EXPECT_EQ(calls[i], 1) << "slot " << i;
  EXPECT_EQ(calls[progress::kMaxHooks - 1], 2);

  // A hook registered again takes the first free slot and runs.
  ASSERT_TRUE(progress::RegisterHook(&Count, &extra));
  EXPECT_TRUE(progress::PollAll());
  EXPECT_EQ(extra, 1);
  EXPECT_EQ(calls[progress::kMaxHooks - 1], 3);
  progress::UnregisterHook(&Count, &extra);
  progress::UnregisterHook(&Count, &calls[progress::kMaxHooks - 1]);
  EXPECT_FALSE(progress::PollAll());
  EXPECT_EQ(extra, 1);
}
