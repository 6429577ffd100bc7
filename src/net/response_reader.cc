#include "net/response_reader.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <optional>
#include <string>

namespace narad::net {
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

// Response heads are small; a larger one is a broken or hostile peer.
constexpr uint32_t kHeaderBytesMax = 64 * 1024;
// A Content-Length is trusted for a reservation only up to this much.
constexpr uint64_t kBodyReserveBytesMax = 1 << 20;

void assign_lower(std::string& out, std::string_view in) {
    out.assign(in.data(), in.size());
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
}

// A Beast parser that writes straight into the caller's HttpResponse instead of a
// beast::http::fields, reusing the header strings of the previous response.
class BeastParser final : public http::basic_parser<false> {
  public:
    explicit BeastParser(HttpResponse& response) : response_(response) {}

  protected:
    void on_request_impl(http::verb, beast::string_view, beast::string_view, int,
                         beast::error_code&) override {}

    void on_response_impl(int code, beast::string_view, int, beast::error_code&) override {
        response_.status = code;
    }

    void on_field_impl(http::field field, beast::string_view name, beast::string_view value,
                       beast::error_code&) override {
        if (field == http::field::content_type) {
            response_.content_type.assign(value.data(), value.size());
        }
        if (header_count_ < response_.headers.size()) {
            auto& entry = response_.headers[header_count_];
            assign_lower(entry.first, {name.data(), name.size()});
            entry.second.assign(value.data(), value.size());
        } else {
            auto& entry = response_.headers.emplace_back();
            assign_lower(entry.first, {name.data(), name.size()});
            entry.second.assign(value.data(), value.size());
        }
        ++header_count_;
    }

    void on_header_impl(beast::error_code&) override { response_.headers.resize(header_count_); }

    void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                           beast::error_code&) override {
        if (content_length) {
            response_.body.reserve(std::min<uint64_t>(*content_length, kBodyReserveBytesMax));
        }
    }

    size_t on_body_impl(beast::string_view body, beast::error_code&) override {
        response_.body.append(body.data(), body.size());
        return body.size();
    }

    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}

    size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) override {
        response_.body.append(body.data(), body.size());
        return body.size();
    }

    void on_finish_impl(beast::error_code&) override {}

  private:
    HttpResponse& response_;
    size_t header_count_ = 0;
};

Status reader_error(const beast::error_code& error, uint64_t body_limit_bytes) {
    if (error == http::error::body_limit) {
        return Status(Errc::peer_error,
                      "response body over " + std::to_string(body_limit_bytes) + " bytes");
    }
    return Status(Errc::peer_error, "malformed response: " + error.message());
}

}  // namespace

class ResponseReader::Parser {
  public:
    std::optional<BeastParser> beast;
    HttpResponse* response = nullptr;
    bool head_request = false;
    uint64_t body_limit_bytes = 0;
};

ResponseReader::ResponseReader() : parser_(std::make_unique<Parser>()) {}

ResponseReader::~ResponseReader() = default;

void ResponseReader::start(HttpResponse& response, bool head_request, uint64_t body_limit_bytes) {
    response.status = 0;
    response.content_type.clear();
    response.body.clear();
    // The header vector keeps its entries (and their capacity) until on_header_impl trims it.
    parser_->response = &response;
    parser_->head_request = head_request;
    parser_->body_limit_bytes = body_limit_bytes;
    auto& parser = parser_->beast.emplace(response);
    parser.eager(true);
    parser.header_limit(kHeaderBytesMax);
    parser.body_limit(body_limit_bytes);
    if (head_request) parser.skip(true);
}

size_t ResponseReader::put(std::string_view bytes, Status& error) {
    auto& parser = *parser_->beast;
    beast::error_code ec;
    size_t used = parser.put(boost::asio::const_buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more) return used;
    if (ec) {
        error = reader_error(ec, parser_->body_limit_bytes);
    } else if (parser.is_done() && parser_->response->status < 200) {
        // An interim response (100 Continue, 103 Early Hints): the real one follows.
        start(*parser_->response, parser_->head_request, parser_->body_limit_bytes);
    }
    return used;
}

Status ResponseReader::put_eof() {
    auto& parser = *parser_->beast;
    if (!parser.got_some()) return Status(Errc::peer_error, "connection closed by peer");
    beast::error_code ec;
    parser.put_eof(ec);
    if (ec) return reader_error(ec, parser_->body_limit_bytes);
    return Status::ok();
}

bool ResponseReader::done() const { return parser_->beast && parser_->beast->is_done(); }

bool ResponseReader::keep_alive() const {
    return parser_->beast && parser_->beast->is_done() && parser_->beast->keep_alive();
}

}  // namespace narad::net
