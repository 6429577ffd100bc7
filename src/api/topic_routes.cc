// The topic routes: create, list, get (with partition stats), PATCH, DELETE, and the fan-out
// children routes.
#include "api/topic_routes.h"

#include <charconv>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "api/peer_json.h"
#include "api/request_json.h"
#include "api/respond.h"
#include "api/wire_json.h"
#include "base/json_text.h"
#include "base/log.h"
#include "fanout/engine.h"

namespace narad::api {
namespace {

// Fills the views of `owner`'s partitions from its stats reply; throws on a field of the wrong
// type.
void fill_stats_from(const nlohmann::json& partitions, const NodeId& owner,
                     std::vector<PartitionStatsView>& views, uint32_t first) {
    for (const auto& item : partitions) {
        if (!item.is_object()) continue;
        auto index = static_cast<uint32_t>(unsigned_field_or(item, "index", 0, UINT32_MAX));
        if (index < first || index - first >= views.size()) continue;
        PartitionStatsView& view = views[index - first];
        if (view.owner_node != owner.value()) continue;
        storage::LogStats stats = view.stats;  // filled whole or not at all
        stats.segments = static_cast<uint32_t>(unsigned_field_or(item, "segments", 0, UINT32_MAX));
        stats.oldest_offset = Offset(unsigned_field_or(item, "oldest_offset", 0));
        stats.high_watermark = Offset(unsigned_field_or(item, "high_watermark", 0));
        stats.size_bytes = unsigned_field_or(item, "size_bytes", 0);
        stats.oldest_segment_at =
            WallTime(std::chrono::nanoseconds(signed_field_or(item, "oldest_segment_at_ns", 0)));
        view.stats = stats;
        view.owner_liveness.clear();  // read
    }
}

// Asks `owner` for the stats of the partitions it owns and fills those of `views` it returns.
// Until then its entries are placeholders marked "unknown"; an owner that does not answer marks
// them "unreachable" (the topic answer still comes, `partial`, as Narad 3.1).
void fill_remote_stats(const TopicRouteContext& context, const NodeId& owner,
                       const std::string& topic, std::vector<PartitionStatsView>& views,
                       uint32_t first) {
    net::HttpResponse answer =
        forward_to_owner(context.routing, owner, "GET", internal_topic_target(topic, "/stats"), "",
                         context.routing.peer_timeout);
    if (answer.status != 200) {
        for (PartitionStatsView& view : views) {
            if (view.owner_node == owner.value()) view.owner_liveness = "unreachable";
        }
        return;
    }
    auto parsed = parse_peer_reply(answer.body);
    if (!parsed.is_object() || !parsed.contains("partitions") || !parsed["partitions"].is_array()) {
        return;
    }
    // A reply of the wrong shape (a field of the wrong type) leaves the stats empty, logged.
    try {
        fill_stats_from(parsed["partitions"], owner, views, first);
    } catch (const std::exception& e) {  // nlohmann's exceptions and WrongShape
        NARAD_LOG_WARN("node {} answered partition stats of {} with the wrong shape: {}",
                       owner.value(), topic, e.what());
    }
}

// Naming a dead-letter topic sends records into it: the caller must be allowed to produce there.
constexpr const char* kDeadLetterForbidden = "produce not allowed on the dead_letter_topic";
bool dead_letters_allowed(const auth::Principal& caller, const std::string& dead_letter_topic) {
    return dead_letter_topic.empty() || caller.allowed(meta::Action::produce, dead_letter_topic);
}

void create_topic(const TopicRouteContext& context, net::HttpRequest request,
                  net::Responder respond) {
    auto decoded = decode_create_topic(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    auth::Principal caller = caller_of(context.access, request);
    if (!caller.allowed(meta::Action::create, decoded->name)) {
        return respond(error_response(Errc::forbidden, "create not allowed on this topic"));
    }
    if (!dead_letters_allowed(caller, decoded->dead_letter_topic)) {
        return respond(error_response(Errc::forbidden, kDeadLetterForbidden));
    }
    if (!decoded->parent.empty()) {
        meta::MetaSnapshot snapshot = context.store.snapshot();
        const meta::Topic* parent = snapshot->find_topic(decoded->parent);
        if (parent != nullptr && !caller.can_manage(parent->owner)) {
            return respond(error_response(
                Errc::forbidden, "only the topic owner or an admin may modify this topic"));
        }
    }
    decoded->owner = caller.name();  // whatever the body said
    if (!context.ready()) {
        return respond(error_response(Errc::unavailable,
                                      "control plane temporarily unavailable: node is starting"));
    }
    answer_on_pool(
        context.blocking, std::move(respond), [&context, create = std::move(*decoded)]() mutable {
            bool with_parent = !create.parent.empty();
            auto created = context.topics.create(std::move(create));
            if (!created.is_ok()) return domain_error_response(created.status(), "create topic");
            return json_response(
                201,
                topic_json(*created, with_parent ? RoleField::always : RoleField::omit_standalone));
        });
}

void list_topics(const TopicRouteContext& context, net::HttpRequest request,
                 net::Responder respond) {
    size_t limit = 100;
    if (auto value = request.query_param("limit"); value && !value->empty()) {
        int64_t parsed = 0;
        auto [ptr, error] = std::from_chars(value->data(), value->data() + value->size(), parsed);
        if (error != std::errc() || ptr != value->data() + value->size() || parsed < 1) {
            return respond(
                error_response(Errc::invalid_argument, "limit must be a positive integer"));
        }
        limit = static_cast<size_t>(std::min<int64_t>(parsed, 1000));
    }
    std::string token(request.query_param("page_token").value_or(""));
    meta::MetaSnapshot snapshot = context.store.snapshot();
    auto it = token.empty() ? snapshot->topics.begin() : snapshot->topics.upper_bound(token);
    std::string topics = "[";
    std::string last;
    size_t count = 0;
    auth::Principal caller = caller_of(context.access, request);
    bool first = true;
    // The page is cut first, then filtered (as Narad): a page may be short, or empty with a
    // next_page_token, when the caller cannot read some of its topics.
    for (; it != snapshot->topics.end() && count < limit; ++it, ++count) {
        last = it->first;
        if (!caller.can_read(it->first, it->second.owner)) continue;
        if (!first) topics += ',';
        first = false;
        std::string one = topic_json(it->second, RoleField::always);
        one.pop_back();  // the newline
        topics += one;
    }
    topics += ']';
    std::string next = it != snapshot->topics.end() ? last : "";
    std::string body =
        "{\"next_page_token\":" + json_string(next) + ",\"topics\":" + topics + "}\n";
    respond(json_response(200, std::move(body)));
}

void get_topic(const TopicRouteContext& context, net::HttpRequest request, const PathParams& params,
               net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* topic = snapshot->find_topic(params.get("topic"));
    if (topic == nullptr) return respond(error_response(Errc::not_found, "topic not found"));
    uint32_t first = 0;
    uint32_t end = topic->partitions;
    if (auto value = request.query_param("partition"); value && !value->empty()) {
        int64_t parsed = -1;
        auto [ptr, error] = std::from_chars(value->data(), value->data() + value->size(), parsed);
        if (error != std::errc() || ptr != value->data() + value->size() || parsed < 0 ||
            parsed >= topic->partitions) {
            return respond(error_response(Errc::invalid_argument, "invalid partition"));
        }
        first = static_cast<uint32_t>(parsed);
        end = first + 1;
    }
    meta::Topic copy = *topic;
    run_routed(context.routing, std::move(respond), [&context, copy, snapshot, first, end] {
        std::vector<PartitionStatsView> stats;
        std::map<NodeId, bool> remote;  // live owners elsewhere whose partitions are listed
        for (uint32_t p = first; p < end; ++p) {
            PartitionStatsView view;
            view.index = p;
            const meta::Assignment* assignment =
                snapshot->find_assignment(copy.name, PartitionId(p));
            view.owner_node = assignment ? assignment->owner.value() : context.routing.self.value();
            if (assignment == nullptr && !snapshot->members.empty()) {
                view.owner_node.clear();
                view.owner_liveness = "unassigned";
                stats.push_back(std::move(view));
                continue;
            }
            PartitionOwner owner = locate(context.routing, *snapshot, copy.name, PartitionId(p));
            if (owner.placement != Placement::local) {
                if (owner.placement == Placement::remote) remote[owner.node] = true;
                view.owner_liveness = owner.placement == Placement::dead ? "dead" : "unknown";
                stats.push_back(std::move(view));
                continue;
            }
            auto log = context.logs.get(copy.name, PartitionId(p), storage::CreateIfMissing::no);
            if (log.is_ok()) {
                view.stats = (*log)->stats();
            } else if (log.code() != Errc::not_found) {
                return error_response(Errc::internal, "get topic failed");
            }
            stats.push_back(std::move(view));
        }
        for (const auto& [owner, unused] : remote) {
            fill_remote_stats(context, owner, copy.name, stats, first);
        }
        return json_response(200, topic_details_json(copy, stats));
    });
}

void update_topic(const TopicRouteContext& context, net::HttpRequest request,
                  const PathParams& params, net::Responder respond) {
    auto decoded = decode_update_topic(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    Status shape = meta::TopicFrontend::validate_update(*decoded);
    if (!shape.is_ok()) return respond(error_response(shape));
    if (decoded->dead_letter_topic &&
        !dead_letters_allowed(caller_of(context.access, request), *decoded->dead_letter_topic)) {
        return respond(error_response(Errc::forbidden, kDeadLetterForbidden));
    }
    answer_on_pool(context.blocking, std::move(respond),
                   [&context, name = params.get("topic"), update = std::move(*decoded)] {
                       auto updated = context.topics.update(name, update);
                       if (!updated.is_ok()) {
                           return domain_error_response(updated.status(), "alter topic");
                       }
                       return json_response(
                           200, topic_json(*updated, RoleField::always, SchemaFields::include));
                   });
}

void delete_topic(const TopicRouteContext& context, const PathParams& params,
                  net::Responder respond) {
    answer_on_pool(context.blocking, std::move(respond), [&context, name = params.get("topic")] {
        Status removed = context.topics.remove(name);
        if (!removed.is_ok()) return domain_error_response(removed, "delete topic");
        if (!context.purge_topic(name).is_ok()) {
            return error_response(Errc::internal, "delete topic failed");
        }
        return empty_response(204);
    });
}

void get_schema(const TopicRouteContext& context, const PathParams& params,
                net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* topic = snapshot->find_topic(params.get("topic"));
    if (topic == nullptr) return respond(error_response(Errc::not_found, "topic not found"));
    respond(json_response(200, schema_history_json(*topic)));
}

// Adds `owner`'s cursor positions of `parent` (its internal fanout route) to `cursors`, only for
// the partitions it owns (`owned`); an answer out of shape adds nothing.
void collect_remote_cursors(const TopicRouteContext& context, const NodeId& owner,
                            const std::string& parent, const std::set<uint32_t>& owned,
                            std::vector<fanout::CursorStat>& cursors) {
    net::HttpResponse answer =
        forward_to_owner(context.routing, owner, "GET", internal_topic_target(parent, "/fanout"),
                         "", context.routing.peer_timeout);
    if (answer.status != 200) return;
    auto parsed = parse_peer_reply(answer.body);
    if (!parsed.is_object() || !parsed.contains("cursors") || !parsed["cursors"].is_array()) {
        return;
    }
    std::vector<fanout::CursorStat> answered;
    try {
        for (const auto& item : parsed["cursors"]) {
            if (!item.is_object() || !item.contains("child") || !item["child"].is_string()) {
                continue;
            }
            fanout::CursorStat stat;
            stat.child = item["child"].get<std::string>();
            stat.partition =
                PartitionId(static_cast<uint32_t>(unsigned_field(item, "partition", UINT32_MAX)));
            if (owned.count(stat.partition.value()) == 0) continue;
            stat.next = Offset(unsigned_field_or(item, "next_offset", 0));
            stat.high_watermark = Offset(unsigned_field_or(item, "high_watermark", 0));
            stat.anchored = item.value("anchored", false);
            answered.push_back(std::move(stat));
        }
    } catch (const std::exception& e) {  // nlohmann's exceptions and WrongShape
        NARAD_LOG_WARN("node {} answered fan-out cursors of {} with the wrong shape: {}",
                       owner.value(), parent, e.what());
        return;
    }
    cursors.insert(cursors.end(), answered.begin(), answered.end());
}

// Narad's children listing: each child's delay and lag (parent high watermark minus cursor,
// summed over the parent's partitions); lag_complete is false while some partition's cursor has
// not reported (its owner unreachable, or the cursor not anchored yet), so the lag is a lower
// bound.
void list_children(const TopicRouteContext& context, const PathParams& params,
                   net::Responder respond) {
    meta::MetaSnapshot snapshot = context.store.snapshot();
    const meta::Topic* topic = snapshot->find_topic(params.get("topic"));
    if (topic == nullptr) return respond(error_response(Errc::not_found, "topic not found"));
    meta::Topic parent = *topic;
    run_routed(context.routing, std::move(respond), [&context, parent, snapshot] {
        std::vector<fanout::CursorStat> cursors;
        if (context.fanout != nullptr) cursors = context.fanout->cursor_stats(parent.name);
        std::map<NodeId, std::set<uint32_t>> remote;  // owner -> its partitions
        for (uint32_t p = 0; p < parent.partitions; ++p) {
            PartitionOwner owner = locate(context.routing, *snapshot, parent.name, PartitionId(p));
            if (owner.placement == Placement::remote) remote[owner.node].insert(p);
        }
        for (const auto& [owner, owned] : remote) {
            collect_remote_cursors(context, owner, parent.name, owned, cursors);
        }
        std::string body = "{\"parent\":" + json_string(parent.name) +
                           ",\"parent_id\":" + json_string(parent.incarnation.value()) +
                           ",\"children\":[";
        bool first = true;
        for (const std::string& child_name : parent.children) {
            const meta::Topic* child = snapshot->find_topic(child_name);
            int64_t lag = 0;
            std::set<uint32_t> reporting;
            for (const fanout::CursorStat& stat : cursors) {
                if (stat.child != child_name || !stat.anchored) continue;
                if (!reporting.insert(stat.partition.value()).second) continue;
                lag += std::max<int64_t>(0, static_cast<int64_t>(stat.high_watermark.value()) -
                                                static_cast<int64_t>(stat.next.value()));
            }
            if (!first) body += ",";
            first = false;
            body += "{\"name\":" + json_string(child_name) +
                    ",\"delay_ms\":" + std::to_string(child ? child->fanout_delay_ms : 0) +
                    ",\"lag_messages\":" + std::to_string(lag) + ",\"lag_complete\":" +
                    (reporting.size() == parent.partitions ? "true" : "false") + "}";
        }
        body += "]}\n";
        return json_response(200, std::move(body));
    });
}

void attach_child(const TopicRouteContext& context, net::HttpRequest request,
                  const PathParams& params, net::Responder respond) {
    auto decoded = decode_attach_child(request.body);
    if (!decoded.is_ok()) return respond(error_response(decoded.status()));
    answer_on_pool(context.blocking, std::move(respond),
                   [&context, parent = params.get("topic"), attach = std::move(*decoded)] {
                       auto attached = context.topics.attach(parent, attach.child, attach.delay_ms);
                       if (!attached.is_ok()) {
                           return domain_error_response(attached.status(), "attach child");
                       }
                       NARAD_LOG_INFO("fan-out child attached: parent={} child={} delay_ms={}",
                                      parent, attach.child, attach.delay_ms);
                       return json_response(200, topic_json(*attached, RoleField::always));
                   });
}

void detach_child(const TopicRouteContext& context, const PathParams& params,
                  net::Responder respond) {
    answer_on_pool(context.blocking, std::move(respond),
                   [&context, parent = params.get("topic"), child = params.get("child")] {
                       Status detached = context.topics.detach(parent, child);
                       if (!detached.is_ok()) {
                           return domain_error_response(detached, "detach child");
                       }
                       NARAD_LOG_INFO("fan-out child detached: parent={} child={}", parent, child);
                       return empty_response(204);
                   });
}

void detach_route(const TopicRouteContext& c, net::HttpRequest, const PathParams& p,
                  net::Responder d) {
    detach_child(c, p, std::move(d));
}

void create_route(const TopicRouteContext& c, net::HttpRequest r, const PathParams&,
                  net::Responder d) {
    create_topic(c, std::move(r), std::move(d));
}

void delete_route(const TopicRouteContext& c, net::HttpRequest, const PathParams& p,
                  net::Responder d) {
    delete_topic(c, p, std::move(d));
}

void list_route(const TopicRouteContext& c, net::HttpRequest r, const PathParams&,
                net::Responder d) {
    list_topics(c, std::move(r), std::move(d));
}

void schema_route(const TopicRouteContext& c, net::HttpRequest, const PathParams& p,
                  net::Responder d) {
    get_schema(c, p, std::move(d));
}

void children_route(const TopicRouteContext& c, net::HttpRequest, const PathParams& p,
                    net::Responder d) {
    list_children(c, p, std::move(d));
}

}  // namespace

void register_controller_topic_routes(Router& internal, TopicRouteContext context) {
    auto c = std::make_shared<const TopicRouteContext>(std::move(context));
    const ControllerForward& controller = c->controller;
    const AccessContext& access = c->access;
    add_controller_route(internal, controller, "POST", "/v1/topics", bind_route(c, create_route));
    // The controller checks ownership again, on its own view: the forwarding node's replica may
    // not have the topic yet (its check then passes).
    add_controller_route(internal, controller, "PATCH", "/v1/topics/{topic}",
                         needs_manage(access, bind_route(c, update_topic)));
    add_controller_route(internal, controller, "DELETE", "/v1/topics/{topic}",
                         needs_manage(access, bind_route(c, delete_route)));
    add_controller_route(internal, controller, "POST", "/v1/topics/{topic}/children",
                         needs_manage(access, bind_route(c, attach_child)));
    add_controller_route(internal, controller, "DELETE", "/v1/topics/{topic}/children/{child}",
                         needs_manage(access, bind_route(c, detach_route)));
}

void register_topic_routes(Router& router, TopicRouteContext context) {
    auto c = std::make_shared<const TopicRouteContext>(std::move(context));
    const ControllerForward& controller = c->controller;
    const AccessContext& access = c->access;
    router.add("POST", "/v1/topics", controller_only(controller, bind_route(c, create_route)));
    router.add("GET", "/v1/topics", bind_route(c, list_route));
    router.add("GET", "/v1/topics/{topic}", needs_read(access, bind_route(c, get_topic)));
    router.add("PATCH", "/v1/topics/{topic}",
               needs_manage(access, controller_only(controller, bind_route(c, update_topic))));
    router.add("DELETE", "/v1/topics/{topic}",
               needs_manage(access, controller_only(controller, bind_route(c, delete_route))));
    router.add("GET", "/v1/topics/{topic}/schema", needs_read(access, bind_route(c, schema_route)));
    router.add("GET", "/v1/topics/{topic}/children",
               needs_read(access, bind_route(c, children_route)));
    router.add("POST", "/v1/topics/{topic}/children",
               needs_manage(access, controller_only(controller, bind_route(c, attach_child))));
    router.add("DELETE", "/v1/topics/{topic}/children/{child}",
               needs_manage(access, controller_only(controller, bind_route(c, detach_route))));
}

}  // namespace narad::api
