#include "fanout/cursor_file.h"

#include <gtest/gtest.h>

#include "io/fault_injection_fs.h"
#include "queue/temp_dir_for_test.h"

namespace narad::fanout {
namespace {

// Rule: a written cursor reads back as written, under its file name.
TEST(CursorFileTest, RoundTrip) {
    queue::TempDirForTest dir;
    std::string path = dir.file(cursor_file_name("orders-retry"));
    EXPECT_EQ(path, dir.path() + "/fanout-orders-retry.offset");
    CursorPosition position{"67953471cc57a32a", Offset(98332)};
    ASSERT_TRUE(write_cursor(io::posix_file_system(), path, position).is_ok());
    EXPECT_EQ(read_cursor(io::posix_file_system(), path).value(), position);
    EXPECT_EQ(child_of_cursor_file("fanout-orders-retry.offset"), "orders-retry");
    EXPECT_EQ(child_of_cursor_file("consumer.offset"), "");
    EXPECT_EQ(child_of_cursor_file("fanout-.offset"), "");
}

// Rule: every truncation and every flipped byte of a cursor file reads as corrupt, never as a
// position.
TEST(CursorFileTest, EveryDamageIsCorrupt) {
    std::string bytes = encode_cursor({"epoch-1", Offset(42)});
    for (size_t keep = 0; keep < bytes.size(); ++keep) {
        auto decoded = decode_cursor(bytes.substr(0, keep), "cursor");
        ASSERT_FALSE(decoded.is_ok()) << keep;
        EXPECT_EQ(decoded.code(), Errc::corrupt);
    }
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string flipped = bytes;
        flipped[i] = static_cast<char>(flipped[i] ^ 0x40);
        auto decoded = decode_cursor(flipped, "cursor");
        ASSERT_FALSE(decoded.is_ok()) << i;
        EXPECT_EQ(decoded.code(), Errc::corrupt);
    }
}

// Rule: a write torn by a crash leaves the previous position (write-temp-then-rename), and a
// missing file is not_found.
TEST(CursorFileTest, TornWriteKeepsThePreviousPosition) {
    queue::TempDirForTest dir;
    io::FaultInjectionFileSystem fs;
    std::string path = dir.file(cursor_file_name("c"));
    EXPECT_EQ(read_cursor(fs, path).code(), Errc::not_found);
    ASSERT_TRUE(write_cursor(fs, path, {"e", Offset(10)}).is_ok());
    fs.tear_next_write("fanout-c", 5);
    EXPECT_FALSE(write_cursor(fs, path, {"e", Offset(20)}).is_ok());
    ASSERT_TRUE(fs.drop_unsynced_data().is_ok());
    auto read = read_cursor(fs, path);
    ASSERT_TRUE(read.is_ok()) << read.status().to_string();
    EXPECT_EQ(read->next, Offset(10));
}

// Rule: an epoch longer than the format allows is refused before anything is written.
TEST(CursorFileTest, LongEpochRefused) {
    queue::TempDirForTest dir;
    std::string path = dir.file(cursor_file_name("c"));
    EXPECT_EQ(write_cursor(io::posix_file_system(), path, {std::string(65, 'a'), Offset(1)}).code(),
              Errc::invalid_argument);
    EXPECT_EQ(read_cursor(io::posix_file_system(), path).code(), Errc::not_found);
}

}  // namespace
}  // namespace narad::fanout
