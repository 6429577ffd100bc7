#include "storage/frame_fuzz_check.h"

#include <algorithm>
#include <cstring>

#include "base/bytes.h"
#include "base/checksum.h"
#include "storage/frame.h"
#include "storage/segment_scan.h"

namespace narad::storage::fuzz {
namespace {

// A read-only file over a buffer.
class MemoryFile final : public io::File {
  public:
    explicit MemoryFile(std::string_view data) : data_(data) {}
    const std::string& path() const override { return path_; }
    Status write_at(uint64_t, std::string_view) override { return Status(Errc::internal, "ro"); }
    Status write_at(uint64_t, std::span<const std::string_view>) override {
        return Status(Errc::internal, "read-only");
    }
    Result<size_t> read_at(uint64_t offset, char* buffer, size_t size) const override {
        if (offset >= data_.size()) return size_t{0};
        size_t n = std::min<uint64_t>(size, data_.size() - offset);
        std::memcpy(buffer, data_.data() + offset, n);
        return n;
    }
    Status sync() override { return Status::ok(); }
    Status truncate(uint64_t) override { return Status(Errc::internal, "read-only"); }
    Result<uint64_t> size() const override { return uint64_t{data_.size()}; }

  private:
    std::string path_ = "<memory>";
    std::string_view data_;
};

// The frame at the start of `bytes` verifies on its own terms.
void assert_frame_verifies(const FrameHeader& header, std::string_view bytes) {
    NARAD_ASSERT(header.length >= kFrameHeaderBytes && header.length <= bytes.size(),
                 "a decoded frame's length lies outside its buffer");
    NARAD_ASSERT(checksum64(bytes.data() + kFrameChecksumEnd, header.length - kFrameChecksumEnd) ==
                     load_u64(bytes.data() + kFrameChecksumAt),
                 "a decoded frame fails its checksum");
}

void check_visited(const FrameHeader& header, std::string_view payload) {
    NARAD_ASSERT(payload.size() == header.length - kFrameHeaderBytes, "payload size mismatch");
    std::vector<DecodedRecord> records;
    if (unpack_frame(header, payload, records).is_ok()) {
        NARAD_ASSERT(records.size() == header.record_count, "a frame unpacked to a wrong count");
    }
}

void check_scan(std::string_view data, const SegmentScan& scan, Offset base) {
    NARAD_ASSERT(scan.good_bytes <= data.size(), "a scan ended past the file");
    NARAD_ASSERT(scan.positions.size() == scan.end.distance_from(base),
                 "a scan's index does not cover its offsets");
    for (uint32_t position : scan.positions) {
        NARAD_ASSERT(position < data.size(), "an index position lies past the file");
    }
}

}  // namespace

void check_frame_decoder(std::string_view data) {
    FrameDecode decoded = decode_frame(data);
    if (decoded.check == FrameCheck::ok) {
        assert_frame_verifies(decoded.header, data);
        check_visited(decoded.header, decoded.payload);
        std::vector<ProducerStamp> stamps;
        if (frame_stamps(decoded.header, decoded.payload, stamps).is_ok()) {
            NARAD_ASSERT(stamps.size() == decoded.header.record_count, "wrong stamp count");
        }
    } else if (decoded.check == FrameCheck::need_more) {
        NARAD_ASSERT(decoded.needed > data.size() && decoded.needed <= kFrameBytesMax,
                     "need_more asked for a size out of bounds");
    }

    // Scans take the base offset of the first frame if there is one, so that they get past it.
    Offset base = decoded.check == FrameCheck::ok ? decoded.header.base : Offset(0);
    MemoryFile file(data);
    FrameVisitor visitor = [&](const FrameHeader& header, std::string_view payload) {
        // The scan hands out views into its read buffer, where the whole frame lies contiguous.
        std::string_view frame(payload.data() - kFrameHeaderBytes, header.length);
        assert_frame_verifies(header, frame);
        NARAD_ASSERT(data.find(frame) != std::string_view::npos,
                     "a visited frame is not in the file");
        check_visited(header, payload);
        return Status::ok();
    };
    auto active = scan_active_segment(file, base, visitor);
    if (active.is_ok()) check_scan(data, *active, base);
    for (uint64_t count : {uint64_t{1}, uint64_t{7}, uint64_t{300}}) {
        if (base.value() > UINT64_MAX - count) break;
        auto sealed = scan_sealed_segment(file, base, base + count, visitor);
        if (sealed.is_ok()) {
            check_scan(data, *sealed, base);
            NARAD_ASSERT(sealed->end == base + count, "a sealed scan ended off its range");
        }
    }
}

void check_encoded_then_mutated(std::string_view input) {
    if (input.size() < 2) return;
    Codec codec = (input[0] & 1) ? Codec::zstd : Codec::none;
    size_t count = 1 + static_cast<uint8_t>(input[1]) % 16;
    input.remove_prefix(2);
    // Records take consecutive slices of the input; what is left drives the edits.
    std::vector<Record> records;
    for (size_t i = 0; i < count && !input.empty(); ++i) {
        size_t length = std::min<size_t>(static_cast<uint8_t>(input[0]), input.size() - 1);
        std::string_view value = input.substr(1, length);
        records.push_back(Record{value.substr(0, value.size() / 4), value.substr(value.size() / 4),
                                 static_cast<int64_t>(i), ProducerStamp{IngressId(1), WalSeq(i)}});
        input.remove_prefix(1 + length);
    }
    if (records.empty()) return;
    EncodedBatch batch;
    NARAD_ASSERT(encode_records(records, codec, 1, batch).is_ok(), "encoding failed");
    assign_offsets(batch, Offset(5));
    std::string bytes = batch.bytes;
    if (input.empty()) {
        std::vector<DecodedRecord> decoded;
        std::string_view rest = bytes;
        while (!rest.empty()) {
            FrameDecode frame = decode_frame(rest);
            NARAD_ASSERT(frame.check == FrameCheck::ok, "an unedited frame does not decode");
            NARAD_ASSERT(unpack_frame(frame.header, frame.payload, decoded).is_ok(),
                         "an unedited frame does not unpack");
            rest.remove_prefix(frame.header.length);
        }
        NARAD_ASSERT(decoded.size() == records.size(), "records lost in encoding");
        for (size_t i = 0; i < decoded.size(); ++i) {
            NARAD_ASSERT(decoded[i].value == records[i].value, "a value changed in encoding");
        }
    }
    // Each 3 bytes of the rest: a position (2 bytes) and an XOR mask, or a cut when the mask is 0.
    while (input.size() >= 3 && !bytes.empty()) {
        size_t at =
            (static_cast<uint8_t>(input[0]) | static_cast<uint8_t>(input[1]) << 8) % bytes.size();
        char mask = input[2];
        if (mask == 0) {
            bytes.resize(at);
        } else {
            bytes[at] = static_cast<char>(bytes[at] ^ mask);
        }
        input.remove_prefix(3);
    }
    check_frame_decoder(bytes);
}

}  // namespace narad::storage::fuzz
