#include "net/request_reader.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/error.hpp>
#include <optional>

namespace narad::net {
namespace beast = boost::beast;
namespace http = boost::beast::http;

namespace {

constexpr uint64_t kReserveMax = 64 * 1024;

bool equals_lower(std::string_view value, std::string_view lower) {
    if (value.size() != lower.size()) return false;
    for (size_t i = 0; i < value.size(); ++i) {
        char c =
            value[i] >= 'A' && value[i] <= 'Z' ? static_cast<char>(value[i] - 'A' + 'a') : value[i];
        if (c != lower[i]) return false;
    }
    return true;
}

// A Beast parser that fills an HttpRequest directly, skipping beast::http::fields and a copy.
class BeastParser final : public http::basic_parser<true> {
  public:
    explicit BeastParser(HttpRequest& request) : request_(request) {}
    int version() const { return version_; }
    bool expects_continue() const { return expects_continue_; }

  protected:
    void on_request_impl(http::verb, beast::string_view method, beast::string_view target,
                         int version, beast::error_code&) override {
        request_.method.assign(method.data(), method.size());
        request_.target.assign(target.data(), target.size());
        version_ = version;
    }
    void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
    void on_field_impl(http::field field, beast::string_view name, beast::string_view value,
                       beast::error_code&) override {
        auto& entry = request_.headers.emplace_back();
        entry.first.assign(name.data(), name.size());
        for (char& c : entry.first) {
            if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        entry.second.assign(value.data(), value.size());
        if (field == http::field::expect &&
            equals_lower({value.data(), value.size()}, "100-continue")) {
            expects_continue_ = version_ >= 11;
        }
    }
    void on_header_impl(beast::error_code&) override {}
    void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                           beast::error_code&) override {
        // Only a small reservation up front: a client's Content-Length alone never makes the
        // server hold memory; the body grows as its bytes arrive (up to the body limit).
        if (content_length) request_.body.reserve(std::min<uint64_t>(*content_length, kReserveMax));
    }
    size_t on_body_impl(beast::string_view body, beast::error_code&) override {
        request_.body.append(body.data(), body.size());
        return body.size();
    }
    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
    size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code&) override {
        request_.body.append(body.data(), body.size());
        return body.size();
    }
    void on_finish_impl(beast::error_code&) override {}

  private:
    HttpRequest& request_;
    int version_ = 11;
    bool expects_continue_ = false;
};

}  // namespace

class RequestReader::Parser {
  public:
    std::optional<BeastParser> beast;
};

RequestReader::RequestReader() : parser_(std::make_unique<Parser>()) {}
RequestReader::~RequestReader() = default;

void RequestReader::start(HttpRequest& request, Limits limits) {
    auto& parser = parser_->beast.emplace(request);
    // Not eager until the head is reported: put() returns right after the head.
    parser.eager(false);
    head_reported_ = false;
    parser.header_limit(limits.header_bytes);
    parser.body_limit(limits.body_bytes);
}

RequestReader::Outcome RequestReader::put(std::string_view bytes, size_t& used) {
    auto& parser = *parser_->beast;
    used = 0;
    for (;;) {
        beast::error_code ec;
        size_t n =
            parser.put(boost::asio::const_buffer(bytes.data() + used, bytes.size() - used), ec);
        used += n;
        if (ec == http::error::need_more) return Outcome::need_more;
        if (ec == http::error::body_limit) return Outcome::body_too_large;
        if (ec == http::error::header_limit) return Outcome::header_too_large;
        if (ec) return Outcome::malformed;
        if (parser.is_done()) return Outcome::done;
        if (parser.is_header_done() && !head_reported_) {
            head_reported_ = true;
            parser.eager(true);
            return Outcome::head_done;
        }
        // An empty piece of body: the parser wants bytes that have not arrived yet.
        if (n == 0) return Outcome::need_more;
    }
}

bool RequestReader::limit_body(uint64_t bytes) {
    auto& parser = *parser_->beast;
    if (auto length = parser.content_length(); length && *length > bytes) return false;
    parser.body_limit(bytes);
    return true;
}

bool RequestReader::header_done() const { return parser_->beast->is_header_done(); }
bool RequestReader::expects_continue() const { return parser_->beast->expects_continue(); }
bool RequestReader::keep_alive() const { return parser_->beast->keep_alive(); }
int RequestReader::version() const { return parser_->beast->version(); }

}  // namespace narad::net
