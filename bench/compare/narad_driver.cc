#include "compare/narad_driver.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "base/loopback_ports.h"
#include "cli/bench_engine.h"
#include "cli/bench_workload.h"
#include "cli/calls.h"
#include "net/http_client.h"
#include "net/load_client.h"

namespace narad::compare {
namespace {

using cli::bench::mono_ns;

constexpr int kAckAttemptsMax = 5;
constexpr int64_t kAckBackoffStepNs = 100'000'000;
constexpr std::string_view kConsumeWait = "500ms";

bool is_success(int status) { return status >= 200 && status < 300; }

// Receipt handles waiting for their ack on one consumer connection, with the message ids they
// carry (nullopt for a message of another run, acked all the same).
struct PendingAcks {
    std::vector<std::string> handles;
    std::vector<std::optional<uint64_t>> ids;
    int attempt = 1;
    int64_t not_before_ns = 0;
};

class ConsumerSide {
  public:
    ConsumerSide(const std::string& topic, uint32_t connections, uint32_t batch, Flow& flow)
        : topic_(topic), batch_(batch), flow_(flow), pending_(connections) {}

    std::optional<net::LoadRequest> next(uint32_t connection) {
        PendingAcks& pending = pending_.at(connection);
        if (!pending.handles.empty()) {
            const int64_t now = mono_ns();
            if (pending.not_before_ns > now) {
                // Only after a failed ack: its backoff.
                std::this_thread::sleep_for(std::chrono::nanoseconds(pending.not_before_ns - now));
            }
            return ack_request(pending);
        }
        if (flow_.consumers_should_stop()) return std::nullopt;
        return consume_request(pending);
    }

  private:
    cli::bench::Shape shape() const { return cli::bench::shape_of(batch_); }

    net::LoadRequest consume_request(PendingAcks& pending) {
        net::LoadRequest request;
        request.method = "GET";
        request.target = cli::bench::consume_target(topic_, batch_, kConsumeWait);
        request.content_type = "";
        request.on_response = [this, &pending](const Result<net::HttpResponse>& r) {
            if (!r.is_ok()) {
                flow_.consume_failed("transport");
                return;
            }
            if (r->status == 204) return;
            if (!is_success(r->status)) {
                flow_.consume_failed(std::to_string(r->status));
                return;
            }
            auto deliveries = cli::bench::parse_deliveries(r->body, shape());
            if (!deliveries) {
                flow_.consume_failed("unparsable");
                return;
            }
            pending.attempt = 1;
            pending.not_before_ns = 0;
            for (cli::bench::Delivery& delivery : *deliveries) {
                auto id = flow_.received(delivery.payload);
                if (delivery.receipt_handle.empty()) continue;
                pending.handles.push_back(std::move(delivery.receipt_handle));
                pending.ids.push_back(id);
            }
        };
        return request;
    }

    net::LoadRequest ack_request(PendingAcks& pending) {
        net::LoadRequest request;
        request.method = "POST";
        if (shape() == cli::bench::Shape::batch) {
            request.target = cli::bench::ack_batch_target(topic_);
            request.body = cli::bench::ack_batch_body(pending.handles);
            request.content_type = "application/json";
        } else {
            request.target = cli::bench::ack_target(topic_, pending.handles.front());
            request.content_type = "";
        }
        // The handles travel with the request; the connection's list is empty until an answer
        // puts back what must be retried.
        auto in_flight = std::make_shared<PendingAcks>(std::move(pending));
        pending = PendingAcks{};
        const int64_t sent_ns = mono_ns();
        request.on_response = [this, &pending, in_flight,
                               sent_ns](const Result<net::HttpResponse>& r) {
            const size_t n = in_flight->handles.size();
            std::vector<int> statuses(n, 0);
            if (r.is_ok()) {
                if (shape() == cli::bench::Shape::batch && r->status == 200) {
                    auto results = cli::bench::parse_ack_results(r->body);
                    // Results come in the order of the handles.
                    for (size_t i = 0; results && i < n && i < results->size(); ++i) {
                        if ((*results)[i].receipt_handle == in_flight->handles[i]) {
                            statuses[i] = (*results)[i].status;
                        }
                    }
                } else {
                    std::fill(statuses.begin(), statuses.end(), r->status);
                }
            }
            settle(pending, *in_flight, statuses, mono_ns() - sent_ns);
        };
        return request;
    }

