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
