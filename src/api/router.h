// Router: maps (method, path pattern) to handlers the way Narad's Go mux does: "{name}" matches one
// non-empty path segment; a path matching no pattern is 404 ("404 page not found", plain text); a
// known path with another method is 405 with an Allow header; HEAD runs the GET handler without a
// body; unclean paths ("//", "/./", "/../") are redirected to their clean form. It records Narad's
// HTTP metrics labelled with the matched route ("POST /v1/topics/{topic}/produce", or "unmatched").
// Handlers are registered before serving starts; handle() is then safe from any thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "net/http.h"

namespace narad::api {

// The values of a route's "{name}" segments, in pattern order.
struct PathParams {
    std::vector<std::pair<std::string, std::string>> values;
    const std::string& get(std::string_view name) const;
};

using RouteHandler =
    std::function<void(net::HttpRequest request, const PathParams& params, net::Responder respond)>;

// A route group's handler, handler(context, request, params, respond), as a RouteHandler: the
// route holds the group's context (the services it uses) for as long as it is registered, so a
// handler may hand the context's address to work it queues.
template <typename Context>
RouteHandler bind_route(std::shared_ptr<const Context> context,
                        void (*handler)(const Context*, net::HttpRequest, const PathParams&,
                                        net::Responder)) {
    return [context = std::move(context), handler](net::HttpRequest r, const PathParams& p,
                                                   net::Responder d) {
        handler(context.get(), std::move(r), p, std::move(d));
    };
}
template <typename Context>
RouteHandler bind_route(std::shared_ptr<const Context> context,
                        void (*handler)(const Context&, net::HttpRequest, const PathParams&,
                                        net::Responder)) {
    return [context = std::move(context), handler](net::HttpRequest r, const PathParams& p,
                                                   net::Responder d) {
        handler(*context, std::move(r), p, std::move(d));
    };
}

// The public port's guard against cross-site requests, as Narad's: unless a request carries a
// non-empty X-Narad-Client header (which a page on another origin cannot set without the browser
// asking first), a POST, PUT or PATCH must be application/json or application/octet-stream (else
// 415, body or not), and a batch consume (GET with `max`) is refused 400. The cluster port has no
// browsers to fear and runs without it.
enum class ContentTypeGuard { off, on };

class Router final : public net::HttpHandler {
  public:
    explicit Router(Clock& clock, ContentTypeGuard guard = ContentTypeGuard::off);

    // `body_limit_bytes` (0: the server's) is the largest body the route takes.
    void add(std::string method, std::string pattern, RouteHandler handler,
             uint64_t body_limit_bytes = 0);
    void handle(net::HttpRequest request, net::Responder respond) override;
    std::optional<uint64_t> body_limit(const net::HttpRequest& head) override;
    // Screens each head before its body is read (HttpHandler::screen), e.g. InFlightLimits.
    using Screen = std::function<std::optional<net::HttpResponse>(net::HttpRequest& head)>;
    void set_screen(Screen screen) { screen_ = std::move(screen); }
    std::optional<net::HttpResponse> screen(net::HttpRequest& head) override {
        return screen_ ? screen_(head) : std::nullopt;
    }
    // Runs before a request is routed (security: authentication). The gate either calls `route`
    // with the request (its `user` set) or answers it through `refuse`; either from any thread.
    using Route = std::function<void(net::HttpRequest)>;
    using Gate = std::function<void(net::HttpRequest request, Route route, net::Responder refuse)>;
    void set_gate(Gate gate) { gate_ = std::move(gate); }

  private:
    struct Entry {
        std::string method;
        std::string pattern;
        std::vector<std::string> segments;
        RouteHandler handler;
        uint64_t body_limit_bytes = 0;
    };
    static bool match(const Entry& route, const std::vector<std::string_view>& segments,
                      PathParams& params);
    // The guard's answer to a request it refuses (see ContentTypeGuard).
    std::optional<net::HttpResponse> cross_site_refusal(const net::HttpRequest& request);

    Clock& clock_;
    ContentTypeGuard guard_;
    // Finds the request's route and runs it; `finish` answers with the route's label.
    void dispatch(net::HttpRequest request,
                  const std::function<void(std::string, net::HttpResponse)>& finish);

    std::vector<Entry> routes_;
    Screen screen_;
    Gate gate_;
};

}  // namespace narad::api
