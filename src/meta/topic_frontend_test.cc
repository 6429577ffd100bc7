#include "meta/topic_frontend.h"

#include <gtest/gtest.h>

#include "meta/local_meta_store.h"
#include "meta/schema.h"

namespace narad::meta {
namespace {

class TopicFrontendTest : public ::testing::Test {
  protected:
    std::unique_ptr<LocalMetaStore> store_ = LocalMetaStore::in_memory();
    FakeClock clock_;
    TopicFrontend frontend_{*store_, clock_, TopicPolicy{}, place_on(NodeId("n1"))};

    std::string create_error(CreateTopicRequest request) {
        auto result = frontend_.create(std::move(request));
        return result.is_ok() ? "" : result.status().message();
    }
};

// Rule: defaults are applied and the record carries a fresh incarnation and a creation time.
TEST_F(TopicFrontendTest, CreateAppliesDefaults) {
    auto topic = frontend_.create({.name = "orders"}).value();
    EXPECT_EQ(topic.partitions, 3u);
    EXPECT_EQ(topic.retention_ms, 604'800'000);
    EXPECT_EQ(topic.visibility_timeout_ms, 30'000);
    EXPECT_EQ(topic.max_in_flight_per_partition, 1024);
    EXPECT_EQ(topic.max_acked_ahead_per_partition, 1024);
    EXPECT_EQ(topic.created_at, clock_.wall_ms() / 1000);
    EXPECT_EQ(topic.incarnation.value().size(), 16u);
    EXPECT_NE(store_->snapshot()->find_topic("orders"), nullptr);
}

// Rule: create refuses bad input with Narad's texts and writes nothing.
TEST_F(TopicFrontendTest, CreateValidationTexts) {
    EXPECT_EQ(create_error({.name = ""}), "invalid argument: name required");
    EXPECT_EQ(create_error({.name = ".."}), "invalid argument: topic name must not be \"..\"");
    EXPECT_EQ(create_error({.name = "a/b"}),
              "invalid argument: topic name must match ^[A-Za-z0-9._-]{1,200}$");
    EXPECT_EQ(create_error({.name = "t", .partitions = 2}),
              "invalid argument: partitions must be >= 3 (0 = use default)");
    EXPECT_EQ(create_error({.name = "t", .partitions = 109}),
              "invalid argument: partitions (109) exceeds topic.max_partitions (108)");
    EXPECT_EQ(create_error({.name = "t", .retention_ms = -1}),
              "invalid argument: retention_ms must be >= 0 (0 = keep forever)");
    EXPECT_EQ(create_error({.name = "t", .retention_ms = 1000}),
              "invalid argument: retention_ms (1000) is below the minimum of 3600000 (1 hour)");
    EXPECT_EQ(create_error({.name = "t", .visibility_timeout_ms = -5}),
              "invalid argument: visibility_timeout_ms must be >= 0 (0 = use default)");
    EXPECT_EQ(create_error({.name = "t", .fanout_delay_ms = 5}),
              "invalid argument: fanout_delay_ms requires parent");
    EXPECT_EQ(create_error({.name = "t", .parent = "missing"}), "topic not found");
    EXPECT_NE(create_error({.name = "t", .schema = "[1]"}).find("invalid argument: schema:"),
              std::string::npos);
    EXPECT_TRUE(store_->snapshot()->topics.empty());
}

// Rule: a name is taken once; the second create answers 409 "topic already exists".
TEST_F(TopicFrontendTest, DuplicateNameConflicts) {
    ASSERT_TRUE(frontend_.create({.name = "t"}).is_ok());
    auto again = frontend_.create({.name = "t"});
    EXPECT_EQ(again.code(), Errc::already_exists);
    EXPECT_EQ(again.status().message(), "topic already exists");
}

// Rule: a recreated name gets a new incarnation.
TEST_F(TopicFrontendTest, RecreateGetsANewIncarnation) {
    auto first = frontend_.create({.name = "t"}).value();
    ASSERT_TRUE(frontend_.remove("t").is_ok());
    auto second = frontend_.create({.name = "t"}).value();
    EXPECT_NE(first.incarnation, second.incarnation);
}

// Rule: PATCH grows partitions only, and a refused PATCH changes nothing at all.
TEST_F(TopicFrontendTest, UpdateIsAllOrNothingAndGrowOnly) {
    ASSERT_TRUE(frontend_.create({.name = "t", .partitions = 4}).is_ok());
    auto shrink = frontend_.update("t", {.partitions = 3, .retention_ms = 7'200'000});
    EXPECT_EQ(shrink.status().message(),
              "invalid argument: new partition count (3) must be greater than current (4); "
              "decrease is not supported");
    EXPECT_EQ(store_->snapshot()->find_topic("t")->retention_ms, 604'800'000);
    auto grown = frontend_.update("t", {.partitions = 6, .max_in_flight_per_partition = 0});
    ASSERT_TRUE(grown.is_ok());
    EXPECT_EQ(grown->partitions, 6u);
    EXPECT_EQ(store_->snapshot()->assignments.size(), 6u);
}

// Rule: the request-shape checks of PATCH use Narad's texts.
TEST_F(TopicFrontendTest, UpdateShapeTexts) {
    EXPECT_EQ(TopicFrontend::validate_update({}).message(),
              "at least one of partitions, retention_ms, max_*_per_partition, or schema is "
              "required");
    EXPECT_EQ(TopicFrontend::validate_update({.partitions = -1}).message(),
              "partitions must be > 0");
    EXPECT_EQ(TopicFrontend::validate_update({.retention_ms = -1}).message(),
              "retention_ms must be >= 0 (0 = keep forever)");
    EXPECT_EQ(frontend_.update("nope", {.partitions = 5}).status().message(), "topic not found");
}

// Rule: an incompatible schema replacement is refused.
TEST_F(TopicFrontendTest, IncompatibleSchemaIsRefused) {
    ASSERT_TRUE(
        frontend_.create({.name = "t", .schema = R"({"properties":{"a":{"type":"string"}}})"})
            .is_ok());
    auto result = frontend_.update("t", {.schema = R"({"properties":{}})"});
    EXPECT_EQ(result.code(), Errc::invalid_argument);
    EXPECT_NE(result.status().message().find("property \"a\" removed"), std::string::npos);
}

// Rule: every schema change is a new version, oldest first; a PATCH with the current schema (any
// formatting or key order), or one differing only in annotations, registers nothing.
TEST_F(TopicFrontendTest, SchemaHistoryGrowsOnlyOnRealChanges) {
    auto created = frontend_.create({.name = "t", .schema = R"({ "type" : "object" })"}).value();
    EXPECT_EQ(created.schema_version(), 1u);
    EXPECT_EQ(created.schema(), R"({"type":"object"})");
    auto same = frontend_.update("t", {.schema = R"({"type":"object","title":"orders"})"}).value();
    EXPECT_EQ(same.schema_version(), 1u);
    EXPECT_EQ(same.schema(), R"({"type":"object"})");
    auto wider = frontend_.update("t", {.schema = R"({"type":["object","null"]})"}).value();
    EXPECT_EQ(wider.schema_version(), 2u);
    const Topic* stored = store_->snapshot()->find_topic("t");
    ASSERT_NE(stored, nullptr);
    EXPECT_EQ(stored->schema_versions,
              (std::vector<std::string>{R"({"type":"object"})", R"({"type":["object","null"]})"}));
    EXPECT_EQ(stored->schema(), R"({"type":["object","null"]})");
    // A topic without a schema takes one as version 1.
    ASSERT_TRUE(frontend_.create({.name = "plain"}).is_ok());
    EXPECT_EQ(frontend_.update("plain", {.schema = "{}"}).value().schema_version(), 1u);
}

// Rule: schema_base_version makes the change conditional (409 "schema version conflict" and
// nothing written on a mismatch); `schema: null` is refused 400, as is a base version alone.
TEST_F(TopicFrontendTest, SchemaChangesAreConditionalAndNeverRemoved) {
    ASSERT_TRUE(frontend_.create({.name = "t", .schema = R"({"type":"integer"})"}).is_ok());
    auto stale =
        frontend_.update("t", {.schema = R"({"type":"number"})", .schema_base_version = 2});
    EXPECT_EQ(stale.code(), Errc::conflict);
    EXPECT_EQ(stale.status().message(),
              "schema version conflict: schema_base_version 2 does not match the current version 1 "
              "of \"t\"");
    EXPECT_EQ(store_->snapshot()->find_topic("t")->schema_version(), 1u);
    auto fresh =
        frontend_.update("t", {.schema = R"({"type":"number"})", .schema_base_version = 1});
    EXPECT_EQ(fresh.value().schema_version(), 2u);
    EXPECT_EQ(TopicFrontend::validate_update({.schema = "null"}).message(),
              "schema cannot be removed: a topic's schema may only be widened");
    EXPECT_EQ(frontend_.update("t", {.schema = "null"}).code(), Errc::invalid_argument);
    EXPECT_EQ(TopicFrontend::validate_update({.schema_base_version = 1}).message(),
              "schema_base_version requires schema");
    auto narrower = frontend_.update("t", {.schema = R"({"type":"integer"})"});
    EXPECT_EQ(narrower.code(), Errc::invalid_argument);
    EXPECT_EQ(narrower.status().message(),
              "invalid argument: schema incompatible with previous version: schema root: type "
              "\"number\" no longer allowed");
    EXPECT_EQ(store_->snapshot()->find_topic("t")->schema_version(), 2u);
}

// Rule: a history keeps at most 1000 versions and 4 MiB; the change past either gets 409 and
// writes nothing.
TEST_F(TopicFrontendTest, SchemaHistoryBudgets) {
    auto enum_of = [](int count, int width) {
        std::string out = R"({"enum":[)";
        for (int i = 0; i < count; ++i) {
            if (i > 0) out += ',';
            std::string value = std::to_string(i);
            out += '"' + std::string(width - value.size(), '0') + value + '"';
        }
        return out + "]}";
    };
    ASSERT_TRUE(frontend_.create({.name = "many", .schema = enum_of(1, 4)}).is_ok());
    for (int v = 2; v <= 1000; ++v) {
        ASSERT_TRUE(frontend_.update("many", {.schema = enum_of(v, 4)}).is_ok()) << v;
    }
    auto over = frontend_.update("many", {.schema = enum_of(1001, 4)});
    EXPECT_EQ(over.code(), Errc::conflict) << over.status().to_string();
    EXPECT_EQ(over.status().message(),
              "schema history of \"many\" holds 1000 versions, the most a topic may keep");

    // About 250 KiB per version: the 17th passes 4 MiB.
    std::string base = enum_of(22'000, 8);
    ASSERT_TRUE(frontend_.create({.name = "big", .schema = base}).is_ok());
    Status last;
    int versions = 1;
    for (int extra = 1; extra < 40 && last.is_ok(); ++extra) {
        std::string next = base.substr(0, base.size() - 2);
        for (int i = 0; i < extra; ++i) next += ",\"x" + std::to_string(i) + "\"";
        next += "]}";
        last = frontend_.update("big", {.schema = next}).status();
        if (last.is_ok()) ++versions;
    }
    EXPECT_EQ(last.code(), Errc::conflict);
    EXPECT_NE(last.message().find("schema history budget exceeded"), std::string::npos)
        << last.message();
    const Topic* big = store_->snapshot()->find_topic("big");
    EXPECT_EQ(big->schema_version(), static_cast<uint32_t>(versions));
    EXPECT_LE(big->schema_history_bytes(), kMaxSchemaHistoryBytes);
    EXPECT_GT(big->schema_history_bytes() + base.size(), kMaxSchemaHistoryBytes);
}

// Rule: attach links both records at once with a fresh epoch (the child's), the parent lists its
// children in attach order, and detach reverts both; a re-attach gets a new epoch.
TEST_F(TopicFrontendTest, AttachAndDetachLinkBothRecords) {
    ASSERT_TRUE(frontend_.create({.name = "p"}).is_ok());
    ASSERT_TRUE(frontend_.create({.name = "c1"}).is_ok());
    ASSERT_TRUE(frontend_.create({.name = "c2"}).is_ok());
    auto parent = frontend_.attach("p", "c1", 0);
    ASSERT_TRUE(parent.is_ok()) << parent.status().to_string();
    EXPECT_EQ(parent->role, TopicRole::parent);
    ASSERT_TRUE(frontend_.attach("p", "c2", 5000).is_ok());
    MetaSnapshot view = store_->snapshot();
    EXPECT_EQ(view->find_topic("p")->children, (std::vector<std::string>{"c1", "c2"}));
    const Topic* c1 = view->find_topic("c1");
    EXPECT_EQ(c1->role, TopicRole::child);
    EXPECT_EQ(c1->parent, "p");
    EXPECT_EQ(c1->attach_epoch.size(), 16u);
    EXPECT_EQ(view->find_topic("c2")->fanout_delay_ms, 5000);
    std::string first_epoch = c1->attach_epoch;

    ASSERT_TRUE(frontend_.detach("p", "c1").is_ok());
    ASSERT_TRUE(frontend_.detach("p", "c2").is_ok());
    view = store_->snapshot();
    EXPECT_EQ(view->find_topic("p")->role, TopicRole::standalone);
    EXPECT_TRUE(view->find_topic("p")->children.empty());
    EXPECT_EQ(view->find_topic("c1")->role, TopicRole::standalone);
    EXPECT_TRUE(view->find_topic("c1")->attach_epoch.empty());
    EXPECT_EQ(view->find_topic("c2")->fanout_delay_ms, 0);
    ASSERT_TRUE(frontend_.attach("p", "c1", 0).is_ok());
    EXPECT_NE(store_->snapshot()->find_topic("c1")->attach_epoch, first_epoch);
    EXPECT_EQ(frontend_.detach("p", "c2").message(), "not found: \"c2\" is not attached to \"p\"");
}

// Rule: Narad's link rules, with its texts and codes, and a refused attach changes nothing.
TEST_F(TopicFrontendTest, AttachRulesAndTexts) {
    for (const char* name : {"p", "c", "other", "spare"}) {
        ASSERT_TRUE(frontend_.create({.name = name}).is_ok());
    }
    ASSERT_TRUE(frontend_.attach("p", "c", 0).is_ok());
    MetaSnapshot before = store_->snapshot();
    auto error = [&](std::string_view parent, std::string_view child, int64_t delay) {
        auto result = frontend_.attach(parent, child, delay);
        return result.is_ok() ? std::string("ok") : result.status().message();
    };
    EXPECT_EQ(error("spare", "spare", 0), "invalid argument: a topic cannot be attached to itself");
    EXPECT_EQ(error("ghost", "spare", 0), "topic not found");
    EXPECT_EQ(error("c", "spare", 0),
              "fan-out role conflict: \"c\" is a child of \"p\" and cannot become a parent");
    EXPECT_EQ(error("spare", "p", 0),
              "fan-out role conflict: \"p\" is a parent and cannot become a child (fan-out is "
              "depth 1)");
    EXPECT_EQ(error("other", "c", 0),
              "fan-out role conflict: \"c\" is already attached to parent \"p\"");
    EXPECT_EQ(error("p", "c", 0), "already exists: \"c\" is already attached to \"p\"");
    EXPECT_EQ(error("p", "spare", -1), "invalid argument: delay_ms must be >= 0");
    EXPECT_EQ(error("p", "spare", kMaxFanoutDelayMs + 1),
              "invalid argument: delay_ms (31536000001) exceeds the maximum of 31536000000 (1 "
              "year)");
    // The default retention (7 days) buffers 6 days and 23 hours, not 7 days.
    EXPECT_EQ(error("p", "spare", 604'800'000),
              "delay exceeds what the parent's retention can buffer: parent \"p\" retention "
              "(604800000ms) must be at least delay (604800000ms) + 3600000ms");
    EXPECT_EQ(store_->snapshot()->topics_version, before->topics_version);
}

// Rule: a parent holds at most 108 children.
TEST_F(TopicFrontendTest, AtMost108Children) {
    ASSERT_TRUE(frontend_.create({.name = "p"}).is_ok());
    for (size_t i = 0; i <= kMaxChildrenPerParent; ++i) {
        std::string name = "c" + std::to_string(i);
        ASSERT_TRUE(frontend_.create({.name = name}).is_ok());
        auto attached = frontend_.attach("p", name, 0);
        if (i < kMaxChildrenPerParent) {
            ASSERT_TRUE(attached.is_ok()) << i;
        } else {
            EXPECT_EQ(attached.code(), Errc::conflict);
            EXPECT_EQ(attached.status().message(),
                      "parent has reached the maximum number of children: \"p\" already has 108 "
                      "children");
        }
    }
}

// Rule: create with `parent` inherits the partition count and is linked in the same write; a
// create that cannot attach leaves no topic behind.
TEST_F(TopicFrontendTest, CreateAsChildIsOneWrite) {
    ASSERT_TRUE(frontend_.create({.name = "p", .partitions = 6}).is_ok());
    auto child = frontend_.create({.name = "c", .parent = "p", .fanout_delay_ms = 1000});
    ASSERT_TRUE(child.is_ok()) << child.status().to_string();
    EXPECT_EQ(child->partitions, 6u);
    EXPECT_EQ(child->role, TopicRole::child);
    EXPECT_EQ(store_->snapshot()->find_topic("p")->children, std::vector<std::string>{"c"});
    EXPECT_EQ(store_->snapshot()->find_assignment("c", PartitionId(5))->owner, NodeId("n1"));
    // c is a child: a topic created under it would make a chain.
    auto chained = frontend_.create({.name = "g", .parent = "c"});
    EXPECT_EQ(chained.code(), Errc::conflict);
    EXPECT_EQ(store_->snapshot()->find_topic("g"), nullptr);
    EXPECT_EQ(frontend_.create({.name = "x", .parent = "ghost"}).code(), Errc::not_found);
    EXPECT_EQ(store_->snapshot()->find_topic("x"), nullptr);
}

// Rule: deleting a parent leaves its children standalone; deleting a child leaves its parent's
// list (and a parent without children is standalone).
TEST_F(TopicFrontendTest, DeleteUnlinks) {
    for (const char* name : {"p", "c1", "c2"})
        ASSERT_TRUE(frontend_.create({.name = name}).is_ok());
    ASSERT_TRUE(frontend_.attach("p", "c1", 0).is_ok());
    ASSERT_TRUE(frontend_.attach("p", "c2", 0).is_ok());
    ASSERT_TRUE(frontend_.remove("c2").is_ok());
    EXPECT_EQ(store_->snapshot()->find_topic("p")->children, std::vector<std::string>{"c1"});
    ASSERT_TRUE(frontend_.remove("p").is_ok());
    const Topic* c1 = store_->snapshot()->find_topic("c1");
    EXPECT_EQ(c1->role, TopicRole::standalone);
    EXPECT_TRUE(c1->parent.empty());
}

// Rule: the parent's retention must buffer every delay child's delay + 1 h (PATCH included), and a
// parent's new schema version is its children's in the same write.
TEST_F(TopicFrontendTest, ParentUpdatesRespectChildren) {
    ASSERT_TRUE(frontend_.create({.name = "p", .retention_ms = 7'200'000}).is_ok());
    ASSERT_TRUE(frontend_.create({.name = "c"}).is_ok());
    ASSERT_TRUE(frontend_.attach("p", "c", 1500).is_ok());
    auto shrunk = frontend_.update("p", {.retention_ms = 3'600'000});
    EXPECT_EQ(shrunk.code(), Errc::invalid_argument);
    EXPECT_TRUE(frontend_.update("p", {.retention_ms = 3'700'000}).is_ok());
    EXPECT_TRUE(frontend_.update("p", {.retention_ms = 0}).is_ok());  // forever buffers anything
    ASSERT_TRUE(frontend_.update("p", {.schema = R"({"type":"object"})"}).is_ok());
    EXPECT_EQ(store_->snapshot()->find_topic("c")->schema_versions,
              store_->snapshot()->find_topic("p")->schema_versions);
    EXPECT_EQ(frontend_.update("c", {.schema = R"({"type":"object"})"}).code(), Errc::conflict);
}

// Rule: the dead-letter settings are checked on create and PATCH (both or neither, an existing
// other topic, at most 1000 deliveries), and max_deliveries 0 alone turns them off.
TEST_F(TopicFrontendTest, DeadLetterSettings) {
    ASSERT_TRUE(frontend_.create({.name = "dlq"}).is_ok());
    EXPECT_EQ(create_error({.name = "t", .max_deliveries = 3}),
              "invalid argument: max_deliveries requires dead_letter_topic");
    EXPECT_EQ(create_error({.name = "t", .dead_letter_topic = "dlq"}),
              "invalid argument: dead_letter_topic requires max_deliveries");
    EXPECT_EQ(create_error({.name = "t", .max_deliveries = 3, .dead_letter_topic = "ghost"}),
              "invalid argument: dead_letter_topic \"ghost\" does not exist");
    EXPECT_EQ(create_error({.name = "t", .max_deliveries = 3, .dead_letter_topic = "t"}),
              "invalid argument: a topic cannot be its own dead_letter_topic");
    EXPECT_EQ(create_error({.name = "t", .max_deliveries = 1001, .dead_letter_topic = "dlq"}),
              "invalid argument: max_deliveries (1001) exceeds the maximum of 1000");
    EXPECT_EQ(store_->snapshot()->find_topic("t"), nullptr);
    auto created = frontend_.create({.name = "t", .max_deliveries = 3, .dead_letter_topic = "dlq"});
    ASSERT_TRUE(created.is_ok()) << created.status().to_string();
    EXPECT_EQ(created->max_deliveries, 3);
    auto raised = frontend_.update("t", {.max_deliveries = 5});
    ASSERT_TRUE(raised.is_ok());
    EXPECT_EQ(raised->dead_letter_topic, "dlq");
    auto off = frontend_.update("t", {.max_deliveries = 0});
    ASSERT_TRUE(off.is_ok());
    EXPECT_EQ(off->max_deliveries, 0);
    EXPECT_TRUE(off->dead_letter_topic.empty());
    EXPECT_EQ(frontend_.update("t", {.dead_letter_topic = "dlq"}).code(), Errc::invalid_argument);
}

}  // namespace
}  // namespace narad::meta
