#include "api/respond.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/log.h"

namespace narad::api {

std::string error_body(std::string_view message) {
    std::string out = "{\"error\":";
    append_json_string(out, message, HtmlEscape::no);
    out += "}\n";
    return out;
}

int http_status(Errc code) { return errc_http_status(code); }

net::HttpResponse json_response(int status, std::string body) {
    net::HttpResponse response;
    response.status = status;
    response.content_type = "application/json";
    response.body = std::move(body);
    return response;
}

net::HttpResponse error_response(const Status& status) {
    return error_json_response(status.code(), error_body(status.message()));
}

net::HttpResponse error_response(Errc code, std::string_view message) {
    return error_json_response(code, error_body(message));
}

net::HttpResponse error_json_response(Errc code, std::string body) {
    return json_response(http_status(code), std::move(body));
}

net::HttpResponse domain_error_response(const Status& status, std::string_view operation) {
    switch (status.code()) {
        case Errc::invalid_argument:
        case Errc::forbidden:
        case Errc::not_found:
        case Errc::already_exists:
        case Errc::conflict:
        case Errc::gone:
        case Errc::payload_too_large:
        case Errc::not_owner:
        case Errc::frozen:
        case Errc::too_many_requests:
        case Errc::unavailable:
        case Errc::shutting_down:
        case Errc::not_implemented:
            return error_response(status);
        case Errc::peer_error:
        case Errc::timeout:
        case Errc::unknown_outcome:
            // The metastore or a peer did not answer (in time): the client may retry; for an
            // unknown outcome it should read first (a create may have taken).
            NARAD_LOG_WARN("{} failed: {}", operation, status.to_string());
            return error_response(Errc::unavailable, "control plane temporarily unavailable: " +
                                                         std::string(status.message()));
        default:
            NARAD_LOG_ERROR("{} failed: {}", operation, status.to_string());
            return error_response(Errc::internal, std::string(operation) + " failed");
    }
}

net::HttpResponse empty_response(int status) {
    net::HttpResponse response;
    response.status = status;
    response.content_type.clear();
    return response;
}

net::HttpResponse text_response(int status, std::string body) {
    net::HttpResponse response;
    response.status = status;
    response.content_type = "text/plain; charset=utf-8";
    response.body = std::move(body);
    response.headers.emplace_back("x-content-type-options", "nosniff");
    return response;
}

void answer_on_pool(ThreadPool& pool, net::Responder respond,
                    std::function<net::HttpResponse()> work) {
    auto shared = std::make_shared<net::Responder>(std::move(respond));
    ThreadPool::Posted posted = pool.post([shared, work = std::move(work)] {
        net::HttpResponse response;
        try {
            response = work();
        } catch (const nlohmann::json::exception& e) {
            NARAD_LOG_ERROR("a request failed on an undecodable reply: {}", e.what());
            response =
                error_response(Errc::peer_error, std::string("bad reply from a peer: ") + e.what());
        } catch (const std::exception& e) {
            NARAD_LOG_ERROR("a request failed with an exception: {}", e.what());
            response = error_response(Errc::unavailable, "internal error; retry later");
        } catch (...) {
            NARAD_LOG_ERROR("a request failed with a non-standard exception");
            response = error_response(Errc::unavailable, "internal error; retry later");
        }
        (*shared)(std::move(response));
    });
    if (Status refused = posted_status(posted, "server busy; retry later"); !refused.is_ok()) {
        (*shared)(error_response(refused));
    }
}

}  // namespace narad::api
