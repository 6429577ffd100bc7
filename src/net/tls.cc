#include "net/tls.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "net/tls_context.h"

namespace narad::net {
namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last failure, for the error message.
std::string openssl_reason(const boost::system::error_code& ec) {
    std::string reason = ec.message();
    if (unsigned long code = ERR_peek_last_error(); code != 0) {
        char text[256];
        ERR_error_string_n(code, text, sizeof(text));
        reason = text;
    }
    ERR_clear_error();
    return reason;
}

Status load_pair(ssl::context& context, const TlsFiles& files) {
    boost::system::error_code ec;
    context.use_certificate_chain_file(files.cert_file, ec);
    if (ec) {
        return Status(Errc::invalid_argument,
                      "TLS certificate " + files.cert_file + ": " + openssl_reason(ec));
    }
    context.use_private_key_file(files.key_file, ssl::context::pem, ec);
    if (ec) {
        return Status(Errc::invalid_argument,
                      "TLS key " + files.key_file + ": " + openssl_reason(ec));
    }
    if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
        ERR_clear_error();
        return Status(Errc::invalid_argument, "TLS key " + files.key_file +
                                                  " does not match certificate " + files.cert_file);
    }
    return Status::ok();
}

Status load_authorities(ssl::context& context, const TlsFiles& files) {
    boost::system::error_code ec;
    if (files.ca_file.empty()) {
        context.set_default_verify_paths(ec);
    } else {
        context.load_verify_file(files.ca_file, ec);
    }
    if (ec) {
        return Status(Errc::invalid_argument,
                      "TLS authorities " + (files.ca_file.empty() ? "(system)" : files.ca_file) +
                          ": " + openssl_reason(ec));
    }
    return Status::ok();
}

std::shared_ptr<TlsContext> new_context(ssl::context::method method) {
    auto tls = std::make_shared<TlsContext>(method);
    tls->context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                             ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                             ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    return tls;
}

}  // namespace

Result<std::shared_ptr<TlsContext>> make_server_tls(const TlsFiles& files) {
    auto tls = new_context(ssl::context::tls_server);
    NARAD_RETURN_IF_ERROR(load_pair(tls->context, files));
    if (!files.ca_file.empty()) {
        NARAD_RETURN_IF_ERROR(load_authorities(tls->context, files));
        tls->context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    }
    // No TLS 1.3 session tickets: a keep-alive client treats bytes arriving on an idle
    // connection as its close, and tickets would be such bytes.
    SSL_CTX_set_num_tickets(tls->context.native_handle(), 0);
    return tls;
}

Result<std::shared_ptr<TlsContext>> make_client_tls(const TlsFiles& files) {
    auto tls = new_context(ssl::context::tls_client);
    if (files.cert_file.empty() != files.key_file.empty()) {
        return Status(Errc::invalid_argument, "a TLS client certificate and its key go together");
    }
    if (!files.cert_file.empty()) NARAD_RETURN_IF_ERROR(load_pair(tls->context, files));
    NARAD_RETURN_IF_ERROR(load_authorities(tls->context, files));
    tls->context.set_verify_mode(ssl::verify_peer);
    return tls;
}

}  // namespace narad::net
