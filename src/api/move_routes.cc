// The move routes and the HTTP SourceClient (see move_routes.h).
#include "api/move_routes.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "api/access.h"
#include "api/controller_forward.h"
#include "api/owner_routing.h"
#include "api/params.h"
#include "api/peer_json.h"
#include "api/respond.h"
#include "base/base64.h"
#include "base/failpoint.h"
#include "base/log.h"
#include "base/url.h"
#include "move/move_metrics.h"

namespace narad::api {
namespace {

using nlohmann::json;

constexpr Millis kDetailTimeout{2'000};

template <typename T>
std::optional<T> number_param(const net::HttpRequest& request, std::string_view name) {
    auto text = request.query_param(name);
    return text ? parse_unsigned<T>(*text) : std::nullopt;
}

json listing_json(const move::TransferListing& listing) {
    json segments = json::array();
    for (const auto& segment : listing.segments) {
        segments.push_back({{"base", segment.base.value()},
                            {"size", segment.size_bytes},
                            {"index", segment.index_bytes},
                            {"sealed", segment.sealed},
                            {"modified_ns", segment.modified_ns}});
    }
    json acked = json::array();
    for (Offset offset : listing.acked_ahead) acked.push_back(offset.value());
    json cursors = json::array();
    for (const auto& sidecar : listing.cursors) {
        cursors.push_back({{"child", sidecar.child}, {"file", base64_encode(sidecar.bytes)}});
    }
    json body = {{"frontier", listing.frontier.value()},
                 {"acked_ahead", acked},
                 {"fanout_cursors", cursors},
                 {"high_watermark", listing.high_watermark.value()},
                 {"source_clock_ns", listing.source_clock_ns},
                 {"segments", segments}};
    if (listing.marker) {
        const move::MoveMarker& marker = *listing.marker;
        json children = json::array();
        for (const auto& link : marker.children)
            children.push_back({link.child, link.attach_epoch});
        body["marker"] = {{"source", marker.source.value()},
                          {"promoted_high_watermark", marker.promoted_high_watermark.value()},
                          {"force_promote", marker.force_promote},
                          {"durable_at_ms", marker.durable_at_ms},
                          {"install", marker.install},
                          {"children", children},
                          {"written_ns", listing.marker_written_ns}};
    }
    return body;
}

Result<move::TransferListing> listing_from(const json& body) {
    try {
        if (!body.is_object()) throw WrongShape("the listing is not an object");
        move::TransferListing listing;
        listing.frontier = Offset(unsigned_field(body, "frontier"));
        for (const auto& offset : array_field(body, "acked_ahead")) {
            if (!offset.is_number_unsigned()) {
                throw WrongShape("an acked offset is not an unsigned integer");
            }
            listing.acked_ahead.push_back(Offset(offset.get<uint64_t>()));
        }
        if (body.contains("fanout_cursors")) {
            for (const auto& item : array_field(body, "fanout_cursors")) {
                if (!item.is_object() || !item.contains("child") || !item["child"].is_string() ||
                    !item.contains("file") || !item["file"].is_string()) {
                    throw WrongShape("a fan-out cursor is not {child, file}");
                }
                auto bytes = base64_decode(item["file"].get<std::string>());
                if (!bytes) throw WrongShape("a fan-out cursor's file is not base64");
                listing.cursors.push_back({item["child"].get<std::string>(), std::move(*bytes)});
            }
        }
        listing.high_watermark = Offset(unsigned_field(body, "high_watermark"));
        listing.source_clock_ns = signed_field_or(body, "source_clock_ns", 0);
        for (const auto& item : array_field(body, "segments")) {
            if (!item.is_object()) throw WrongShape("a segment is not an object");
            move::SegmentListing segment;
            segment.base = Offset(unsigned_field(item, "base"));
            segment.size_bytes = unsigned_field(item, "size");
            segment.index_bytes = unsigned_field_or(item, "index", 0);
            segment.sealed = item.at("sealed").get<bool>();
            segment.modified_ns = signed_field_or(item, "modified_ns", 0);
            listing.segments.push_back(segment);
        }
        if (body.contains("marker")) {
            const json& item = body.at("marker");
            if (!item.is_object()) throw WrongShape("the marker is not an object");
            move::MoveMarker marker;
            marker.source = NodeId(item.at("source").get<std::string>());
            marker.promoted_high_watermark =
                Offset(unsigned_field(item, "promoted_high_watermark"));
            marker.force_promote = item.value("force_promote", false);
            marker.durable_at_ms = signed_field_or(item, "durable_at_ms", 0);
            marker.install = item.value("install", "");
            if (item.contains("children")) {
                for (const auto& link : array_field(item, "children")) {
                    if (!link.is_array() || link.size() != 2) {
                        throw WrongShape("a child link is not a pair");
                    }
                    marker.children.push_back(
                        {link.at(0).get<std::string>(), link.at(1).get<std::string>()});
                }
            }
            listing.marker_written_ns = signed_field_or(item, "written_ns", 0);
            listing.marker = std::move(marker);
        }
        return listing;
    } catch (const WrongShape& e) {
        return Status(Errc::corrupt,
                      std::string("a transfer listing that does not parse: ") + e.what());
    } catch (const json::exception& e) {
        return Status(Errc::corrupt,
                      std::string("a transfer listing that does not parse: ") + e.what());
    }
}

json progress_json(const move::MoveProgress& progress) {
    json item = {
        {"topic", progress.partition.topic},
        {"partition", progress.partition.partition.value()},
        {"from", progress.source.value()},
        {"phase", move::move_phase_name(progress.phase)},
        {"bytes_copied", progress.bytes_copied},
        {"bytes_total", progress.bytes_total},
        {"passes", progress.passes},
        {"freeze_ms", nullptr},
        {"non_converged", progress.non_converged},
        {"blocked", progress.blocked},
        {"error", progress.error},
        {"attempts", progress.attempts},
        {"force_promoted", progress.force_promoted},
        {"started_at_ms",
         std::chrono::duration_cast<Millis>(progress.started_at.time_since_epoch()).count()}};
    if (progress.freeze) item["freeze_ms"] = progress.freeze->count();
    return item;
}

// Narad's names for a worker's phase.
std::string_view narad_phase(std::string_view phase) {
    if (phase == "catch_up" || phase == "waiting") return "copying";
    if (phase == "freezing" || phase == "finalizing" || phase == "installing") return "frozen";
    if (phase == "flipping" || phase == "resolving") return "flip_pending";
    return phase;  // waiting_for_source, blocked, done, failed
}

// The destination's report as Narad's `worker` object (GET /v1/cluster/moves?detail=true).
json worker_json(const json& report, const std::string& target) {
    json worker = {{"topic", report.value("topic", "")},
                   {"partition", report.value("partition", 0u)},
                   {"source", report.value("from", "")},
                   {"target", target},
                   {"started_at", format_rfc3339(report.value("started_at_ms", int64_t{0}))},
                   {"phase", narad_phase(report.value("phase", ""))},
                   {"attempts", report.value("attempts", 0u)},
                   {"copied_bytes", report.value("bytes_copied", uint64_t{0})}};
    std::string error = report.value("error", "");
    if (!error.empty()) worker["last_error"] = error;
    std::string blocked = report.value("blocked", "");
    if (!blocked.empty()) worker["blocked"] = blocked;
    return worker;
}

std::optional<PartitionId> partition_param(const PathParams& params) {
    auto value = parse_unsigned<uint32_t>(params.get("partition"));
    return value ? std::optional<PartitionId>(PartitionId(*value)) : std::nullopt;
}

std::string_view side_status(const PublicMoveRouteContext& context, const meta::MetaState& state,
                             const NodeId& node) {
    const meta::MemberInfo* member = state.find_member(node);
    if (member == nullptr) return "not_a_member";
    if (state.is_dead(node, context.clock.now(), context.dead_after)) return "dead";
    return member->draining ? "draining" : "alive";
}

// Why the controller sees a move unable to finish on its own, or "" (Narad's precedence).
std::string_view blocked_reason(std::string_view from_status, std::string_view to_status) {
    if (from_status == "dead" || from_status == "not_a_member") return "source_dead";
    if (to_status == "not_a_member") return "target_not_member";
    if (to_status == "dead") return "target_dead";
    return "";
}

// One move as GET /v1/cluster/moves lists it.
json move_json(const PublicMoveRouteContext& context, const meta::MetaState& state,
               const meta::PartitionKey& key, const meta::Assignment& assignment) {
    std::string_view from = side_status(context, state, assignment.owner);
    std::string_view to = side_status(context, state, assignment.target);
    json move = {{"topic", key.topic},
                 {"partition", key.partition.value()},
                 {"from", assignment.owner.value()},
                 {"to", assignment.target.value()},
                 {"from_status", from},
                 {"to_status", to}};
    std::string_view blocked = blocked_reason(from, to);
    if (!blocked.empty()) move["blocked"] = blocked;
    return move;
}

std::string move_target(std::string_view topic, PartitionId partition, std::string_view verb) {
    return "/internal/v1/moves/" + percent_encode(topic) + "/" + std::to_string(partition.value()) +
           "/" + std::string(verb);
}

Status reply_status(const Result<PeerReply>& reply, std::string_view what) {
    if (!reply.is_ok()) return reply.status();
    std::string detail = std::string(what) + ": " + reply->body.substr(0, 300);
    switch (reply->status) {
        case 200:
        case 204:
            return Status::ok();
        case 404:
            return Status(Errc::not_found, detail);
        case 409:
            return Status(Errc::conflict, detail);
        case 421:
            return Status(Errc::not_owner, detail);
        default:
            return Status(Errc::unavailable, detail);
    }
}

}  // namespace

void register_internal_move_routes(Router& router, MoveRouteContext& context) {
    MoveRouteContext* c = &context;
    router.add("GET", "/internal/v1/moves/{topic}/{partition}/listing",
               [c](net::HttpRequest, const PathParams& p, net::Responder d) {
                   auto partition = partition_param(p);
                   if (!partition) {
                       return d(error_response(Errc::invalid_argument, "invalid partition"));
                   }
                   answer_on_pool(c->pool, std::move(d), [c, topic = p.get("topic"), partition] {
                       auto listing = c->handoff.list(topic, *partition);
                       if (!listing.is_ok()) return error_response(listing.status());
                       return json_response(200, listing_json(*listing).dump());
                   });
               });
    router.add(
        "GET", "/internal/v1/moves/{topic}/{partition}/chunk",
        [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
            auto partition = partition_param(p);
            auto base = number_param<uint64_t>(r, "base");
            auto offset = number_param<uint64_t>(r, "offset");
            auto length = number_param<uint64_t>(r, "length");
            auto kind = r.query_param("kind").value_or("log");
            if (!partition || !base || !offset || !length || (kind != "log" && kind != "index")) {
                return d(
                    error_response(Errc::invalid_argument,
                                   "partition, base, offset and length are required numbers; kind "
                                   "is log or index"));
            }
            move::ChunkKind chunk_kind =
                kind == "log" ? move::ChunkKind::log : move::ChunkKind::index;
            answer_on_pool(
                c->pool, std::move(d),
                [c, topic = p.get("topic"), partition, base, offset, length, chunk_kind] {
                    auto bytes = c->handoff.read_chunk(topic, *partition, Offset(*base), chunk_kind,
                                                       *offset, *length);
                    if (!bytes.is_ok()) return error_response(bytes.status());
                    net::HttpResponse response;
                    response.status = 200;
                    response.content_type = "application/octet-stream";
                    response.body = std::move(*bytes);
                    return response;
                });
        });
    router.add("POST", "/internal/v1/moves/{topic}/{partition}/prepare",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   auto partition = partition_param(p);
                   if (!partition) {
                       return d(error_response(Errc::invalid_argument, "invalid partition"));
                   }
                   FreezeToken token(std::string(r.query_param("token").value_or("")));
                   answer_on_pool(c->pool, std::move(d),
                                  [c, topic = p.get("topic"), partition, token] {
                                      auto handoff = c->handoff.prepare(topic, *partition, token);
                                      if (!handoff.is_ok()) return error_response(handoff.status());
                                      json body = {{"token", handoff->token.value()},
                                                   {"listing", listing_json(handoff->listing)}};
                                      return json_response(200, body.dump());
                                  });
               });
    router.add("POST", "/internal/v1/moves/{topic}/{partition}/fence",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   auto partition = partition_param(p);
                   auto hwm = number_param<uint64_t>(r, "hwm");
                   FreezeToken token(std::string(r.query_param("token").value_or("")));
                   if (!partition || !hwm || token.value().empty()) {
                       return d(error_response(Errc::invalid_argument,
                                               "partition, token and hwm are required"));
                   }
                   answer_on_pool(
                       c->pool, std::move(d), [c, topic = p.get("topic"), partition, token, hwm] {
                           Status fenced = c->handoff.fence(topic, *partition, token, Offset(*hwm));
                           if (!fenced.is_ok()) return error_response(fenced);
                           return empty_response(204);
                       });
               });
    router.add("GET", "/internal/v1/moves",
               [c](net::HttpRequest, const PathParams&, net::Responder d) {
                   json moves = json::array();
                   for (const auto& progress : c->runner.progress()) {
                       moves.push_back(progress_json(progress));
                   }
                   d(json_response(200, json{{"moves", moves}}.dump()));
               });
}

