#include "net/peer_pool.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"

namespace narad::net {
namespace {

struct RpcMetrics {
    metrics::Family<metrics::Counter>& requests;
    metrics::Family<metrics::Histogram>& seconds;
};

RpcMetrics& rpc_metrics() {
    static RpcMetrics m{
        metrics::Registry::global().counter(
            "narad_cluster_rpc_requests_total",
            "Node-to-node calls this node made, by operation and outcome (ok, rejected: 4xx, "
            "error: 5xx, unreachable: never sent, lost: sent without an answer).",
            {"op", "outcome"}),
        metrics::Registry::global().histogram("narad_cluster_rpc_request_seconds",
                                              "Time of node-to-node calls, by operation.",
                                              metrics::latency_bounds(), {"op"}),
    };
    return m;
}

}  // namespace

std::string rpc_operation(std::string_view target) {
    constexpr std::string_view kPrefix = "/internal/v1/";
    target = target.substr(0, target.find('?'));
    if (!target.starts_with(kPrefix)) return "other";
    target.remove_prefix(kPrefix.size());
    std::vector<std::string_view> parts;
    while (!target.empty()) {
        auto slash = target.find('/');
        parts.push_back(target.substr(0, slash));
        if (slash == std::string_view::npos) break;
        target.remove_prefix(slash + 1);
    }
    if (parts.empty()) return "other";
    // Topic names and partitions stay out of the label: /topics/{t}/ack/batch -> ack_batch,
    // /moves/{t}/{p}/chunk -> move_chunk.
    if (parts[0] == "topics" && parts.size() >= 3) {
        std::string op(parts[2]);
        for (size_t i = 3; i < parts.size(); ++i) op += "_" + std::string(parts[i]);
        return op;
    }
    if (parts[0] == "moves" && parts.size() >= 4) return "move_" + std::string(parts[3]);
    return std::string(parts[0]);
}

namespace {

// "host:port", "[v6]:port" -> host, port.
std::optional<std::pair<std::string, uint16_t>> split_address(std::string_view address) {
    auto colon = address.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    std::string host(address.substr(0, colon));
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    std::string_view port_text = address.substr(colon + 1);
    uint32_t port = 0;
    auto [end, error] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (error != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
        return std::nullopt;
    }
    return std::make_pair(host, static_cast<uint16_t>(port));
}

}  // namespace

std::function<Status(const ConnectionExchange&)> cluster_handshake(auth::ClusterSecrets secrets) {
    return [secrets = std::move(secrets)](const ConnectionExchange& exchange) -> Status {
        std::string client_nonce = auth::make_nonce();
        auto hello = exchange("POST", auth::kClusterHelloPath,
                              {{std::string(auth::kClusterNonceHeader), client_nonce}});
        if (!hello.is_ok()) return hello.status();
        if (hello->status != 200) {
            return Status(Errc::forbidden, "the peer refused the cluster handshake (" +
                                               std::to_string(hello->status) + "): " + hello->body);
        }
        auto header = [](const HttpResponse& response, std::string_view name) {
            for (const auto& [key, value] : response.headers) {  // names are lower-case
                if (key == name) return std::string_view(value);
            }
            return std::string_view();
        };
        std::string server_nonce(header(*hello, auth::kClusterNonceHeader));
        std::string_view proofs = header(*hello, auth::kClusterProofHeader);
        std::optional<size_t> held;
        if (auth::valid_nonce(server_nonce) && server_nonce != client_nonce) {
            // One proof per secret the peer holds, comma-separated.
            while (!held && !proofs.empty()) {
                size_t comma = proofs.find(',');
                std::string_view proof = proofs.substr(0, comma);
                held = auth::matching_secret(secrets, auth::ProofRole::server, client_nonce,
                                             server_nonce, proof);
                proofs.remove_prefix(comma == std::string_view::npos ? proofs.size() : comma + 1);
            }
        }
        if (!held) {
            return Status(Errc::forbidden,
                          "the peer did not prove that it holds this node's cluster secret "
                          "(NARAD_CLUSTER_SECRET differs?); nothing was sent to it");
        }
        std::string proof = auth::cluster_proof(secrets.held()[*held], auth::ProofRole::client,
                                                client_nonce, server_nonce);
        auto accepted = exchange("POST", auth::kClusterProofPath,
                                 {{std::string(auth::kClusterProofHeader), proof}});
        if (!accepted.is_ok()) return accepted.status();
        if (accepted->status != 204) {
            return Status(Errc::forbidden,
                          "the peer refused this node's proof of the cluster "
                          "secret (" +
                              std::to_string(accepted->status) + "): " + accepted->body);
        }
        return Status::ok();
    };
}

PeerPool::PeerPool(Resolver resolver, PeerPoolOptions options)
    : resolver_(std::move(resolver)), options_(std::move(options)) {
    Status loaded = reload_tls();
    if (!loaded.is_ok()) NARAD_LOG_ERROR("cluster TLS: {}", loaded.to_string());
}

Status PeerPool::reload_tls() {
    if (!options_.tls) return Status::ok();
    auto loaded = make_client_tls(options_.tls->files);
    if (!loaded.is_ok()) return loaded.status();
    MutexLock lock(mutex_);
    tls_context_ = std::move(*loaded);
    ++tls_generation_;
    idle_.clear();  // idle clients hold the old certificate
    return Status::ok();
}

PeerPool::Pooled PeerPool::take(const std::string& address, const std::string& host,
                                uint16_t port) {
    std::shared_ptr<TlsContext> tls;
    uint64_t generation = 0;
    {
        MutexLock lock(mutex_);
        auto it = idle_.find(address);
        if (it != idle_.end() && !it->second.empty()) {
            Pooled pooled = std::move(it->second.back());
            it->second.pop_back();
            return pooled;
        }
        tls = tls_context_;
        generation = tls_generation_;
    }
    ClientOptions client_options;
    client_options.host = host;
    client_options.port = port;
    client_options.response_body_limit_bytes = options_.response_body_limit_bytes;
    if (!options_.secrets.empty()) client_options.on_connect = cluster_handshake(options_.secrets);
    // The context loaded last (without one, the client loads the files and reports why not).
    client_options.tls = options_.tls;
    client_options.tls_context = std::move(tls);
    return Pooled{std::make_unique<HttpClient>(client_options), generation};
}

void PeerPool::give_back(const std::string& address, Pooled pooled) {
    MutexLock lock(mutex_);
    if (pooled.generation != tls_generation_) return;  // made before a reload: dropped
    auto& free = idle_[address];
    if (free.size() < options_.idle_clients_per_peer) free.push_back(std::move(pooled));
}

size_t PeerPool::idle_clients(const std::string& address) const {
    MutexLock lock(mutex_);
    auto it = idle_.find(address);
    return it == idle_.end() ? 0 : it->second.size();
}

Result<PeerReply> PeerPool::call(const NodeId& node, std::string_view method,
                                 std::string_view target, std::string_view body,
                                 std::string_view content_type, Millis timeout) {
    std::optional<std::string> address = resolver_(node);
    if (!address) {
        return Status(Errc::not_found, "node " + node.value() + " is not a known cluster member");
    }
    auto split = split_address(*address);
    if (!split) {
        return Status(Errc::peer_error, "node " + node.value() +
                                            " has no valid cluster address (\"" + *address + "\")");
    }
    Pooled pooled = take(*address, split->first, split->second);
    HttpClient* client = pooled.client.get();
    timeout = std::max(timeout, Millis(1));
    client->set_timeouts(std::min(timeout, options_.connect_timeout_max), timeout);
    std::string op = rpc_operation(target);
    auto started = std::chrono::steady_clock::now();
    auto response = client->request(method, target, body, content_type, {},
                                    Resend::once_if_unsent_on_reused_connection);
    rpc_metrics().seconds.with({op}).observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (!response.is_ok()) {
        std::string where = "node " + node.value() + " (" + *address + "): ";
        if (!client->last_request_maybe_delivered()) {
            rpc_metrics().requests.with({op, "unreachable"}).inc();
            return Status(Errc::peer_error, where + response.status().message());
        }
        rpc_metrics().requests.with({op, "lost"}).inc();
        return Status(Errc::unknown_outcome, where + response.status().message());
    }
    const char* outcome = response->status >= 500   ? "error"
                          : response->status >= 400 ? "rejected"
                                                    : "ok";
    rpc_metrics().requests.with({op, outcome}).inc();
    PeerReply reply;
    reply.status = response->status;
    reply.body = std::move(response->body);
    reply.content_type = std::move(response->content_type);
    give_back(*address, std::move(pooled));
    return reply;
}

}  // namespace narad::net
