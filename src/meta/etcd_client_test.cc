// EtcdClient against a fake transport: failover, unknown outcomes, error mapping and the watch's
// resume logic, without a real etcd (net/etcd_transport_test.cc runs the client against one).
#include "meta/etcd_client.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/mutex.h"
#include "meta/etcd_client_json.h"

namespace narad::meta {
namespace {

constexpr Millis kWait{10'000};

std::string b64(std::string_view s) { return base64_encode(s); }

// A stream fed by the test; next() waits for a line, ends with peer_error when closed.
class FakeStream final : public EtcdStream {
  public:
    Result<std::string> next(Millis timeout) override {
        MutexLock lock(mutex_);
        if (!ready_.wait_for(lock, timeout, [&] { return !lines_.empty() || closed_; })) {
            return Status(Errc::timeout, "nothing yet");
        }
        if (!lines_.empty()) {
            auto line = std::move(lines_.front());
            lines_.pop_front();
            return line;
        }
        return Status(Errc::peer_error, "stream broken");
    }
    void cancel() override { close(); }

    void push(std::string line) {
        MutexLock lock(mutex_);
        lines_.push_back(std::move(line));
        ready_.notify_all();
    }
    // Breaks the stream once the lines already pushed were read.
    void close() {
        MutexLock lock(mutex_);
        closed_ = true;
        ready_.notify_all();
    }

  private:
    Mutex mutex_;
    CondVar ready_;
    std::deque<std::string> lines_;
    bool closed_ = false;
};

// Calls are answered by `handler`; every call is recorded.
class FakeTransport final : public EtcdTransport {
  public:
    struct Call {
        std::string endpoint;
        std::string path;
        std::string body;
    };
    std::function<Result<Reply>(const Call&)> handler;

    Result<Reply> post(const std::string& endpoint, std::string_view path, std::string_view body,
                       Millis) override {
        Call call{endpoint, std::string(path), std::string(body)};
        {
            MutexLock lock(mutex_);
            calls.push_back(call);
        }
        return handler(call);
    }

    Result<std::unique_ptr<EtcdStream>> open_stream(const std::string& endpoint,
                                                    std::string_view path, std::string_view body,
                                                    Millis) override {
        MutexLock lock(mutex_);
        stream_requests.push_back({endpoint, std::string(path), std::string(body)});
        opened_.notify_all();
        if (streams.empty()) return Status(Errc::peer_error, "no stream scripted");
        auto stream = streams.front();
        streams.pop_front();
        return std::unique_ptr<EtcdStream>(std::make_unique<ForwardingStream>(stream));
    }

    // Waits until `count` streams were requested.
    bool wait_stream_requests(size_t count) {
        MutexLock lock(mutex_);
        return opened_.wait_for(lock, kWait, [&] { return stream_requests.size() >= count; });
    }

    Mutex mutex_;
    CondVar opened_;
    std::vector<Call> calls;
    std::vector<Call> stream_requests;
    std::deque<std::shared_ptr<FakeStream>> streams;  // handed out in order

  private:
    // The client owns its stream; the test keeps the FakeStream to feed it.
    class ForwardingStream final : public EtcdStream {
      public:
        explicit ForwardingStream(std::shared_ptr<FakeStream> target) : target_(target) {}
        Result<std::string> next(Millis timeout) override { return target_->next(timeout); }
        void cancel() override { target_->cancel(); }

      private:
        std::shared_ptr<FakeStream> target_;
    };
};

EtcdTransport::Reply ok_reply(std::string body) { return {200, std::move(body)}; }

std::string put_answer(int64_t revision) {
    return R"({"header":{"revision":")" + std::to_string(revision) + R"("}})";
}

std::string event_json(int64_t revision, std::string_view key, std::string_view value) {
    return R"({"kv":{"key":")" + b64(key) + R"(","value":")" + b64(value) +
           R"(","create_revision":"2","mod_revision":")" + std::to_string(revision) +
           R"(","version":"1"}})";
}