namespace {

void list_moves(const PublicMoveRouteContext* c, net::HttpRequest r, const PathParams&,
                net::Responder d) {
    auto detail_param = bool_param("detail", r.query_param("detail"));
    if (!detail_param.is_ok()) {
        return d(error_response(Errc::invalid_argument, detail_param.status().message()));
    }
    bool detail = *detail_param;
    meta::MetaSnapshot state = c->store.snapshot();
    json moves = json::array();
    for (const auto& [key, assignment] : state->assignments) {
        if (assignment.target.value().empty()) continue;
        moves.push_back(move_json(*c, *state, key, assignment));
    }
    if (!detail) return d(json_response(200, json{{"moves", moves}}.dump() + "\n"));
    run_routed(c->routing, std::move(d), [c, state, moves]() mutable {
        // The destinations' own reports, one call per destination.
        std::map<std::pair<std::string, uint32_t>, json> reports;
        std::map<std::string, std::string> unreported;  // destination -> why
        std::set<std::string> asked;
        for (const auto& move : moves) {
            std::string to = move["to"];
            if (!asked.insert(to).second) continue;
            json body = json::array();
            if (to == c->routing.self.value()) {
                if (c->runner != nullptr) {
                    for (const auto& p : c->runner->progress()) body.push_back(progress_json(p));
                }
            } else if (state->find_member(NodeId(to)) == nullptr) {
                unreported[to] = "the target is not a member";
                continue;
            } else if (c->routing.peers != nullptr) {
                auto reply = c->routing.peers->call(NodeId(to), "GET", "/internal/v1/moves", "", "",
                                                    kDetailTimeout);
                if (!reply.is_ok() || reply->status != 200) {
                    unreported[to] = reply.is_ok() ? "answered " + std::to_string(reply->status)
                                                   : reply.status().to_string();
                    continue;
                }
                json parsed = parse_peer_reply(reply->body);
                if (!parsed.is_object() || !parsed.contains("moves")) continue;
                body = parsed["moves"];
            }
            // A destination whose report has the wrong shape is shown as unreported.
            try {
                for (const auto& item : body) {
                    auto partition =
                        static_cast<uint32_t>(unsigned_field_or(item, "partition", 0, UINT32_MAX));
                    reports[{item.value("topic", ""), partition}] = item;
                }
            } catch (const std::exception& e) {  // nlohmann's exceptions and WrongShape
                NARAD_LOG_WARN("node {} reported its moves in the wrong shape: {}", to, e.what());
                unreported[to] = "its report has the wrong shape";
            }
        }
        for (auto& move : moves) {
            move["source_status"] = move["from_status"];
            move["target_status"] = move["to_status"];
            auto found = reports.find({move["topic"], move["partition"]});
            if (found == reports.end() || !found->second.is_object() ||
                !found->second.contains("from") || found->second["from"] != move["from"]) {
                move["phase"] = "waiting";
                if (auto why = unreported.find(move["to"]); why != unreported.end()) {
                    move["worker_error"] = why->second;
                }
                continue;
            }
            const json& report = found->second;
            for (const char* field : {"phase", "bytes_copied", "bytes_total", "passes", "freeze_ms",
                                      "non_converged", "error"}) {
                move[field] = report.contains(field) ? report[field] : json();
            }
            // The controller's reason wins; else the destination's own.
            std::string own = report.value("blocked", "");
            if (!move.contains("blocked") && !own.empty()) move["blocked"] = own;
            move["worker"] = worker_json(report, move["to"]);
        }
        return json_response(200, json{{"moves", moves}}.dump() + "\n");
    });
}

// POST /v1/cluster/moves/{topic}/{partition}/abort, on the controller: the compare-and-set that
// clears the target, then the answer read back linearizably (docs/moves.md, "Aborting a move").
net::HttpResponse abort_move(const PublicMoveRouteContext* c, const std::string& topic,
                             PartitionId partition, std::optional<std::string> expected_target,
                             const std::string& actor) {
    meta::PartitionKey key{topic, partition};
    std::string name = topic + "/" + std::to_string(partition.value());
    auto read = c->store.read_assignment(key);
    if (!read.is_ok()) {
        return error_response(Errc::unavailable,
                              "abort move on the leader: " + read.status().to_string());
    }
    if (!read->has_value()) return error_response(Errc::not_found, name + " has no assignment");
    meta::Assignment before = **read;
    if (before.target.value().empty()) {
        return error_response(Errc::conflict, "no move is in flight for " + name);
    }
    if (expected_target && *expected_target != before.target.value()) {
        return error_response(Errc::conflict, "the move of " + name + " now targets " +
                                                  before.target.value() + ", not " +
                                                  *expected_target + "; nothing was aborted");
    }
    meta::MetaSnapshot state = c->store.snapshot();
    json move = move_json(*c, *state, key, before);
    std::string what = name + " " + before.owner.value() + "->" + before.target.value();
    auto audit = [&](std::string outcome, std::string detail) {
        if (c->audit != nullptr) {
            c->audit->record(
                {"cluster.move.abort", actor, what, std::move(outcome), std::move(detail)});
        }
    };
    NARAD_FAILPOINT("move.abort.before_clear");
    auto cleared = c->store.set_targets({{key, before, NodeId()}});
    if (!cleared.is_ok()) {
        NARAD_LOG_WARN("abort of the move of {}: clearing the target: {}", name,
                       cleared.status().to_string());
    }
    // Whatever the write said, the answer is what the leader holds now.
    auto back = c->store.read_assignment(key);
    if (!back.is_ok()) {
        std::string message = "the abort of the move of " + name + " to " + before.target.value() +
                              " reached the leader, but whether it cleared the target could not "
                              "be read back (" +
                              back.status().to_string() + "); list the moves to see";
        audit("unknown", message);
        return error_response(Errc::unavailable, message);
    }
    if (!back->has_value()) {
        return error_response(Errc::conflict,
                              name +
                                  " has no assignment any more (its topic was deleted); "
                                  "nothing was aborted");
    }
    const meta::Assignment& now = **back;
    if (now.owner != before.owner) {
        return error_response(
            Errc::conflict,
            "the move of " + name +
                " finished before the abort reached the leader: " + now.owner.value() +
                " owns it now (target \"" + now.target.value() + "\"); nothing was aborted");
    }
    if (now.target == before.target) {
        return error_response(Errc::conflict, "the move of " + name + " to " +
                                                  before.target.value() +
                                                  " is still in flight on the leader (owner " +
                                                  now.owner.value() + "); nothing was aborted");
    }
    std::string note =
        now.target.value().empty()
            ? "the move's target was cleared; the partition stays with its owner, and the "
              "controller may plan a move for it again"
            : "the move to " + before.target.value() +
                  " is no longer in flight and the partition stays with its owner; a move to " +
                  now.target.value() + " has been planned since";
    move::MoveMetrics::get().aborted.inc();
    audit("ok", note);
    NARAD_LOG_INFO("aborted the move of {} from {} to {}", name, before.owner.value(),
                   before.target.value());
    return json_response(202, json{{"move", move}, {"note", note}}.dump() + "\n");
}

void abort_route(const PublicMoveRouteContext* c, net::HttpRequest r, const PathParams& p,
                 net::Responder d) {
    auto partition = partition_param(p);
    if (!partition) {
        return d(
            error_response(Errc::invalid_argument, "topic and a partition number are required"));
    }
    std::optional<std::string> target;
    if (auto given = r.query_param("target")) target = std::string(*given);
    std::string actor = actor_of(r);
    answer_on_pool(c->blocking, std::move(d),
                   [c, topic = p.get("topic"), partition, target, actor] {
                       return abort_move(c, topic, *partition, target, actor);
                   });
}

constexpr const char* kAbortPath = "/v1/cluster/moves/{topic}/{partition}/abort";

}  // namespace

