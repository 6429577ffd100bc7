// DeadLetterer: moves the messages their partitions set aside after `max_deliveries` deliveries
// without an ack into the topic's `dead_letter_topic` (docs/dead-letters.md).
//
// One pass: for each exhausted offset of a partition loaded here, read its record, commit a dead
// letter (an envelope of the record and its origin, keeping the record's key) to the dead-letter
// topic through the sink, and only once that commit is durable settle the offset on its source
// partition, so the partition moves on. A commit that fails (the dead-letter topic's owner is
// down, the topic was deleted) keeps the offset set aside and is tried again on the next pass:
// never lost, and it does not block the partition's other messages (only its frontier).
//
// Exactly once in the dead-letter topic: each dead letter carries a producer stamp derived from
// its source (topic, incarnation, partition, offset), and goes to a partition chosen from its key
// (or its source partition), so a crash between the commit and the settle, after which the
// message is delivered again and set aside again, commits a copy the dead-letter partition skips.
//
// Thread-safe; run_once() blocks on the commit, so run it on a thread of its own.
#pragma once

#include <span>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "meta/meta_store.h"
#include "queue/consume_service.h"
#include "storage/record.h"

namespace narad::queue {

// Commits dead letters to a partition wherever it lives (node/ wires the routing committer).
// Must be idempotent by producer stamp; Errc::not_found: that topic (or incarnation) is gone.
class DeadLetterSink {
  public:
    virtual ~DeadLetterSink() = default;
    virtual Status commit(const std::string& topic, const std::string& incarnation,
                          PartitionId partition, std::span<const storage::Record> records) = 0;
};

class DeadLetterer {
  public:
    DeadLetterer(Clock& clock, meta::MetaStore& store, ConsumeService& consume,
                 DeadLetterSink& sink);

    // Dead-letters what waits now; returns how many offsets it settled.
    size_t run_once();

    // The dead letter's value: {"origin":{topic, partition, offset, deliveries, reason?,
    // timestamp}, "key"?, "payload", "payload_encoding"?}, the payload as consume shows it.
    static std::string envelope(const ExhaustedMessage& message, const Delivery& record);
    static IngressId stamp_ingress(const ExhaustedMessage& message);

  private:
    Clock& clock_;
    meta::MetaStore& store_;
    ConsumeService& consume_;
    DeadLetterSink& sink_;
    MonoTime failure_logged_;  // only the thread running run_once() touches it
};

}  // namespace narad::queue
