// ProducerTable: the dedup state of one partition log, the highest committed WAL sequence per
// ingress WAL, capped at a fixed number of ingress ids (least recently committed dropped first).
// Also its sidecar file `producers` (docs/formats/segment.md), which records the table as of an
// offset so that open() only replays the frames after it. Not thread-safe: the log guards it.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "base/status.h"
#include "storage/frame_format.h"
#include "storage/record.h"

namespace narad::storage {

class ProducerTable {
  public:
    explicit ProducerTable(size_t capacity = kProducersMax) : capacity_(capacity) {}

    // The highest committed sequence of `ingress`, or 0 if none is remembered.
    WalSeq committed(IngressId ingress) const;
    // Whether a record with this stamp was already committed (an empty stamp never was).
    bool is_duplicate(ProducerStamp stamp) const;
    // Records a committed stamp: raises the ingress's sequence and marks it most recently used;
    // drops the least recently used ingress beyond the capacity.
    void commit(ProducerStamp stamp);

    size_t size() const { return map_.size(); }
    size_t capacity() const { return capacity_; }
    void clear();

    // The sidecar file's bytes: this table as of `covered` (every frame below it is reflected).
    std::string encode(Offset covered) const;
    // Parses a sidecar file into `table`, returning the offset it covers. Fails with corrupt on a
    // short file, a checksum mismatch or more entries than the table may hold.
    static Result<Offset> decode(std::string_view bytes, ProducerTable& table);

  private:
    struct Entry {
        uint64_t ingress;
        uint64_t sequence;
    };
    size_t capacity_;
    std::list<Entry> order_;  // least recently committed first
    std::unordered_map<uint64_t, std::list<Entry>::iterator> map_;
};

}  // namespace narad::storage
