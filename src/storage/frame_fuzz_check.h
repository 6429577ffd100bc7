// The property both the libFuzzer target (frame_fuzz.cc) and the randomized unit test
// (frame_fuzz_test.cc) check on arbitrary bytes: the frame decoder and the segment scans never
// crash, never read out of bounds, and never hand out a frame whose checksum fails. Test-only.
#pragma once

#include <string_view>

namespace narad::storage::fuzz {

// Aborts (NARAD_ASSERT) if the property fails for `data`.
void check_frame_decoder(std::string_view data);

// Reads `input` as a recipe instead: records to encode (plain or zstd) into valid frames, then byte
// edits to apply, and checks the result with check_frame_decoder. Random bytes rarely carry a
// valid checksum, so this is how a fuzzer reaches the paths behind one. Unedited frames must
// decode back to the records.
void check_encoded_then_mutated(std::string_view input);

}  // namespace narad::storage::fuzz
