#include "api/internal_routes.h"

#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "meta/fake_meta_store.h"
#include "wal/commit_codec.h"

namespace narad::api {
namespace {

constexpr auto kPatience = std::chrono::seconds(30);

net::HttpResponse call(net::HttpHandler& handler, std::string method, std::string target,
                       std::optional<std::string> secret, std::string body = "") {
    net::HttpRequest request;
    request.method = std::move(method);
    request.target = target;
    EXPECT_TRUE(net::parse_target(target, request.path, request.query));
    if (secret) request.headers.emplace_back(std::string(kClusterSecretHeader), *secret);
    request.body = std::move(body);
    auto done = std::make_shared<std::promise<net::HttpResponse>>();
    auto future = done->get_future();
    handler.handle(std::move(request), [done](net::HttpResponse r) { done->set_value(r); });
    if (future.wait_for(kPatience) != std::future_status::ready) {
        ADD_FAILURE() << "no response";
        return {};
    }
    return future.get();
}

// Rule: the secret compare is true only for identical strings, whatever the lengths.
TEST(ConstantTimeEqualsTest, OnlyIdenticalStringsAreEqual) {
    EXPECT_TRUE(constant_time_equals("secret", "secret"));
    EXPECT_TRUE(constant_time_equals("", ""));
    EXPECT_FALSE(constant_time_equals("secret", "secreT"));
    EXPECT_FALSE(constant_time_equals("secret", "secret2"));
    EXPECT_FALSE(constant_time_equals("secret", ""));
    EXPECT_FALSE(constant_time_equals("", "x"));
    EXPECT_FALSE(constant_time_equals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

class InternalRouterTest : public ::testing::Test {
  protected:
    void add_ping(InternalRouter& router) {
        router.routes().add("GET", "/internal/v1/ping",
                            [](net::HttpRequest, const PathParams&, net::Responder respond) {
                                net::HttpResponse response;
                                response.body = "pong";
                                respond(std::move(response));
                            });
    }
    FakeClock clock_;
};

// Rule: with no secret configured every internal call is refused 403, even one carrying a
// header (an empty secret must never match an empty header).
TEST_F(InternalRouterTest, NoSecretConfiguredRefusesEverything) {
    InternalRouter router(clock_, "");
    add_ping(router);
    auto response = call(router, "GET", "/internal/v1/ping", std::string(""));
    EXPECT_EQ(response.status, 403);
    EXPECT_NE(response.body.find("cluster secret not configured"), std::string::npos);
    EXPECT_EQ(call(router, "GET", "/internal/v1/ping", std::nullopt).status, 403);
}

// Rule: a missing or wrong secret is 403 with a JSON error; the right one reaches the route.
TEST_F(InternalRouterTest, SecretIsRequiredAndChecked) {
    InternalRouter router(clock_, "s3cret");
    add_ping(router);
    auto missing = call(router, "GET", "/internal/v1/ping", std::nullopt);
    EXPECT_EQ(missing.status, 403);
    EXPECT_EQ(missing.content_type, "application/json");
    EXPECT_NE(missing.body.find("\"error\""), std::string::npos);
    EXPECT_EQ(call(router, "GET", "/internal/v1/ping", std::string("s3cre")).status, 403);
    EXPECT_EQ(call(router, "GET", "/internal/v1/ping", std::string("s3cret ")).status, 403);
    auto ok = call(router, "GET", "/internal/v1/ping", std::string("s3cret"));
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.body, "pong");
    // Unknown paths are 404 only after authentication.
    EXPECT_EQ(call(router, "GET", "/internal/v1/nope", std::nullopt).status, 403);
    EXPECT_EQ(call(router, "GET", "/internal/v1/nope", std::string("s3cret")).status, 404);
}

// Records commits; answers with a scripted status.
class RecordingCommitter final : public wal::PartitionCommitter {
  public:
    Status commit(const std::string& topic, const std::string& incarnation, PartitionId partition,
                  std::span<const storage::Record> records) override {
        std::lock_guard lock(mutex);
        calls.push_back({topic, incarnation, partition.value(), {}});
        for (const auto& r : records) {
            calls.back().values.emplace_back(r.value);
            stamps.push_back(r.producer.sequence.value());
        }
        return answer;
    }
    struct Call {
        std::string topic;
        std::string incarnation;
        uint32_t partition;
        std::vector<std::string> values;
    };
    std::mutex mutex;
    std::vector<Call> calls;
    std::vector<uint64_t> stamps;
    Status answer = Status::ok();
};

class InternalCommitTest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(store_.create_topic_owned_by("t", {"me", "other"}).is_ok());
        register_internal_commit_route(router_.routes(), context_);
    }
    std::string body() {
        std::vector<storage::Record> records{{"k", "v1", 5, {IngressId(3), WalSeq(8)}},
                                             {"k", "v2", 6, {IngressId(3), WalSeq(9)}}};
        return wal::commit_codec::encode(records).value();
    }
    net::HttpResponse post(std::string query, std::string payload) {
        return call(router_, "POST", "/internal/v1/commit?" + query, std::string("s"),
                    std::move(payload));
    }