    void settle(PendingAcks& pending, PendingAcks& answered, const std::vector<int>& statuses,
                int64_t latency_ns) {
        uint64_t ok = 0;
        PendingAcks retry;
        retry.attempt = answered.attempt + 1;
        retry.not_before_ns = mono_ns() + kAckBackoffStepNs * answered.attempt;
        for (size_t i = 0; i < statuses.size(); ++i) {
            if (is_success(statuses[i])) {
                ++ok;
                if (answered.ids[i]) flow_.acked(*answered.ids[i]);
            } else if (statuses[i] == 410) {
                // The lease lapsed: the message will be delivered again and counted then.
                flow_.ack_failed(1, "410");
            } else if (answered.attempt < kAckAttemptsMax) {
                retry.handles.push_back(std::move(answered.handles[i]));
                retry.ids.push_back(answered.ids[i]);
            } else {
                flow_.ack_failed(1, statuses[i] == 0 ? "transport" : std::to_string(statuses[i]));
            }
        }
        if (ok > 0) flow_.acks_answered(ok, latency_ns);
        if (!retry.handles.empty()) pending = std::move(retry);
    }

    const std::string& topic_;
    const uint32_t batch_;
    Flow& flow_;
    std::vector<PendingAcks> pending_;  // each touched only by its own connection
};

class ProducerSide {
  public:
    ProducerSide(const std::string& topic, uint32_t batch, Flow& flow)
        : topic_(topic),
          batch_(batch),
          flow_(flow),
          single_target_(cli::bench::produce_target(topic, "")),
          batch_target_(cli::topic_path(topic) + "/produce/batch") {}

    std::optional<net::LoadRequest> next(uint32_t /*connection*/) {
        auto claim = flow_.claim(batch_);
        if (!claim) return std::nullopt;
        net::LoadRequest request;
        request.method = "POST";
        const uint64_t messages = claim->count;
        if (batch_ == 1) {
            request.target = single_target_;
            request.body = flow_.payload(claim->first);
            request.content_type = "application/octet-stream";
        } else {
            std::vector<std::string> payloads;
            payloads.reserve(messages);
            for (uint64_t i = 0; i < messages; ++i)
                payloads.push_back(flow_.payload(claim->first + i));
            request.target = batch_target_;
            request.body = cli::bench::produce_batch_body(payloads, {});
            request.content_type = "application/json";
        }
        const int64_t sent_ns = mono_ns();
        const cli::bench::Shape shape = this->shape();
        request.on_response = [this, sent_ns, messages, shape](const Result<net::HttpResponse>& r) {
            if (!r.is_ok()) {
                flow_.produce_failed(messages, "transport");
                return;
            }
            if (!is_success(r->status)) {
                flow_.produce_failed(messages, std::to_string(r->status));
                return;
            }
            uint64_t accepted = messages;
            if (shape == cli::bench::Shape::batch) {
                accepted =
                    std::min(cli::bench::parse_accepted(r->body).value_or(messages), messages);
            }
            flow_.produced(accepted, mono_ns() - sent_ns);
            if (accepted < messages) flow_.produce_failed(messages - accepted, "not accepted");
        };
        return request;
    }