std::string created(int64_t revision) {
    return R"({"result":{"header":{"revision":")" + std::to_string(revision) +
           R"("},"created":true}})";
}

std::string events(int64_t header_revision, const std::vector<std::string>& list) {
    std::string out = R"({"result":{"header":{"revision":")" + std::to_string(header_revision) +
                      R"("},"events":[)";
    for (size_t i = 0; i < list.size(); ++i) out += (i ? "," : "") + list[i];
    return out + "]}}";
}

EtcdClientOptions two_endpoints() {
    EtcdClientOptions options;
    options.endpoints = {"http://a:1", "http://b:2"};
    return options;
}

// An etcd key space with history, answering /v3/kv/range as etcd does: `limit`, `more`, reads
// at an older `revision`, and the compaction error for a revision compacted away.
class FakeKv {
  public:
    using Keys = std::map<std::string, std::string>;

    // Stores `keys` as the state at `revision` (which must grow).
    void commit(int64_t revision, Keys keys) { history_[revision] = std::move(keys); }
    void compact_before(int64_t revision) { compacted_ = revision; }
    int64_t latest() const { return history_.rbegin()->first; }

    // Called after each answer is built, with the count of range calls so far.
    std::function<void(int)> after_range;
    // Range calls whose `limit` is above this fail as an over-long answer would.
    int64_t fails_above_limit = 0;
    std::vector<nlohmann::json> requests;

    Result<EtcdTransport::Reply> answer(const FakeTransport::Call& call) {
        auto request = nlohmann::json::parse(call.body);
        requests.push_back(request);
        int64_t limit =
            request.contains("limit") ? std::stoll(request["limit"].get<std::string>()) : 0;
        int64_t revision = request.contains("revision")
                               ? std::stoll(request["revision"].get<std::string>())
                               : latest();
        if (fails_above_limit > 0 && limit > fails_above_limit) {
            return Status(Errc::unknown_outcome, "answer over the body limit");
        }
        if (revision < compacted_) {
            return EtcdTransport::Reply{
                400,
                R"({"error":"etcdserver: mvcc: required revision has been compacted",)"
                R"("code":11,"message":"etcdserver: mvcc: required revision has been compacted"})"};
        }
        const Keys& keys = std::prev(history_.upper_bound(revision))->second;
        std::string from = *base64_decode(request["key"].get<std::string>());
        std::string end = *base64_decode(request["range_end"].get<std::string>());
        nlohmann::json kvs = nlohmann::json::array();
        bool more = false;
        for (auto it = keys.lower_bound(from); it != keys.end() && it->first < end; ++it) {
            if (limit > 0 && static_cast<int64_t>(kvs.size()) == limit) {
                more = true;
                break;
            }
            kvs.push_back({{"key", b64(it->first)}, {"value", b64(it->second)}});
        }
        nlohmann::json reply = {
            {"header", {{"revision", std::to_string(latest())}}}, {"kvs", kvs}, {"more", more}};
        if (after_range) after_range(static_cast<int>(requests.size()));
        return ok_reply(reply.dump());
    }

  private:
    std::map<int64_t, Keys> history_;
    int64_t compacted_ = 0;
};

FakeKv::Keys numbered_keys(int count) {
    FakeKv::Keys keys;
    for (int i = 0; i < count; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "p/%03d", i);
        keys[name] = "v" + std::to_string(i);
    }
    return keys;
}

std::vector<std::string> names(const RangeResult& range) {
    std::vector<std::string> out;
    for (const auto& kv : range.kvs) out.push_back(kv.key);
    return out;
}

