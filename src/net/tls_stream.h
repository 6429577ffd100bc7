// A connection's byte stream, with TLS on it or not (chosen when the connection is made): reads and
// writes go to the TLS stream when there is one, else straight to TCP. For net/*.cc files only.
#pragma once

#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "net/tls_context.h"

namespace narad::net {

class MaybeTlsStream {
  public:
    using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

    // `tls` null: plain TCP.
    MaybeTlsStream(boost::beast::tcp_stream tcp, std::shared_ptr<TlsContext> tls)
        : context_(std::move(tls)) {
        if (context_) {
            tls_.emplace(std::move(tcp), context_->context);
        } else {
            plain_.emplace(std::move(tcp));
        }
    }

    bool tls() const { return tls_.has_value(); }
    TlsStream& tls_stream() { return *tls_; }
    boost::beast::tcp_stream& tcp() {
        return tls_ ? boost::beast::get_lowest_layer(*tls_) : *plain_;
    }

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
    std::optional<boost::beast::tcp_stream> plain_;
    std::optional<TlsStream> tls_;
};

}  // namespace narad::net
