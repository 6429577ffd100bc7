// Router: maps (method, path pattern) to handlers the way Narad's Go mux does: "{name}" matches one
// non-empty path segment; a path matching no pattern is 404 ("404 page not found", plain text); a
// known path with another method is 405 with an Allow header; HEAD runs the GET handler without a
// body; unclean paths ("//", "/./", "/../") are redirected to their clean form. It records Narad's
// HTTP metrics labelled with the matched route ("POST /v1/topics/{topic}/produce", or "unmatched").
// Handlers are registered before serving starts; handle() is then safe from any thread.
#pragma once

#include <functional>
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

class Router final : public net::HttpHandler {
  public:
    explicit Router(Clock& clock);

    void add(std::string method, std::string pattern, RouteHandler handler);
    void handle(net::HttpRequest request, net::Responder respond) override;

  private:
    struct Route {
        std::string method;
        std::string pattern;
        std::vector<std::string> segments;
        RouteHandler handler;
    };
    static bool match(const Route& route, const std::vector<std::string_view>& segments,
                      PathParams& params);

    Clock& clock_;
    std::vector<Route> routes_;
};

}  // namespace narad::api
