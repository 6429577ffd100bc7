// A connection's byte stream, with TLS on it or not (chosen when the connection is made): reads and
// writes go to the TLS stream when there is one, else straight to the lowest layer. The server's
// lowest layer is a beast::tcp_stream (its timeouts), the clients' a bare tcp::socket (their
// owners enforce deadlines). For net/*.cc files only.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "net/tls_context.h"

namespace narad::net {

template <class Lowest>
class BasicMaybeTlsStream {
  public:
    using TlsStream = boost::beast::ssl_stream<Lowest>;

    // `tls` null: no TLS.
    BasicMaybeTlsStream(Lowest lowest, std::shared_ptr<TlsContext> tls) : context_(std::move(tls)) {
        if (context_) {
            tls_.emplace(std::move(lowest), context_->context);
        } else {
            plain_.emplace(std::move(lowest));
        }
    }

    bool tls() const { return tls_.has_value(); }
    TlsStream& tls_stream() { return *tls_; }
    Lowest& tcp() { return tls_ ? boost::beast::get_lowest_layer(*tls_) : *plain_; }

    template <class Buffers, class Handler>
    void async_read_some(const Buffers& buffers, Handler&& handler) {
        if (tls_) {
            tls_->async_read_some(buffers, std::forward<Handler>(handler));
        } else {
            plain_->async_read_some(buffers, std::forward<Handler>(handler));
        }
    }
    template <class Buffers, class Handler>
    void async_write(const Buffers& buffers, Handler&& handler) {
        if (tls_) {
            boost::asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
        } else {
            boost::asio::async_write(*plain_, buffers, std::forward<Handler>(handler));
        }
    }

  private:
    std::shared_ptr<TlsContext> context_;  // outlives the TLS stream made from it
    std::optional<Lowest> plain_;
    std::optional<TlsStream> tls_;
};

using MaybeTlsStream = BasicMaybeTlsStream<boost::beast::tcp_stream>;
using ClientStream = BasicMaybeTlsStream<boost::asio::ip::tcp::socket>;

}  // namespace narad::net
