// The record types that cross the storage boundary: what an append takes and what a read returns.
// Plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/ids.h"

namespace narad::storage {

// Identifies where a record entered the cluster: the ingress WAL that accepted it and its sequence
// there. A partition log remembers, per ingress WAL, the highest sequence it has committed, and
// skips a record at or below it, so a replayed or retried commit never appends the same record
// twice. Callers must send each partition a given ingress WAL's records in increasing sequence
// order.
struct ProducerStamp {
    IngressId ingress;  // 0 = no stamp: the record is never treated as a duplicate
    WalSeq sequence;

    bool empty() const { return ingress.value() == 0; }
};

// A record to append. The views must stay valid until append() returns.
struct Record {
    std::string_view key;
    std::string_view value;
    int64_t timestamp_ms = 0;  // wall-clock milliseconds when the record was accepted
    ProducerStamp producer;
};

// A record read back from a log.
struct StoredRecord {
    Offset offset;
    int64_t timestamp_ms = 0;
    std::string key;
    std::string value;
};

}  // namespace narad::storage
