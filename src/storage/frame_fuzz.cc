// libFuzzer target for the frame decoder and the segment scans (clang++ -fsanitize=fuzzer).
// Build: configure with CMAKE_CXX_COMPILER=clang++, then
//   cmake --build <dir> --target narad_storage_frame_fuzz &&
//   <dir>/src/storage/narad_storage_frame_fuzz
#include <cstddef>
#include <cstdint>

#include "storage/frame_fuzz_check.h"

// The first byte picks the mode: raw bytes, or a recipe of valid frames plus edits.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    if (data[0] & 1) {
        narad::storage::fuzz::check_encoded_then_mutated(input);
    } else {
        narad::storage::fuzz::check_frame_decoder(input);
    }
    return 0;
}