  private:
    const std::string& topic_;
    const uint32_t batch_;
    Flow& flow_;
    const std::string single_target_;
    const std::string batch_target_;
};

net::ClientOptions client_options(uint16_t port) {
    net::ClientOptions options;
    options.host = "127.0.0.1";
    options.port = port;
    options.connect_timeout = Millis(5'000);
    options.request_timeout = Millis(30'000);
    return options;
}

}  // namespace

std::string NaradDriver::system() const {
    return routes_ == Routes::single ? "narad-single" : "narad-batch";
}

std::string NaradDriver::durability() const {
    return "fsync per produce: 202 only after an fdatasync of the ingress WAL covers the message "
           "(group commit); each partition commit is fdatasynced too before consumers see it";
}

Status NaradDriver::start(const DriverEnv& env) {
    // The API, the cluster port, and the client and peer ports of the node's own etcd member.
    const std::vector<uint16_t> ports = unused_loopback_ports(4);
    port_ = ports[0];
    ProcessSpec spec;
    spec.executable = env.narad_path;
    spec.args = {"serve",
                 "--addr",
                 "127.0.0.1:" + std::to_string(port_),
                 "--cluster-port",
                 std::to_string(ports[1]),
                 "--etcd-client-port",
                 std::to_string(ports[2]),
                 "--etcd-peer-port",
                 std::to_string(ports[3]),
                 "--data-dir",
                 env.data_dir + "/data",
                 "--log-format",
                 "text",
                 "--log-level",
                 "warn"};
    spec.env = {{"NARAD_SECURITY_ENABLED", "false"}};
    spec.log_path = env.data_dir + "/narad.log";
    NARAD_RETURN_IF_ERROR(server_.start(spec));

    net::ClientOptions options = client_options(port_);
    options.connect_timeout = Millis(500);
    options.request_timeout = Millis(1'000);
    net::HttpClient client(options);
    const int64_t until = mono_ns() + env.start_timeout_ms * 1'000'000;
    while (mono_ns() < until) {
        if (!server_.running()) {
            return Status(Errc::unavailable, "narad exited (" + server_.exit_description() +
                                                 "): " + server_.log_tail(300));
        }
        auto r = client.get("/readyz");
        if (r.is_ok() && r->status == 200) return Status::ok();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status(Errc::timeout,
                  "narad not ready after " + std::to_string(env.start_timeout_ms) + " ms");
}

Status NaradDriver::prepare(const Workload& workload) {
    uint32_t partitions = workload.partitions;
    if (partitions < kNaradPartitionsMin) {
        partitions = kNaradPartitionsMin;
        notes_.push_back("Narad topics have at least 3 partitions: ran with 3, not " +
                         std::to_string(workload.partitions));
    }
    if (partitions > kNaradPartitionsMax) {
        return Status(Errc::invalid_argument,
                      "Narad topics have at most 108 partitions, the workload asks for " +
                          std::to_string(partitions));
    }
    net::HttpClient client(client_options(port_));
    const std::string body =
        "{\"name\":\"" + topic_ + "\",\"partitions\":" + std::to_string(partitions) + "}";
    auto r = client.post("/v1/topics", body);
    if (!r.is_ok()) return r.status().with_context("create topic");
    if (r->status != 201) {
        return Status(Errc::peer_error,
                      "create topic: http " + std::to_string(r->status) + ": " + r->body);
    }
    return Status::ok();
}

Status NaradDriver::run(const Workload& workload, Flow& flow) {
    const uint32_t batch = routes_ == Routes::single ? 1 : workload.batch;
    ProducerSide producers(topic_, batch, flow);
    ConsumerSide consumers(topic_, workload.consumers, batch, flow);

    std::vector<cli::bench::Stage> stages;
    cli::bench::Stage produce;
    produce.name = "produce";
    produce.options.client = client_options(port_);
    produce.options.connections = workload.producers;
    // A paced generator sleeps on its client thread until its slot: a thread per connection
    // keeps one sleeper from delaying the others' answers.
    produce.options.threads = flow.plan().rate > 0 ? workload.producers : 1;
    produce.generator = [&producers](uint32_t connection) { return producers.next(connection); };
    produce.on_finished = [&flow] { flow.producers_finished(); };
    stages.push_back(std::move(produce));

    cli::bench::Stage consume;
    consume.name = "consume";
    consume.options.client = client_options(port_);
    consume.options.connections = workload.consumers;
    consume.options.threads = 1;
    consume.generator = [&consumers](uint32_t connection) { return consumers.next(connection); };
    stages.push_back(std::move(consume));

    flow.start();
    return cli::bench::run_stages(std::move(stages));
}

void NaradDriver::stop() { server_.stop(10'000); }

}  // namespace narad::compare
