#include "compare/nats_driver.h"

#include <nats/nats.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "base/loopback_ports.h"
#include "cli/bench_engine.h"

namespace narad::compare {
namespace {

using cli::bench::mono_ns;

constexpr const char* kStream = "BENCH";
constexpr const char* kConsumer = "workers";
constexpr int64_t kPullExpiresMs = 1'000;
constexpr int64_t kPollMs = 100;
constexpr int64_t kStallWaitMs = 1'000;
// How a plain libnats JetStream client is run at its best: up to 1024 publishes in flight per
// connection (a sliding window), and pull requests for 500 messages, the next one sent once half
// of the current one has arrived, so the consumer never waits a round trip with nothing in flight.
constexpr int64_t kPublishWindow = 1'024;
constexpr uint32_t kPullBatch = 500;
constexpr int64_t kApiWaitMs = 10'000;

std::string status_text(natsStatus s, std::string_view what) {
    std::string text = std::string(what) + ": " + natsStatus_GetText(s);
    const char* detail = nats_GetLastError(nullptr);
    if (detail != nullptr && *detail != '\0') text += std::string(" (") + detail + ")";
    return text;
}

Status nats_error(natsStatus s, std::string_view what) {
    return Status(Errc::peer_error, status_text(s, what));
}

}  // namespace

struct NatsDriver::Client {
    natsConnection* connection = nullptr;
    jsCtx* js = nullptr;
    natsSubscription* subscription = nullptr;  // consumers: on `inbox`
    std::string inbox;
    std::atomic<Flow*> flow{nullptr};  // set for the phase in progress; read by ack callbacks