// Rule: range_all reads the whole range in pages of at most page_keys keys, every page at the
// first page's revision, so a write between pages is not seen (neither half of it).
TEST(EtcdClientTest, PagedRangeReadsEveryPageAtTheFirstPagesRevision) {
    FakeKv kv;
    kv.commit(10, numbered_keys(25));
    kv.after_range = [&](int calls) {
        if (calls != 1) return;
        FakeKv::Keys later = numbered_keys(25);
        later.erase("p/020");
        later["p/001a"] = "new";
        kv.commit(11, later);
    };
    FakeTransport transport;
    transport.handler = [&](const FakeTransport::Call& call) { return kv.answer(call); };
    EtcdClient client(transport, two_endpoints());

    auto all = client.range_all("p/", EtcdClient::prefix_end("p/"), 4);
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    EXPECT_EQ(all->revision, 10);
    std::vector<std::string> expected;
    for (const auto& [key, value] : numbered_keys(25)) expected.push_back(key);
    EXPECT_EQ(names(*all), expected);
    ASSERT_EQ(kv.requests.size(), 7u);  // 6 full pages of 4, then 1 key
    for (size_t i = 0; i < kv.requests.size(); ++i) {
        EXPECT_EQ(kv.requests[i]["limit"], "4") << i;
        if (i > 0) {
            EXPECT_EQ(kv.requests[i]["revision"], "10") << i;
        }
    }
    // Each page starts just after the previous page's last key.
    EXPECT_EQ(*base64_decode(kv.requests[1]["key"].get<std::string>()),
              std::string("p/003") + '\0');
}

// Rule: a page that fails (an answer over the body limit) is asked again with half as many
// keys, down to one; a refused connection is not.
TEST(EtcdClientTest, PagedRangeHalvesAPageThatFails) {
    FakeKv kv;
    kv.commit(5, numbered_keys(9));
    kv.fails_above_limit = 2;
    FakeTransport transport;
    transport.handler = [&](const FakeTransport::Call& call) { return kv.answer(call); };
    EtcdClient client(transport, two_endpoints());

    auto all = client.range_all("p/", EtcdClient::prefix_end("p/"), 8);
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    EXPECT_EQ(all->kvs.size(), 9u);
    EXPECT_EQ(all->kvs.back().value, "v8");

    FakeTransport refused;
    refused.handler = [](const FakeTransport::Call&) -> Result<EtcdTransport::Reply> {
        return Status(Errc::peer_error, "refused");
    };
    EtcdClient down(refused, two_endpoints());
    EXPECT_EQ(down.range_all("p/", EtcdClient::prefix_end("p/"), 8).code(), Errc::peer_error);
    EXPECT_EQ(refused.calls.size(), 2u);  // each endpoint once, no halving
}

// Rule: when the first page's revision is compacted away before the last page, the read starts
// again at the latest revision and returns that revision's keys only.
TEST(EtcdClientTest, PagedRangeStartsAgainAfterACompaction) {
    FakeKv kv;
    kv.commit(10, numbered_keys(6));
    kv.after_range = [&](int calls) {
        if (calls != 1) return;
        kv.commit(12, numbered_keys(7));
        kv.compact_before(12);
    };
    FakeTransport transport;
    transport.handler = [&](const FakeTransport::Call& call) { return kv.answer(call); };
    EtcdClient client(transport, two_endpoints());

    auto all = client.range_all("p/", EtcdClient::prefix_end("p/"), 4);
    ASSERT_TRUE(all.is_ok()) << all.status().to_string();
    EXPECT_EQ(all->revision, 12);
    EXPECT_EQ(all->kvs.size(), 7u);
}

// Rule: a mutation whose answer was lost is reported as unknown_outcome and never sent again.
TEST(EtcdClientTest, PutWhoseAnswerIsLostIsUnknownOutcomeAndNotResent) {
    FakeTransport transport;
    transport.handler = [](const FakeTransport::Call&) -> Result<EtcdTransport::Reply> {
        return Status(Errc::unknown_outcome, "sent, no answer");
    };
    EtcdClient client(transport, two_endpoints());
    auto put = client.put("k", "v");
    EXPECT_EQ(put.code(), Errc::unknown_outcome);
    auto txn = client.txn({Compare::missing("k")}, {TxnOp::put("k", "v")});
    EXPECT_EQ(txn.code(), Errc::unknown_outcome);
    EXPECT_EQ(transport.calls.size(), 2u);  // one each, no retry on the other endpoint
}

