#include "api/in_flight_limits.h"

#include <gtest/gtest.h>

namespace narad::api {
namespace {

using Kind = InFlightLimits::Kind;

net::HttpRequest head(std::string method, std::string target, std::string from = "10.0.0.1:5000",
                      std::optional<uint64_t> content_length = std::nullopt) {
    net::HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.remote_address = std::move(from);
    if (content_length)
        request.headers.emplace_back("content-length", std::to_string(*content_length));
    return request;
}

std::string header(const net::HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
        if (key == name) return value;
    }
    return "";
}

// Rule: a head an earlier screen named a user for counts against that user, wherever it comes
// from; two users behind one address have a cap each; a head with no user counts against its
// address.
TEST(InFlightLimitsTest, ARecognisedUserIsTheIdentity) {
    InFlightLimits limits({.max_consume_per_identity = 1});
    auto as = [](const char* user) {
        auto request = head("GET", "/v1/topics/t/consume?wait=5s");
        if (user != nullptr) request.user = user;
        return request;
    };
    auto alice = as("alice");
    auto bob = as("bob");
    auto anonymous = as(nullptr);
    ASSERT_FALSE(limits.screen(alice));
    ASSERT_FALSE(limits.screen(bob)) << "another user behind the same address";
    ASSERT_FALSE(limits.screen(anonymous)) << "the address itself is a third identity";
    EXPECT_TRUE(anonymous.user.empty());
    EXPECT_EQ(limits.in_flight(Kind::consume, "user:alice"), 1);
    EXPECT_EQ(limits.in_flight(Kind::consume, "10.0.0.1"), 1);
    auto again = as("alice");
    auto refused = limits.screen(again);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 429);
    auto from_elsewhere = as("alice");
    from_elsewhere.remote_address = "10.9.9.9:1";
    EXPECT_TRUE(limits.screen(from_elsewhere)) << "the user's cap holds from every address";
}

// Rule: consumes per identity are capped; one more gets 429 with Narad's message and Retry-After,
// and answering one lets the next in. Another address is another identity.
TEST(InFlightLimitsTest, ConsumeCapPerIdentity) {
    InFlightLimits limits({.max_consume_per_identity = 2});
    auto first = head("GET", "/v1/topics/t/consume?wait=5s");
    auto second = head("GET", "/v1/topics/t/consume", "10.0.0.1:5001");
    ASSERT_FALSE(limits.screen(first));
    ASSERT_FALSE(limits.screen(second));
    EXPECT_EQ(limits.in_flight(Kind::consume, "10.0.0.1"), 2);
    auto third = head("GET", "/v1/topics/t/consume");
    auto refused = limits.screen(third);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 429);
    EXPECT_NE(refused->body.find("too many in-flight consume requests for this identity (limit 2 "
                                 "per node)"),
              std::string::npos)
        << refused->body;
    EXPECT_EQ(header(*refused, "Retry-After"), "1");
    auto elsewhere = head("GET", "/v1/topics/t/consume", "10.0.0.2:5000");
    EXPECT_FALSE(limits.screen(elsewhere));
    first.admission->release();
    first.admission->release();  // idempotent
    EXPECT_EQ(limits.in_flight(Kind::consume, "10.0.0.1"), 1);
    EXPECT_FALSE(limits.screen(third));
    // An admission dropped unanswered releases too.
    second.admission.reset();
    third.admission.reset();
    EXPECT_EQ(limits.in_flight(Kind::consume, "10.0.0.1"), 0);
}

// Rule: a batch consume counts as its max, clamped to the cap; other routes are not counted.
TEST(InFlightLimitsTest, BatchConsumeCountsAsItsMax) {
    InFlightLimits limits({.max_consume_per_identity = 3});
    auto batch = head("GET", "/v1/topics/t/consume?max=50");
    ASSERT_FALSE(limits.screen(batch));
    EXPECT_EQ(limits.in_flight(Kind::consume, "10.0.0.1"), 3);
    auto one = head("GET", "/v1/topics/t/consume");
    EXPECT_TRUE(limits.screen(one));
    auto topic = head("GET", "/v1/topics/t");
    EXPECT_FALSE(limits.screen(topic));
    EXPECT_EQ(topic.admission, nullptr);
    auto ack = head("POST", "/v1/topics/t/ack");
    EXPECT_FALSE(limits.screen(ack));
    EXPECT_EQ(ack.admission, nullptr);
}

// Rule: the produce cap is off by default; when set, a batch counts as one while its body is read
// and as its message count (clamped to the cap) once read.
TEST(InFlightLimitsTest, ProduceCapAndBatchResize) {
    InFlightLimits off({});
    auto free = head("POST", "/v1/topics/t/produce");
    EXPECT_FALSE(off.screen(free));
    EXPECT_EQ(free.admission, nullptr);

    InFlightLimits limits({.max_produce_per_identity = 10});
    auto batch = head("POST", "/v1/topics/t/produce/batch");
    ASSERT_FALSE(limits.screen(batch));
    EXPECT_EQ(limits.in_flight(Kind::produce, "10.0.0.1"), 1);
    EXPECT_TRUE(batch.admission->resize(1000));
    EXPECT_EQ(limits.in_flight(Kind::produce, "10.0.0.1"), 10);
    auto single = head("POST", "/v1/topics/t/produce");
    EXPECT_TRUE(limits.screen(single));
    EXPECT_TRUE(batch.admission->resize(4));
    ASSERT_FALSE(limits.screen(single));
    auto other = head("POST", "/v1/topics/t/produce/batch");
    ASSERT_FALSE(limits.screen(other));
    EXPECT_FALSE(other.admission->resize(9));  // 4 + 1 held: 9 more would pass 10
    EXPECT_EQ(limits.in_flight(Kind::produce, "10.0.0.1"), 6);
}

// Rule: bodies of batch produces over 1 MiB share the node's budget; one that would pass it gets
// 503 with Retry-After, a smaller body is not charged, and a lone body larger than the budget
// still goes when nothing else is in flight.
TEST(InFlightLimitsTest, BatchBodyBudget) {
    InFlightLimits limits({.max_batch_body_bytes = 3 << 20});
    auto big = head("POST", "/v1/topics/t/produce/batch", "10.0.0.1:1", 2 << 20);
    ASSERT_FALSE(limits.screen(big));
    EXPECT_EQ(limits.batch_body_bytes_in_flight(), 2 << 20);
    auto another = head("POST", "/v1/topics/t/produce/batch", "10.0.0.2:1", 2 << 20);
    auto refused = limits.screen(another);
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 503);
    EXPECT_NE(refused->body.find("batch produce bodies in flight on this node are at their limit"),
              std::string::npos);
    EXPECT_EQ(header(*refused, "Retry-After"), "1");
    auto small = head("POST", "/v1/topics/t/produce/batch", "10.0.0.3:1", 1 << 20);
    EXPECT_FALSE(limits.screen(small));
    EXPECT_EQ(limits.batch_body_bytes_in_flight(), 2 << 20);
    big.admission->release();
    auto huge = head("POST", "/v1/topics/t/produce/batch", "10.0.0.1:1", 16 << 20);
    EXPECT_FALSE(limits.screen(huge));
    EXPECT_TRUE(limits.screen(another));
}

}  // namespace
}  // namespace narad::api
