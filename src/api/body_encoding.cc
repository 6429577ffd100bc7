#include "api/body_encoding.h"

#include <zlib.h>
#include <zstd.h>

#include <memory>

namespace narad::api {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

Status too_large() { return Status(Errc::payload_too_large, "request body too large"); }

Status unreadable(std::string_view encoding) {
    return Status(Errc::invalid_argument,
                  "invalid json: the body is not valid " + std::string(encoding) + " data");
}

Result<std::string> decode_zstd(std::string_view body, uint64_t limit) {
    std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> stream(ZSTD_createDStream(),
                                                                    ZSTD_freeDStream);
    if (!stream) return Status(Errc::internal, "zstd: cannot create a decoder");
    std::string out;
    ZSTD_inBuffer in{body.data(), body.size(), 0};
    size_t pending = 1;  // nonzero while a frame is unfinished
    // Every frame of the body is decoded and counted against the limit, not only the first (whose
    // header may declare a size that the frames after it never keep to).
    while (true) {
        size_t before = out.size();
        size_t in_before = in.pos;
        out.resize(before + kChunkBytes);
        ZSTD_outBuffer chunk{out.data() + before, kChunkBytes, 0};
        pending = ZSTD_decompressStream(stream.get(), &chunk, &in);
        out.resize(before + chunk.pos);
        if (ZSTD_isError(pending)) return unreadable("zstd");
        if (out.size() > limit) return too_large();
        // Done when the input is all taken and the last frame is complete, or when a call made
        // no progress at all (the body ends inside a frame).
        if (in.pos == in.size && pending == 0) break;
        if (in.pos == in_before && chunk.pos == 0) break;
    }
    if (pending != 0) return unreadable("zstd");  // the body ends inside a frame
    return out;
}

Result<std::string> decode_gzip(std::string_view body, uint64_t limit) {
    z_stream z{};
    // 16 + MAX_WBITS: a gzip header and trailer, not a bare zlib stream.
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        return Status(Errc::internal, "gzip: cannot create a decoder");
    }
    std::unique_ptr<z_stream, int (*)(z_stream*)> guard(&z, inflateEnd);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
    z.avail_in = static_cast<uInt>(body.size());
    std::string out;
    int rc = Z_OK;
    while (true) {
        size_t before = out.size();
        out.resize(before + kChunkBytes);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + before);
        z.avail_out = static_cast<uInt>(kChunkBytes);
        rc = inflate(&z, Z_NO_FLUSH);
        out.resize(before + (kChunkBytes - z.avail_out));
        if (out.size() > limit) return too_large();
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0) break;
            // Concatenated members, as gzip(1) writes them: decode the next one too.
            if (inflateReset(&z) != Z_OK) return unreadable("gzip");
            continue;
        }
        if (rc != Z_OK) return unreadable("gzip");
        if (z.avail_in == 0 && z.avail_out != 0) return unreadable("gzip");  // truncated
    }
    return out;
}

}  // namespace

Result<std::string> decode_body(std::string_view encoding, std::string body, uint64_t limit) {
    if (encoding.empty() || encoding == "identity") return body;
    if (encoding == "zstd") return decode_zstd(body, limit);
    if (encoding == "gzip") return decode_gzip(body, limit);
    return Status(Errc::unsupported_media_type,
                  "unsupported Content-Encoding: want zstd, gzip or none");
}

}  // namespace narad::api
