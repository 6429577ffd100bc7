#include "wal/wal_format.h"

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::wal::format {
namespace {

IngressRecord sample() {
    IngressRecord record;
    record.topic = "orders";
    record.incarnation = "inc-7";
    record.partition = PartitionId(5);
    record.key = "key";
    record.value = std::string("va\0lue", 6);
    record.timestamp_ms = -3;
    record.sequence = WalSeq(42);
    return record;
}

Result<IngressRecord> decode_frame(std::string_view frame) {
    FramePrefix prefix = decode_prefix(frame.data());
    return decode_body(frame.substr(kFramePrefixBytes), prefix);
}

// Rule: a record frame decodes to exactly the record encoded, and its size is what frame_bytes
// says.
TEST(WalFormatTest, RecordFrameRoundTrips) {
    std::string frame;
    append_frame(frame, sample());
    ASSERT_EQ(frame.size(), frame_bytes(sample()));
    auto decoded = decode_frame(frame);
    ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->topic, "orders");
    EXPECT_EQ(decoded->incarnation, "inc-7");
    EXPECT_EQ(decoded->partition, PartitionId(5));
    EXPECT_EQ(decoded->key, "key");
    EXPECT_EQ(decoded->value, std::string("va\0lue", 6));
    EXPECT_EQ(decoded->timestamp_ms, -3);
    EXPECT_EQ(decoded->sequence, WalSeq(42));
}

// Rule: the smallest possible frame is kMinFrameBytes, the bound recovery uses for cut tails.
TEST(WalFormatTest, EmptyRecordIsTheSmallestFrame) {
    IngressRecord empty;
    empty.sequence = WalSeq(1);
    std::string frame;
    append_frame(frame, empty);
    EXPECT_EQ(frame.size(), kMinFrameBytes);
}

// Rule: any flipped byte in a frame's body is caught by the checksum.
TEST(WalFormatTest, EveryFlippedBodyByteIsDetected) {
    std::string frame;
    append_frame(frame, sample());
    for (size_t i = kFramePrefixBytes; i < frame.size(); ++i) {
        std::string damaged = frame;
        damaged[i] ^= 0x20;
        EXPECT_EQ(decode_frame(damaged).code(), Errc::corrupt) << "byte " << i;
    }
}

// Rule: a body whose checksum matches but whose field lengths do not add up is corrupt.
TEST(WalFormatTest, InconsistentLengthsAreCorruptEvenWithAGoodChecksum) {
    std::string frame;
    append_frame(frame, sample());
    std::string body = frame.substr(kFramePrefixBytes) + "x";  // one stray byte at the end
    FramePrefix prefix{static_cast<uint32_t>(body.size()), checksum64(body)};
    EXPECT_EQ(decode_body(body, prefix).code(), Errc::corrupt);
}

// Rule: the id file and segment header round-trip, and damage or another version is refused.
TEST(WalFormatTest, IdFileAndSegmentHeaderAreChecked) {
    std::string id = encode_id_file(IngressId(0x1234));
    ASSERT_EQ(id.size(), kIdFileBytes);
    EXPECT_EQ(decode_id_file(id).value(), IngressId(0x1234));
    std::string flipped = id;
    flipped[13] ^= 1;
    EXPECT_EQ(decode_id_file(flipped).code(), Errc::corrupt);
    EXPECT_EQ(decode_id_file(id.substr(0, 27)).code(), Errc::corrupt);
    EXPECT_EQ(decode_id_file(encode_id_file(IngressId(0))).code(), Errc::corrupt);

    std::string header = encode_segment_header(WalSeq(99));
    ASSERT_EQ(header.size(), kSegmentHeaderBytes);
    EXPECT_EQ(decode_segment_header(header).value(), WalSeq(99));
    EXPECT_EQ(decode_segment_header(id).code(), Errc::corrupt);  // the other magic
    std::string version2 = header.substr(0, 8);
    put_u32(version2, 2);
    put_u64(version2, 99);
    put_u64(version2, checksum64(version2));
    EXPECT_EQ(decode_segment_header(version2).code(), Errc::corrupt);
}

// Rule: segment names are 20 zero-padded digits plus ".wal"; nothing else parses as a segment.
TEST(WalFormatTest, SegmentNamesRoundTripAndOthersAreIgnored) {
    EXPECT_EQ(segment_file_name(WalSeq(42)), "00000000000000000042.wal");
    EXPECT_EQ(parse_segment_file_name("00000000000000000042.wal"), WalSeq(42));
    EXPECT_EQ(parse_segment_file_name(segment_file_name(WalSeq(UINT64_MAX))), WalSeq(UINT64_MAX));
    EXPECT_FALSE(parse_segment_file_name("id").has_value());
    EXPECT_FALSE(parse_segment_file_name("0000000000000000042.wal").has_value());
    EXPECT_FALSE(parse_segment_file_name("0000000000000000004x.wal").has_value());
    EXPECT_FALSE(parse_segment_file_name("99999999999999999999.wal").has_value());  // overflow
    EXPECT_FALSE(parse_segment_file_name("00000000000000000042.log").has_value());
}

// Rule: records that cannot be framed are refused before they reach the disk.
TEST(WalFormatTest, OversizedRecordsAreRefused) {
    IngressRecord record = sample();
    record.topic.assign(kMaxNameBytes + 1, 't');
    EXPECT_EQ(check_limits(record).code(), Errc::invalid_argument);
    record = sample();
    record.value.assign(kMaxPayloadBytes, 'v');
    EXPECT_EQ(check_limits(record).code(), Errc::payload_too_large);
    EXPECT_TRUE(check_limits(sample()).is_ok());
}

}  // namespace
}  // namespace narad::wal::format
