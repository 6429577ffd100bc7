// The public port's security (Narad's access model, docs/security.md): the gate that authenticates
// every request but the health routes before it is routed, and the per-route grant checks.
// - 401 with `WWW-Authenticate: Basic realm="narad"` for missing or wrong credentials, 429 for a
//   throttled user, 503 while the verifiers are saturated;
// - every /v1/cluster/ route is an admin's (checked in the gate, so no cluster route can miss it);
// - produce needs `produce` on the topic, consume and ack need `consume`, a topic's reads need any
//   grant on it or its ownership, its changes need ownership or admin.
// With security off (no Authenticator) every check passes. Thread-safe.
#pragma once

#include <string_view>

#include "api/router.h"
#include "auth/access.h"
#include "meta/meta_store.h"

namespace narad::auth {
class Authenticator;
}

namespace narad::api {

// Who a request is: its user's record in the metastore, authenticated by `authenticator` (null:
// security off, every check passes).
struct AccessContext {
    meta::MetaStore& store;
    auth::Authenticator* authenticator = nullptr;
};

// Whether /metrics on this port needs credentials.
enum class MetricsAuth { required, open };

Router::Gate make_auth_gate(AccessContext access, MetricsAuth metrics);
// The same decision as far as the head alone settles it, for Router::set_screen (before the body
// is read): 401 for missing, malformed or unknown credentials and for a wrong password seen
// lately, 429 for a throttled user, each answered with the body unread and the connection closed;
// credentials verified before set the head's `user` (the gate then lets the request through
// without another look). A password that must be hashed passes to the gate.
Router::Screen make_auth_screen(AccessContext access, MetricsAuth metrics);

// Who sent the request: its authenticated user (its record as this node sees it now), or anyone
// with security off. A user deleted since it authenticated keeps its name and loses its grants.
auth::Principal caller_of(const AccessContext& access, const net::HttpRequest& request);

// Who the audit log names for a request: its user, or with security off its client's address.
std::string actor_of(const net::HttpRequest& request);

// Handlers wrapped with a grant check on the `{topic}` of their path.
// `action` on the topic; else 403 "<action> not allowed on this topic".
RouteHandler needs_grant(AccessContext access, meta::Action action, RouteHandler handler);
// Any grant on it, ownership, or admin; else 403. A topic that does not exist passes (404 next).
RouteHandler needs_read(AccessContext access, RouteHandler handler);
// Ownership or admin; else 403. A topic that does not exist passes.
RouteHandler needs_manage(AccessContext access, RouteHandler handler);

}  // namespace narad::api
