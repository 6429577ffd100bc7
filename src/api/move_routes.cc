// The move routes and the HTTP SourceClient (see move_routes.h).
#include "api/move_routes.h"

#include <nlohmann/json.hpp>

#include "api/owner_routing.h"
#include "api/params.h"
#include "api/respond.h"
#include "base/log.h"
#include "base/url.h"

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
    return {{"frontier", listing.frontier.value()},
            {"acked_ahead", acked},
            {"high_watermark", listing.high_watermark.value()},
            {"source_clock_ns", listing.source_clock_ns},
            {"segments", segments}};
}

Result<move::TransferListing> listing_from(const json& body) {
    try {
        move::TransferListing listing;
        listing.frontier = Offset(body.at("frontier").get<uint64_t>());
        for (const auto& offset : body.at("acked_ahead")) {
            listing.acked_ahead.push_back(Offset(offset.get<uint64_t>()));
        }
        listing.high_watermark = Offset(body.at("high_watermark").get<uint64_t>());
        listing.source_clock_ns = body.value("source_clock_ns", int64_t{0});
        for (const auto& item : body.at("segments")) {
            move::SegmentListing segment;
            segment.base = Offset(item.at("base").get<uint64_t>());
            segment.size_bytes = item.at("size").get<uint64_t>();
            segment.index_bytes = item.value("index", uint64_t{0});
            segment.sealed = item.at("sealed").get<bool>();
            segment.modified_ns = item.value("modified_ns", int64_t{0});
            listing.segments.push_back(segment);
        }
        return listing;
    } catch (const json::exception& e) {
        return Status(Errc::corrupt,
                      std::string("a transfer listing that does not parse: ") + e.what());
    }
}

json progress_json(const move::MoveProgress& progress) {
    json item = {{"topic", progress.partition.topic},
                 {"partition", progress.partition.partition.value()},
                 {"from", progress.source.value()},
                 {"phase", move::move_phase_name(progress.phase)},
                 {"bytes_copied", progress.bytes_copied},
                 {"bytes_total", progress.bytes_total},
                 {"passes", progress.passes},
                 {"freeze_ms", nullptr},
                 {"non_converged", progress.non_converged},
                 {"blocked", progress.blocked},
                 {"error", progress.error}};
    if (progress.freeze) item["freeze_ms"] = progress.freeze->count();
    return item;
}

std::optional<PartitionId> partition_param(const PathParams& params) {
    auto value = parse_unsigned<uint32_t>(params.get("partition"));
    return value ? std::optional<PartitionId>(PartitionId(*value)) : std::nullopt;
}

