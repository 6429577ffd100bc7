// XXH3 checksums for frames, WAL records and sidecar files. Pure functions, any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace narad {

uint64_t checksum64(const void* data, size_t size);
inline uint64_t checksum64(std::string_view bytes) {
    return checksum64(bytes.data(), bytes.size());
}

// Narad's key hash (FNV-1a, 32 bits): a keyed message's partition is fnv1a32(key) % partitions.
inline uint32_t fnv1a32(std::string_view bytes) {
    uint32_t hash = 2166136261u;
    for (char c : bytes) {
        hash ^= static_cast<uint8_t>(c);
        hash *= 16777619u;
    }
    return hash;
}

// Incremental form, for data that lives in several buffers.
class Checksummer {
  public:
    Checksummer();
    ~Checksummer();
    Checksummer(const Checksummer&) = delete;
    Checksummer& operator=(const Checksummer&) = delete;
    void update(const void* data, size_t size);
    void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
    uint64_t digest() const;

  private:
    void* state_;
};

}  // namespace narad
