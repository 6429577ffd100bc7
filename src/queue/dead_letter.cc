#include "queue/dead_letter.h"

#include <set>

#include "base/base64.h"
#include "base/checksum.h"
#include "base/failpoint.h"
#include "base/json_text.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/utf8.h"

namespace narad::queue {
namespace {

struct Metrics {
    metrics::Family<metrics::Counter>& dead_lettered = metrics::Registry::global().counter(
        "narad_dead_lettered_total",
        "Messages delivered max_deliveries times without an ack and committed to the topic's "
        "dead-letter topic.",
        {"topic"});
    metrics::Family<metrics::Counter>& failures = metrics::Registry::global().counter(
        "narad_dead_letter_failures_total",
        "Dead letters the dead-letter topic did not take (retried; the message waits).", {"topic"});
    metrics::Family<metrics::Counter>& unreadable = metrics::Registry::global().counter(
        "narad_dead_letter_unreadable_total",
        "Exhausted messages settled without a dead letter: retention deleted them or their frame "
        "is damaged.",
        {"topic"});
};

Metrics& metrics_instance() {
    static Metrics* m = new Metrics();
    return *m;
}

}  // namespace

DeadLetterer::DeadLetterer(Clock& clock, meta::MetaStore& store, ConsumeService& consume,
                           storage::PartitionCommitter& sink)
    : clock_(clock), store_(store), consume_(consume), sink_(sink) {}

IngressId DeadLetterer::stamp_ingress(const ExhaustedMessage& message) {
    Checksummer sum;
    sum.update("narad-dead-letter");
    for (std::string_view part :
         {std::string_view(message.topic), std::string_view(message.incarnation.value())}) {
        uint64_t size = part.size();
        sum.update(&size, sizeof size);
        sum.update(part);
    }
    uint32_t partition = message.partition.value();
    sum.update(&partition, sizeof partition);
    return IngressId(sum.digest() | 1);
}

std::string DeadLetterer::envelope(const ExhaustedMessage& message, const Delivery& record) {
    std::string out = "{\"origin\":{\"topic\":" + json_string(message.topic) +
                      ",\"partition\":" + std::to_string(message.partition.value()) +
                      ",\"offset\":" + std::to_string(message.exhausted.offset.value()) +
                      ",\"deliveries\":" + std::to_string(message.exhausted.deliveries);
    if (!message.exhausted.reason.empty()) {
        out += ",\"reason\":" + json_string(message.exhausted.reason);
    }
    out += ",\"timestamp\":" + std::to_string(record.timestamp_ms / 1000) + "}";
    if (!record.key.empty()) out += ",\"key\":" + json_string(record.key);
    out += ",\"payload\":";
    if (is_valid_json(record.value)) {
        out += record.value;
    } else if (is_valid_utf8(record.value)) {
        out += json_string(record.value);
    } else {
        out += "\"" + base64_encode(record.value) + "\",\"payload_encoding\":\"base64\"";
    }
    return out + "}";
}

size_t DeadLetterer::run_once() {
    size_t settled = 0;
    size_t attempts = 0;
    std::set<std::string> refusing;  // dead-letter topics that failed in this pass
    for (const ExhaustedMessage& message : consume_.exhausted()) {
        if (!message.at_frontier) continue;  // after the messages before it
        if (++attempts > kMaxPerPass) break;
        meta::MetaSnapshot view = store_.snapshot();
        const meta::Topic* source = view->find_topic(message.topic);
        if (source == nullptr || source->incarnation != message.incarnation) continue;
        if (refusing.count(source->dead_letter_topic) > 0) continue;
        const meta::Topic* target = view->find_topic(source->dead_letter_topic);
        auto record = consume_.replay(message.topic, message.partition, message.exhausted.offset);
        if (!record.is_ok() && record.code() == Errc::gone) {
            // Retention deleted it or its frame is damaged: there is nothing left to send.
            NARAD_LOG_WARN("{}/{}@{} is gone ({}); settled without a dead letter", message.topic,
                           message.partition.value(), message.exhausted.offset.value(),
                           record.status().message());
            if (consume_.settle_exhausted(message)) {
                metrics_instance().unreadable.with({message.topic}).inc();
            }
            continue;
        }
        if (!record.is_ok() || !*record) continue;  // not readable now: next pass
        Status committed;
        if (target == nullptr) {
            committed = Status(Errc::not_found, "dead_letter_topic \"" + source->dead_letter_topic +
                                                    "\" does not exist");
        } else {
            std::string value = envelope(message, **record);
            const std::string& key = (*record)->key;
            uint32_t partitions = std::max<uint32_t>(target->partitions, 1);
            uint32_t partition =
                key.empty() ? message.partition.value() % partitions : fnv1a32(key) % partitions;
            storage::Record letter{
                key, value, clock_.wall_ms(),
                storage::ProducerStamp{stamp_ingress(message),
                                       WalSeq(message.exhausted.offset.value() + 1)}};
            committed = sink_.commit(target->name, target->incarnation.value(),
                                     PartitionId(partition), std::span(&letter, 1));
        }
        if (!committed.is_ok()) {
            refusing.insert(source->dead_letter_topic);
            metrics_instance().failures.with({message.topic}).inc();
            MonoTime now = clock_.now();
            if (now - failure_logged_ >= std::chrono::seconds(30)) {
                failure_logged_ = now;
                NARAD_LOG_ERROR("dead letter of {}/{}@{} not taken, the message waits: {}",
                                message.topic, message.partition.value(),
                                message.exhausted.offset.value(), committed.to_string());
            }
            continue;
        }
        NARAD_FAILPOINT("dead_letter.after_commit");
        if (consume_.settle_exhausted(message)) {
            metrics_instance().dead_lettered.with({message.topic}).inc();
            ++settled;
        }
    }
    return settled;
}

}  // namespace narad::queue