std::string_view side_status(const ApiContext& context, const meta::MetaState& state,
                             const NodeId& node) {
    const meta::MemberInfo* member = state.find_member(node);
    if (member == nullptr) return "not_a_member";
    if (state.is_dead(node, context.clock.now(), context.cluster.dead_after)) return "dead";
    return member->draining ? "draining" : "alive";
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
                   if (!partition) return d(error_response(400, "invalid partition"));
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
                    error_response(400,
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
                   if (!partition) return d(error_response(400, "invalid partition"));
                   std::string token(r.query_param("token").value_or(""));
                   answer_on_pool(c->pool, std::move(d),
                                  [c, topic = p.get("topic"), partition, token] {
                                      auto handoff = c->handoff.prepare(topic, *partition, token);
                                      if (!handoff.is_ok()) return error_response(handoff.status());
                                      json body = {{"token", handoff->token},
                                                   {"listing", listing_json(handoff->listing)}};
                                      return json_response(200, body.dump());
                                  });
               });
    router.add("POST", "/internal/v1/moves/{topic}/{partition}/fence",
               [c](net::HttpRequest r, const PathParams& p, net::Responder d) {
                   auto partition = partition_param(p);
                   auto hwm = number_param<uint64_t>(r, "hwm");
                   std::string token(r.query_param("token").value_or(""));
                   if (!partition || !hwm || token.empty()) {
                       return d(error_response(400, "partition, token and hwm are required"));
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

void register_public_move_routes(Router& router, ApiContext& context, move::MoveRunner* runner) {
    ApiContext* c = &context;
    router.add(
        "GET", "/v1/cluster/moves",
        [c, runner](net::HttpRequest r, const PathParams&, net::Responder d) {
            auto detail_text = r.query_param("detail").value_or("false");
            if (detail_text != "true" && detail_text != "false" && detail_text != "1" &&
                detail_text != "0") {
                return d(error_response(400, "detail must be true or false"));
            }
            bool detail = detail_text == "true" || detail_text == "1";
            meta::MetaSnapshot state = c->store.snapshot();
            json moves = json::array();
            for (const auto& [key, assignment] : state->assignments) {
                if (assignment.target.value().empty()) continue;
                moves.push_back({{"topic", key.topic},
                                 {"partition", key.partition.value()},
                                 {"from", assignment.owner.value()},
                                 {"to", assignment.target.value()}});
            }
            if (!detail) return d(json_response(200, json{{"moves", moves}}.dump() + "\n"));
            run_routed(*c, std::move(d), [c, runner, state, moves]() mutable {
                // The destinations' own reports, one call per destination.
                std::map<std::pair<std::string, uint32_t>, json> reports;
                std::set<std::string> asked;
                for (const auto& move : moves) {
                    std::string to = move["to"];
                    if (!asked.insert(to).second) continue;
                    json body;
                    if (to == c->node_id.value()) {
                        body = json::array();
                        if (runner != nullptr) {
                            for (const auto& p : runner->progress()) {
                                body.push_back(progress_json(p));
                            }
                        }
                    } else if (c->peers != nullptr) {
                        auto reply = c->peers->call(NodeId(to), "GET", "/internal/v1/moves", "", "",
                                                    kDetailTimeout);
                        if (!reply.is_ok() || reply->status != 200) continue;
                        json parsed = json::parse(reply->body, nullptr, false);
                        if (parsed.is_discarded() || !parsed.contains("moves")) continue;
                        body = parsed["moves"];
                    }
                    // A destination whose report has the wrong shape is shown as unreported.
                    try {
                        for (const auto& item : body) {
                            reports[{item.value("topic", ""), item.value("partition", 0u)}] = item;
                        }
                    } catch (const json::exception& e) {
                        NARAD_LOG_WARN("node {} reported its moves in the wrong shape: {}", to,
                                       e.what());
                    }
                }
                for (auto& move : moves) {
                    move["source_status"] = side_status(*c, *state, NodeId(move["from"]));
                    move["target_status"] = side_status(*c, *state, NodeId(move["to"]));
                    auto found = reports.find({move["topic"], move["partition"]});
                    if (found == reports.end() || !found->second.is_object() ||
                        !found->second.contains("from") || found->second["from"] != move["from"]) {
                        move["phase"] = "waiting";
                        continue;
                    }
                    for (const char* field : {"phase", "bytes_copied", "bytes_total", "passes",
                                              "freeze_ms", "non_converged", "blocked", "error"}) {
                        move[field] = found->second[field];
                    }
                }
                return json_response(200, json{{"moves", moves}}.dump() + "\n");
            });
        });
}

Result<PeerReply> PeerSourceClient::call(const NodeId& source, std::string_view method,
                                         const std::string& target) {
    return peers_.call(source, method, target, "", "", timeout_);
}

Result<move::TransferListing> PeerSourceClient::list(const NodeId& source, const std::string& topic,
                                                     PartitionId partition) {
    auto reply = call(source, "GET", move_target(topic, partition, "listing"));
    NARAD_RETURN_IF_ERROR(reply_status(reply, "listing"));
    json body = json::parse(reply->body, nullptr, false);
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
    auto reply = call(source, "GET", target);
    NARAD_RETURN_IF_ERROR(reply_status(reply, "chunk"));
    return std::move(reply->body);
}

Result<move::Handoff> PeerSourceClient::prepare(const NodeId& source, const std::string& topic,
                                                PartitionId partition, const std::string& token) {
    std::string target = move_target(topic, partition, "prepare");
    if (!token.empty()) target += "?token=" + percent_encode(token);
    auto reply = call(source, "POST", target);
    NARAD_RETURN_IF_ERROR(reply_status(reply, "prepare"));
    json body = json::parse(reply->body, nullptr, false);
    if (body.is_discarded() || !body.contains("token") || !body.contains("listing")) {
        return Status(Errc::corrupt, "a PrepareHandoff answer without token or listing");
    }
    NARAD_ASSIGN_OR_RETURN(move::TransferListing listing, listing_from(body["listing"]));
    if (!body["token"].is_string()) return Status(Errc::corrupt, "a freeze token that is not text");
    return move::Handoff{body["token"].get<std::string>(), std::move(listing)};
}

Status PeerSourceClient::fence(const NodeId& source, const std::string& topic,
                               PartitionId partition, const std::string& token, Offset hwm) {
    auto reply = call(source, "POST",
                      move_target(topic, partition, "fence") + "?token=" + percent_encode(token) +
                          "&hwm=" + std::to_string(hwm.value()));
    return reply_status(reply, "fence");
}

}  // namespace narad::api
