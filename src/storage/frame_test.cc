#include "storage/frame.h"

#include <gtest/gtest.h>

#include "base/bytes.h"

namespace narad::storage {
namespace {

std::vector<Record> sample_records(size_t count, std::vector<std::string>& storage) {
    storage.clear();
    for (size_t i = 0; i < count; ++i) storage.push_back("payload-" + std::to_string(i));
    std::vector<Record> records;
    for (size_t i = 0; i < count; ++i) {
        records.push_back(Record{i % 3 == 0 ? "key0" : "", storage[i],
                                 static_cast<int64_t>(100 + i),
                                 ProducerStamp{IngressId(7), WalSeq(50 + i)}});
    }
    return records;
}

std::vector<DecodedRecord> decode_all(std::string_view bytes) {
    std::vector<DecodedRecord> out;
    while (!bytes.empty()) {
        FrameDecode decoded = decode_frame(bytes);
        EXPECT_EQ(decoded.check, FrameCheck::ok);
        if (decoded.check != FrameCheck::ok) break;
        EXPECT_TRUE(unpack_frame(decoded.header, decoded.payload, out).is_ok());
        bytes.remove_prefix(decoded.header.length);
    }
    return out;
}

// Rule: plain frames round-trip key, value, timestamp, stamp and offset, one record per frame.
TEST(FrameTest, PlainFramesRoundTrip) {
    std::vector<std::string> storage;
    auto records = sample_records(5, storage);
    EncodedBatch batch;
    ASSERT_TRUE(encode_records(records, Codec::none, 1, batch).is_ok());
    ASSERT_EQ(batch.frames.size(), 5u);
    assign_offsets(batch, Offset(40));
    auto decoded = decode_all(batch.bytes);
    ASSERT_EQ(decoded.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(decoded[i].offset, Offset(40 + i));
        EXPECT_EQ(decoded[i].value, storage[i]);
        EXPECT_EQ(decoded[i].key, records[i].key);
        EXPECT_EQ(decoded[i].timestamp_ms, 100 + static_cast<int64_t>(i));
        EXPECT_EQ(decoded[i].producer.sequence, WalSeq(50 + i));
    }
}

// Rule: a zstd frame holds a batch of consecutive offsets, each keeping its own producer stamp.
TEST(FrameTest, ZstdBatchRoundTripsWithPerRecordStamps) {
    std::vector<std::string> storage;
    auto records = sample_records(100, storage);
    EncodedBatch batch;
    ASSERT_TRUE(encode_records(records, Codec::zstd, 3, batch).is_ok());
    ASSERT_EQ(batch.frames.size(), 1u);
    EXPECT_EQ(batch.frames[0].records, 100u);
    assign_offsets(batch, Offset(7));
    FrameDecode frame = decode_frame(batch.bytes);
    ASSERT_EQ(frame.check, FrameCheck::ok);
    EXPECT_EQ(frame.header.codec, Codec::zstd);
    EXPECT_EQ(frame.header.record_count, 100u);
    std::vector<ProducerStamp> stamps;
    ASSERT_TRUE(frame_stamps(frame.header, frame.payload, stamps).is_ok());
    ASSERT_EQ(stamps.size(), 100u);
    EXPECT_EQ(stamps[99].sequence, WalSeq(149));
    auto decoded = decode_all(batch.bytes);
    ASSERT_EQ(decoded.size(), 100u);
    EXPECT_EQ(decoded[42].offset, Offset(49));
    EXPECT_EQ(decoded[42].value, storage[42]);
}

// Rule: zstd batches are bounded in uncompressed size, so a large append spans several frames.
TEST(FrameTest, ZstdBatchesSplitAtTheirSizeBound) {
    std::string big(300 << 10, 'x');
    std::vector<Record> records(8, Record{"", big, 0, {}});
    EncodedBatch batch;
    ASSERT_TRUE(encode_records(records, Codec::zstd, 1, batch).is_ok());
    EXPECT_GE(batch.frames.size(), 3u);
    assign_offsets(batch, Offset(0));
    EXPECT_EQ(decode_all(batch.bytes).size(), 8u);
}

// Rule: flipping any single byte of a frame makes it undecodable (never a wrong record).
TEST(FrameTest, EveryByteFlipIsDetected) {
    std::vector<std::string> storage;
    for (Codec codec : {Codec::none, Codec::zstd}) {
        auto records = sample_records(codec == Codec::none ? 1 : 10, storage);
        EncodedBatch batch;
        ASSERT_TRUE(encode_records(records, codec, 1, batch).is_ok());
        assign_offsets(batch, Offset(3));
        for (size_t i = 0; i < batch.bytes.size(); ++i) {
            std::string damaged = batch.bytes;
            damaged[i] = static_cast<char>(damaged[i] ^ 0x01);
            FrameDecode decoded = decode_frame(damaged);
            EXPECT_NE(decoded.check, FrameCheck::ok) << "byte " << i;
        }
    }
}

// Rule: a frame cut short asks for more bytes (a torn tail), and garbage is rejected at once.
TEST(FrameTest, TornFrameNeedsMoreAndGarbageIsBad) {
    std::vector<std::string> storage;
    auto records = sample_records(1, storage);
    EncodedBatch batch;
    ASSERT_TRUE(encode_records(records, Codec::none, 1, batch).is_ok());
    assign_offsets(batch, Offset(0));
    for (size_t keep : {size_t{0}, size_t{2}, size_t{20}, batch.bytes.size() - 1}) {
        FrameDecode decoded = decode_frame(std::string_view(batch.bytes).substr(0, keep));
        EXPECT_EQ(decoded.check, FrameCheck::need_more) << keep;
    }
    EXPECT_EQ(decode_frame("garbage that is not a frame at all, not even close to one...").check,
              FrameCheck::bad);
    // A length past the frame bound is rejected before any read of that many bytes.
    std::string huge = batch.bytes;
    store_u32(huge.data() + kFrameLengthAt, kFrameBytesMax + 1);
    EXPECT_EQ(decode_frame(huge).check, FrameCheck::bad);
}

// Rule: a record over the size limit is refused before anything is written.
TEST(FrameTest, OversizedRecordIsRefused) {
    std::string big(kRecordBytesMax + 1, 'x');
    Record record{"", big, 0, {}};
    EncodedBatch batch;
    EXPECT_EQ(encode_records(std::span(&record, 1), Codec::none, 1, batch).code(),
              Errc::payload_too_large);
}

}  // namespace
}  // namespace narad::storage
