#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "storage/frame.h"
#include "storage/frame_fuzz_check.h"
#include "storage/segment_scan.h"

namespace narad::storage {
namespace {

// A valid run of frames from offset 0: plain and zstd, varied sizes and stamps.
std::string valid_frames(std::mt19937_64& rng, uint32_t& records) {
    std::string out;
    records = 0;
    for (int batch = 0; batch < 4; ++batch) {
        std::vector<std::string> values;
        size_t count = 1 + rng() % 6;
        for (size_t i = 0; i < count; ++i) values.push_back(std::string(rng() % 40, 'a' + i));
        std::vector<Record> list;
        for (size_t i = 0; i < count; ++i) {
            list.push_back(Record{i % 2 ? "key" : "", values[i], static_cast<int64_t>(rng() % 1000),
                                  ProducerStamp{IngressId(1), WalSeq(records + i + 1)}});
        }
        EncodedBatch encoded;
        EXPECT_TRUE(
            encode_records(list, batch % 2 ? Codec::zstd : Codec::none, 1, encoded).is_ok());
        assign_offsets(encoded, Offset(records));
        records += encoded.records;
        out += encoded.bytes;
    }
    return out;
}

std::string mutate(std::string data, std::mt19937_64& rng) {
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !data.empty(); ++e) {
        size_t at = rng() % data.size();
        switch (rng() % 6) {
            case 0:  // flip a bit
                data[at] = static_cast<char>(data[at] ^ (1 << (rng() % 8)));
                break;
            case 1:  // cut the tail
                data.resize(at);
                break;
            case 2:  // insert garbage
                data.insert(at, std::string(1 + rng() % 16, static_cast<char>(rng())));
                break;
            case 3:  // duplicate a stretch
                data.insert(at, data.substr(rng() % data.size(), 1 + rng() % 80));
                break;
            case 4:  // random bytes over a stretch
                for (size_t i = at; i < data.size() && i < at + 8; ++i) {
                    data[i] = static_cast<char>(rng());
                }
                break;
            case 5:  // a huge or tiny length field at a frame-like spot
                if (at + 8 <= data.size()) {
                    uint32_t length = rng() % 2 ? 0xFFFFFFF0u : static_cast<uint32_t>(rng() % 80);
                    std::memcpy(data.data() + at + 4, &length, 4);
                }
                break;
        }
    }
    return data;
}

// Rule: the decoder and the scans survive arbitrary bytes and never yield a frame that fails its
// checksum.
TEST(FrameFuzzTest, RandomBytesNeverCrashOrYieldUnverifiedFrames) {
    std::mt19937_64 rng(12345);
    for (int i = 0; i < 3000; ++i) {
        std::string data(rng() % 300, '\0');
        for (char& c : data) c = static_cast<char>(rng());
        if (i % 3 == 0 && data.size() >= 4) data.replace(0, 4, std::string("NRF\x01", 4));
        fuzz::check_frame_decoder(data);
    }
}

// Rule: mutated segments (bit flips, tears, inserted or repeated bytes, wild lengths) never
// crash the decoder or the recovery scans and never yield an unverified frame.
TEST(FrameFuzzTest, MutatedSegmentsNeverCrashOrYieldUnverifiedFrames) {
    std::mt19937_64 rng(777);
    for (int i = 0; i < 1500; ++i) {
        uint32_t records = 0;
        std::string valid = valid_frames(rng, records);
        fuzz::check_frame_decoder(mutate(valid, rng));
    }
}

// Rule: recipes of valid frames plus random edits (the fuzz target's second mode) never crash
// and never yield an unverified frame; unedited recipes decode back to their records.
TEST(FrameFuzzTest, EncodedThenMutatedRecipesHoldTheProperty) {
    std::mt19937_64 rng(99);
    for (int i = 0; i < 2000; ++i) {
        std::string recipe(rng() % 400, '\0');
        for (char& c : recipe) c = static_cast<char>(rng());
        fuzz::check_encoded_then_mutated(recipe);
    }
}

// Rule (sanity of the harness): an unmutated run of frames scans whole.
TEST(FrameFuzzTest, ValidFramesScanWhole) {
    std::mt19937_64 rng(5);
    uint32_t records = 0;
    std::string valid = valid_frames(rng, records);
    fuzz::check_frame_decoder(valid);
    FrameDecode first = decode_frame(valid);
    ASSERT_EQ(first.check, FrameCheck::ok);
    EXPECT_EQ(first.header.base, Offset(0));
}

}  // namespace
}  // namespace narad::storage
