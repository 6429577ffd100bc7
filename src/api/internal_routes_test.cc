#include "api/internal_routes.h"

#include <gtest/gtest.h>

#include <future>

#include "api/respond.h"
#include "base/mutex.h"
#include "meta/fake_meta_store.h"
#include "net/test_support.h"
#include "wal/commit_codec.h"

namespace narad::api {
namespace {

// One request on a connection in `connection`'s state, screened and handled as the server runs
// it.
net::HttpResponse call(net::HttpHandler& handler, std::string method, std::string target,
                       const std::shared_ptr<net::ConnectionState>& connection,
                       std::string body = "") {
    net::HttpRequest request;
    request.method = std::move(method);
    request.target = std::move(target);
    request.connection = connection;
    request.body = std::move(body);
    return net::testing::screen_and_handle(handler, std::move(request));
}

std::shared_ptr<net::ConnectionState> proven() {
    auto connection = std::make_shared<net::ConnectionState>();
    connection->authenticated = true;
    return connection;
}

// Rule: the internal routes sit behind the cluster guard: an unproved connection is refused 403
// even for an unknown path, a proved one reaches the routes (404 for an unknown one), and with no
// secret nothing passes.
TEST(InternalRouterTest, RoutesSitBehindTheClusterGuard) {
    FakeClock clock;
    InternalRouter router(clock, {.current = "s3cret"});
    router.routes().add("GET", "/internal/v1/ping",
                        [](net::HttpRequest, const PathParams&, net::Responder respond) {
                            respond(json_response(200, "{}"));
                        });
    EXPECT_EQ(
        call(router, "GET", "/internal/v1/ping", std::make_shared<net::ConnectionState>()).status,
        403);
    EXPECT_EQ(
        call(router, "GET", "/internal/v1/nope", std::make_shared<net::ConnectionState>()).status,
        403);
    EXPECT_EQ(call(router, "GET", "/internal/v1/ping", proven()).status, 200);
    EXPECT_EQ(call(router, "GET", "/internal/v1/nope", proven()).status, 404);
    InternalRouter closed(clock, {});
    EXPECT_EQ(call(closed, "GET", "/internal/v1/nope", proven()).status, 403);
}

// Records commits; answers with a scripted status.
class RecordingCommitter final : public wal::PartitionCommitter {
  public:
    Status commit(const std::string& topic, const std::string& incarnation, PartitionId partition,
                  std::span<const storage::Record> records) override {
        MutexLock lock(mutex);
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
    Mutex mutex;
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
        return call(router_, "POST", "/internal/v1/commit?" + query, proven(), std::move(payload));
    }

    FakeClock clock_;
    meta::FakeMetaStore store_;
    RecordingCommitter committer_;
    ThreadPool pool_{"test-commit", 2};
    InternalCommitContext context_{store_, NodeId("me"), committer_, pool_};
    InternalRouter router_{clock_, {.current = "s"}};
};

// Rule: the owner commits a well-formed batch for its partition through the local committer,
// with the records' stamps, and answers 204.
TEST_F(InternalCommitTest, OwnerCommitsAndAnswers204) {
    auto response = post("topic=t&incarnation=inc-1&partition=0", body());
    EXPECT_EQ(response.status, 204) << response.body;
    MutexLock lock(committer_.mutex);
    ASSERT_EQ(committer_.calls.size(), 1u);
    EXPECT_EQ(committer_.calls[0].values, (std::vector<std::string>{"v1", "v2"}));
    EXPECT_EQ(committer_.stamps, (std::vector<uint64_t>{8, 9}));
}

// Rule: a node refuses commits for a partition it does not own (421) and commits nothing.
TEST_F(InternalCommitTest, NotOwnerIs421) {
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=1", body()).status, 421);
    MutexLock lock(committer_.mutex);
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
    MutexLock lock(committer_.mutex);
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
        MutexLock lock(committer_.mutex);
        EXPECT_TRUE(committer_.calls.empty());
    }
    committer_.answer = Status(Errc::io_error, "disk on fire");
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", body()).status, 500);
    committer_.answer = Status(Errc::unavailable, "busy");
    EXPECT_EQ(post("topic=t&incarnation=inc-1&partition=0", body()).status, 503);
}

}  // namespace
}  // namespace narad::api
