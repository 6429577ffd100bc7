#include "api/router.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "api/respond.h"
#include "base/metrics.h"

namespace narad::api {
namespace {

std::vector<std::string_view> split_path(std::string_view path) {
    std::vector<std::string_view> segments;
    size_t start = 1;  // paths start with '/'
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        segments.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return segments;
}

// The cleaned form of a path (Go's path.Clean, keeping a trailing slash), or "" if already clean.
std::string clean_path(std::string_view path) {
    bool unclean = path.find("//") != std::string_view::npos ||
                   path.find("/./") != std::string_view::npos ||
                   path.find("/../") != std::string_view::npos || path.ends_with("/.") ||
                   path.ends_with("/..");
    if (!unclean) return "";
    std::vector<std::string_view> out;
    for (std::string_view segment : split_path(path)) {
        if (segment.empty() || segment == ".") continue;
        if (segment == "..") {
            if (!out.empty()) out.pop_back();
            continue;
        }
        out.push_back(segment);
    }
    std::string cleaned;
    for (auto segment : out) {
        cleaned += '/';
        cleaned += segment;
    }
    if (cleaned.empty() || path.ends_with('/')) cleaned.push_back('/');
    return cleaned;
}

struct HttpMetrics {
    metrics::Family<metrics::Counter>& requests = metrics::Registry::global().counter(
        "narad_http_requests_total", "HTTP requests by route, method and status.",
        {"route", "method", "status"});
    metrics::Family<metrics::Histogram>& duration = metrics::Registry::global().histogram(
        "narad_http_request_duration_seconds", "HTTP request latency.",
        {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, {"route", "method", "status"});
    metrics::Family<metrics::Counter>& bytes_in = metrics::Registry::global().counter(
        "narad_http_request_bytes_in_total", "Request body bytes received.", {"route"});
    metrics::Family<metrics::Counter>& bytes_out = metrics::Registry::global().counter(
        "narad_http_response_bytes_out_total", "Response body bytes sent.", {"route"});
    metrics::Family<metrics::Counter>& errors = metrics::Registry::global().counter(
        "narad_errors_total", "Errors by component and kind.", {"component", "kind"});
};

HttpMetrics& http_metrics() {
    static HttpMetrics* m = new HttpMetrics();
    return *m;
}

// The metric children of one (route, method, status), looked up once per thread: the families'
// lookups take a lock and build label vectors, too much for every request.
struct RouteMetrics {
    metrics::Counter& requests;
    metrics::Histogram& duration;
    metrics::Counter& bytes_in;
    metrics::Counter& bytes_out;
};

RouteMetrics& route_metrics(const std::string& route, const std::string& method, int status) {
    thread_local std::unordered_map<std::string, std::unique_ptr<RouteMetrics>> cache;
    std::string key = route;
    key += '\n';
    key += method;
    key += '\n';
    key += std::to_string(status);
    auto& slot = cache[key];
    if (!slot) {
        HttpMetrics& m = http_metrics();
        std::string code = std::to_string(status);
        slot = std::make_unique<RouteMetrics>(RouteMetrics{
            m.requests.with({route, method, code}), m.duration.with({route, method, code}),
            m.bytes_in.with({route}), m.bytes_out.with({route})});
    }
    return *slot;
}

}  // namespace

const std::string& PathParams::get(std::string_view name) const {
    static const std::string kEmpty;
    for (const auto& [key, value] : values) {
        if (key == name) return value;
    }
    return kEmpty;
}

Router::Router(Clock& clock, ContentTypeGuard guard) : clock_(clock), guard_(guard) {}

namespace {

std::string media_type(std::string_view header) {
    std::string_view type = header.substr(0, header.find(';'));
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
    while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
    std::string media(type);
    for (char& c : media) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return media;
}

bool has_client_header(const net::HttpRequest& request) {
    auto client = request.header("x-narad-client");
    return client && !client->empty();
}

// Whether the raw query has a non-empty `max` (its name percent-decoded, as the handler reads it).
bool asks_for_batch(const net::HttpRequest& request) {
    for (const auto& [name, value] : request.query) {
        if (name == "max" && !value.empty()) return true;
    }
    return false;
}

}  // namespace

std::optional<net::HttpResponse> Router::cross_site_refusal(const net::HttpRequest& request) {
    if (guard_ == ContentTypeGuard::off || has_client_header(request)) return std::nullopt;
    const std::string& method = request.method;
    if (method == "POST" || method == "PUT" || method == "PATCH") {
        std::string media = media_type(request.header("content-type").value_or(""));
        if (media == "application/json" || media == "application/octet-stream") return std::nullopt;
        return error_response(Errc::unsupported_media_type,
                              "state-changing requests must send Content-Type: application/json "
                              "or application/octet-stream, or an X-Narad-Client header");
    }
    if ((method == "GET" || method == "HEAD") && request.path.ends_with("/consume") &&
        asks_for_batch(request)) {
        return error_response(
            Errc::invalid_argument,
            "a batch consume (max) must send an X-Narad-Client header: it reserves messages, and "
            "the header keeps a page on another origin from doing that with a browser's cached "
            "credentials");
    }
    return std::nullopt;
}

void Router::add(std::string method, std::string pattern, RouteHandler handler,
                 uint64_t body_limit_bytes) {
    Entry route{std::move(method), std::move(pattern), {}, std::move(handler), body_limit_bytes};
    for (auto segment : split_path(route.pattern)) route.segments.emplace_back(segment);
    routes_.push_back(std::move(route));
}

bool Router::match(const Entry& route, const std::vector<std::string_view>& segments,
                   PathParams& params) {
    if (route.segments.size() != segments.size()) return false;
    params.values.clear();
    for (size_t i = 0; i < segments.size(); ++i) {
        const std::string& want = route.segments[i];
        if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
            if (segments[i].empty()) return false;
            params.values.emplace_back(want.substr(1, want.size() - 2), segments[i]);
        } else if (want != segments[i]) {
            return false;
        }
    }
    return true;
}

std::optional<uint64_t> Router::body_limit(const net::HttpRequest& head) {
    // The head's path is still raw here; only literal segments can tell routes apart, and those
    // never need decoding.
    std::string_view target = head.target;
    std::vector<std::string_view> segments = split_path(target.substr(0, target.find('?')));
    PathParams params;
    for (const Entry& route : routes_) {
        if (route.body_limit_bytes == 0 || route.method != head.method) continue;
        if (match(route, segments, params)) return route.body_limit_bytes;
    }
    return std::nullopt;
}

void Router::handle(net::HttpRequest request, net::Responder respond) {
    MonoTime started = clock_.now();
    std::string method = request.method;
    size_t body_bytes = request.body.size();
    auto finish = [this, started, method, body_bytes, respond = std::move(respond)](
                      std::string route, net::HttpResponse response) {
        RouteMetrics& m = route_metrics(route, method, response.status);
        m.requests.inc();
        m.duration.observe(std::chrono::duration<double>(clock_.now() - started).count());
        if (body_bytes > 0) m.bytes_in.inc(static_cast<double>(body_bytes));
        m.bytes_out.inc(static_cast<double>(response.body.size()));
        if (response.status >= 500) http_metrics().errors.with({"http", "5xx"}).inc();
        if (method == "HEAD") response.body.clear();
        respond(std::move(response));
    };

    if (std::string cleaned = clean_path(request.path); !cleaned.empty()) {
        net::HttpResponse redirect = text_response(301, "");
        redirect.headers.emplace_back("location", cleaned);
        return finish("unmatched", std::move(redirect));
    }
    if (gate_) {
        std::function<void(std::string, net::HttpResponse)> done = std::move(finish);
        return gate_(
            std::move(request),
            [this, done](net::HttpRequest admitted) { dispatch(std::move(admitted), done); },
            [done](net::HttpResponse refusal) { done("unmatched", std::move(refusal)); });
    }
    dispatch(std::move(request), finish);
}

void Router::dispatch(net::HttpRequest request,
                      const std::function<void(std::string, net::HttpResponse)>& finish) {
    // After the gate, as Narad orders them: a request without credentials is 401 before it is 415.
    if (auto refusal = cross_site_refusal(request)) return finish("unmatched", *refusal);
    std::vector<std::string_view> segments = split_path(request.path);
    std::string lookup_method = request.method == "HEAD" ? "GET" : request.method;
    PathParams params;
    std::set<std::string> allowed;
    for (const Entry& route : routes_) {
        if (!match(route, segments, params)) continue;
        if (route.method == lookup_method) {
            std::string label = route.method + " " + route.pattern;
            request.method = lookup_method;
            route.handler(std::move(request), params,
                          [finish, label](net::HttpResponse response) mutable {
                              finish(label, std::move(response));
                          });
            return;
        }
        allowed.insert(route.method);
        if (route.method == "GET") allowed.insert("HEAD");
    }
    if (allowed.empty()) return finish("unmatched", text_response(404, "404 page not found\n"));
    std::string allow;
    for (const auto& m : allowed) {
        if (!allow.empty()) allow += ", ";
        allow += m;
    }
    net::HttpResponse response = text_response(405, "Method Not Allowed\n");
    response.headers.emplace_back("allow", allow);
    finish("unmatched", std::move(response));
}

}  // namespace narad::api
