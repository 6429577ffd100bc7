// Dead-owner policy (Narad's dead-owner skip): a partition whose owner node has been down longer
// than `dead_after` (as this node's metastore replica saw it) takes no new records. Producers skip
// it (ProduceService), and records already queued for it in the ingress WAL go to a live sibling
// partition instead (the dispatcher, through DeadOwnerReroute). A sibling is the first partition
// after the dead one, wrapping around, whose owner is not dead.
//
// Stateless apart from the injected clock; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "base/clock.h"
#include "meta/meta_store.h"
#include "wal/dispatcher.h"

namespace narad::wal {

class OwnerLiveness {
  public:
    OwnerLiveness(Clock& clock, Millis dead_after) : clock_(clock), dead_after_(dead_after) {}

    // The owner of topic/partition if that node is dead; nullopt when it is alive, not dead yet,
    // or the partition has no assignment.
    std::optional<NodeId> dead_owner(const meta::MetaState& state, std::string_view topic,
                                     PartitionId partition) const;
    // The first partition after `from` (wrapping, `from` itself excluded) whose owner is not dead;
    // nullopt when every other partition's owner is dead.
    std::optional<PartitionId> live_sibling(const meta::MetaState& state, const meta::Topic& topic,
                                            PartitionId from) const;
    Millis dead_after() const { return dead_after_; }

  private:
    Clock& clock_;
    Millis dead_after_;
};

// The dispatcher's ReroutePolicy: a partition of the record's incarnation whose owner is dead is
// rerouted to its live sibling. Anything else (topic gone, incarnation changed, owner alive, no
// live sibling) commits where it is, which retries or drops as usual.
class DeadOwnerReroute final : public ReroutePolicy {
  public:
    DeadOwnerReroute(meta::MetaStore& store, const OwnerLiveness& liveness)
        : store_(store), liveness_(liveness) {}

    std::optional<PartitionId> reroute(const std::string& topic, const std::string& incarnation,
                                       PartitionId partition) override;
    // A frozen partition's records go to its live sibling (of the same incarnation).
    std::optional<PartitionId> sibling(const std::string& topic, const std::string& incarnation,
                                       PartitionId partition) override;

  private:
    // Whether a partition's records move to a sibling only when its owner is dead (a reroute) or
    // whatever the owner's state (a frozen partition).
    enum class Reroute { if_owner_dead, always };

    // The live sibling of a partition of this incarnation (nullopt if the topic or incarnation is
    // gone, or the owner is not dead and `when` asks for a dead one).
    std::optional<PartitionId> sibling_of(const std::string& topic, const std::string& incarnation,
                                          PartitionId partition, Reroute when);

    meta::MetaStore& store_;
    const OwnerLiveness& liveness_;
};

}  // namespace narad::wal
