// The topic routes: create, list, get (with partition stats), PATCH, DELETE, and the fan-out
// children routes.
#include <charconv>

#include "api/api.h"
#include "api/request_json.h"
#include "api/respond.h"
#include "api/wire_json.h"
#include "base/json_text.h"

namespace narad::api {
namespace {

// Runs `work` on the blocking pool and answers with its response; 503 if the pool is saturated.
void off_thread(ApiContext& context, net::Responder respond,
                std::function<net::HttpResponse()> work) {
    auto shared_respond = std::make_shared<net::Responder>(std::move(respond));
    bool queued = context.blocking.post(
        [shared_respond, work = std::move(work)] { (*shared_respond)(work()); });
    if (!queued) (*shared_respond)(error_response(503, "server busy; retry later"));
}

void create_topic(ApiContext& context, net::HttpRequest request, net::Responder respond) {
    auto decoded = decode_create_topic(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    if (!context.ready()) {
        return respond(
            error_response(503, "control plane temporarily unavailable: node is starting"));
    }
    off_thread(context, std::move(respond), [&context, create = std::move(*decoded)]() mutable {
        bool with_parent = !create.parent.empty();
        auto created = context.topics.create(std::move(create));
        if (!created.is_ok()) return domain_error_response(created.status(), "create topic");
        return json_response(201, topic_json(*created, with_parent ? RoleField::always
                                                                   : RoleField::omit_standalone));
    });
}

void list_topics(ApiContext& context, net::HttpRequest request, net::Responder respond) {
    size_t limit = 100;
    if (auto value = request.query_param("limit"); value && !value->empty()) {
        int64_t parsed = 0;
        auto [ptr, error] = std::from_chars(value->data(), value->data() + value->size(), parsed);
        if (error != std::errc() || ptr != value->data() + value->size() || parsed < 1) {
            return respond(error_response(400, "limit must be a positive integer"));
        }
        limit = static_cast<size_t>(std::min<int64_t>(parsed, 1000));
    }
    std::string token(request.query_param("page_token").value_or(""));
    meta::MetaSnapshot snapshot = context.store.snapshot();
    auto it = token.empty() ? snapshot->topics.begin() : snapshot->topics.upper_bound(token);
    std::string topics = "[";
    std::string last;
    size_t count = 0;
    for (; it != snapshot->topics.end() && count < limit; ++it, ++count) {
        if (count > 0) topics += ',';
        std::string one = topic_json(it->second, RoleField::always);
        one.pop_back();  // the newline
        topics += one;
        last = it->first;
    }
    topics += ']';
    std::string next = it != snapshot->topics.end() ? last : "";
    std::string body =
        "{\"next_page_token\":" + json_string(next) + ",\"topics\":" + topics + "}\n";
    respond(json_response(200, std::move(body)));
}

void get_topic(ApiContext& context, net::HttpRequest request, const PathParams& params,
               net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* topic = snapshot->find_topic(params.get("topic"));
    if (topic == nullptr) return respond(error_response(404, "topic not found"));
    uint32_t first = 0;
    uint32_t end = topic->partitions;
    if (auto value = request.query_param("partition"); value && !value->empty()) {
        int64_t parsed = -1;
        auto [ptr, error] = std::from_chars(value->data(), value->data() + value->size(), parsed);
        if (error != std::errc() || ptr != value->data() + value->size() || parsed < 0 ||
            parsed >= topic->partitions) {
            return respond(error_response(400, "invalid partition"));
        }
        first = static_cast<uint32_t>(parsed);
        end = first + 1;
    }
    meta::Topic copy = *topic;
    off_thread(context, std::move(respond), [&context, copy, snapshot, first, end] {
        std::vector<PartitionStatsView> stats;
        for (uint32_t p = first; p < end; ++p) {
            PartitionStatsView view;
            view.index = p;
            const meta::Assignment* assignment =
                snapshot->find_assignment(copy.name, PartitionId(p));
            view.owner_node = assignment ? assignment->owner.value() : context.node_id.value();
            auto log = context.logs.get(copy.name, PartitionId(p), storage::CreateIfMissing::no);
            if (log.is_ok()) {
                view.stats = (*log)->stats();
            } else if (log.code() != Errc::not_found) {
                return error_response(500, "get topic failed");
            }
            stats.push_back(std::move(view));
        }
        return json_response(200, topic_details_json(copy, stats));
    });
}

void update_topic(ApiContext& context, net::HttpRequest request, const PathParams& params,
                  net::Responder respond) {
    auto decoded = decode_update_topic(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    Status shape = meta::TopicFrontend::validate_update(*decoded);
    if (!shape.is_ok()) return respond(error_response(shape));
    off_thread(context, std::move(respond),
               [&context, name = params.get("topic"), update = std::move(*decoded)] {
                   auto updated = context.topics.update(name, update);
                   if (!updated.is_ok())
                       return domain_error_response(updated.status(), "alter topic");
                   return json_response(200, topic_json(*updated, RoleField::always));
               });
}

void delete_topic(ApiContext& context, const PathParams& params, net::Responder respond) {
    off_thread(context, std::move(respond), [&context, name = params.get("topic")] {
        Status removed = context.topics.remove(name);
        if (!removed.is_ok()) return domain_error_response(removed, "delete topic");
        if (!context.purge_topic(name).is_ok()) return error_response(500, "delete topic failed");
        return empty_response(204);
    });
}

void list_children(ApiContext& context, const PathParams& params, net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* topic = snapshot->find_topic(params.get("topic"));
    if (topic == nullptr) return respond(error_response(404, "topic not found"));
    std::string body = "{\"children\":[],\"parent\":" + json_string(topic->name) + "}\n";
    respond(json_response(200, std::move(body)));
}

void detach_child(ApiContext& context, const PathParams& params, net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const std::string& parent = params.get("topic");
    const std::string& child = params.get("child");
    if (snapshot->find_topic(parent) == nullptr) {
        return respond(error_response(404, "topic not found"));
    }
    respond(
        error_response(404, "not found: \"" + child + "\" is not attached to \"" + parent + "\""));
}

}  // namespace

void register_topic_routes(Router& router, ApiContext& context) {
    ApiContext* c = &context;
    router.add("POST", "/v1/topics", [c](net::HttpRequest r, const PathParams&, net::Responder d) {
        create_topic(*c, std::move(r), std::move(d));
    });
    router.add("GET", "/v1/topics", [c](net::HttpRequest r, const PathParams&, net::Responder d) {
        list_topics(*c, std::move(r), std::move(d));
    });
    router.add("GET", "/v1/topics/{topic}",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   get_topic(*c, std::move(r), p, std::move(d));
               });
    router.add("PATCH", "/v1/topics/{topic}",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   update_topic(*c, std::move(r), p, std::move(d));
               });
    router.add("DELETE", "/v1/topics/{topic}",
               [c](net::HttpRequest, const PathParams& p, net::Responder d) {
                   delete_topic(*c, p, std::move(d));
               });
    router.add("GET", "/v1/topics/{topic}/children",
               [c](net::HttpRequest, const PathParams& p, net::Responder d) {
                   list_children(*c, p, std::move(d));
               });
    router.add("POST", "/v1/topics/{topic}/children",
               [](net::HttpRequest, const PathParams&, net::Responder d) {
                   d(error_response(501,
                                    "fan-out (parent and child topics) is not available in this "
                                    "release"));
               });
    router.add("DELETE", "/v1/topics/{topic}/children/{child}",
               [c](net::HttpRequest, const PathParams& p, net::Responder d) {
                   detach_child(*c, p, std::move(d));
               });
}

}  // namespace narad::api
