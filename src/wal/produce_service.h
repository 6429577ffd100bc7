// ProduceService: accepts produce requests on this node. It checks each message against its topic
// (the topic exists, it is not a delay child, the payload passes the topic's schema, an explicit
// partition is in range), chooses the partition (explicit; else the FNV-1a hash of the key, as
// Narad; else round-robin per topic, from a random first partition, as Narad 3.1: a message with
// no key is stored with none), and appends the batch to the ingress WAL. `done` runs once the WAL
// has made every message durable, which is when a 202 may be sent. A batch is all or nothing: one
// bad message refuses the whole batch and nothing is written.
//
// With an OwnerLiveness (a cluster), partitions whose owner is dead are avoided as Narad does:
// a keyed message walks forward from its hash partition to the first partition whose owner is not
// dead, round-robin skips them, and an explicit partition whose owner is dead is refused with
// Errc::unavailable (503). If every owner is dead, keyed and round-robin messages keep their
// partition: the WAL holds them until an owner returns.
//
// With a DirectCommits (a node), a request for partitions served here goes straight to their logs
// when it can (wal/direct_commits.h); any other goes to the WAL.
//
// Thread-safe; never blocks (the WAL and the direct path complete asynchronously).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/checksum.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "meta/meta_store.h"
#include "meta/schema.h"
#include "wal/direct_commits.h"
#include "wal/ingress_wal.h"
#include "wal/owner_liveness.h"

namespace narad::wal {

struct ProduceMessage {
    std::optional<std::string> key;
    std::optional<uint32_t> partition;
    std::string value;
};

class ProduceService {
  public:
    // `liveness` may be null (single node: no owner is ever dead), and so may `direct` (every
    // request through the WAL); both must outlive the service.
    ProduceService(Clock& clock, meta::MetaStore& store, IngressWal& wal,
                   const OwnerLiveness* liveness = nullptr, DirectCommits* direct = nullptr);

    // `done` gets ok once durable (in the WAL, or in the partition log on the direct path);
    // not_found, conflict (delay child) or invalid_argument (schema, partition) at once;
    // unavailable when the WAL's backlog is full. A batch's refusals name the message
    // ("message <i>: ..."), even in a batch of one.
    enum class Shape { single, batch };
    void produce(std::string_view topic, std::vector<ProduceMessage> messages,
                 std::function<void(Status)> done, Shape shape = Shape::single);

  private:
    Result<std::shared_ptr<const meta::CompiledSchema>> schema_for(const meta::Topic& topic);
    uint32_t next_round_robin(const std::string& topic, uint32_t partitions);
    // Chooses the partition of one message (see the file comment), or the refusal.
    Result<uint32_t> choose_partition(const meta::MetaState& state, const meta::Topic& topic,
                                      const ProduceMessage& message);

    Clock& clock_;
    meta::MetaStore& store_;
    IngressWal& wal_;
    const OwnerLiveness* liveness_;
    DirectCommits* direct_;
    Mutex mutex_;
    // A topic's compiled current schema, with the incarnation and version it was compiled from.
    struct CachedSchema {
        std::string incarnation;
        uint32_t version = 0;
        std::shared_ptr<const meta::CompiledSchema> compiled;
    };
    std::map<std::string, CachedSchema> schemas_ GUARDED_BY(mutex_);
    std::map<std::string, uint32_t> round_robin_ GUARDED_BY(mutex_);
};

}  // namespace narad::wal
