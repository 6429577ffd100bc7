// The decoders of other nodes' answers on the cluster port, against hostile replies: a move's
// transfer listing, PrepareHandoff answer, chunk and fence (PeerSourceClient), and a node's status
// (fetch_node_status, decode_node_status). A peer that is broken, of another version, or not a
// Narad node at all may answer anything: any status, random bytes, a valid answer with fields
// mutated, numbers that do not fit, nesting 100,000 deep. The client never crashes or throws,
// maps every status as documented, and what it accepts is exactly what the reply holds: an
// unsigned field is an unsigned integer, not -1 read as 2^64-1 or 1e300 cast. Fixed seeds.
#include <gtest/gtest.h>

#include <exception>
#include <nlohmann/json.hpp>

#include "api/move_routes.h"
#include "api/node_status.h"
#include "base/json_fuzz.h"

namespace narad::api {
namespace {

using json_fuzz::pick;
using json_fuzz::printable;
using json_fuzz::Rng;
using nlohmann::json;

const std::vector<std::string> kListingKeys = {"frontier",
                                               "acked_ahead",
                                               "high_watermark",
                                               "source_clock_ns",
                                               "segments",
                                               "base",
                                               "size",
                                               "index",
                                               "sealed",
                                               "modified_ns",
                                               "marker",
                                               "source",
                                               "promoted_high_watermark",
                                               "force_promote",
                                               "durable_at_ms",
                                               "install",
                                               "children",
                                               "written_ns",
                                               "token",
                                               "listing"};
const std::vector<std::string> kStatusKeys = {
    "node", "draining", "produce_in_flight", "dispatch_backlog", "quarantine", "moves"};

// Answers every call with the reply it was given last.
class ScriptedPeer final : public PeerClient {
  public:
    Result<PeerReply> call(const NodeId&, std::string_view, std::string_view, std::string_view,
                           std::string_view, Millis) override {
        return reply;
    }
    Result<PeerReply> reply = PeerReply{200, "", "application/json"};
};

// A listing as the source's listing_json writes it, optional fields now and then left out.
json valid_listing(Rng& rng) {
    json segments = json::array();
    uint64_t base = rng() % 1000;
    for (size_t i = 0, n = pick(rng, 5); i < n; ++i) {
        json segment = {{"base", base}, {"size", rng() % 100'000}, {"sealed", i + 1 < n}};
        if (pick(rng, 3)) segment["index"] = pick(rng, 2) ? rng() % 4096 : 0;
        if (pick(rng, 3)) segment["modified_ns"] = static_cast<int64_t>(rng() >> 2);
        segments.push_back(segment);
        base += 1 + rng() % 500;
    }
    json acked = json::array();
    for (size_t i = 0, n = pick(rng, 4); i < n; ++i) acked.push_back(base + i * 2);
    json body = {{"frontier", base},
                 {"acked_ahead", acked},
                 {"high_watermark", base + rng() % 100},
                 {"segments", segments}};
    if (pick(rng, 3)) body["source_clock_ns"] = static_cast<int64_t>(rng() >> 1);
    if (pick(rng, 3) == 0) {
        json children = json::array();
        for (size_t i = 0, n = pick(rng, 3); i < n; ++i) {
            children.push_back({"child-" + std::to_string(i), "epoch-" + std::to_string(i)});
        }
        body["marker"] = {{"source", "n2"},
                          {"promoted_high_watermark", base},
                          {"force_promote", pick(rng, 2) == 0},
                          {"durable_at_ms", static_cast<int64_t>(rng() >> 20)},
                          {"install", "9f3a"},
                          {"children", children},
                          {"written_ns", static_cast<int64_t>(rng() >> 2)}};
    }
    return body;
}

// A reply status: mostly 200, sometimes anything.
int reply_code(Rng& rng) {
    static constexpr int kCodes[] = {200, 204, 404, 409, 421, 500, 503, 0, 999, -1, 302, 423};
    return pick(rng, 3) ? 200 : kCodes[pick(rng, std::size(kCodes))];
}

// The Errc that reply_status (move_routes.cc) documents for an HTTP status.
Errc errc_for(int status) {
    switch (status) {
        case 200:
        case 204:
            return Errc::ok;
        case 404:
            return Errc::not_found;
        case 409:
            return Errc::conflict;
        case 421:
            return Errc::not_owner;
        default:
            return Errc::unavailable;
    }
}

bool fits_int64(const json& value) {
    return value.is_number_integer() && !(value.is_number_unsigned() &&
                                          value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
}

// `listing` holds exactly what `dom` says, every field of its type.
void expect_listing_is(const move::TransferListing& listing, const json& dom,
                       const std::string& body) {
    ASSERT_TRUE(dom.is_object()) << printable(body);
    auto unsigned_is = [&](const json& object, const char* field, uint64_t value) {
        ASSERT_TRUE(object.at(field).is_number_unsigned())
            << "accepted " << field << " = " << object.at(field).dump() << ": " << printable(body);
        ASSERT_EQ(object.at(field).get<uint64_t>(), value) << field << ": " << printable(body);
    };
    auto optional_signed_is = [&](const json& object, const char* field, int64_t value) {
        if (!object.contains(field)) {
            ASSERT_EQ(value, 0) << field;
            return;
        }
        ASSERT_TRUE(fits_int64(object.at(field)))
            << "accepted " << field << " = " << object.at(field).dump() << ": " << printable(body);
        ASSERT_EQ(object.at(field).get<int64_t>(), value) << field << ": " << printable(body);
    };
    ASSERT_NO_FATAL_FAILURE(unsigned_is(dom, "frontier", listing.frontier.value()));
    ASSERT_NO_FATAL_FAILURE(unsigned_is(dom, "high_watermark", listing.high_watermark.value()));
    ASSERT_NO_FATAL_FAILURE(optional_signed_is(dom, "source_clock_ns", listing.source_clock_ns));
    const json& acked = dom.at("acked_ahead");
    ASSERT_TRUE(acked.is_array()) << "accepted acked_ahead = " << acked.dump();
    ASSERT_EQ(acked.size(), listing.acked_ahead.size());
    for (size_t i = 0; i < acked.size(); ++i) {
        ASSERT_TRUE(acked[i].is_number_unsigned()) << "accepted an acked offset " << acked[i];
        ASSERT_EQ(acked[i].get<uint64_t>(), listing.acked_ahead[i].value());
    }
    const json& segments = dom.at("segments");
    ASSERT_TRUE(segments.is_array()) << "accepted segments = " << segments.dump();
    ASSERT_EQ(segments.size(), listing.segments.size());
    for (size_t i = 0; i < segments.size(); ++i) {
        const json& item = segments[i];
        const move::SegmentListing& segment = listing.segments[i];
        ASSERT_TRUE(item.is_object()) << printable(body);
        ASSERT_NO_FATAL_FAILURE(unsigned_is(item, "base", segment.base.value()));
        ASSERT_NO_FATAL_FAILURE(unsigned_is(item, "size", segment.size_bytes));
        if (item.contains("index")) {
            ASSERT_NO_FATAL_FAILURE(unsigned_is(item, "index", segment.index_bytes));
        } else {
            ASSERT_EQ(segment.index_bytes, 0u);
        }
        ASSERT_TRUE(item.at("sealed").is_boolean()) << printable(body);
        ASSERT_EQ(item.at("sealed").get<bool>(), segment.sealed);
        ASSERT_NO_FATAL_FAILURE(optional_signed_is(item, "modified_ns", segment.modified_ns));
    }
    ASSERT_EQ(dom.contains("marker"), listing.marker.has_value()) << printable(body);
    if (!listing.marker) return;
    const json& item = dom.at("marker");
    const move::MoveMarker& marker = *listing.marker;
    ASSERT_TRUE(item.is_object()) << printable(body);
    ASSERT_EQ(item.at("source").get<std::string>(), marker.source.value());
    ASSERT_NO_FATAL_FAILURE(
        unsigned_is(item, "promoted_high_watermark", marker.promoted_high_watermark.value()));
    ASSERT_NO_FATAL_FAILURE(optional_signed_is(item, "durable_at_ms", marker.durable_at_ms));
    ASSERT_NO_FATAL_FAILURE(optional_signed_is(item, "written_ns", listing.marker_written_ns));
    ASSERT_EQ(item.value("force_promote", false), marker.force_promote);
    ASSERT_EQ(item.value("install", ""), marker.install);
    const json children = item.value("children", json::array());
    ASSERT_TRUE(children.is_array()) << "accepted children = " << children.dump();
    ASSERT_EQ(children.size(), marker.children.size());
    for (size_t i = 0; i < children.size(); ++i) {
        ASSERT_TRUE(children[i].is_array()) << printable(body);
        ASSERT_EQ(children[i].at(0).get<std::string>(), marker.children[i].child);
        ASSERT_EQ(children[i].at(1).get<std::string>(), marker.children[i].attach_epoch);
    }
}

// One hostile reply to `peer`: a status, and a body made from `valid`.
void script(ScriptedPeer& peer, Rng& rng, const std::string& valid,
            const std::vector<std::string>& keys, int& status, std::string& body) {
    status = reply_code(rng);
    body = json_fuzz::hostile(valid, rng, keys);
    if (pick(rng, 10) == 0) body = valid;
    if (pick(rng, 40) == 0) {
        static const Errc kFailures[] = {Errc::peer_error, Errc::unknown_outcome, Errc::not_found};
        Errc code = kFailures[pick(rng, std::size(kFailures))];
        peer.reply = Status(code, "no answer");
        status = -1000 - static_cast<int>(code);  // marks a transport failure
        return;
    }
    peer.reply = PeerReply{status, body, "application/json"};
}

// Rule: whatever a move's source answers to a listing, the destination gets the documented
// error for the status, corrupt for a body it cannot read, or exactly the listing the body holds.
TEST(PeerReplyFuzzTest, ListingRepliesAreRefusedOrReadExactly) {
    Rng rng(8675309);
    ScriptedPeer peer;
    PeerSourceClient client(peer, Millis(1'000), Millis(1'000));
    size_t accepted = 0;
    constexpr int kIterations = 4'000;
    for (int i = 0; i < kIterations; ++i) {
        int status = 0;
        std::string body;
        script(peer, rng, valid_listing(rng).dump(), kListingKeys, status, body);
        Result<move::TransferListing> listing = Status(Errc::internal, "not decoded");
        try {
            listing = client.list(NodeId("n2"), "t", PartitionId(1));
        } catch (const std::exception& e) {
            FAIL() << "list threw \"" << e.what() << "\" on " << printable(body);
        }
        if (status <= -1000) {
            ASSERT_EQ(static_cast<int>(listing.code()), -1000 - status);
            continue;
        }
        if (errc_for(status) != Errc::ok) {
            ASSERT_EQ(listing.code(), errc_for(status)) << status;
            continue;
        }
        if (!listing.is_ok()) {
            ASSERT_EQ(listing.code(), Errc::corrupt) << listing.status().to_string();
            continue;
        }
        ++accepted;
        json dom = json::parse(body, nullptr, false);
        ASSERT_FALSE(dom.is_discarded()) << printable(body);
        ASSERT_NO_FATAL_FAILURE(expect_listing_is(*listing, dom, body)) << "iteration " << i;
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 20));
    ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
}

// Rule: likewise for PrepareHandoff's answer {token, listing}: a token that is text and the
// listing exactly as sent, or an error.
TEST(PeerReplyFuzzTest, PrepareRepliesAreRefusedOrReadExactly) {
    Rng rng(1234567);
    ScriptedPeer peer;
    PeerSourceClient client(peer, Millis(1'000), Millis(1'000));
    size_t accepted = 0;
    constexpr int kIterations = 4'000;
    for (int i = 0; i < kIterations; ++i) {
        json valid = {{"token", "tok-" + std::to_string(pick(rng, 100))},
                      {"listing", valid_listing(rng)}};
        int status = 0;
        std::string body;
        script(peer, rng, valid.dump(), kListingKeys, status, body);
        Result<move::Handoff> handoff = Status(Errc::internal, "not decoded");
        try {
            handoff = client.prepare(NodeId("n2"), "t", PartitionId(1),
                                     FreezeToken(pick(rng, 2) ? "" : "tok"));
        } catch (const std::exception& e) {
            FAIL() << "prepare threw \"" << e.what() << "\" on " << printable(body);
        }
        if (status <= -1000) {
            ASSERT_EQ(static_cast<int>(handoff.code()), -1000 - status);
            continue;
        }
        if (errc_for(status) != Errc::ok) {
            ASSERT_EQ(handoff.code(), errc_for(status)) << status;
            continue;
        }
        if (!handoff.is_ok()) {
            ASSERT_EQ(handoff.code(), Errc::corrupt) << handoff.status().to_string();
            continue;
        }
        ++accepted;
        json dom = json::parse(body, nullptr, false);
        ASSERT_TRUE(dom.is_object()) << printable(body);
        ASSERT_TRUE(dom.at("token").is_string()) << printable(body);
        ASSERT_EQ(dom.at("token").get<std::string>(), handoff->token.value());
        ASSERT_NO_FATAL_FAILURE(expect_listing_is(handoff->listing, dom.at("listing"), body))
            << "iteration " << i;
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 20));
}

// Rule: a chunk is the reply's bytes, whatever they are, only on 200/204; a fence is ok only on
// 200/204; every other status and every transport failure is its documented error.
TEST(PeerReplyFuzzTest, ChunkAndFenceRepliesMapAsDocumented) {
    Rng rng(55);
    ScriptedPeer peer;
    PeerSourceClient client(peer, Millis(1'000), Millis(1'000));
    for (int i = 0; i < 4'000; ++i) {
        int status = 0;
        std::string body;
        script(peer, rng, json_fuzz::random_bytes(rng, pick(rng, 2'000)), {}, status, body);
        Result<std::string> chunk = Status(Errc::internal, "not read");
        Status fenced;
        try {
            chunk = client.read_chunk(NodeId("n2"), "t", PartitionId(1), Offset(0),
                                      pick(rng, 2) ? move::ChunkKind::log : move::ChunkKind::index,
                                      rng() >> 1, rng() >> 1);
            fenced =
                client.fence(NodeId("n2"), "t", PartitionId(1), FreezeToken("tok"), Offset(rng()));
        } catch (const std::exception& e) {
            FAIL() << "chunk or fence threw \"" << e.what() << "\"";
        }
        if (status <= -1000) {
            ASSERT_EQ(static_cast<int>(chunk.code()), -1000 - status);
            ASSERT_EQ(static_cast<int>(fenced.code()), -1000 - status);
            continue;
        }
        ASSERT_EQ(chunk.code(), errc_for(status)) << status;
        ASSERT_EQ(fenced.code(), errc_for(status)) << status;
        if (chunk.is_ok()) {
            ASSERT_EQ(*chunk, body);
        } else {
            // The error quotes at most the reply's first 300 bytes.
            ASSERT_LE(chunk.status().message().size(), 300u + 16u);
        }
    }
}

// Rule: whatever a node answers to GET /internal/v1/node/status, the controller reads draining,
// produce_in_flight and dispatch_backlog exactly as sent (a bool and two unsigned integers) or
// refuses the report with peer_error; a 404 is not_implemented.
TEST(PeerReplyFuzzTest, NodeStatusRepliesAreRefusedOrReadExactly) {
    Rng rng(777);
    ScriptedPeer peer;
    size_t accepted = 0;
    constexpr int kIterations = 5'000;
    for (int i = 0; i < kIterations; ++i) {
        json valid = {
            {"node", "n3"},
            {"draining", pick(rng, 2) == 0},
            {"produce_in_flight", rng() >> pick(rng, 64)},
            {"dispatch_backlog", rng() % 1000},
            {"quarantine", {{"copies", 0}, {"bytes", 0}, {"list", json::array()}}},
            {"moves", json::array()},
        };
        int status = 0;
        std::string body;
        script(peer, rng, valid.dump(), kStatusKeys, status, body);
        Result<std::string> fetched = Status(Errc::internal, "not fetched");
        Result<cluster::NodeStatus> decoded = Status(Errc::internal, "not decoded");
        try {
            fetched = fetch_node_status(peer, NodeId("n3"), Millis(1'000));
            decoded = decode_node_status(body);
        } catch (const std::exception& e) {
            FAIL() << "node status threw \"" << e.what() << "\" on " << printable(body);
        }
        if (status <= -1000) {
            ASSERT_EQ(static_cast<int>(fetched.code()), -1000 - status);
        } else if (status == 404) {
            ASSERT_EQ(fetched.code(), Errc::not_implemented);
        } else if (status != 200) {
            ASSERT_EQ(fetched.code(), Errc::peer_error);
        } else {
            ASSERT_TRUE(fetched.is_ok());
            ASSERT_EQ(*fetched, body);
        }
        if (!decoded.is_ok()) {
            ASSERT_EQ(decoded.code(), Errc::peer_error) << decoded.status().to_string();
            continue;
        }
        ++accepted;
        json dom = json::parse(body, nullptr, false);
        ASSERT_TRUE(dom.is_object()) << printable(body);
        ASSERT_TRUE(dom.at("draining").is_boolean());
        ASSERT_EQ(dom.at("draining").get<bool>(), decoded->draining);
        ASSERT_TRUE(dom.at("produce_in_flight").is_number_unsigned()) << printable(body);
        ASSERT_EQ(dom.at("produce_in_flight").get<uint64_t>(), decoded->produce_in_flight);
        ASSERT_TRUE(dom.at("dispatch_backlog").is_number_unsigned()) << printable(body);
        ASSERT_EQ(dom.at("dispatch_backlog").get<uint64_t>(), decoded->dispatch_backlog);
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 20));
}

// Rule (regression: negative, fractional and overflowing numbers in a listing were read through
// nlohmann's get<uint64_t>, so -1 became 2^64-1, 1.9 became 1 and 1e300 was undefined behaviour;
// a number in place of an array was read as a one-element array): such a listing is corrupt.
TEST(PeerReplyFuzzTest, ListingWithNumbersOfTheWrongKindIsCorrupt) {
    ScriptedPeer peer;
    PeerSourceClient client(peer, Millis(1'000), Millis(1'000));
    auto list = [&](const json& body) {
        peer.reply = PeerReply{200, body.dump(), "application/json"};
        return client.list(NodeId("n2"), "t", PartitionId(1));
    };
    const json segment = {{"base", 0}, {"size", 100}, {"sealed", false}, {"modified_ns", -1}};
    const json valid = {{"frontier", 5},
                        {"acked_ahead", json::array({7})},
                        {"high_watermark", 9},
                        {"source_clock_ns", -3},
                        {"segments", json::array({segment})}};
    auto read = list(valid);
    ASSERT_TRUE(read.is_ok()) << read.status().to_string();
    EXPECT_EQ(read->source_clock_ns, -3);  // a wall clock may read before 1970
    EXPECT_EQ(read->segments.at(0).modified_ns, -1);
    for (const json& wrong : {json(-1), json(1.9), json(1e300), json("5"), json(nullptr)}) {
        for (const char* field : {"frontier", "high_watermark"}) {
            json body = valid;
            body[field] = wrong;
            EXPECT_EQ(list(body).code(), Errc::corrupt) << field << " = " << wrong.dump();
        }
        json sized = valid;
        sized["segments"][0]["size"] = wrong;
        EXPECT_EQ(list(sized).code(), Errc::corrupt) << "size = " << wrong.dump();
        json acked = valid;
        acked["acked_ahead"][0] = wrong;
        EXPECT_EQ(list(acked).code(), Errc::corrupt) << "acked = " << wrong.dump();
    }
    for (const json& wrong : {json(1e300), json(1.5), json(18446744073709551615ull)}) {
        json body = valid;
        body["source_clock_ns"] = wrong;
        EXPECT_EQ(list(body).code(), Errc::corrupt) << wrong.dump();
    }
    json scalar_list = valid;
    scalar_list["acked_ahead"] = 7;
    EXPECT_EQ(list(scalar_list).code(), Errc::corrupt);
    json object_segments = valid;
    object_segments["segments"] = json::object({{"a", segment}});
    EXPECT_EQ(list(object_segments).code(), Errc::corrupt);
    // Nesting 100,000 deep, where a number or a segment belongs.
    peer.reply = PeerReply{
        200, R"({"frontier":)" + json_fuzz::nested(100'000, json_fuzz::Nesting::closed) + "}", ""};
    EXPECT_EQ(client.list(NodeId("n2"), "t", PartitionId(1)).code(), Errc::corrupt);
    peer.reply = PeerReply{200, json_fuzz::nested(100'000, json_fuzz::Nesting::closed, '{'), ""};
    EXPECT_EQ(client.list(NodeId("n2"), "t", PartitionId(1)).code(), Errc::corrupt);
}

}  // namespace
}  // namespace narad::api
