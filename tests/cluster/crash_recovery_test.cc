// Kill -9 under load: every message that got a 202 is delivered after the node restarts.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "cluster/harness.h"
#include "cluster/ledger.h"

namespace narad::testing {
namespace {

using nlohmann::json;

constexpr int kPartitions = 6;
constexpr int kSingleProducers = 4;
constexpr int kBatchProducers = 2;
constexpr int kProducers = kSingleProducers + kBatchProducers;
constexpr int kPerProducer = 17'000;  // 102,000 messages in all
constexpr int kBatch = 100;
constexpr int kConsumers = 2;
constexpr int kTotal = kProducers * kPerProducer;

// How a produce is made durable: straight into the partition log this node owns (the default on
// one node), or through the ingress WAL and its dispatcher (the "wal.direct.decline" failpoint).
enum class ProducePath { direct, wal };

class CrashRecoveryTest : public ::testing::TestWithParam<ProducePath> {};

// Rule: a produce answered 202 is durable on either path: after a SIGKILL at a random moment and a
// restart, consuming and acking everything delivers every accepted message (lost = 0); duplicates
// are allowed and reported.
TEST_P(CrashRecoveryTest, EveryAcceptedMessageIsDeliveredAfterKill9) {
    TempDir dir;
    NodeProcess node(dir.path() + "/data", {});
    if (GetParam() == ProducePath::wal) node.env()["NARAD_FAILPOINTS"] = "wal.direct.decline=error";
    node.start();
    {
        auto client = node.client();
        create_topic(client, "crash", kPartitions);
    }
    std::random_device seed_source;
    unsigned seed = seed_source();
    std::mt19937 random(seed);
    int kill_after = std::uniform_int_distribution<int>(kTotal / 8, kTotal * 3 / 4)(random);
    std::printf("seed %u: SIGKILL once %d messages are accepted\n", seed, kill_after);

    Ledger ledger(kTotal);
    std::atomic<bool> producing_done{false};
    std::atomic<int> producers_left{kProducers};
    std::atomic<int64_t> refused{0};

    auto wait_until_up = [&] {
        ASSERT_TRUE(eventually(
            [&] {
                auto probe = node.client(std::chrono::milliseconds(500));
                auto r = probe.get("/readyz");
                return r.is_ok() && r->status == 200;
            },
            std::chrono::seconds(120)));
    };

    std::vector<std::thread> threads;
    for (int p = 0; p < kProducers; ++p) {
        threads.emplace_back([&, p] {
            auto client = node.client(std::chrono::seconds(10));
            bool batch = p >= kSingleProducers;
            int sent = 0;
            while (sent < kPerProducer) {
                int count = batch ? std::min(kBatch, kPerProducer - sent) : 1;
                Result<net::HttpResponse> response = Status(Errc::internal, "");
                if (batch) {
                    json body = {{"messages", json::array()}};
                    for (int i = 0; i < count; ++i) {
                        int id = p * kPerProducer + sent + i;
                        body["messages"].push_back(
                            {{"key", "k" + std::to_string(id % 97)}, {"payload", {{"id", id}}}});
                    }
                    response = client.post("/v1/topics/crash/produce/batch", body.dump());
                } else {
                    int id = p * kPerProducer + sent;
                    std::string target = "/v1/topics/crash/produce?key=k" + std::to_string(id % 97);
                    response = client.post(target, "{\"id\":" + std::to_string(id) + "}",
                                           "application/octet-stream");
                }
                if (response.is_ok() && response->status == 202) {
                    for (int i = 0; i < count; ++i) ledger.accept(p * kPerProducer + sent + i);
                    sent += count;
                    continue;
                }
                // Refused or the node is down: the message was not accepted; send it again.
                if (response.is_ok()) ++refused;
                wait_until_up();
                client = node.client(std::chrono::seconds(10));
            }
            if (--producers_left == 0) producing_done = true;
        });
    }
    for (int c = 0; c < kConsumers; ++c) {
        threads.emplace_back([&] {
            auto client = node.client(std::chrono::seconds(15));
            while (true) {
                if (producing_done && ledger.lost().empty()) break;
                auto response = client.get("/v1/topics/crash/consume?max=100&wait=500ms");
                if (!response.is_ok()) {
                    wait_until_up();
                    client = node.client(std::chrono::seconds(15));
                    continue;
                }
                if (response->status != 200) continue;
                json body = json::parse(response->body);
                json handles = json::array();
                for (const auto& message : body["messages"]) {
                    ledger.deliver(message["payload"]["id"].get<int>());
                    handles.push_back(message["receipt_handle"]);
                }
                // An ack lost to the crash only means a redelivery.
                (void)client.post("/v1/topics/crash/ack/batch",
                                  json{{"receipt_handles", handles}}.dump());
            }
        });
    }
    std::thread killer([&] {
        ASSERT_TRUE(eventually([&] { return ledger.accepted_count() >= kill_after; },
                               std::chrono::seconds(300)));
        // The run took the path it names (the counter lives until the kill).
        std::optional<double> direct =
            scrape_metric(node, "narad_produce_direct_records_total{outcome=\"committed\"}");
        if (GetParam() == ProducePath::direct) {
            EXPECT_GT(direct.value_or(0), 0) << "no produce took the direct path";
        } else {
            EXPECT_EQ(direct.value_or(0), 0) << "a produce took the direct path";
        }
        node.kill();
        std::printf("killed at %d accepted\n", ledger.accepted_count());
        node.start();
    });
    killer.join();
    // Bound the whole run: everything accepted must come back within a few minutes.
    bool drained = eventually([&] { return producing_done && ledger.lost().empty(); },
                              std::chrono::minutes(5), std::chrono::milliseconds(200));
    producing_done = true;
    for (auto& t : threads) t.join();

    std::vector<int> lost = ledger.lost();
    std::printf("accepted %d, deliveries %lld, duplicates %lld, lost %zu, refused %lld\n",
                ledger.accepted_count(), static_cast<long long>(ledger.deliveries()),
                static_cast<long long>(ledger.duplicates()), lost.size(),
                static_cast<long long>(refused.load()));
    ::testing::Test::RecordProperty("duplicates", std::to_string(ledger.duplicates()));
    EXPECT_TRUE(drained);
    EXPECT_EQ(ledger.accepted_count(), kTotal);
    // An id outside 0..kTotal-1 is not a message this test sent.
    EXPECT_EQ(ledger.strays(), 0);
    EXPECT_TRUE(lost.empty()) << lost.size() << " accepted messages were never delivered, first "
                              << (lost.empty() ? -1 : lost.front());
    EXPECT_EQ(node.stop(), 0);
}

INSTANTIATE_TEST_SUITE_P(Paths, CrashRecoveryTest,
                         ::testing::Values(ProducePath::direct, ProducePath::wal),
                         [](const ::testing::TestParamInfo<ProducePath>& param_info) {
                             return param_info.param == ProducePath::direct ? "Direct" : "Wal";
                         });

}  // namespace
}  // namespace narad::testing
