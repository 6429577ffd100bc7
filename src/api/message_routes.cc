// The message routes: produce (single and batch), consume (queue, pinned, replay, batch) and ack
// (single and batch).
#include "api/api.h"
#include "api/params.h"
#include "api/request_json.h"
#include "api/respond.h"
#include "api/wire_json.h"
#include "base/json_text.h"

namespace narad::api {
namespace {

std::string_view raw_query(const net::HttpRequest& request) {
    auto question = request.target.find('?');
    if (question == std::string::npos) return {};
    return std::string_view(request.target).substr(question + 1);
}

void produce(ApiContext& context, net::HttpRequest request, const PathParams& params,
             net::Responder respond) {
    auto parsed = parse_produce_params(raw_query(request));
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    if (request.body.empty()) return respond(error_response(400, "message required"));
    std::vector<wal::ProduceMessage> messages(1);
    messages[0].key = std::move(parsed->key);
    messages[0].partition = parsed->partition;
    messages[0].value = std::move(request.body);
    context.produce.produce(params.get("topic"), std::move(messages),
                            [respond = std::move(respond)](Status status) {
                                if (!status.is_ok())
                                    return respond(domain_error_response(status, "produce"));
                                respond(empty_response(202));
                            });
}

void produce_batch(ApiContext& context, net::HttpRequest request, const PathParams& params,
                   net::Responder respond) {
    auto decoded = decode_produce_batch(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    size_t count = decoded->size();
    context.produce.produce(
        params.get("topic"), std::move(*decoded),
        [respond = std::move(respond), count](Status status) {
            if (!status.is_ok()) return respond(domain_error_response(status, "produce"));
            respond(json_response(202, "{\"accepted\":" + std::to_string(count) + "}\n"));
        });
}

net::HttpResponse messages_response(const std::string& topic,
                                    const std::vector<queue::Delivery>& messages, bool batch) {
    if (messages.empty()) return empty_response(204);
    std::string body;
    if (batch) body = "{\"messages\":[";
    for (size_t i = 0; i < messages.size(); ++i) {
        if (i > 0) body += ',';
        const queue::Delivery& m = messages[i];
        std::string handle;
        if (m.lease_id != 0) {
            handle = format_receipt_handle(ReceiptHandle{m.partition, m.offset, m.lease_id});
        }
        append_message_json(body, topic, m, handle);
    }
    if (batch) body += "]}";
    body += '\n';
    return json_response(200, std::move(body));
}

void replay(ApiContext& context, const std::string& topic, const ConsumeParams& params,
            net::Responder respond) {
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
    respond(messages_response(topic, messages, params.batch));
}

void consume(ApiContext& context, net::HttpRequest request, const PathParams& path,
             net::Responder respond) {
    auto parsed = parse_consume_params(
        [&](std::string_view name) { return request.query_param(name); }, context.max_consume_wait);
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    const std::string& topic = path.get("topic");
    if (parsed->offset) {
        if (context.store.snapshot()->find_topic(topic) == nullptr) {
            return respond(error_response(404, "topic not found"));
        }
        if (!parsed->partition) {
            return respond(error_response(400, "partition required for replay-mode consume"));
        }
        return replay(context, topic, *parsed, std::move(respond));
    }
    queue::ConsumeRequest consume_request;
    consume_request.topic = topic;
    if (parsed->partition) consume_request.partition = PartitionId(*parsed->partition);
    consume_request.max = parsed->max;
    consume_request.wait = parsed->wait;
    bool batch = parsed->batch;
    context.consume.consume(
        std::move(consume_request),
        [respond = std::move(respond), topic, batch](Result<std::vector<queue::Delivery>> result) {
            if (!result.is_ok()) return respond(domain_error_response(result.status(), "consume"));
            respond(messages_response(topic, *result, batch));
        });
}

queue::Settle to_settle(AckAction action) {
    switch (action) {
        case AckAction::extend:
            return queue::Settle::extend;
        case AckAction::nack:
            return queue::Settle::nack;
        case AckAction::ack:
            break;
    }
    return queue::Settle::ack;
}

const char* settle_operation(AckAction action) {
    switch (action) {
        case AckAction::extend:
            return "extend ack";
        case AckAction::nack:
            return "nack";
        case AckAction::ack:
            break;
    }
    return "ack";
}

// One ack, extend or nack; ok or the response to send.
Status settle_one(ApiContext& context, const std::string& topic, std::string_view handle_text,
                  AckAction action) {
    auto handle = parse_receipt_handle(handle_text);
    if (!handle) return Status(Errc::invalid_argument, "receipt handle is malformed");
    return context.consume.settle(topic, handle->partition, handle->offset, handle->lease_id,
                                  to_settle(action));
}

void ack(ApiContext& context, net::HttpRequest request, const PathParams& path,
         net::Responder respond) {
    auto parsed = parse_ack_params(raw_query(request));
    if (!parsed.is_ok()) return respond(error_response(parsed.status()));
    Status status = settle_one(context, path.get("topic"), parsed->receipt_handle, parsed->action);
    if (!status.is_ok())
        return respond(domain_error_response(status, settle_operation(parsed->action)));
    respond(empty_response(204));
}

void ack_batch(ApiContext& context, net::HttpRequest request, const PathParams& path,
               net::Responder respond) {
    auto decoded = decode_ack_batch(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    auto action = parse_extend(decoded->extend);
    if (!action.is_ok()) return respond(error_response(action.status()));
    const std::string& topic = path.get("topic");
    if (context.store.snapshot()->find_topic(topic) == nullptr) {
        return respond(error_response(404, "topic not found"));
    }
    std::string body = "{\"results\":[";
    for (size_t i = 0; i < decoded->receipt_handles.size(); ++i) {
        const std::string& handle = decoded->receipt_handles[i];
        if (i > 0) body += ',';
        body += "{\"receipt_handle\":";
        append_json_string(body, handle, HtmlEscape::no);
        Status status = settle_one(context, topic, handle, *action);
        if (status.is_ok()) {
            body += ",\"status\":204}";
            continue;
        }
        net::HttpResponse error = domain_error_response(status, settle_operation(*action));
        body += ",\"status\":" + std::to_string(error.status) + ",\"error\":";
        append_json_string(body, status.message(), HtmlEscape::no);
        body += '}';
    }
    body += "]}\n";
    respond(json_response(200, std::move(body)));
}

}  // namespace

void register_message_routes(Router& router, ApiContext& context) {
    ApiContext* c = &context;
    router.add("POST", "/v1/topics/{topic}/produce",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   produce(*c, std::move(r), p, std::move(d));
               });
    router.add("POST", "/v1/topics/{topic}/produce/batch",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   produce_batch(*c, std::move(r), p, std::move(d));
               });
    router.add("GET", "/v1/topics/{topic}/consume",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   consume(*c, std::move(r), p, std::move(d));
               });
    router.add("POST", "/v1/topics/{topic}/ack",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   ack(*c, std::move(r), p, std::move(d));
               });
    router.add("POST", "/v1/topics/{topic}/ack/batch",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   ack_batch(*c, std::move(r), p, std::move(d));
               });
}

}  // namespace narad::api
