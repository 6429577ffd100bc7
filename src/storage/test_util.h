// Helpers shared by the storage tests: a fresh temporary directory per test, a fault-injecting
// filesystem, a fake clock, and shortcuts to open, append to and read back a partition log.
// Test-only; each test owns its fixture.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "base/failpoint.h"
#include "io/fault_injection_fs.h"
#include "storage/frame.h"
#include "storage/partition_log.h"

namespace narad::storage::testing {

class LogTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char pattern[] = "/tmp/narad-storage-XXXXXX";
        char* made = ::mkdtemp(pattern);
        ASSERT_NE(made, nullptr);
        root_ = made;
        directory_ = io::join_path(root_, "log");
    }
    void TearDown() override {
        failpoint::clear_all();
        log_.reset();
        (void)io::posix_file_system().remove_all(root_);
    }

    // Opens (or reopens) the log in directory_ with options_, asserting success.
    void open_log() {
        log_.reset();
        report_ = {};
        auto opened = PartitionLog::open(fs_, clock_, directory_, options_, &report_);
        ASSERT_TRUE(opened.is_ok()) << opened.status().to_string();
        log_ = std::move(*opened);
    }
    // Closes the log cleanly and opens it again.
    void reopen() {
        if (log_ != nullptr) {
            ASSERT_TRUE(log_->close().is_ok());
        }
        open_log();
    }
    // Drops the log without close(), then simulates a machine crash.
    void crash_and_reopen() {
        log_.reset();
        ASSERT_TRUE(fs_.drop_unsynced_data().is_ok());
        open_log();
    }

    static std::string value_of(uint64_t i) { return "value-" + std::to_string(i); }

    // Appends values value_of(first) .. value_of(first + count - 1), stamped with ingress/sequence
    // `first + i` when ingress is non-zero.
    AppendResult append_values(uint64_t first, size_t count, uint64_t ingress = 0) {
        std::vector<std::string> values;
        for (size_t i = 0; i < count; ++i) values.push_back(value_of(first + i));
        std::vector<Record> records;
        for (size_t i = 0; i < count; ++i) {
            Record record;
            record.key = "k";
            record.value = values[i];
            record.timestamp_ms = 1000 + static_cast<int64_t>(first + i);
            record.producer = ProducerStamp{IngressId(ingress), WalSeq(first + i)};
            records.push_back(record);
        }
        auto result = log_->append(records);
        EXPECT_TRUE(result.is_ok()) << result.status().to_string();
        return result.is_ok() ? *result : AppendResult{};
    }

    // Every record from `from` to the HWM, read in steps of `step` records.
    ReadResult read_all(Offset from = Offset(0), size_t step = 1000) {
        ReadResult all;
        all.next = from;
        while (all.next < log_->high_watermark()) {
            auto part = log_->read(all.next, step, 1u << 20);
            EXPECT_TRUE(part.is_ok()) << part.status().to_string();
            if (!part.is_ok() || part->next == all.next) break;
            for (auto& record : part->records) all.records.push_back(std::move(record));
            for (Offset offset : part->corrupt) all.corrupt.push_back(offset);
            all.next = part->next;
        }
        return all;
    }

    std::string segment_path(uint64_t base, const char* suffix = ".log") const {
        char name[40];
        snprintf(name, sizeof name, "%020llu%s", static_cast<unsigned long long>(base), suffix);
        return io::join_path(directory_, name);
    }

    // Overwrites one byte of a file (bypassing the log).
    void flip_byte(const std::string& path, uint64_t position) {
        auto file = io::posix_file_system().open(path, io::kReadWrite);
        ASSERT_TRUE(file.is_ok());
        char byte = 0;
        ASSERT_EQ((*file)->read_at(position, &byte, 1).value(), 1u);
        byte = static_cast<char>(byte ^ 0x5a);
        ASSERT_TRUE((*file)->write_at(position, std::string_view(&byte, 1)).is_ok());
    }

    // The position and header of every frame in a segment file, read directly.
    std::vector<std::pair<uint64_t, FrameHeader>> frames_of(const std::string& path) {
        std::vector<std::pair<uint64_t, FrameHeader>> frames;
        auto bytes = io::read_file(io::posix_file_system(), path);
        EXPECT_TRUE(bytes.is_ok());
        if (!bytes.is_ok()) return frames;
        uint64_t position = 0;
        while (position < bytes->size()) {
            FrameDecode decoded = decode_frame(std::string_view(*bytes).substr(position));
            if (decoded.check != FrameCheck::ok) break;
            frames.emplace_back(position, decoded.header);
            position += decoded.header.length;
        }
        return frames;
    }

    uint64_t file_size(const std::string& path) {
        auto info = io::posix_file_system().stat(path);
        return info.is_ok() ? info->size : 0;
    }

    std::string root_;
    std::string directory_;
    io::FaultInjectionFileSystem fs_;
    FakeClock clock_;
    LogOptions options_;
    RecoveryReport report_;
    std::unique_ptr<PartitionLog> log_;
};

}  // namespace narad::storage::testing