// Rule: when nothing could be sent to an endpoint, the call goes to the next one, which is then
// preferred.
TEST(EtcdClientTest, RefusedEndpointFailsOverAndTheNextIsPreferred) {
    FakeTransport transport;
    transport.handler = [](const FakeTransport::Call& call) -> Result<EtcdTransport::Reply> {
        if (call.endpoint == "http://a:1") return Status(Errc::peer_error, "refused");
        return ok_reply(put_answer(7));
    };
    EtcdClient client(transport, two_endpoints());
    auto put = client.put("k", "v");
    ASSERT_TRUE(put.is_ok()) << put.status().to_string();
    EXPECT_EQ(*put, 7);
    ASSERT_EQ(transport.calls.size(), 2u);
    ASSERT_TRUE(client.put("k", "v2").is_ok());
    ASSERT_EQ(transport.calls.size(), 3u);
    EXPECT_EQ(transport.calls[2].endpoint, "http://b:2");
    // Keys and values travel base64-encoded.
    EXPECT_NE(transport.calls[2].body.find(b64("v2")), std::string::npos);
}

// Rule: a read whose answer was lost is asked of another endpoint; a mutation is not.
TEST(EtcdClientTest, ReadThatTimedOutIsAskedElsewhere) {
    FakeTransport transport;
    transport.handler = [](const FakeTransport::Call& call) -> Result<EtcdTransport::Reply> {
        if (call.endpoint == "http://a:1") return Status(Errc::unknown_outcome, "no answer");
        return ok_reply(R"({"header":{"revision":"9"},"kvs":[{"key":")" + b64("k") +
                        R"(","value":")" + b64("v") + R"(","mod_revision":"4"}]})");
    };
    EtcdClient client(transport, two_endpoints());
    auto range = client.range("k");
    ASSERT_TRUE(range.is_ok()) << range.status().to_string();
    EXPECT_EQ(range->revision, 9);
    ASSERT_EQ(range->kvs.size(), 1u);
    EXPECT_EQ(range->kvs[0].value, "v");
    EXPECT_EQ(range->kvs[0].mod_revision, 4);
}

// Rule: an etcd answer saying the write was never proposed ("no leader") may go elsewhere.
TEST(EtcdClientTest, NoLeaderAnswerIsRetriedOnAnotherMember) {
    FakeTransport transport;
    transport.handler = [](const FakeTransport::Call& call) -> Result<EtcdTransport::Reply> {
        if (call.endpoint == "http://a:1") {
            return EtcdTransport::Reply{
                503,
                R"({"error":"etcdserver: no leader","code":14,"message":"etcdserver: no leader"})"};
        }
        return ok_reply(put_answer(3));
    };
    EtcdClient client(transport, two_endpoints());
    auto put = client.put("k", "v");
    ASSERT_TRUE(put.is_ok()) << put.status().to_string();
    EXPECT_EQ(transport.calls.size(), 2u);
}

