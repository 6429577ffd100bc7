#include "move/marker.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/checksum.h"
#include "queue/temp_dir_for_test.h"

namespace narad::move {
namespace {

MoveMarker sample() {
    MoveMarker marker;
    marker.source = NodeId("narad-0");
    marker.promoted_high_watermark = Offset(1234);
    marker.force_promote = true;
    marker.children = {{"orders-replica", "e1"}, {"orders-delay", "e7"}};
    marker.durable_at_ms = 1'780'000'000'123;
    marker.install = "0123456789abcdef";
    return marker;
}

// Rule: a marker reads back exactly as written, through the file system.
TEST(MoveMarker, RoundTripsThroughItsFile) {
    queue::TempDirForTest dir;
    ASSERT_TRUE(write_marker(io::posix_file_system(), dir.path(), sample()).is_ok());
    auto read = read_marker(io::posix_file_system(), dir.path());
    ASSERT_TRUE(read.is_ok()) << read.status().to_string();
    EXPECT_EQ(*read, sample());
}

// Rule: any changed byte of a marker fails its checksum (corrupt), never a silently different
// high watermark.
TEST(MoveMarker, AChangedByteIsCorrupt) {
    std::string text = encode_marker(sample());
    for (size_t i = 0; i < text.size(); ++i) {
        std::string damaged = text;
        damaged[i] = damaged[i] == '7' ? '8' : '7';
        auto decoded = decode_marker(damaged);
        if (decoded.is_ok()) {
            // Only a change that leaves the same content can pass, and none can here.
            EXPECT_EQ(*decoded, sample()) << "byte " << i;
        } else {
            EXPECT_EQ(decoded.code(), Errc::corrupt) << "byte " << i;
        }
    }
}

// Rule: a version 1 marker (no install line) still reads; a version 1 marker with an install line
// is refused, as any unknown field is.
TEST(MoveMarker, ReadsVersionOne) {
    std::string body =
        "narad-move-marker 1\nsource n1\npromoted_high_watermark 9\nforce_promote 0\n"
        "durable_at_ms 0\n";
    auto with_checksum = [](const std::string& text) {
        return text + fmt::format("checksum {:016x}\n", checksum64(text));
    };
    auto old = decode_marker(with_checksum(body));
    ASSERT_TRUE(old.is_ok()) << old.status().to_string();
    EXPECT_EQ(old->promoted_high_watermark, Offset(9));
    EXPECT_TRUE(old->install.empty());
    EXPECT_EQ(decode_marker(with_checksum(body + "install 00ff\n")).code(), Errc::corrupt);
}

// Rule: a missing marker is not_found (an older release's install), not corrupt.
TEST(MoveMarker, MissingIsNotFound) {
    queue::TempDirForTest dir;
    EXPECT_EQ(read_marker(io::posix_file_system(), dir.path()).code(), Errc::not_found);
}

// Rule: a marker of an unknown version or without a source is refused.
TEST(MoveMarker, UnknownVersionIsRefused) {
    std::string text = encode_marker(sample());
    text.replace(0, std::string("narad-move-marker 1").size(), "narad-move-marker 9");
    EXPECT_EQ(decode_marker(text).code(), Errc::corrupt);
}

}  // namespace
}  // namespace narad::move
