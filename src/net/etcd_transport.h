// HttpEtcdTransport: the real meta::EtcdTransport, HTTP/1.1 to etcd's JSON gateway. A POST borrows
// a keep-alive HttpClient from a small per-endpoint pool (or makes one) and returns it when the
// answer came whole; a stream gets a BlockingConnection (net/client_connection.h) of its own and
// hands out the newline-delimited JSON objects of the chunked answer one at a time. https://
// endpoints speak TLS with the client certificate of `tls` (the supervised member with cluster
// TLS).
//
// A POST is sent once, never again (Resend::never): a resent txn, put or lease write could apply
// twice, and the second run would report the first one's success as a failed compare. The outcome
// of a failure is kept apart instead: Errc::peer_error when no connection could be made (the
// request was not sent), Errc::unknown_outcome once it may have been sent. Thread-safe: any thread
// may post or open streams at once; each call blocks its thread (never call from an Asio thread
// serving clients).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "meta/etcd_client.h"
#include "net/http_client.h"
#include "net/tls.h"

namespace narad::net {

struct EtcdTransportOptions {
    // Idle connections kept per endpoint; more may be open while calls run.
    size_t idle_connections_per_endpoint = 4;
    // An answer larger than this fails (Errc::unknown_outcome: it was sent).
    uint64_t response_body_limit_bytes = uint64_t{64} << 20;
    // One object of a stream larger than this breaks the stream.
    uint64_t stream_object_bytes_max = uint64_t{64} << 20;
    // A POST's connect phase waits at most this long (and never longer than the call's timeout).
    Millis connect_timeout{2'000};
    // For https:// endpoints: the client certificate and the authority etcd's certificate must
    // come from (only the signature is checked, not the names). nullopt: https is refused.
    std::optional<ClientTls> tls;
};

class HttpEtcdTransport final : public meta::EtcdTransport {
  public:
    explicit HttpEtcdTransport(EtcdTransportOptions options = {});
    ~HttpEtcdTransport() override;
    HttpEtcdTransport(const HttpEtcdTransport&) = delete;
    HttpEtcdTransport& operator=(const HttpEtcdTransport&) = delete;

    Result<Reply> post(const std::string& endpoint, std::string_view path, std::string_view body,
                       Millis timeout) override;
    Result<std::unique_ptr<meta::EtcdStream>> open_stream(const std::string& endpoint,
                                                          std::string_view path,
                                                          std::string_view body,
                                                          Millis connect_timeout) override;

  private:
    // The options of a client for `endpoint` ("http(s)://host:port"), or why there is none.
    Result<ClientOptions> client_options(const std::string& endpoint) const;
    Result<std::unique_ptr<HttpClient>> take(const std::string& endpoint);
    void give_back(const std::string& endpoint, std::unique_ptr<HttpClient> client);

    const EtcdTransportOptions options_;
    std::shared_ptr<TlsContext> tls_;  // loaded once from options_.tls
    Status tls_error_;                 // why it could not be
    Mutex mutex_;
    // Idle keep-alive clients by endpoint.
    std::map<std::string, std::vector<std::unique_ptr<HttpClient>>> idle_ GUARDED_BY(mutex_);
};

}  // namespace narad::net
