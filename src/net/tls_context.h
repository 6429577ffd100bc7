// The inside of net/tls.h's TlsContext, for net/*.cc files only (it includes Asio's SSL headers).
#pragma once

#include <boost/asio/ssl/context.hpp>

#include "net/tls.h"

namespace narad::net {

class TlsContext {
  public:
    explicit TlsContext(boost::asio::ssl::context::method method) : context(method) {}
    boost::asio::ssl::context context;
};

}  // namespace narad::net
