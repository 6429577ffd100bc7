#include "meta/topic_frontend.h"

#include <gtest/gtest.h>

#include "meta/local_meta_store.h"

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

}  // namespace
}  // namespace narad::meta