void register_public_move_routes(Router& router, PublicMoveRouteContext context) {
    auto c = std::make_shared<const PublicMoveRouteContext>(std::move(context));
    router.add("GET", "/v1/cluster/moves", bind_route(c, list_moves));
    router.add("POST", kAbortPath, controller_only(c->controller, bind_route(c, abort_route)));
}

void register_controller_move_routes(Router& internal, PublicMoveRouteContext context) {
    auto c = std::make_shared<const PublicMoveRouteContext>(std::move(context));
    add_controller_route(internal, c->controller, "POST", kAbortPath, bind_route(c, abort_route));
}

std::string worker_reports_json(const move::MoveRunner& runner, const NodeId& self) {
    json workers = json::array();
    for (const auto& progress : runner.progress()) {
        workers.push_back(worker_json(progress_json(progress), self.value()));
    }
    return workers.dump();
}

Result<PeerReply> PeerSourceClient::call(const NodeId& source, std::string_view method,
                                         const std::string& target, Millis timeout) {
    return peers_.call(source, method, target, "", "", timeout);
}

Result<move::TransferListing> PeerSourceClient::list(const NodeId& source, const std::string& topic,
                                                     PartitionId partition) {
    auto reply = call(source, "GET", move_target(topic, partition, "listing"), timeout_);
    NARAD_RETURN_IF_ERROR(reply_status(reply, "listing"));
    json body = parse_peer_reply(reply->body);
    if (body.is_discarded()) return Status(Errc::corrupt, "a listing that is not JSON");
    return listing_from(body);
}

