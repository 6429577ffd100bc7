#include "cli/sub.h"

#include <chrono>
#include <map>

#include "base/mutex.h"
#include "cli/ack_retry.h"
#include "cli/calls.h"
#include "cli/topic_format.h"

namespace narad::cli {
namespace {

using std::chrono::milliseconds;

void note(SubContext& context, const std::string& text) {
    MutexLock lock(context.output.mutex);
    context.output.err << context.output.style.dim(text) << '\n' << std::flush;
}

MessageView view_of(const SubOptions& options) {
    return options.raw ? MessageView::raw : MessageView::annotated;
}

void print(SubContext& context, const ConsumedMessage& message, MessageView view) {
    const std::string text = format_message(message, view, context.output.style,
                                            context.utc_offset_s(message.timestamp));
    MutexLock lock(context.output.mutex);
    context.output.out << text << std::flush;
    ++context.printed;
}

Result<std::vector<PartitionStats>> topic_stats(Api& api, const std::string& topic) {
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse response, send(api, "GET", topic_path(topic)));
    return parse_partition_stats(response.body);
}

Result<int64_t> oldest_offset(Api& api, const std::string& topic, int64_t partition) {
    NARAD_ASSIGN_OR_RETURN(std::vector<PartitionStats> stats, topic_stats(api, topic));
    for (const PartitionStats& s : stats) {
        if (s.index != partition) continue;
        if (s.unavailable()) return unavailable_partition(topic, s);
        return s.oldest_offset;
    }
    return Status(Errc::not_found, "partition " + std::to_string(partition) + " not in stats");
}

std::string replay_target(const std::string& topic, int64_t partition, int64_t offset) {
    return topic_path(topic) + "/consume?partition=" + std::to_string(partition) +
           "&offset=" + std::to_string(offset);
}

}  // namespace

Result<std::optional<ConsumedMessage>> fetch_one(Api& api, const std::string& target) {
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse response, send(api, "GET", target));
    if (response.status == 204) return std::optional<ConsumedMessage>();
    NARAD_ASSIGN_OR_RETURN(ConsumedMessage message, parse_consumed_message(response.body));
    return std::optional<ConsumedMessage>(std::move(message));
}

void run_queue_sub(SubContext& context, const SubOptions& options) {
    std::string target = topic_path(options.topic) + "/consume?wait=10s";
    if (options.partition >= 0) target += "&partition=" + std::to_string(options.partition);
    if (!options.raw) {
        const std::string mode =
            options.no_ack
                ? "queue mode, --no-ack \xe2\x80\x94 leases will lapse and messages will redeliver"
                : "queue mode \xe2\x80\x94 messages below are being consumed and acked";
        note(context, "subscribed to " + options.topic + " (" + mode + "); ctrl-c to stop");
    }
    while (!context.sleeper.stopped()) {
        auto fetched = fetch_one(context.api, target);
        if (!fetched.is_ok()) {
            if (context.sleeper.stopped()) return;
            note(context, "consume error (retrying): " + fetched.status().message());
            if (!context.sleeper.sleep_for(milliseconds(1000))) return;
            continue;
        }
        if (!fetched->has_value()) continue;  // an empty long-poll
        const ConsumedMessage& message = **fetched;
        print(context, message, view_of(options));
        if (!options.no_ack) {
            ack_with_retry(context.api, options.topic, message.receipt_handle, context.sleeper,
                           [&](const std::string& text) { note(context, text); });
        }
    }
}

