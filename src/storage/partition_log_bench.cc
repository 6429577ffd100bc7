// Micro-benchmark: append throughput of one partition log on the real filesystem, with batches of
// 1, 64 and 1024 records of 256 bytes, for both codecs. Each iteration is one append (one commit:
// write, fdatasync, read-back). Build: cmake --build <dir> --target narad_storage_bench.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "storage/partition_log.h"

namespace narad::storage {
namespace {

void append_batches(benchmark::State& state, Codec codec) {
    char pattern[] = "/tmp/narad-bench-XXXXXX";
    std::string directory = ::mkdtemp(pattern);
    io::FileSystem& fs = io::posix_file_system();
    LogOptions options;
    options.codec = codec;
    auto opened = PartitionLog::open(fs, SystemClock::instance(), directory + "/log", options);
    if (!opened.is_ok()) {
        state.SkipWithError(opened.status().to_string().c_str());
        return;
    }
    auto log = std::move(*opened);
    const size_t batch = static_cast<size_t>(state.range(0));
    std::string payload(256, 'x');
    for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + (i * 7) % 26);
    std::vector<Record> records(batch, Record{"", payload, 0, {}});
    for (auto _ : state) {
        auto result = log->append(records);
        if (!result.is_ok()) {
            state.SkipWithError(result.status().to_string().c_str());
            break;
        }
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * batch));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * batch * payload.size()));
    (void)log->close();
    log.reset();
    (void)fs.remove_all(directory);
}

void BM_AppendNone(benchmark::State& state) { append_batches(state, Codec::none); }
void BM_AppendZstd(benchmark::State& state) { append_batches(state, Codec::zstd); }

BENCHMARK(BM_AppendNone)->Arg(1)->Arg(64)->Arg(1024)->UseRealTime();
BENCHMARK(BM_AppendZstd)->Arg(1)->Arg(64)->Arg(1024)->UseRealTime();

}  // namespace
}  // namespace narad::storage

BENCHMARK_MAIN();
