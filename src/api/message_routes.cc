// The message routes: produce (single and batch), consume (queue, pinned, replay, batch) and ack
// (single and batch). In a cluster, consume, replay and ack of a partition owned elsewhere go to
// its owner (api/owner_routing.h); the same handlers serve the cluster port's local-only variants.
#include "api/message_routes.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>

#include "api/body_encoding.h"
#include "api/message_handlers.h"
#include "api/owner_turns.h"
#include "api/params.h"
#include "api/peer_json.h"
#include "api/produce_gate.h"
#include "api/request_json.h"
#include "api/respond.h"
#include "api/wire_json.h"
#include "base/duration.h"
#include "base/json_scan.h"
#include "base/json_text.h"
#include "base/mutex.h"

namespace narad::api {
namespace {

std::string_view raw_query(const net::HttpRequest& request) {
    auto question = request.target.find('?');
    if (question == std::string::npos) return {};
    return std::string_view(request.target).substr(question + 1);
}

// A draining node refuses client produce, so the client retries on another node; one it admits
// is counted until answered (api/produce_gate.h).
net::Responder admitted(const MessageRouteContext& context, net::Responder respond) {
    if (context.produce_gate == nullptr) return respond;
    if (!context.produce_gate->admit()) {
        net::HttpResponse refused = error_response(
            Errc::unavailable,
            "this node is being decommissioned and takes no new produce; send it to another "
            "node");
        refused.headers.emplace_back("Retry-After", "1");
        respond(std::move(refused));
        return nullptr;
    }
    return [gate = context.produce_gate, respond = std::move(respond)](net::HttpResponse r) {
        respond(std::move(r));
        gate->answered();
    };
}

void produce(const MessageRouteContext& context, net::HttpRequest request, const PathParams& params,
             net::Responder respond) {
    respond = admitted(context, std::move(respond));
    if (!respond) return;
    auto parsed = parse_produce_params(raw_query(request));
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    if (request.body.empty()) {
        return respond(error_response(Errc::invalid_argument, "message required"));
    }
    // A JSON payload is returned verbatim on consume and may be walked by a schema: one that nests
    // deeper than Narad's limit is refused here, as Narad does.
    if (json_scan::nests_deeper_than(request.body, json_scan::kPayloadMaxDepth)) {
        return respond(error_response(Errc::invalid_argument,
                                      "payload nests deeper than " +
                                          std::to_string(json_scan::kPayloadMaxDepth) + " levels"));
    }
    std::vector<wal::ProduceMessage> messages(1);
    messages[0].key = std::move(parsed->key);
    messages[0].partition = parsed->partition;
    messages[0].value = std::move(request.body);
    context.produce.produce(params.get("topic"), std::move(messages),
                            [respond = std::move(respond)](Status status) {
                                if (!status.is_ok()) {
                                    return respond(domain_error_response(status, "produce"));
                                }
                                respond(empty_response(202));
                            });
}

void produce_batch(const MessageRouteContext& context, net::HttpRequest request,
                   const PathParams& params, net::Responder respond) {
    respond = admitted(context, std::move(respond));
    if (!respond) return;
    if (Status query = check_produce_batch_query(raw_query(request)); !query.is_ok()) {
        return respond(error_response(query));
    }
    auto body = decode_body(request.header("content-encoding").value_or(""),
                            std::move(request.body), kMaxBatchBodyBytes);
    if (!body.is_ok()) return respond(error_response(body.status()));
    auto decoded = decode_produce_batch(*body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    size_t count = decoded->size();
    // Read, the batch counts as its messages under the per-identity produce cap.
    if (request.admission && !request.admission->resize(count)) {
        net::HttpResponse refused =
            error_response(Errc::too_many_requests,
                           "too many in-flight produce requests for this identity (the batch's " +
                               std::to_string(count) + " messages exceed the per-node limit)");
        refused.headers.emplace_back("Retry-After", "1");
        return respond(std::move(refused));
    }
    context.produce.produce(
        params.get("topic"), std::move(*decoded),
        [respond = std::move(respond), count](Status status) {
            if (!status.is_ok()) return respond(domain_error_response(status, "produce"));
            respond(json_response(202, "{\"accepted\":" + std::to_string(count) + "}\n"));
        },
        wal::ProduceService::Shape::batch);
}

// The most encoded bytes of messages one batch consume answers with (Narad 3.2): the first
// message always goes; those after the one that would cross it are handed back at once.
constexpr size_t kMaxConsumeReplyBytes = 8 << 20;

net::HttpResponse messages_response(const MessageRouteContext& context, const std::string& topic,
                                    const std::vector<queue::Delivery>& messages, bool batch) {
    if (messages.empty()) return empty_response(204);
    std::string body;
    if (batch) body = "{\"messages\":[";
    size_t sent = messages.size();
    for (size_t i = 0; i < messages.size(); ++i) {
        size_t mark = body.size();
        if (i > 0) body += ',';
        const queue::Delivery& m = messages[i];
        std::string handle;
        if (m.lease_id != LeaseId(0)) {
            handle = format_receipt_handle(ReceiptHandle{m.partition, m.offset, m.lease_id});
        }
        append_message_json(body, topic, m, handle);
        if (batch && i > 0 && body.size() + 3 > kMaxConsumeReplyBytes) {
            body.resize(mark);
            sent = i;
            break;
        }
    }
    // Reserved for a response that does not carry them: the next consume takes them now rather
    // than when their leases lapse.
    for (size_t i = sent; i < messages.size(); ++i) {
        const queue::Delivery& m = messages[i];
        if (m.lease_id == LeaseId(0)) continue;
        (void)context.consume.settle(topic, m.partition, m.offset, m.lease_id, queue::Settle::nack);
    }
    if (batch) body += "]}";
    body += '\n';
    return json_response(200, std::move(body));
}

void replay(const MessageRouteContext& context, const std::string& topic,
            const ConsumeParams& params, net::Responder respond) {
    // Reads by offset go where consume reads go (off the I/O threads).
    auto read_all = [&context, topic, params, respond]() mutable {
        std::vector<queue::Delivery> messages;
        for (uint32_t i = 0; i < params.max; ++i) {
            auto read = context.consume.replay(topic, PartitionId(*params.partition),
                                               Offset(*params.offset + i));
            if (!read.is_ok()) {
                if (!messages.empty()) break;  // answer with what was read before the gap
                return respond(domain_error_response(read.status(), "consume"));
            }
            if (!*read) break;
            messages.push_back(std::move(**read));
        }
        respond(messages_response(context, topic, messages, params.batch));
    };
    Status queued = context.consume.run_read(read_all);
    if (!queued.is_ok()) respond(domain_error_response(queued, "consume"));
}

net::HttpResponse not_owner_response() {
    return error_response(Errc::not_owner, errc_text(Errc::not_owner));
}

// How long one wait inside a topic-wide consume that spans nodes parks on local partitions before
// it polls the owners of the others again.
constexpr Millis kPollSlice{200};

// A local consume, waited for on the calling (pool) thread.
Result<std::vector<queue::Delivery>> consume_now(const MessageRouteContext& context,
                                                 queue::ConsumeRequest request) {
    Mutex mutex;
    CondVar cv;
    std::optional<Result<std::vector<queue::Delivery>>> out;
    context.consume.consume(std::move(request), [&](Result<std::vector<queue::Delivery>> result) {
        MutexLock lock(mutex);
        out = std::move(result);
        cv.notify_all();
    });
    MutexLock lock(mutex);
    cv.wait(lock, [&] { return out.has_value(); });
    return std::move(*out);
}

// A topic-wide consume whose topic has partitions on other nodes. Its sources are this node's
// partitions and each live owner of the others (local only there), asked in OwnerTurns' order
// (this node first unless another owner's turn is due); it takes the first source that has
// messages. When every source is empty it parks on the local partitions for at most kPollSlice,
// then asks them all again, until `wait` is over.
void scatter_consume(const MessageRouteContext& context, const std::string& topic,
                     const ConsumeParams& params, std::vector<NodeId> owners,
                     net::Responder respond) {
    static OwnerTurns turns;
    run_routed(context.routing, std::move(respond), [&context, topic, params, owners] {
        MonoTime deadline = context.clock.now() + params.wait;
        std::string target = internal_topic_target(topic, "/consume?wait=0");
        if (params.batch) target += "&max=" + std::to_string(params.max);
        auto local = [&](Millis wait) -> std::optional<net::HttpResponse> {
            queue::ConsumeRequest request;
            request.topic = topic;
            request.max = params.max;
            request.wait = wait;
            auto taken = consume_now(context, std::move(request));
            if (!taken.is_ok()) return domain_error_response(taken.status(), "consume");
            if (taken->empty()) return std::nullopt;
            return messages_response(context, topic, *taken, params.batch);
        };
        auto remote = [&](const NodeId& owner) -> std::optional<net::HttpResponse> {
            if (context.routing.liveness != nullptr &&
                context.store.snapshot()->is_dead(owner, context.clock.now(),
                                                  context.routing.liveness->dead_after())) {
                return std::nullopt;
            }
            turns.asked(topic, owner, context.clock.now());
            auto reply = context.routing.peers->call(owner, "GET", target, "", "",
                                                     context.routing.peer_timeout);
            // An unreachable owner must not stall the rest.
            if (!reply.is_ok() || (reply->status != 200 && reply->status != 404)) {
                return std::nullopt;
            }
            net::HttpResponse response;
            response.status = reply->status;
            response.content_type = reply->content_type;
            response.body = std::move(reply->body);
            return response;
        };
        while (true) {
            for (size_t source : turns.order(topic, owners, context.clock.now())) {
                auto answer =
                    source == OwnerTurns::kLocal ? local(Millis{0}) : remote(owners[source]);
                if (answer) return std::move(*answer);
            }
            MonoTime now = context.clock.now();
            if (now >= deadline || context.shutting_down()) return empty_response(204);
            auto parked =
                local(std::min(std::chrono::duration_cast<Millis>(deadline - now), kPollSlice));
            if (parked) return std::move(*parked);
        }
    });
}

// Partitions of the topic owned by live peers (those a topic-wide consume must also ask).
std::vector<NodeId> remote_owners(const MessageRouteContext& context, const meta::MetaState& state,
                                  const meta::Topic& topic) {
    std::vector<NodeId> owners;
    for (uint32_t p = 0; p < topic.partitions; ++p) {
        PartitionOwner owner = locate(context.routing, state, topic.name, PartitionId(p));
        if (owner.placement != Placement::remote) continue;
        if (std::find(owners.begin(), owners.end(), owner.node) == owners.end()) {
            owners.push_back(owner.node);
        }
    }
    return owners;
}

// What an ack action means to the queue, in error texts, and as the `extend` value that the
// node-to-node batch ack carries.
struct AckMeaning {
    queue::Settle settle;
    const char* operation;
    const char* extend;
};

const AckMeaning& meaning(AckAction action) {
    static constexpr AckMeaning kAck{queue::Settle::ack, "ack", ""};
    static constexpr AckMeaning kExtend{queue::Settle::extend, "extend ack", "true"};
    static constexpr AckMeaning kNack{queue::Settle::nack, "nack", "0"};
    switch (action) {
        case AckAction::extend:
            return kExtend;
        case AckAction::nack:
            return kNack;
        case AckAction::ack:
            break;
    }
    return kAck;
}

// One ack, extend or nack; ok or the response to send.
Status settle_one(const MessageRouteContext& context, const std::string& topic,
                  std::string_view handle_text, AckAction action, std::string_view reason = {}) {
    auto handle = parse_receipt_handle(handle_text);
    if (!handle) return Status(Errc::invalid_argument, "receipt handle is malformed");
    return context.consume.settle(topic, handle->partition, handle->offset, handle->lease_id,
                                  meaning(action).settle, reason);
}

// The result of one handle of a batch ack.
struct HandleResult {
    int status = 204;
    std::string error;
};

HandleResult settle_result(const MessageRouteContext& context, const std::string& topic,
                           std::string_view handle, AckAction action) {
    Status status = settle_one(context, topic, handle, action);
    if (status.is_ok()) return {};
    net::HttpResponse error = domain_error_response(status, meaning(action).operation);
    return {error.status, status.message()};
}

net::HttpResponse batch_ack_response(const std::vector<std::string>& handles,
                                     const std::vector<HandleResult>& results) {
    std::string body = "{\"results\":[";
    for (size_t i = 0; i < handles.size(); ++i) {
        if (i > 0) body += ',';
        body += "{\"receipt_handle\":";
        append_json_string(body, handles[i], HtmlEscape::no);
        body += ",\"status\":" + std::to_string(results[i].status);
        if (results[i].status != 204) {
            body += ",\"error\":";
            append_json_string(body, results[i].error, HtmlEscape::no);
        }
        body += '}';
    }
    body += "]}\n";
    return json_response(200, std::move(body));
}

// Sends `indexes` of the batch to their owner and fills their results from its answer.
void settle_remote(const MessageRouteContext& context, const std::string& topic,
                   const NodeId& owner, const std::vector<std::string>& handles,
                   const std::vector<size_t>& indexes, const std::string& extend,
                   std::vector<HandleResult>& results) {
    nlohmann::json request = {{"receipt_handles", nlohmann::json::array()}, {"extend", extend}};
    for (size_t i : indexes) request["receipt_handles"].push_back(handles[i]);
    net::HttpResponse answer =
        forward_to_owner(context.routing, owner, "POST", internal_topic_target(topic, "/ack/batch"),
                         request.dump(), context.routing.peer_timeout);
    auto fail_all = [&](int status, const std::string& message) {
        for (size_t i : indexes) results[i] = {status, message};
    };
    if (answer.status != 200) {
        std::string message =
            "owner node " + owner.value() + " answered " + std::to_string(answer.status);
        auto parsed = parse_peer_reply(answer.body);
        if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_string()) {
            message = parsed["error"].get<std::string>();
        }
        return fail_all(answer.status, message);
    }
    auto parsed = parse_peer_reply(answer.body);
    if (!parsed.is_object() || !parsed.contains("results") || !parsed["results"].is_array() ||
        parsed["results"].size() != indexes.size()) {
        return fail_all(http_status(Errc::unavailable),
                        "owner node " + owner.value() + " gave a malformed answer");
    }
    for (size_t j = 0; j < indexes.size(); ++j) {
        const auto& item = parsed["results"][j];
        HandleResult result;
        // An HTTP status, or the owner's answer is not one: 503 for that handle.
        result.status =
            item.is_object() && item.contains("status") && item["status"].is_number_integer() &&
                    item["status"].get<int64_t>() >= 200 && item["status"].get<int64_t>() <= 599
                ? item["status"].get<int>()
                : http_status(Errc::unavailable);
        if (item.is_object() && item.contains("error") && item["error"].is_string()) {
            result.error = item["error"].get<std::string>();
        }
        results[indexes[j]] = std::move(result);
    }
}

}  // namespace

void handle_consume(const MessageRouteContext& context, net::HttpRequest request,
                    const std::string& topic, Scope scope, net::Responder respond) {
    auto parsed = parse_consume_params(
        [&](std::string_view name) { return request.query_param(name); }, context.max_consume_wait);
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    if (parsed->wait_clamped && scope == Scope::public_port) {
        // Narad tells a client its wait was cut to the node's ceiling, and to what.
        respond = [respond = std::move(respond),
                   used = format_duration(parsed->wait)](net::HttpResponse response) {
            response.headers.emplace_back("X-Narad-Wait-Clamped", used);
            respond(std::move(response));
        };
    }
    // (A batch consume's X-Narad-Client header is the public router's check: api/router.h.)
    if (parsed->batch && parsed->offset) {
        return respond(error_response(Errc::invalid_argument, "max does not combine with offset"));
    }
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* record = snapshot->find_topic(topic);
    if (parsed->offset) {
        if (record == nullptr) return respond(error_response(Errc::not_found, "topic not found"));
        if (!parsed->partition) {
            return respond(error_response(Errc::invalid_argument,
                                          "partition required for replay-mode consume"));
        }
    }
    if (parsed->partition && record != nullptr) {
        PartitionOwner owner =
            locate(context.routing, *snapshot, topic, PartitionId(*parsed->partition));
        if (owner.placement != Placement::local) {
            if (scope == Scope::local_only) return respond(not_owner_response());
            if (owner.placement == Placement::dead) {
                return respond(owner_down_response(PartitionId(*parsed->partition), owner.node));
            }
            std::string target =
                internal_topic_target(topic, "/consume?" + std::string(raw_query(request)));
            Millis timeout = parsed->wait + context.routing.peer_timeout;
            return run_routed(context.routing, std::move(respond),
                              [&context, node = owner.node, target, timeout] {
                                  return forward_to_owner(context.routing, node, "GET", target, "",
                                                          timeout);
                              });
        }
    }
    if (parsed->offset) return replay(context, topic, *parsed, std::move(respond));
    if (!parsed->partition && record != nullptr && scope == Scope::public_port &&
        context.routing.peers != nullptr) {
        std::vector<NodeId> owners = remote_owners(context, *snapshot, *record);
        if (!owners.empty()) {
            return scatter_consume(context, topic, *parsed, std::move(owners), std::move(respond));
        }
    }
    queue::ConsumeRequest consume_request;
    consume_request.topic = topic;
    if (parsed->partition) consume_request.partition = PartitionId(*parsed->partition);
    consume_request.max = parsed->max;
    consume_request.wait = parsed->wait;
    bool batch = parsed->batch;
    context.consume.consume(
        std::move(consume_request), [&context, respond = std::move(respond), topic,
                                     batch](Result<std::vector<queue::Delivery>> result) {
            if (!result.is_ok()) {
                return respond(domain_error_response(result.status(), "consume"));
            }
            respond(messages_response(context, topic, *result, batch));
        });
}

void handle_ack(const MessageRouteContext& context, net::HttpRequest request,
                const std::string& topic, Scope scope, net::Responder respond) {
    // Narad 3.1's batch ack: the same route, no receipt_handle parameter, the handles in the body
    // and `extend` still a query parameter.
    if (scope == Scope::public_port && !request.body.empty() &&
        !request.query_param("receipt_handle")) {
        auto action = parse_ack_extend(raw_query(request));
        if (!action.is_ok()) return respond(error_response(action.status()));
        return handle_ack_batch(context, std::move(request), topic, scope, std::move(respond),
                                *action);
    }
    auto parsed = parse_ack_params(raw_query(request));
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    if (auto handle = parse_receipt_handle(parsed->receipt_handle)) {
        meta::MetaSnapshot snapshot = context.store.snapshot();
        PartitionOwner owner = locate(context.routing, *snapshot, topic, handle->partition);
        if (owner.placement != Placement::local) {
            if (scope == Scope::local_only) return respond(not_owner_response());
            if (owner.placement == Placement::dead) {
                return respond(owner_down_response(handle->partition, owner.node));
            }
            std::string target =
                internal_topic_target(topic, "/ack?" + std::string(raw_query(request)));
            return run_routed(context.routing, std::move(respond),
                              [&context, node = owner.node, target] {
                                  return forward_to_owner(context.routing, node, "POST", target, "",
                                                          context.routing.peer_timeout);
                              });
        }
    }
    Status status =
        settle_one(context, topic, parsed->receipt_handle, parsed->action, parsed->reason);
    if (!status.is_ok()) {
        return respond(domain_error_response(status, meaning(parsed->action).operation));
    }
    respond(empty_response(204));
}

void handle_ack_batch(const MessageRouteContext& context, net::HttpRequest request,
                      const std::string& topic, Scope scope, net::Responder respond,
                      std::optional<AckAction> query_action) {
    auto decoded = decode_ack_batch(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    Result<AckAction> action =
        query_action ? Result<AckAction>(*query_action) : parse_extend(decoded->extend);
    if (!action.is_ok()) return respond(error_response(action.status()));
    decoded->extend = meaning(*action).extend;
    meta::MetaSnapshot snapshot = context.store.snapshot();
    if (snapshot->find_topic(topic) == nullptr) {
        return respond(error_response(Errc::not_found, "topic not found"));
    }
    const std::vector<std::string>& handles = decoded->receipt_handles;
    std::vector<HandleResult> results(handles.size());
    std::vector<bool> decided(handles.size(), false);
    std::map<NodeId, std::vector<size_t>> remote;  // owner -> indexes of its handles
    for (size_t i = 0; i < handles.size(); ++i) {
        auto handle = parse_receipt_handle(handles[i]);
        if (!handle) continue;
        PartitionOwner owner = locate(context.routing, *snapshot, topic, handle->partition);
        if (owner.placement == Placement::local) continue;
        decided[i] = true;
        if (scope == Scope::local_only) {
            results[i] = {http_status(Errc::not_owner), std::string(errc_text(Errc::not_owner))};
        } else if (owner.placement == Placement::dead) {
            results[i] = {http_status(Errc::unavailable),
                          "partition " + std::to_string(handle->partition.value()) +
                              " is unavailable: its owner node " + owner.node.value() + " is down"};
        } else {
            remote[owner.node].push_back(i);
        }
    }
    auto settle_local = [&context, topic, action = *action](const std::vector<std::string>& all,
                                                            std::vector<HandleResult>& out,
                                                            const std::vector<bool>& skip) {
        for (size_t i = 0; i < all.size(); ++i) {
            if (!skip[i]) out[i] = settle_result(context, topic, all[i], action);
        }
    };
    if (remote.empty()) {
        settle_local(handles, results, decided);
        return respond(batch_ack_response(handles, results));
    }
    run_routed(context.routing, std::move(respond),
               [&context, topic, extend = decoded->extend,
                handles = std::move(decoded->receipt_handles), results = std::move(results),
                decided = std::move(decided), remote = std::move(remote), settle_local]() mutable {
                   settle_local(handles, results, decided);
                   for (const auto& [owner, indexes] : remote) {
                       settle_remote(context, topic, owner, handles, indexes, extend, results);
                   }
                   return batch_ack_response(handles, results);
               });
}

namespace {

void consume(const MessageRouteContext& context, net::HttpRequest request, const PathParams& path,
             net::Responder respond) {
    handle_consume(context, std::move(request), path.get("topic"), Scope::public_port,
                   std::move(respond));
}

void ack(const MessageRouteContext& context, net::HttpRequest request, const PathParams& path,
         net::Responder respond) {
    handle_ack(context, std::move(request), path.get("topic"), Scope::public_port,
               std::move(respond));
}

void ack_batch(const MessageRouteContext& context, net::HttpRequest request, const PathParams& path,
               net::Responder respond) {
    handle_ack_batch(context, std::move(request), path.get("topic"), Scope::public_port,
                     std::move(respond), std::nullopt);
}

}  // namespace

void register_message_routes(Router& router, MessageRouteContext context) {
    auto c = std::make_shared<const MessageRouteContext>(std::move(context));
    using meta::Action;
    // Each route behind the grant it needs on its topic.
    using Handler =
        void (*)(const MessageRouteContext&, net::HttpRequest, const PathParams&, net::Responder);
    auto guarded = [c](Action action, Handler handler) {
        return needs_grant(c->access, action, bind_route(c, handler));
    };
    router.add("POST", "/v1/topics/{topic}/produce", guarded(Action::produce, produce));
    router.add("POST", "/v1/topics/{topic}/produce/batch", guarded(Action::produce, produce_batch),
               kMaxBatchBodyBytes);
    // Consume covers replay (consume by offset) and every settle of what was consumed. A batch
    // ack's body is at most 64 KiB (Narad 3.1); a single ack has none.
    router.add("GET", "/v1/topics/{topic}/consume", guarded(Action::consume, consume));
    router.add("POST", "/v1/topics/{topic}/ack", guarded(Action::consume, ack), kMaxAckBodyBytes);
    router.add("POST", "/v1/topics/{topic}/ack/batch", guarded(Action::consume, ack_batch),
               kMaxAckBodyBytes);
}

}  // namespace narad::api
