#include "api/access.h"

#include "api/respond.h"
#include "auth/authenticator.h"

namespace narad::api {

namespace {

constexpr std::string_view kRealm = "Basic realm=\"narad\"";

net::HttpResponse authentication_required() {
    net::HttpResponse response = error_response(Errc::unauthorized, "authentication required");
    response.headers.emplace_back("WWW-Authenticate", std::string(kRealm));
    return response;
}

bool open_path(std::string_view path, MetricsAuth metrics) {
    return path == "/healthz" || path == "/readyz" ||
           (path == "/metrics" && metrics == MetricsAuth::open);
}

// The topic of a route's path and its record, if it exists now.
const meta::Topic* find_topic(const meta::MetaSnapshot& snapshot, const PathParams& params) {
    return snapshot->find_topic(params.get("topic"));
}

net::HttpResponse throttled() {
    return error_response(Errc::too_many_requests, "too many failed authentication attempts");
}

}  // namespace

auth::Principal caller_of(const AccessContext& access, const net::HttpRequest& request) {
    if (access.authenticator == nullptr) return auth::Principal::anyone();
    meta::MetaSnapshot snapshot = access.store.snapshot();
    if (const meta::User* user = snapshot->find_user(request.user)) {
        return auth::Principal::of(*user);
    }
    meta::User gone;
    gone.name = request.user;
    return auth::Principal::of(gone);
}

std::string actor_of(const net::HttpRequest& request) {
    return request.user.empty() ? request.remote_address : request.user;
}

Router::Gate make_auth_gate(AccessContext access, MetricsAuth metrics) {
    // What follows authentication: the cluster routes are an admin's.
    auto admit = [access](net::HttpRequest request, const Router::Route& route,
                          const net::Responder& refuse) {
        if (request.path.starts_with("/v1/cluster/") && !caller_of(access, request).admin()) {
            return refuse(error_response(Errc::forbidden, "admin privileges required"));
        }
        route(std::move(request));
    };
    return [access, metrics, admit](net::HttpRequest request, Router::Route route,
                                    net::Responder refuse) {
        if (access.authenticator == nullptr || open_path(request.path, metrics)) {
            return route(std::move(request));
        }
        // The screen (make_auth_screen) already recognised these credentials from the cache.
        if (!request.user.empty()) return admit(std::move(request), route, refuse);
        auto shared = std::make_shared<net::HttpRequest>(std::move(request));
        std::optional<std::string_view> header = shared->header("authorization");  // in *shared
        access.authenticator->authenticate(
            header, [admit, shared, route = std::move(route),
                     refuse = std::move(refuse)](auth::AuthResult result) {
                switch (result.outcome) {
                    case auth::AuthOutcome::ok:
                        break;
                    case auth::AuthOutcome::unauthorized:
                        return refuse(authentication_required());
                    case auth::AuthOutcome::throttled:
                        return refuse(throttled());
                    case auth::AuthOutcome::unavailable: {
                        net::HttpResponse busy = error_response(
                            Errc::unavailable,
                            "authentication unavailable: too many logins being checked");
                        busy.headers.emplace_back("Retry-After", "1");
                        return refuse(std::move(busy));
                    }
                }
                shared->user = std::move(result.user);
                admit(std::move(*shared), route, refuse);
            });
    };
}

Router::Screen make_auth_screen(AccessContext access, MetricsAuth metrics) {
    return [access, metrics](net::HttpRequest& head) -> std::optional<net::HttpResponse> {
        if (access.authenticator == nullptr || open_path(head.path, metrics)) return std::nullopt;
        auto screened = access.authenticator->screen(head.header("authorization"));
        if (!screened) return std::nullopt;
        switch (screened->outcome) {
            case auth::AuthOutcome::ok:
                head.user = std::move(screened->user);
                return std::nullopt;
            case auth::AuthOutcome::throttled:
                return throttled();
            case auth::AuthOutcome::unauthorized:
            case auth::AuthOutcome::unavailable:
                break;
        }
        return authentication_required();
    };
}

RouteHandler needs_grant(AccessContext access, meta::Action action, RouteHandler handler) {
    return [access, action, handler = std::move(handler)](net::HttpRequest r, const PathParams& p,
                                                          net::Responder d) {
        if (!caller_of(access, r).allowed(action, p.get("topic"))) {
            return d(error_response(Errc::forbidden, std::string(meta::action_name(action)) +
                                                         " not allowed on this topic"));
        }
        handler(std::move(r), p, std::move(d));
    };
}

namespace {

// The handler, behind a check of the caller against the `{topic}` of the path as this node sees it
// now; a topic this node does not know passes (the handler answers 404).
RouteHandler topic_guard(AccessContext access,
                         std::function<bool(const auth::Principal&, const meta::Topic&)> allowed,
                         std::string refusal, RouteHandler handler) {
    return
        [access, allowed = std::move(allowed), refusal = std::move(refusal),
         handler = std::move(handler)](net::HttpRequest r, const PathParams& p, net::Responder d) {
            meta::MetaSnapshot snapshot = access.store.snapshot();
            const meta::Topic* topic = find_topic(snapshot, p);
            if (topic != nullptr && !allowed(caller_of(access, r), *topic)) {
                return d(error_response(Errc::forbidden, refusal));
            }
            handler(std::move(r), p, std::move(d));
        };
}

}  // namespace

RouteHandler needs_read(AccessContext access, RouteHandler handler) {
    return topic_guard(
        access,
        [](const auth::Principal& caller, const meta::Topic& topic) {
            return caller.can_read(topic.name, topic.owner);
        },
        "no grant on this topic", std::move(handler));
}

RouteHandler needs_manage(AccessContext access, RouteHandler handler) {
    return topic_guard(
        access,
        [](const auth::Principal& caller, const meta::Topic& topic) {
            return caller.can_manage(topic.owner);
        },
        "only the topic owner or an admin may modify this topic", std::move(handler));
}

}  // namespace narad::api
