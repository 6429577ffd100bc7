// The cluster port's handler and routes (see internal_routes.h).
#include "api/internal_routes.h"

#include <nlohmann/json.hpp>

#include "api/message_handlers.h"
#include "api/owner_routing.h"
#include "api/params.h"
#include "api/respond.h"
#include "base/json_text.h"
#include "base/log.h"
#include "fanout/engine.h"
#include "wal/commit_codec.h"

namespace narad::api {
namespace {

void commit(InternalCommitContext& context, net::HttpRequest request, net::Responder respond) {
    auto topic = request.query_param("topic");
    auto incarnation = request.query_param("incarnation");
    auto partition_text = request.query_param("partition");
    if (!topic || !incarnation || !partition_text) {
        return respond(error_response(Errc::invalid_argument,
                                      "topic, incarnation and partition are required"));
    }
    auto partition = parse_unsigned<uint32_t>(*partition_text);
    if (!partition) return respond(error_response(Errc::invalid_argument, "invalid partition"));
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* record = snapshot->find_topic(*topic);
    if (record == nullptr || record->incarnation.value() != *incarnation ||
        *partition >= record->partitions) {
        // "Gone" is only the answer when this replica is at least as new as the sender's: a 404
        // makes the sender drop records it already acknowledged.
        auto sender_revision =
            parse_unsigned<uint64_t>(request.query_param("revision").value_or("0"));
        if (!sender_revision || *sender_revision > snapshot->revision) {
            return respond(error_response(
                Errc::unavailable, "this node's metastore replica is behind the sender's; retry"));
        }
        return respond(error_response(Errc::not_found, "topic not found"));
    }
    // The owner refuses commits for a partition it does not own (it may have moved away, or the
    // sender's replica is behind): the sender keeps the records and retries.
    const meta::Assignment* assignment = snapshot->find_assignment(*topic, PartitionId(*partition));
    if (assignment == nullptr || assignment->owner != context.node_id) {
        return respond(error_response(Errc::not_owner, errc_text(Errc::not_owner)));
    }
    auto body = std::make_shared<std::string>(std::move(request.body));
    auto records = wal::commit_codec::decode(*body);
    if (!records.is_ok()) return respond(error_response(records.status()));
    answer_on_pool(context.pool, std::move(respond),
                   [&context, body, records = std::move(*records), topic = std::string(*topic),
                    incarnation = std::string(*incarnation), partition = *partition] {
                       Status status = context.committer.commit(topic, incarnation,
                                                                PartitionId(partition), records);
                       if (status.is_ok()) return empty_response(204);
                       if (status.code() == Errc::not_found) {
                           return error_response(Errc::not_found, "topic not found");
                       }
                       return domain_error_response(status, "commit");
                   });
}

std::string stats_json(uint32_t index, const storage::LogStats& stats) {
    nlohmann::json item = {
        {"index", index},
        {"segments", stats.segments},
        {"oldest_offset", stats.oldest_offset.value()},
        {"high_watermark", stats.high_watermark.value()},
        {"size_bytes", stats.size_bytes},
        {"oldest_segment_at_ns", stats.oldest_segment_at.time_since_epoch().count()},
    };
    return item.dump();
}

// Stats of the topic's partitions owned here: {"partitions":[{index, segments, ...}]}.
void partition_stats(const InternalMessageRouteContext& context, const std::string& topic,
                     net::Responder respond) {
    meta::MetaSnapshot snapshot = context.messages.store.snapshot();
    const meta::Topic* record = snapshot->find_topic(topic);
    if (record == nullptr) return respond(error_response(Errc::not_found, "topic not found"));
    uint32_t partitions = record->partitions;
    answer_on_pool(context.blocking, std::move(respond), [&context, snapshot, topic, partitions] {
        std::string body = "{\"partitions\":[";
        bool first = true;
        for (uint32_t p = 0; p < partitions; ++p) {
            const meta::Assignment* assignment = snapshot->find_assignment(topic, PartitionId(p));
            if (assignment == nullptr || assignment->owner != context.messages.routing.self) {
                continue;
            }
            storage::LogStats stats;
            auto log = context.logs.get(topic, PartitionId(p), storage::CreateIfMissing::no);
            if (log.is_ok()) {
                stats = (*log)->stats();
            } else if (log.code() != Errc::not_found) {
                return error_response(Errc::internal, "partition stats failed");
            }
            if (!first) body += ',';
            first = false;
            body += stats_json(p, stats);
        }
        body += "]}\n";
        return json_response(200, std::move(body));
    });
}

}  // namespace

void register_internal_commit_route(Router& router, InternalCommitContext& context) {
    InternalCommitContext* c = &context;
    router.add("POST", "/internal/v1/commit",
               [c](net::HttpRequest r, const PathParams&, net::Responder d) {
                   commit(*c, std::move(r), std::move(d));
               });
}

void register_internal_message_routes(Router& router, InternalMessageRouteContext context) {
    auto c = std::make_shared<const InternalMessageRouteContext>(std::move(context));
    router.add("GET", "/internal/v1/topics/{topic}/consume",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   handle_consume(c->messages, std::move(r), p.get("topic"), Scope::local_only,
                                  std::move(d));
               });
    router.add("POST", "/internal/v1/topics/{topic}/ack",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   handle_ack(c->messages, std::move(r), p.get("topic"), Scope::local_only,
                              std::move(d));
               });
    router.add("POST", "/internal/v1/topics/{topic}/ack/batch",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   handle_ack_batch(c->messages, std::move(r), p.get("topic"), Scope::local_only,
                                    std::move(d), std::nullopt);
               });
    router.add("GET", "/internal/v1/topics/{topic}/stats",
               [c](net::HttpRequest, const PathParams& p, net::Responder d) {
                   partition_stats(*c, p.get("topic"), std::move(d));
               });
    // The positions of the fan-out cursors this node runs for a parent (the children listing).
    router.add(
        "GET", "/internal/v1/topics/{topic}/fanout",
        [c](net::HttpRequest, const PathParams& p, net::Responder d) {
            std::string body = "{\"cursors\":[";
            if (c->fanout != nullptr) {
                bool first = true;
                for (const fanout::CursorStat& stat : c->fanout->cursor_stats(p.get("topic"))) {
                    if (!first) body += ",";
                    first = false;
                    body += "{\"child\":" + json_string(stat.child) +
                            ",\"partition\":" + std::to_string(stat.partition.value()) +
                            ",\"next_offset\":" + std::to_string(stat.next.value()) +
                            ",\"high_watermark\":" + std::to_string(stat.high_watermark.value()) +
                            ",\"anchored\":" + (stat.anchored ? "true" : "false") + "}";
                }
            }
            body += "]}\n";
            d(json_response(200, std::move(body)));
        });
}

}  // namespace narad::api
