#include "api/respond.h"

#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace narad::api {
namespace {

// Rule: a condition the client can act on keeps its own status and message; a metastore or peer
// that did not answer is 503 (retry), never 500; anything else is 500 "<operation> failed".
TEST(DomainErrorResponse, RetryableFailuresAre503AndOthers500) {
    EXPECT_EQ(domain_error_response(Status(Errc::not_found, "topic not found"), "x").status, 404);
    EXPECT_EQ(domain_error_response(Status(Errc::conflict, "changed"), "x").status, 409);
    for (Errc code : {Errc::peer_error, Errc::timeout, Errc::unknown_outcome, Errc::unavailable}) {
        net::HttpResponse response = domain_error_response(Status(code, "etcd is slow"), "x");
        EXPECT_EQ(response.status, 503) << errc_name(code);
        EXPECT_NE(response.body.find("etcd is slow"), std::string::npos) << response.body;
    }
    net::HttpResponse internal =
        domain_error_response(Status(Errc::io_error, "disk"), "create topic");
    EXPECT_EQ(internal.status, 500);
    EXPECT_EQ(internal.body, "{\"error\":\"create topic failed\"}\n");
}

// Rule: every code of the error table is answered with the table's status and Narad's
// {"error":"<message>"} body, whether given as a Status or as a code and a message.
TEST(ErrorResponse, EveryCodeAnswersWithItsTableStatus) {
    for (Errc code : all_errcs()) {
        if (code == Errc::ok) continue;
        net::HttpResponse response = error_response(Status(code, "the reason"));
        EXPECT_EQ(response.status, errc_http_status(code)) << errc_name(code);
        EXPECT_EQ(response.content_type, "application/json") << errc_name(code);
        EXPECT_EQ(response.body, "{\"error\":\"the reason\"}\n") << errc_name(code);
        net::HttpResponse by_code = error_response(code, "the reason");
        EXPECT_EQ(by_code.status, response.status) << errc_name(code);
        EXPECT_EQ(by_code.body, response.body) << errc_name(code);
        EXPECT_EQ(http_status(code), response.status) << errc_name(code);
        EXPECT_EQ(error_json_response(code, "{}\n").status, response.status) << errc_name(code);
    }
}

// Rule: a domain error of any code becomes one of three answers, never a success: its own status
// and message, 503 "control plane temporarily unavailable: <message>", or 500 "<operation>
// failed".
TEST(DomainErrorResponse, EveryCodeBecomesItsOwnAnswerOr503Or500) {
    const std::string own_body = "{\"error\":\"the reason\"}\n";
    const std::string retry_body =
        "{\"error\":\"control plane temporarily unavailable: the reason\"}\n";
    const std::string failed_body = "{\"error\":\"op failed\"}\n";
    for (Errc code : all_errcs()) {
        if (code == Errc::ok) continue;
        net::HttpResponse response = domain_error_response(Status(code, "the reason"), "op");
        // The text of an internal failure stays in the log: a 500 never carries it.
        bool own = response.status == errc_http_status(code) && response.status != 500 &&
                   response.body == own_body;
        bool retry = response.status == 503 && response.body == retry_body;
        bool failed = response.status == 500 && response.body == failed_body;
        EXPECT_TRUE(own || retry || failed)
            << errc_name(code) << " answered " << response.status << " " << response.body;
    }
}

// Runs `work` through answer_on_pool and returns the answer it gets.
net::HttpResponse answer_of(ThreadPool& pool, std::function<net::HttpResponse()> work) {
    std::promise<net::HttpResponse> answer;
    answer_on_pool(
        pool, [&answer](net::HttpResponse r) { answer.set_value(std::move(r)); }, std::move(work));
    auto future = answer.get_future();
    EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return future.get();
}

// Rule: work that throws still answers its request (502 for an undecodable peer reply, 503 for
// anything else, each a JSON error), and the pool keeps serving.
TEST(AnswerOnPool, ExceptionsBecomeAnswers) {
    ThreadPool pool("test-answer", 1);
    net::HttpResponse type_error = answer_of(pool, [] {
        nlohmann::json reply = nlohmann::json::parse(R"({"index":"not a number"})");
        return json_response(200, std::to_string(reply.value("index", 0u)));
    });
    EXPECT_EQ(type_error.status, 502);
    EXPECT_NE(type_error.body.find("\"error\":\"bad reply from a peer"), std::string::npos)
        << type_error.body;
    net::HttpResponse other =
        answer_of(pool, []() -> net::HttpResponse { throw std::runtime_error("bug"); });
    EXPECT_EQ(other.status, 503);
    EXPECT_EQ(other.body, "{\"error\":\"internal error; retry later\"}\n");
    EXPECT_EQ(answer_of(pool, [] { return empty_response(204); }).status, 204);
}

// Rule: a saturated pool answers 503 "server busy" at once instead of queueing without bound.
TEST(AnswerOnPool, SaturatedPoolIs503) {
    ThreadPool pool("test-answer", 1, 0);
    net::HttpResponse busy = answer_of(pool, [] { return empty_response(204); });
    EXPECT_EQ(busy.status, 503);
    EXPECT_EQ(busy.body, "{\"error\":\"server busy; retry later\"}\n");
}

// Rule: a stopped pool (the node shutting down) answers 503 saying so, and runs nothing.
TEST(AnswerOnPool, StoppedPoolSaysTheNodeIsShuttingDown) {
    ThreadPool pool("test-answer", 1);
    pool.stop();
    bool ran = false;
    net::HttpResponse gone = answer_of(pool, [&ran] {
        ran = true;
        return empty_response(204);
    });
    EXPECT_EQ(gone.status, 503);
    EXPECT_EQ(gone.body, "{\"error\":\"" + std::string(kShuttingDownText) + "\"}\n");
    EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace narad::api
