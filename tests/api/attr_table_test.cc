// AttrTable (src/api/attr_table.h), the attribute storage of communicators,
// datatypes and windows: callbacks run with the right values and at the
// right time, a failing callback leaves the state as it was, and keyvals
// outlive their free while attributes use them.
#include "api/attr_table.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nicq::api {
namespace {

using Table = AttrTable<MPI_Comm_copy_attr_function, MPI_Comm_delete_attr_function>;
using Kind = AttrOutcome::Kind;

// What the callbacks saw, and what they answer next.
struct Log {
  std::vector<std::string> events;
  int delete_rc = MPI_SUCCESS;
  int copy_rc = MPI_SUCCESS;
  int fail_copy_of = 0;  // keyval whose copy callback fails (0: none)
};
Log g_log;

int DeleteFn(MPI_Comm comm, int keyval, void* value, void*) {
  g_log.events.push_back("delete " + std::to_string(comm) + " " + std::to_string(keyval) + " " +
                         std::to_string(reinterpret_cast<std::intptr_t>(value)));
  return g_log.delete_rc;
}

int CopyFn(MPI_Comm, int keyval, void*, void* in, void* out, int* flag) {
  if (keyval == g_log.fail_copy_of) return 77;
  *static_cast<void**>(out) = static_cast<char*>(in) + 1000;
  *flag = 1;
  return g_log.copy_rc;
}

void* V(std::intptr_t v) {
  return reinterpret_cast<void*>(v);
}

class AttrTableTest : public ::testing::Test {
 protected:
  void SetUp() override { g_log = Log{}; }
  Table table_{32, 64};
  const Table::Object a_ = 1, b_ = 2;
};

TEST_F(AttrTableTest, ReplacingRunsTheDeleteCallbackOnTheOldValue) {
  const int k = table_.CreateKeyval(nullptr, DeleteFn, nullptr);
  ASSERT_GE(k, 0);
  ASSERT_TRUE(table_.Set(a_, 10, k, V(5)).ok());
  ASSERT_TRUE(table_.Set(a_, 10, k, V(6)).ok());
  EXPECT_EQ(g_log.events, std::vector<std::string>{"delete 10 " + std::to_string(k) + " 5"});
  void* value = nullptr;
  int flag = 0;
  ASSERT_TRUE(table_.Get(a_, k, &value, &flag).ok());
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(value, V(6));
  flag = 1;
  ASSERT_TRUE(table_.Get(b_, k, &value, &flag).ok());
  EXPECT_EQ(flag, 0);
}

TEST_F(AttrTableTest, AFailingDeleteOnReplaceKeepsTheOldValue) {
  const int k = table_.CreateKeyval(nullptr, DeleteFn, nullptr);
  ASSERT_TRUE(table_.Set(a_, 10, k, V(5)).ok());
  g_log.delete_rc = 9;
  const AttrOutcome out = table_.Set(a_, 10, k, V(6));
  EXPECT_EQ(out.kind, Kind::kDeleteFailed);
  EXPECT_EQ(out.rc, 9);
  void* value = nullptr;
  int flag = 0;
  ASSERT_TRUE(table_.Get(a_, k, &value, &flag).ok());
  EXPECT_EQ(value, V(5));
  // A failing delete leaves the attribute in place too.
  EXPECT_EQ(table_.Delete(a_, 10, k).kind, Kind::kDeleteFailed);
  ASSERT_TRUE(table_.Get(a_, k, &value, &flag).ok());
  EXPECT_EQ(flag, 1);
  g_log.delete_rc = MPI_SUCCESS;
  EXPECT_TRUE(table_.Delete(a_, 10, k).ok());
  EXPECT_EQ(table_.Delete(a_, 10, k).kind, Kind::kNotSet);
}

TEST_F(AttrTableTest, CopyAllCopiesWhatTheCallbacksKeepAndUndoesOnFailure) {
  const int copied = table_.CreateKeyval(CopyFn, DeleteFn, nullptr);
  const int skipped = table_.CreateKeyval(nullptr, DeleteFn, nullptr);  // null copy: not copied
  ASSERT_TRUE(table_.Set(a_, 10, copied, V(1)).ok());
  ASSERT_TRUE(table_.Set(a_, 10, skipped, V(2)).ok());
  ASSERT_TRUE(table_.CopyAll(a_, 10, b_, 20).ok());
  void* value = nullptr;
  int flag = 0;
  ASSERT_TRUE(table_.Get(b_, copied, &value, &flag).ok());
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(value, V(1001));
  ASSERT_TRUE(table_.Get(b_, skipped, &value, &flag).ok());
  EXPECT_EQ(flag, 0);

  // A third keyval whose copy fails: the copy made before it is deleted
  // again (on the duplicate's handle) and nothing lands on the duplicate.
  const int failing = table_.CreateKeyval(CopyFn, DeleteFn, nullptr);
  ASSERT_TRUE(table_.Set(a_, 10, failing, V(3)).ok());
  g_log.fail_copy_of = failing;
  g_log.events.clear();
  const Table::Object c = 3;
  const AttrOutcome out = table_.CopyAll(a_, 10, c, 30);
  EXPECT_EQ(out.kind, Kind::kCopyFailed);
  EXPECT_EQ(out.keyval, failing);
  EXPECT_EQ(out.rc, 77);
  EXPECT_EQ(g_log.events,
            std::vector<std::string>{"delete 30 " + std::to_string(copied) + " 1001"});
  ASSERT_TRUE(table_.Get(c, copied, &value, &flag).ok());
  EXPECT_EQ(flag, 0);
}

TEST_F(AttrTableTest, DeleteAllGoesLatestFirstAndStopsAtAFailure) {
  const int k1 = table_.CreateKeyval(nullptr, DeleteFn, nullptr);
  const int k2 = table_.CreateKeyval(nullptr, DeleteFn, nullptr);
  ASSERT_TRUE(table_.Set(a_, 10, k1, V(1)).ok());
  ASSERT_TRUE(table_.Set(a_, 10, k2, V(2)).ok());
  g_log.delete_rc = 5;
  EXPECT_EQ(table_.DeleteAll(a_, 10).kind, Kind::kDeleteFailed);
  void* value = nullptr;
  int flag = 0;
  ASSERT_TRUE(table_.Get(a_, k1, &value, &flag).ok());
  EXPECT_EQ(flag, 1);
  g_log.delete_rc = MPI_SUCCESS;
  g_log.events.clear();
  EXPECT_TRUE(table_.DeleteAll(a_, 10).ok());
  EXPECT_EQ(g_log.events, (std::vector<std::string>{"delete 10 " + std::to_string(k2) + " 2",
                                                    "delete 10 " + std::to_string(k1) + " 1"}));
  // DropAll ignores failures and still empties the object.
  ASSERT_TRUE(table_.Set(b_, 20, k1, V(1)).ok());
  ASSERT_TRUE(table_.Set(b_, 20, k2, V(2)).ok());
  g_log.delete_rc = 5;
  table_.DropAll(b_, 20);
  ASSERT_TRUE(table_.Get(b_, k1, &value, &flag).ok());
  EXPECT_EQ(flag, 0);
  ASSERT_TRUE(table_.Get(b_, k2, &value, &flag).ok());
  EXPECT_EQ(flag, 0);
}

TEST_F(AttrTableTest, AFreedKeyvalLivesWhileAttributesUseIt) {
  const int k = table_.CreateKeyval(nullptr, DeleteFn, nullptr);
  ASSERT_TRUE(table_.Set(a_, 10, k, V(1)).ok());
  ASSERT_TRUE(table_.FreeKeyval(k));
  EXPECT_FALSE(table_.IsKeyval(k));
  EXPECT_FALSE(table_.FreeKeyval(k));
  // The attribute is still deleted with its callback when its object goes,
  // and only then may the slot serve a new keyval.
  const int other = table_.CreateKeyval(nullptr, nullptr, nullptr);
  EXPECT_NE(other, k);
  EXPECT_TRUE(table_.DeleteAll(a_, 10).ok());
  EXPECT_EQ(g_log.events, std::vector<std::string>{"delete 10 " + std::to_string(k) + " 1"});
  EXPECT_EQ(table_.CreateKeyval(nullptr, nullptr, nullptr), k);
}

TEST_F(AttrTableTest, KeyvalsOfAnotherRangeAreRefused) {
  Table other{64, 96};
  const int foreign = other.CreateKeyval(nullptr, nullptr, nullptr);
  ASSERT_GE(foreign, 0);
  EXPECT_EQ(table_.Set(a_, 10, foreign, V(1)).kind, Kind::kBadKeyval);
  void* value = nullptr;
  int flag = 0;
  EXPECT_EQ(table_.Get(a_, foreign, &value, &flag).kind, Kind::kBadKeyval);
  EXPECT_FALSE(table_.FreeKeyval(foreign));
  EXPECT_EQ(table_.Set(a_, 10, 12345, V(1)).kind, Kind::kBadKeyval);  // not a keyval handle
  // The range is bounded: 32 keyvals fit in [32, 64), the 33rd does not.
  for (int i = 0; i < 32; ++i) ASSERT_GE(table_.CreateKeyval(nullptr, nullptr, nullptr), 0);
  EXPECT_EQ(table_.CreateKeyval(nullptr, nullptr, nullptr), -1);
}

}  // namespace
}  // namespace nicq::api