    ~Client() {
        if (subscription != nullptr) natsSubscription_Destroy(subscription);
        if (js != nullptr) jsCtx_Destroy(js);
        if (connection != nullptr) {
            natsConnection_Close(connection);
            natsConnection_Destroy(connection);
        }
    }
};

namespace {

// Called on the connection's delivery thread for every async publish, acked or failed.
void on_publish_ack(jsCtx* /*js*/, natsMsg* msg, jsPubAck* ack, jsPubAckErr* error, void* closure) {
    auto* client = static_cast<NatsDriver::Client*>(closure);
    Flow* flow = client->flow.load();
    if (flow != nullptr) {
        if (ack != nullptr) {
            flow->produced(1, 0);
        } else {
            flow->produce_failed(
                1, error != nullptr && error->ErrText != nullptr ? error->ErrText : "failed");
        }
    }
    natsMsg_Destroy(msg);
}

Result<natsConnection*> open_connection(const std::string& url) {
    natsOptions* options = nullptr;
    natsStatus s = natsOptions_Create(&options);
    if (s == NATS_OK) s = natsOptions_SetURL(options, url.c_str());
    if (s == NATS_OK) s = natsOptions_SetTimeout(options, 5'000);
    // A server that died must fail the run fast, not be waited for.
    if (s == NATS_OK) s = natsOptions_SetAllowReconnect(options, false);
    // The publish-ack callbacks of every producer run on the library's shared delivery pool
    // rather than a thread per connection: on 2 cores shared with the server, fewer threads
    // means fewer context switches charged to the peer.
    if (s == NATS_OK) s = natsOptions_UseGlobalMessageDelivery(options, true);
    natsConnection* connection = nullptr;
    if (s == NATS_OK) s = natsConnection_Connect(&connection, options);
    natsOptions_Destroy(options);
    if (s != NATS_OK) return nats_error(s, "connect " + url);
    return connection;
}

Result<std::unique_ptr<NatsDriver::Client>> open_client(const std::string& url,
                                                        int64_t max_pending) {
    auto client = std::make_unique<NatsDriver::Client>();
    NARAD_ASSIGN_OR_RETURN(client->connection, open_connection(url));
    jsOptions options;
    jsOptions_Init(&options);
    options.Wait = kApiWaitMs;
    if (max_pending > 0) {
        options.PublishAsync.MaxPending = max_pending;
        options.PublishAsync.AckHandler = on_publish_ack;
        options.PublishAsync.AckHandlerClosure = client.get();
        options.PublishAsync.StallWait = kStallWaitMs;
    }
    natsStatus s = natsConnection_JetStream(&client->js, client->connection, &options);
    if (s != NATS_OK) return nats_error(s, "jetstream context");
    return client;
}

// Publishes every claimed message asynchronously, up to kPublishWindow unacknowledged (the
// library stalls the call when the window is full), and waits for the last acks at the end.
void produce_loop(NatsDriver::Client& client, const std::vector<std::string>& subjects,
                  uint32_t batch, Flow& flow) {
    jsPubOptions complete;
    jsPubOptions_Init(&complete);
    while (auto claim = flow.claim(batch)) {
        for (uint64_t id = claim->first; id < claim->first + claim->count; ++id) {
            const std::string payload = flow.payload(id);
            const std::string& subject = subjects[id % subjects.size()];
            natsStatus s = NATS_TIMEOUT;
            // A full window stalls the call; it timed out without sending, so try again.
            while (s == NATS_TIMEOUT && !flow.aborted()) {
                s = js_PublishAsync(client.js, subject.c_str(), payload.data(), int(payload.size()),
                                    nullptr);
            }
            if (s != NATS_OK) flow.produce_failed(1, status_text(s, "publish"));
        }
    }
    complete.MaxWait = std::max<int64_t>(1, (flow.deadline_ns() - mono_ns()) / 1'000'000);
    const natsStatus s = js_PublishAsyncComplete(client.js, &complete);
    if (s != NATS_OK) flow.produce_failed(0, status_text(s, "waiting for publish acks"));
}

// The pull protocol itself, as the client library's fetch sends it: a request for up to `batch`
// messages to $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>, answered on the consumer's own inbox
// until the batch is complete or the request expires (a 404/408 status message). The next
// request goes out once half of the current one has arrived. Messages are handled as they
// arrive, so a message never waits for its batch to fill; each is acked explicitly with "+ACK"
// to its reply subject. (libnats 3.4.1's natsSubscription_Fetch can
// overrun its message array when messages are already pending — fixed upstream in nats.c
// #749 — which crashed this harness, so the driver does not use it.)
void consume_loop(NatsDriver::Client& client, const std::string& inbox, uint32_t batch,
                  Flow& flow) {
    const std::string next_subject =
        std::string("$JS.API.CONSUMER.MSG.NEXT.") + kStream + "." + kConsumer;
    const std::string request = "{\"batch\":" + std::to_string(batch) +
                                ",\"expires\":" + std::to_string(kPullExpiresMs * 1'000'000) + "}";
    uint32_t outstanding = 0;  // messages the open pull requests may still deliver
    int64_t request_expires_ns = 0;
    uint64_t acked = 0;
    int64_t first_ack_ns = 0;
    auto settle_acks = [&] {
        if (acked > 0) flow.acks_answered(acked, mono_ns() - first_ack_ns);
        acked = 0;
    };
    while (!flow.consumers_should_stop()) {
        const int64_t now = mono_ns();
        if (outstanding <= batch / 2 || now > request_expires_ns) {
            const natsStatus s = natsConnection_PublishRequestString(
                client.connection, next_subject.c_str(), inbox.c_str(), request.c_str());
            if (s != NATS_OK) {
                flow.consume_failed(status_text(s, "pull request"));
                if (s == NATS_CONNECTION_CLOSED) return;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                continue;
            }
            outstanding += batch;
            // The server ends the request itself; this only guards against a lost status.
            request_expires_ns = now + (kPullExpiresMs + 1'000) * 1'000'000;
        }
        natsMsg* msg = nullptr;
        const natsStatus s = natsSubscription_NextMsg(&msg, client.subscription, kPollMs);
        if (s == NATS_TIMEOUT) {
            settle_acks();
            continue;
        }
        if (s != NATS_OK) {
            flow.consume_failed(status_text(s, "next message"));
            if (s == NATS_CONNECTION_CLOSED) return;
            continue;
        }
        const int length = natsMsg_GetDataLength(msg);
        const char* status = nullptr;
        if (length == 0 && natsMsgHeader_Get(msg, "Status", &status) == NATS_OK) {
            // 404 no messages, 408 request expired, 409 limits: the request is over.
            outstanding = 0;
            natsMsg_Destroy(msg);
            continue;
        }
        if (outstanding > 0) --outstanding;
        auto id = flow.received(std::string_view(natsMsg_GetData(msg), size_t(length)));
        const char* reply = natsMsg_GetReply(msg);
        const natsStatus a = reply != nullptr
                                 ? natsConnection_PublishString(client.connection, reply, "+ACK")
                                 : NATS_INVALID_SUBJECT;
        natsMsg_Destroy(msg);
        if (a != NATS_OK) {
            flow.ack_failed(1, status_text(a, "ack"));
            continue;
        }
        if (acked == 0) first_ack_ns = mono_ns();
        ++acked;
        if (id) flow.acked(*id);
        if (acked >= batch) settle_acks();
    }
    settle_acks();
}

}  // namespace

NatsDriver::NatsDriver() = default;
NatsDriver::~NatsDriver() {
    disconnect();
    stop();
}

std::string NatsDriver::durability() const {
    return "no fsync per message: a publish is acked once written (write(2), page cache) to the "
           "stream's block file; nats-server 2.9.10 fsyncs stream files every 2 min and has no "
           "option to change it (sync_interval came in 2.10)";
}

std::string NatsDriver::url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

Status NatsDriver::start(const DriverEnv& env) {
    port_ = unused_loopback_ports(1).front();
    ProcessSpec spec;
    spec.executable = env.nats_server_path;
    spec.args = {"-a",  "127.0.0.1",         "-p", std::to_string(port_), "-js",
                 "-sd", env.data_dir + "/js"};
    spec.log_path = env.data_dir + "/nats.log";
    NARAD_RETURN_IF_ERROR(server_.start(spec));
    const int64_t until = mono_ns() + env.start_timeout_ms * 1'000'000;
    Status last(Errc::timeout, "not tried");
    while (mono_ns() < until) {
        if (!server_.running()) {
            return Status(Errc::unavailable, "nats-server exited (" + server_.exit_description() +
                                                 "): " + server_.log_tail(300));
        }
        auto client = open_client(url(), 0);
        if (client.is_ok()) {
            jsAccountInfo* info = nullptr;
            const natsStatus s = js_GetAccountInfo(&info, (*client)->js, nullptr, nullptr);
            if (info != nullptr) jsAccountInfo_Destroy(info);
            if (s == NATS_OK) return Status::ok();
            last = nats_error(s, "jetstream account info");
        } else {
            last = client.status();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status(Errc::timeout, "nats-server not ready: " + last.message());
}

Status NatsDriver::prepare(const Workload& workload) {
    subjects_.clear();
    if (workload.partitions == 1) {
        subjects_.push_back("bench");
    } else {
        for (uint32_t p = 0; p < workload.partitions; ++p) {
            subjects_.push_back("bench." + std::to_string(p));
        }
    }
    NARAD_ASSIGN_OR_RETURN(auto admin, open_client(url(), 0));
    const char* stream_subject = workload.partitions == 1 ? "bench" : "bench.*";
    jsStreamConfig stream;
    jsStreamConfig_Init(&stream);
    stream.Name = kStream;
    stream.Subjects = &stream_subject;
    stream.SubjectsLen = 1;
    stream.Retention = js_WorkQueuePolicy;
    stream.Storage = js_FileStorage;
    jsStreamInfo* stream_info = nullptr;
    jsErrCode error = jsErrCode(0);
    natsStatus s = js_AddStream(&stream_info, admin->js, &stream, nullptr, &error);
    if (stream_info != nullptr) jsStreamInfo_Destroy(stream_info);
    if (s != NATS_OK) return nats_error(s, "add stream");

    jsConsumerConfig consumer;
    jsConsumerConfig_Init(&consumer);
    consumer.Durable = kConsumer;
    consumer.AckPolicy = js_AckExplicit;
    consumer.AckWait = int64_t(30) * 1'000'000'000;
    // Enough leases for every consumer's batch several times over, as Narad's default allows.
    consumer.MaxAckPending = std::max<int64_t>(1'000, int64_t(workload.consumers) * kPullBatch * 4);
    jsConsumerInfo* consumer_info = nullptr;
    s = js_AddConsumer(&consumer_info, admin->js, kStream, &consumer, nullptr, &error);
    if (consumer_info != nullptr) jsConsumerInfo_Destroy(consumer_info);
    if (s != NATS_OK) return nats_error(s, "add consumer");
    return Status::ok();
}

Status NatsDriver::connect(const Workload& workload) {
    for (uint32_t i = 0; i < workload.producers; ++i) {
        NARAD_ASSIGN_OR_RETURN(auto client, open_client(url(), kPublishWindow));
        producers_.push_back(std::move(client));
    }
    for (uint32_t i = 0; i < workload.consumers; ++i) {
        NARAD_ASSIGN_OR_RETURN(auto client, open_client(url(), 0));
        natsInbox* inbox = nullptr;
        natsStatus s = natsInbox_Create(&inbox);
        if (s != NATS_OK) return nats_error(s, "inbox");
        client->inbox = inbox;
        natsInbox_Destroy(inbox);
        s = natsConnection_SubscribeSync(&client->subscription, client->connection,
                                         client->inbox.c_str());
        if (s != NATS_OK) return nats_error(s, "subscribe to the pull inbox");
        // The default pending limit (65536 messages, 64 MiB) is far above one batch in flight.
        consumers_.push_back(std::move(client));
    }
    return Status::ok();
}

Status NatsDriver::run(const Workload& workload, Flow& flow) {
    notes_.clear();
    for (auto& client : producers_) client->flow = &flow;
    flow.start();
    std::vector<std::thread> consumer_threads;
    for (auto& client : consumers_) {
        consumer_threads.emplace_back([&client = *client, &workload, &flow] {
            consume_loop(client, client.inbox, std::max(workload.batch, kPullBatch), flow);
        });
    }
    std::vector<std::thread> producer_threads;
    for (auto& client : producers_) {
        producer_threads.emplace_back([&client = *client, this, &workload, &flow] {
            produce_loop(client, subjects_, workload.batch, flow);
        });
    }
    for (std::thread& thread : producer_threads) thread.join();
    flow.producers_finished();
    for (std::thread& thread : consumer_threads) thread.join();
    for (auto& client : producers_) client->flow = nullptr;
    // An ack is only queued on the connection: make sure every one reached the server, then
    // ask the server.
    for (auto& client : consumers_) natsConnection_FlushTimeout(client->connection, 5'000);
    return check_drained(workload);
}

Status NatsDriver::check_drained(const Workload& /*workload*/) {
    if (consumers_.empty()) return Status::ok();
    const int64_t until = mono_ns() + 3'000'000'000;
    int64_t ack_pending = 0;
    uint64_t pending = 0;
    while (true) {
        jsConsumerInfo* info = nullptr;
        const natsStatus s =
            js_GetConsumerInfo(&info, consumers_.front()->js, kStream, kConsumer, nullptr, nullptr);
        if (s != NATS_OK) {
            notes_.push_back(status_text(s, "consumer info after the run"));
            return Status::ok();
        }
        ack_pending = info->NumAckPending;
        pending = info->NumPending;
        jsConsumerInfo_Destroy(info);
        if ((ack_pending == 0 && pending == 0) || mono_ns() >= until) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (ack_pending != 0 || pending != 0) {
        notes_.push_back("after the run the consumer still had " + std::to_string(ack_pending) +
                         " unacked and " + std::to_string(pending) + " undelivered messages");
    }
    return Status::ok();
}

void NatsDriver::disconnect() {
    producers_.clear();
    consumers_.clear();
}

void NatsDriver::stop() { server_.stop(10'000); }

}  // namespace narad::compare
