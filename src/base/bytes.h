// Little-endian encoding helpers for the on-disk formats (docs/formats/). Pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace narad {

inline void put_u16(std::string& out, uint16_t v) {
    char b[2] = {static_cast<char>(v), static_cast<char>(v >> 8)};
    out.append(b, 2);
}
inline void put_u32(std::string& out, uint32_t v) {
    char b[4];
    for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
    out.append(b, 4);
}
inline void put_u64(std::string& out, uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
    out.append(b, 8);
}
inline void store_u32(char* p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline void store_u64(char* p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<char>(v >> (8 * i));
}
inline uint16_t load_u16(const char* p) {
    return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}
inline uint32_t load_u32(const char* p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}
inline uint64_t load_u64(const char* p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
    return v;
}

// Reads fixed-width fields from a buffer, remembering whether it ran out.
class ByteReader {
  public:
    explicit ByteReader(std::string_view data) : data_(data) {}
    uint16_t u16() { return take(2) ? load_u16(data_.data() + pos_ - 2) : 0; }
    uint32_t u32() { return take(4) ? load_u32(data_.data() + pos_ - 4) : 0; }
    uint64_t u64() { return take(8) ? load_u64(data_.data() + pos_ - 8) : 0; }
    std::string_view bytes(size_t n) {
        return take(n) ? data_.substr(pos_ - n, n) : std::string_view();
    }
    bool ok() const { return ok_; }
    size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }
    size_t position() const { return pos_; }

  private:
    bool take(size_t n) {
        if (!ok_ || data_.size() - pos_ < n) {
            ok_ = false;
            return false;
        }
        pos_ += n;
        return true;
    }
    std::string_view data_;
    size_t pos_ = 0;
    bool ok_ = true;
};

}  // namespace narad
