// Test support for api/'s compressed-body tests: a body compressed as a client would send it with
// `Content-Encoding: zstd` or `gzip`. Header-only, test code only.
#pragma once

#include <zlib.h>
#include <zstd.h>

#include <string>
#include <string_view>

namespace narad::api::testing {

inline std::string zstd_of(std::string_view plain) {
    std::string out(ZSTD_compressBound(plain.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3));
    return out;
}

inline std::string gzip_of(std::string_view plain) {
    z_stream z{};
    deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, plain.size()), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

}  // namespace narad::api::testing
