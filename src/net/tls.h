// TLS for the HTTP server and client (OpenSSL through Boost.Asio's ssl::context), configured from
// PEM files. Beast and OpenSSL stay out of this header: a TlsContext is opaque outside net/*.cc.
//
// A server context holds a certificate chain and key; with a CA file it also asks every client for
// a certificate and accepts only those the CA signed (the cluster port's mutual TLS). A client
// context verifies the server against the CA file, or against the system's roots (which honour
// SSL_CERT_FILE and SSL_CERT_DIR) when none is given; with a certificate and key it presents them.
// TLS 1.2 is the oldest version either side speaks. Contexts are immutable once made and shared
// by the connections made from them. Thread-safe.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace narad::net {

struct TlsFiles {
    std::string cert_file;  // PEM certificate chain, leaf first
    std::string key_file;   // PEM private key of the leaf
    std::string ca_file;    // PEM authorities trusted for the other side; empty: see above
};

// Whether a server's certificate must name the host dialled (a DNS name or an IP address), or only
// be signed by a trusted authority. Node-to-node calls check only that the cluster's CA signed the
// peer's certificate: peers advertise addresses, not names.
enum class HostCheck { name, signature_only };

// What an HttpClient speaking https uses: `files` as for make_client_tls, and the host check.
struct ClientTls {
    TlsFiles files;
    HostCheck host_check = HostCheck::name;
};

class TlsContext;

// Loads a server context; a missing, unreadable or mismatched file is a clear error.
Result<std::shared_ptr<TlsContext>> make_server_tls(const TlsFiles& files);
// Loads a client context; the certificate and key are optional (both or neither).
Result<std::shared_ptr<TlsContext>> make_client_tls(const TlsFiles& files);

}  // namespace narad::net