// Rule: gateway errors map onto Errc: compaction is gone, a missing lease not_found, a timed-out
// proposal an unknown outcome for a write but a timeout for a read.
TEST(EtcdClientTest, GatewayErrorsMapOntoErrc) {
    auto body = [](int code, std::string_view message) {
        return R"({"error":")" + std::string(message) + R"(","code":)" + std::to_string(code) +
               R"(,"message":")" + std::string(message) + R"("})";
    };
    using gateway::decode_error;
    EXPECT_EQ(decode_error(400, body(11, "etcdserver: mvcc: required revision has been compacted"),
                           Mutation::no)
                  .code(),
              Errc::gone);
    EXPECT_EQ(
        decode_error(404, body(5, "etcdserver: requested lease not found"), Mutation::yes).code(),
        Errc::not_found);
    EXPECT_EQ(decode_error(503, body(14, "etcdserver: request timed out"), Mutation::yes).code(),
              Errc::unknown_outcome);
    EXPECT_EQ(decode_error(503, body(14, "etcdserver: leader changed"), Mutation::yes).code(),
              Errc::unknown_outcome);
    EXPECT_EQ(decode_error(503, body(14, "etcdserver: request timed out"), Mutation::no).code(),
              Errc::unavailable);
    EXPECT_EQ(decode_error(504, body(4, "context deadline exceeded"), Mutation::no).code(),
              Errc::timeout);
    EXPECT_EQ(decode_error(500, body(2, "election: no leader"), Mutation::no).code(),
              Errc::not_found);
    EXPECT_EQ(decode_error(412, body(9, "etcdserver: bad leader transferee"), Mutation::yes).code(),
              Errc::conflict);
    EXPECT_EQ(decode_error(400, body(3, "etcdserver: key is not provided"), Mutation::yes).code(),
              Errc::invalid_argument);
    // A streaming call's error object, and a body that is not JSON.
    EXPECT_EQ(
        decode_error(200, R"({"error":{"grpc_code":5,"message":"lease not found"}})", Mutation::no)
            .code(),
        Errc::not_found);
    EXPECT_EQ(decode_error(502, "Bad Gateway", Mutation::yes).code(), Errc::unknown_outcome);
}

// Rule: a keep-alive of a lease that is gone (no TTL in the answer) is not_found.
TEST(EtcdClientTest, KeepAliveWithoutTtlIsNotFound) {
    FakeTransport transport;
    int64_t ttl = 10;
    transport.handler = [&](const FakeTransport::Call&) -> Result<EtcdTransport::Reply> {
        std::string ttl_field = ttl > 0 ? R"(,"TTL":")" + std::to_string(ttl) + "\"" : "";
        return ok_reply(R"({"result":{"header":{"revision":"1"},"ID":"42")" + ttl_field + "}}\n");
    };
    EtcdClient client(transport, two_endpoints());
    auto alive = client.lease_keep_alive(42);
    ASSERT_TRUE(alive.is_ok()) << alive.status().to_string();
    EXPECT_EQ(*alive, 10);
    ttl = 0;
    EXPECT_EQ(client.lease_keep_alive(42).code(), Errc::not_found);
}

// Rule: prefix_end is the first key after every key with the prefix.
TEST(EtcdClientTest, PrefixEndIncrementsTheLastByteBelow0xff) {
    EXPECT_EQ(EtcdClient::prefix_end("/a/"), "/a0");
    EXPECT_EQ(EtcdClient::prefix_end(std::string("a\xff", 2)), "b");
    EXPECT_EQ(EtcdClient::prefix_end(std::string("\xff", 1)), std::string(1, '\0'));
}

struct Collected {
    Mutex mutex;
    CondVar changed;
    std::vector<int64_t> revisions;  // of every delivered event, in order
    std::vector<Status> errors;

    bool wait_events(size_t count) {
        MutexLock lock(mutex);
        return changed.wait_for(lock, kWait, [&] { return revisions.size() >= count; });
    }
    bool wait_error() {
        MutexLock lock(mutex);
        return changed.wait_for(lock, kWait, [&] { return !errors.empty(); });
    }
};

