#include "wal/produce_service.h"

#include "base/metrics.h"
#include "base/mutex.h"
#include "base/random.h"

namespace narad::wal {
namespace {

metrics::Family<metrics::Counter>& rejections() {
    static auto& family = metrics::Registry::global().counter(
        "narad_produce_rejections_total", "Produce requests refused, by reason.",
        {"topic", "reason"});
    return family;
}

}  // namespace

ProduceService::ProduceService(Clock& clock, meta::MetaStore& store, IngressWal& wal,
                               const OwnerLiveness* liveness, DirectCommits* direct)
    : clock_(clock), store_(store), wal_(wal), liveness_(liveness), direct_(direct) {}

Result<std::shared_ptr<const meta::CompiledSchema>> ProduceService::schema_for(
    const meta::Topic& topic) {
    MutexLock lock(mutex_);
    auto it = schemas_.find(topic.name);
    // A version's document never changes while the topic lives, and a recreated topic has a new
    // incarnation: the pair names the document.
    if (it != schemas_.end() && it->second.version == topic.schema_version() &&
        it->second.incarnation == topic.incarnation.value()) {
        return it->second.compiled;
    }
    NARAD_ASSIGN_OR_RETURN(auto compiled, meta::CompiledSchema::compile(topic.schema()));
    schemas_[topic.name] = {topic.incarnation.value(), topic.schema_version(), compiled};
    return compiled;
}

uint32_t ProduceService::next_round_robin(const std::string& topic, uint32_t partitions) {
    MutexLock lock(mutex_);
    auto [it, fresh] = round_robin_.try_emplace(topic, 0);
    // Each topic starts at a random partition, so producers writing several topics in turn still
    // spread every one of them over all its partitions.
    if (fresh) it->second = static_cast<uint32_t>(std::stoul(random_hex(4), nullptr, 16));
    return it->second++ % partitions;
}

Result<uint32_t> ProduceService::choose_partition(const meta::MetaState& state,
                                                  const meta::Topic& topic,
                                                  const ProduceMessage& message) {
    auto dead = [&](uint32_t p) {
        return liveness_ != nullptr && liveness_->dead_owner(state, topic.name, PartitionId(p));
    };
    if (message.partition) {
        if (*message.partition >= topic.partitions) {
            return Status(Errc::invalid_argument, "invalid argument: partition out of range");
        }
        if (liveness_ != nullptr) {
            if (auto owner =
                    liveness_->dead_owner(state, topic.name, PartitionId(*message.partition))) {
                return Status(Errc::unavailable, "partition " + std::to_string(*message.partition) +
                                                     " is unavailable: its owner node " +
                                                     owner->value() + " is down");
            }
        }
        return *message.partition;
    }
    if (message.key) {
        // Narad's dead-owner skip: walk forward from the hash partition.
        uint32_t home = fnv1a32(*message.key) % topic.partitions;
        for (uint32_t step = 0; step < topic.partitions; ++step) {
            uint32_t p = (home + step) % topic.partitions;
            if (!dead(p)) return p;
        }
        return home;
    }
    uint32_t first = next_round_robin(topic.name, topic.partitions);
    if (!dead(first)) return first;
    for (uint32_t step = 1; step < topic.partitions; ++step) {
        uint32_t p = next_round_robin(topic.name, topic.partitions);
        if (!dead(p)) return p;
    }
    return first;
}

void ProduceService::produce(std::string_view topic_name, std::vector<ProduceMessage> messages,
                             std::function<void(Status)> done, Shape shape) {
    meta::MetaSnapshot snapshot = store_.snapshot();
    const meta::Topic* topic = snapshot->find_topic(topic_name);
    if (topic == nullptr) return done(Status(Errc::not_found, "topic not found"));
    if (topic->role == meta::TopicRole::child && topic->fanout_delay_ms > 0) {
        rejections().with({topic->name, "delayed_child"}).inc();
        return done(
            Status(Errc::conflict, "direct produce to a delayed child topic is not allowed"));
    }
    std::shared_ptr<const meta::CompiledSchema> schema;
    if (!topic->schema().empty()) {
        auto compiled = schema_for(*topic);
        if (!compiled.is_ok()) return done(compiled.status());
        schema = *compiled;
    }
    std::vector<IngressRecord> records;
    records.reserve(messages.size());
    int64_t now_ms = clock_.wall_ms();
    for (size_t i = 0; i < messages.size(); ++i) {
        ProduceMessage& message = messages[i];
        auto refuse = [&](Status status) {
            if (shape == Shape::batch) {
                status =
                    Status(status.code(), "message " + std::to_string(i) + ": " + status.message());
            }
            done(std::move(status));
        };
        if (schema) {
            Status valid = schema->validate(message.value);
            if (!valid.is_ok()) {
                rejections().with({topic->name, "schema"}).inc();
                return refuse(std::move(valid));
            }
        }
        auto chosen = choose_partition(*snapshot, *topic, message);
        if (!chosen.is_ok()) {
            if (chosen.code() == Errc::unavailable) {
                rejections().with({topic->name, "owner_down"}).inc();
            }
            return refuse(chosen.status());
        }
        uint32_t partition = *chosen;
        IngressRecord record;
        record.topic = topic->name;
        record.incarnation = topic->incarnation.value();
        record.partition = PartitionId(partition);
        if (message.key) record.key = std::move(*message.key);
        record.value = std::move(message.value);
        record.timestamp_ms = now_ms;
        records.push_back(std::move(record));
    }
    if (direct_ != nullptr && direct_->try_take(*snapshot, records, done)) return;
    wal_.append(std::move(records), std::move(done));
}

}  // namespace narad::wal
