// DeadLetterer: moves the messages their partitions set aside after `max_deliveries` deliveries
// without an ack into the topic's `dead_letter_topic` (docs/dead-letters.md).
//
// One pass: for each exhausted offset of a partition loaded here that is its partition's frontier
// (every offset below it settled), read its record, commit a dead letter (an envelope of the
// record and its origin, keeping the record's key) to the dead-letter topic through the sink, and
// only once that commit is durable settle the offset on its source partition, so the partition
// moves on. An exhausted offset above the frontier is no longer delivered and waits until the
// messages before it are settled, so a partition's dead letters are written in offset order. A
// commit that fails (the dead-letter topic's owner is down, the topic was deleted) keeps the
// offset set aside and is tried again on the next pass: never lost, and it never keeps the
// messages behind it from being delivered.
//
// Exactly once in the dead-letter topic: each dead letter carries a producer stamp of its source
// partition (topic, incarnation, partition) with the sequence offset + 1, and goes to a
// dead-letter partition chosen from its key (or its source partition). Written in offset order,
// the sequences only grow, so a crash between the commit and the settle, after which the message
// is delivered again and set aside again, commits a copy the dead-letter partition skips.
//
// Thread-safe; run_once() blocks on the commit, so run it on a thread of its own.
#pragma once

#include <span>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "meta/meta_store.h"
#include "queue/consume_service.h"
#include "storage/partition_committer.h"

namespace narad::queue {

class DeadLetterer {
  public:
    // A pass tries at most this many dead letters, and stops trying a dead-letter topic after its
    // first failure, so a pass stays short when a dead-letter topic is down.
    static constexpr size_t kMaxPerPass = 1000;

    // `sink` commits the dead letters wherever their partition lives (node/ wires the routing
    // committer).
    DeadLetterer(Clock& clock, meta::MetaStore& store, ConsumeService& consume,
                 storage::PartitionCommitter& sink);

    // Dead-letters what waits now; returns how many offsets it settled.
    size_t run_once();

    // The dead letter's value: {"origin":{topic, partition, offset, deliveries, reason?,
    // timestamp}, "key"?, "payload", "payload_encoding"?}, the payload as consume shows it.
    static std::string envelope(const ExhaustedMessage& message, const Delivery& record);
    // The stamp's ingress id: one per source partition (its sequence is the offset + 1).
    static IngressId stamp_ingress(const ExhaustedMessage& message);

  private:
    Clock& clock_;
    meta::MetaStore& store_;
    ConsumeService& consume_;
    storage::PartitionCommitter& sink_;
    MonoTime failure_logged_;  // only the thread running run_once() touches it
};

}  // namespace narad::queue