// Rule: after the stream breaks, the watch reopens at the revision after the last it delivered
// and drops events it already delivered, so nothing is lost or repeated.
TEST(EtcdClientTest, WatchResumesAfterABrokenStreamWithoutLossOrRepeat) {
    FakeTransport transport;
    auto first = std::make_shared<FakeStream>();
    auto second = std::make_shared<FakeStream>();
    transport.streams = {first, second};
    first->push(created(5));
    EtcdClient client(transport, two_endpoints());
    Collected got;
    auto watch = client.watch(
        "k", "", 0,
        [&](const WatchBatch& batch) {
            MutexLock lock(got.mutex);
            for (const auto& e : batch.events) got.revisions.push_back(e.kv.mod_revision);
            got.changed.notify_all();
        },
        [&](const Status& status) {
            MutexLock lock(got.mutex);
            got.errors.push_back(status);
            got.changed.notify_all();
        });
    ASSERT_TRUE(watch.is_ok()) << watch.status().to_string();
    first->push(events(7, {event_json(6, "k", "a"), event_json(7, "k", "b")}));
    ASSERT_TRUE(got.wait_events(2));
    first->close();
    ASSERT_TRUE(transport.wait_stream_requests(2));
    {
        MutexLock lock(transport.mutex_);
        const auto& body = transport.stream_requests[1].body;
        EXPECT_NE(body.find(R"("start_revision":"8")"), std::string::npos) << body;
        EXPECT_EQ(transport.stream_requests[1].endpoint, "http://b:2");  // cycles endpoints
    }
    second->push(created(9));
    // A member that sends revision 7 again: it is not delivered twice.
    second->push(events(9, {event_json(7, "k", "b"), event_json(8, "k", "c")}));
    second->push(events(9, {event_json(9, "k", "d")}));
    ASSERT_TRUE(got.wait_events(4));
    watch->reset();
    MutexLock lock(got.mutex);
    EXPECT_EQ(got.revisions, (std::vector<int64_t>{6, 7, 8, 9}));
    EXPECT_TRUE(got.errors.empty());
}

// Rule: a watch that cannot reopen its stream tries again only once its back-off has passed on
// the client's clock, and the back-off doubles from 50 ms.
TEST(EtcdClientTest, WatchReopenBacksOffOnItsClock) {
    FakeClock clock;
    FakeTransport transport;
    auto only = std::make_shared<FakeStream>();
    transport.streams = {only};
    only->push(created(5));
    EtcdClient client(transport, two_endpoints(), clock);
    auto watch = client.watch(
        "k", "", 0, [](const WatchBatch&) {}, [](const Status&) {});
    ASSERT_TRUE(watch.is_ok()) << watch.status().to_string();
    auto requests = [&] {
        MutexLock lock(transport.mutex_);
        return transport.stream_requests.size();
    };
    only->close();  // the stream breaks; no other can be opened
    ASSERT_TRUE(transport.wait_stream_requests(2));
    for (Millis backoff : {Millis(50), Millis(100)}) {
        size_t before = requests();
        ASSERT_TRUE(clock.await_waiters(1));  // the watch waits out its back-off
        clock.advance(backoff - Millis(1));
        ASSERT_TRUE(clock.await_waiters(1));
        EXPECT_EQ(requests(), before) << "reopened before the back-off of " << backoff.count();
        clock.advance(Millis(1));
        ASSERT_TRUE(transport.wait_stream_requests(before + 1));
    }
    watch->reset();
}

// Rule: a watch whose history was compacted reports Errc::gone once and ends.
TEST(EtcdClientTest, WatchOnCompactedHistoryReportsGoneOnce) {
    FakeTransport transport;
    auto stream = std::make_shared<FakeStream>();
    transport.streams = {stream};
    stream->push(created(20));
    stream->push(R"({"result":{"header":{},"canceled":true,"compact_revision":"15"}})");
    EtcdClient client(transport, two_endpoints());
    Collected got;
    auto watch = client.watch(
        "k", "", 3, [&](const WatchBatch&) {},
        [&](const Status& status) {
            MutexLock lock(got.mutex);
            got.errors.push_back(status);
            got.changed.notify_all();
        });
    ASSERT_TRUE(watch.is_ok());
    ASSERT_TRUE(got.wait_error());
    EXPECT_NE(transport.stream_requests[0].body.find(R"("start_revision":"3")"), std::string::npos);
    watch->reset();  // joins the thread: no more callbacks after this
    MutexLock lock(got.mutex);
    ASSERT_EQ(got.errors.size(), 1u);
    EXPECT_EQ(got.errors[0].code(), Errc::gone);
    EXPECT_EQ(transport.stream_requests.size(), 1u);  // never reopened
}

}  // namespace
}  // namespace narad::meta
