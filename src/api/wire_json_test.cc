#include "api/wire_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace narad::api {
namespace {

using nlohmann::json;

meta::Topic topic_with_schema() {
    meta::Topic topic;
    topic.name = "orders";
    topic.incarnation = IncarnationId("0123456789abcdef");
    topic.add_schema_version(R"({"type":"integer"})");
    topic.add_schema_version(R"({"type":"number"})");
    return topic;
}

// Rule: a GET answer carries schema_version and the current schema; every partition entry says
// `status` "ok", and a fresh partition (nothing written yet) reports its one active segment.
TEST(WireJsonTest, TopicDetailsCarryTheSchemaAndStatus) {
    std::vector<PartitionStatsView> stats(1);
    stats[0].owner_node = "n1";
    json body = json::parse(topic_details_json(topic_with_schema(), stats));
    EXPECT_EQ(body["schema_version"], 2);
    EXPECT_EQ(body["schema"], json::parse(R"({"type":"number"})"));
    EXPECT_EQ(body["partition_stats"][0]["segments"], 1);
    EXPECT_EQ(body["partition_stats"][0]["status"], "ok");
    EXPECT_FALSE(body["partition_stats"][0].contains("owner_liveness"));
    EXPECT_FALSE(body.contains("partial"));
    json created = json::parse(topic_json(topic_with_schema(), RoleField::omit_standalone));
    EXPECT_FALSE(created.contains("schema_version"));
    EXPECT_FALSE(created.contains("schema"));
}

// Rule: a partition whose owner could not report is a zero placeholder with status
// owner_unavailable and the owner's liveness, and the answer carries partial: true.
TEST(WireJsonTest, UnreadPartitionsArePlaceholdersAndTheAnswerIsPartial) {
    std::vector<PartitionStatsView> stats(2);
    stats[0].index = 0;
    stats[0].owner_node = "n1";
    stats[1].index = 1;
    stats[1].owner_node = "n2";
    stats[1].owner_liveness = "dead";
    json body = json::parse(topic_details_json(topic_with_schema(), stats));
    EXPECT_EQ(body["partial"], true);
    const json& placeholder = body["partition_stats"][1];
    EXPECT_EQ(placeholder["status"], "owner_unavailable");
    EXPECT_EQ(placeholder["owner_liveness"], "dead");
    EXPECT_EQ(placeholder["segments"], 0);
    EXPECT_EQ(placeholder["owner_node"], "n2");
}

// Rule: the schema history lists every version oldest first; without a schema, version 0 and an
// empty list.
TEST(WireJsonTest, SchemaHistory) {
    json body = json::parse(schema_history_json(topic_with_schema()));
    EXPECT_EQ(body, json::parse(R"({"topic":"orders","version":2,"versions":[)"
                                R"({"version":1,"schema":{"type":"integer"}},)"
                                R"({"version":2,"schema":{"type":"number"}}]})"));
    meta::Topic plain;
    plain.name = "plain";
    EXPECT_EQ(json::parse(schema_history_json(plain)),
              json::parse(R"({"topic":"plain","version":0,"versions":[]})"));
}

}  // namespace
}  // namespace narad::api