    FakeClock clock_;
    meta::FakeMetaStore store_;
    RecordingCommitter committer_;
    ThreadPool pool_{"test-commit", 2};
    InternalCommitContext context_{store_, NodeId("me"), committer_, pool_};
    InternalRouter router_{clock_, "s"};
};

// Rule: the owner commits a well-formed batch for its partition through the local committer,
// with the records' stamps, and answers 204.
TEST_F(InternalCommitTest, OwnerCommitsAndAnswers204) {
    auto response = post("topic=t&incarnation=inc-1&partition=0", body());
    EXPECT_EQ(response.status, 204) << response.body;
    std::lock_guard lock(committer_.mutex);
    ASSERT_EQ(committer_.calls.size(), 1u);
    EXPECT_EQ(committer_.calls[0].values, (std::vector<std::string>{"v1", "v2"}));
    EXPECT_EQ(committer_.stamps, (std::vector<uint64_t>{8, 9}));
}

// Rule: a node refuses commits for a partition it does not own (421) and commits nothing.
TEST_F(InternalCommitTest, NotOwnerIs421) {
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=1", body()).status, 421);
    std::lock_guard lock(committer_.mutex);
    EXPECT_TRUE(committer_.calls.empty());
}

// Rule: a gone topic, another incarnation or a partition out of range is 404 (the sender drops).
TEST_F(InternalCommitTest, GoneTopicOrIncarnationIs404) {
    EXPECT_EQ(post("topic=t&incarnation=inc-0&partition=0", body()).status, 404);
    EXPECT_EQ(post("topic=x&incarnation=inc-1&partition=0", body()).status, 404);
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=7", body()).status, 404);
    committer_.answer = Status(Errc::not_found, "topic not found");
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", body()).status, 404);
}

// Rule: an owner whose replica is older than the sender's never answers 404 (which would make the
// sender drop acknowledged records) but 503, so the sender retries once the replica caught up.
TEST_F(InternalCommitTest, OwnerBehindTheSenderSaysRetryNotGone) {
    uint64_t ahead = store_.snapshot()->revision + 5;
    EXPECT_EQ(
        post("topic=x&incarnation=inc-1&partition=0&revision=" + std::to_string(ahead), body())
            .status,
        503);
    EXPECT_EQ(
        post("topic=t&incarnation=inc-1&partition=7&revision=" + std::to_string(ahead), body())
            .status,
        503);
    std::string current = std::to_string(store_.snapshot()->revision);
    EXPECT_EQ(post("topic=x&incarnation=inc-1&partition=0&revision=" + current, body()).status,
              404);
    std::lock_guard lock(committer_.mutex);
    EXPECT_TRUE(committer_.calls.empty());
}

// Rule: a corrupt body or missing parameters are 400 and nothing is committed; a failed local
// commit is an error status the sender retries (never 204 or 404).
TEST_F(InternalCommitTest, BadRequestsAndFailuresAreNotAcknowledged) {
    std::string corrupt = body();
    corrupt[corrupt.size() / 2] ^= 1;
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", corrupt).status, 400);
    EXPECT_EQ(post("topic=t&partition=0", body()).status, 400);
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=x", body()).status, 400);
    {
        std::lock_guard lock(committer_.mutex);
        EXPECT_TRUE(committer_.calls.empty());
    }
    committer_.answer = Status(Errc::io_error, "disk on fire");
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", body()).status, 500);
    committer_.answer = Status(Errc::unavailable, "busy");
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", body()).status, 503);
}

}  // namespace
}  // namespace narad::api