Result<std::string> PeerSourceClient::read_chunk(const NodeId& source, const std::string& topic,
                                                 PartitionId partition, Offset base,
                                                 move::ChunkKind kind, uint64_t offset,
                                                 uint64_t length) {
    std::string target = move_target(topic, partition, "chunk") +
                         "?base=" + std::to_string(base.value()) +
                         "&kind=" + (kind == move::ChunkKind::log ? "log" : "index") +
                         "&offset=" + std::to_string(offset) + "&length=" + std::to_string(length);
    auto reply = call(source, "GET", target, timeout_);
    NARAD_RETURN_IF_ERROR(reply_status(reply, "chunk"));
    return std::move(reply->body);
}

Result<move::Handoff> PeerSourceClient::prepare(const NodeId& source, const std::string& topic,
                                                PartitionId partition, const FreezeToken& token) {
    std::string target = move_target(topic, partition, "prepare");
    if (!token.value().empty()) target += "?token=" + percent_encode(token.value());
    auto reply = call(source, "POST", target, freeze_timeout_);
    NARAD_RETURN_IF_ERROR(reply_status(reply, "prepare"));
    json body = parse_peer_reply(reply->body);
    if (!body.is_object() || !body.contains("token") || !body.contains("listing")) {
        return Status(Errc::corrupt, "a PrepareHandoff answer without token or listing");
    }
    NARAD_ASSIGN_OR_RETURN(move::TransferListing listing, listing_from(body["listing"]));
    if (!body["token"].is_string()) return Status(Errc::corrupt, "a freeze token that is not text");
    return move::Handoff{FreezeToken(body["token"].get<std::string>()), std::move(listing)};
}

Status PeerSourceClient::fence(const NodeId& source, const std::string& topic,
                               PartitionId partition, const FreezeToken& token, Offset hwm) {
    auto reply =
        call(source, "POST",
             move_target(topic, partition, "fence") + "?token=" + percent_encode(token.value()) +
                 "&hwm=" + std::to_string(hwm.value()),
             freeze_timeout_);
    return reply_status(reply, "fence");
}

}  // namespace narad::api
