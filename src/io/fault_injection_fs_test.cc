#include "io/fault_injection_fs.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <future>

namespace narad::io {
namespace {

class FaultInjectionFsTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/narad-fifs-XXXXXX";
        dir_ = ::mkdtemp(pattern);
    }
    void TearDown() override { (void)posix_file_system().remove_all(dir_); }
    std::string path(const char* name) { return join_path(dir_, name); }

    std::string dir_;
    FaultInjectionFileSystem fs_;
};

// Rule: a crash keeps exactly what the last sync covered and drops later writes.
TEST_F(FaultInjectionFsTest, CrashDropsWritesAfterTheLastSync) {
    {
        auto file = fs_.open(path("a"), kCreate).value();
        ASSERT_TRUE(file->write_at(0, "durable").is_ok());
        ASSERT_TRUE(file->sync().is_ok());
        ASSERT_TRUE(fs_.sync_directory(dir_).is_ok());
        ASSERT_TRUE(file->write_at(7, "-lost").is_ok());
    }
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read_file(fs_, path("a")).value(), "durable");
}

// Rule: a file whose directory entry was never synced does not survive a crash.
TEST_F(FaultInjectionFsTest, CrashDeletesFilesCreatedWithoutADirectorySync) {
    {
        auto file = fs_.open(path("b"), kCreate).value();
        ASSERT_TRUE(file->write_at(0, "x").is_ok());
        ASSERT_TRUE(file->sync().is_ok());
    }
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_FALSE(fs_.exists(path("b")));
}

// Rule: a rename no directory sync covered is undone by a crash, restoring the replaced file.
TEST_F(FaultInjectionFsTest, CrashUndoesAnUnsyncedRename) {
    ASSERT_TRUE(write_file_atomically(fs_, path("state"), "old").is_ok());
    {
        auto file = fs_.open(path("state.new"), kCreate).value();
        ASSERT_TRUE(file->write_at(0, "new").is_ok());
        ASSERT_TRUE(file->sync().is_ok());
    }
    ASSERT_TRUE(fs_.rename(path("state.new"), path("state")).is_ok());
    EXPECT_EQ(read_file(fs_, path("state")).value(), "new");
    ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
    EXPECT_EQ(read_file(fs_, path("state")).value(), "old");
}

// Rule: crash() is a crash point under a running process: what was synced stays, what was not is
// dropped, and a write that comes after it never reaches the disk.
TEST(FaultInjectionFsCrashTest, NothingReachesTheDiskAfterTheCrashPoint) {
    char pattern[] = "/tmp/narad-fifs-XXXXXX";
    const std::string dir = ::mkdtemp(pattern);
    const std::string file_path = join_path(dir, "wal");
    auto* fs = new FaultInjectionFileSystem();  // never freed: the late writer stays blocked in it
    auto file = fs->open(file_path, kCreate).value();
    ASSERT_TRUE(file->write_at(0, "durable").is_ok());
    ASSERT_TRUE(file->sync().is_ok());
    ASSERT_TRUE(fs->sync_directory(dir).is_ok());
    ASSERT_TRUE(file->write_at(7, "-unsynced").is_ok());
    ASSERT_TRUE(fs->crash().is_ok());
    EXPECT_EQ(read_file(posix_file_system(), file_path).value(), "durable");
    EXPECT_EQ(fs->dropped_bytes(), 9u);
    auto late = std::async(std::launch::async, [&file] { (void)file->write_at(7, "-late"); });
    // A bounded wait for something that must not happen: the late write stays blocked.
    EXPECT_EQ(late.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
    EXPECT_EQ(read_file(posix_file_system(), file_path).value(), "durable");
    (void)posix_file_system().remove_all(dir);
    new auto(std::move(late));  // never joined: its thread is blocked for good
    file.release();
}

// Rule: injected failures hit only the chosen operation and path, the chosen number of times.
TEST_F(FaultInjectionFsTest, InjectedFailuresAreTargeted) {
    auto file = fs_.open(path("c.log"), kCreate).value();
    fs_.fail(FsOp::sync, ".log", 1, Errc::no_space);
    EXPECT_EQ(file->sync().code(), Errc::no_space);
    EXPECT_TRUE(file->sync().is_ok());
    fs_.tear_next_write("c.log", 2);
    EXPECT_FALSE(file->write_at(0, "abcdef").is_ok());
    EXPECT_EQ(file->size().value(), 2u);
}

}  // namespace
}  // namespace narad::io