Status run_peek(SubContext& context, const SubOptions& options) {
    if (options.from >= 0 && options.partition < 0) {
        return Status(Errc::invalid_argument, "--from requires --partition");
    }
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse info,
                           send(context.api, "GET", topic_path(options.topic)));
    auto stats = parse_partition_stats(info.body);
    if (!stats.is_ok()) {
        return Status(Errc::invalid_argument, "parse topic info: " + stats.status().message());
    }
    std::map<int64_t, int64_t> cursors;  // partition -> next offset, in ascending order
    for (const PartitionStats& s : *stats) {
        if (options.partition >= 0 && s.index != options.partition) continue;
        // A placeholder's zeros are no position: starting there would replay the partition's
        // whole history once its owner is back. Only a given start (--from) runs.
        if (options.from < 0 && s.unavailable()) return unavailable_partition(options.topic, s);
        cursors[s.index] = options.from >= 0 ? options.from : s.high_watermark;
    }
    if (cursors.empty()) {
        if (options.partition >= 0) {
            return Status(Errc::not_found,
                          "no reachable partition " + std::to_string(options.partition) + " on " +
                              options.topic + " (stats are owner-local; is the owner up?)");
        }
        return Status(Errc::not_found, "no partition stats for " + options.topic);
    }
    if (!options.raw) {
        note(context, "peeking " + options.topic + " across " + std::to_string(cursors.size()) +
                          " partition(s) \xe2\x80\x94 read-only, no reservations; ctrl-c to stop");
    }
    while (!context.sleeper.stopped()) {
        bool progressed = false;
        for (auto& [partition, cursor] : cursors) {
            // A bounded burst per partition so one hot partition cannot starve the sweep.
            for (int i = 0; i < kPeekBurstPerPartition; ++i) {
                auto fetched =
                    fetch_one(context.api, replay_target(options.topic, partition, cursor));
                if (!fetched.is_ok()) {
                    if (is_http_error(fetched.status(), 410)) {
                        if (auto oldest = oldest_offset(context.api, options.topic, partition);
                            oldest.is_ok()) {
                            note(context, "p" + std::to_string(partition) + ": offset " +
                                              std::to_string(cursor) + " aged out; jumping to " +
                                              std::to_string(*oldest));
                            cursor = *oldest;
                            continue;
                        }
                    }
                    if (context.sleeper.stopped()) return Status::ok();
                    note(context, "peek error (retrying): " + fetched.status().message());
                    break;
                }
                if (!fetched->has_value()) break;  // caught up on this partition
                print(context, **fetched, view_of(options));
                cursor = (*fetched)->offset + 1;
                progressed = true;
            }
        }
        if (!progressed && !context.sleeper.sleep_for(milliseconds(400))) return Status::ok();
    }
    return Status::ok();
}

Status run_replay(SubContext& context, const SubOptions& options) {
    if (options.partition < 0) {
        return Status(Errc::invalid_argument,
                      "--partition is required (replay is a positional read)");
    }
    int64_t start = options.from;
    int64_t end = options.to;
    if (start < 0 || end < 0) {
        NARAD_ASSIGN_OR_RETURN(std::vector<PartitionStats> stats,
                               topic_stats(context.api, options.topic));
        const PartitionStats* found = nullptr;
        for (const PartitionStats& s : stats) {
            if (s.index == options.partition) found = &s;
        }
        if (found == nullptr) {
            return Status(Errc::not_found, "partition " + std::to_string(options.partition) +
                                               " not in stats (owner down, or index out of range)");
        }
        if (found->unavailable()) return unavailable_partition(options.topic, *found);
        if (start < 0) start = found->oldest_offset;
        if (end < 0) end = found->high_watermark;
    }
    int64_t replayed = 0;
    for (int64_t offset = start; offset < end && !context.sleeper.stopped(); ++offset) {
        auto fetched =
            fetch_one(context.api, replay_target(options.topic, options.partition, offset));
        if (!fetched.is_ok()) {
            if (is_http_error(fetched.status(), 410)) {
                note(context, "offset " + std::to_string(offset) +
                                  " aged out of retention; skipping forward");
                continue;
            }
            return fetched.status();
        }
        if (!fetched->has_value()) break;  // reached the visible tail early
        print(context, **fetched, view_of(options));
        ++replayed;
    }
    MutexLock lock(context.output.mutex);
    context.output.err << replayed << " message(s) replayed from p" << options.partition << " ["
                       << start << ", " << end << ")\n";
    return Status::ok();
}

}  // namespace narad::cli
