// The user routes (Narad's): create, list, read, delete, replace grants, change a password. Every
// route is an admin's but a user's change of its own password. Writes are compare-and-swap on the
// user's record in the metastore; hashing and writes run on the blocking pool. Each change is
// audited once its request is valid (user.create, user.delete, user.grants, user.password).
#include "api/user_routes.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "api/request_json.h"
#include "api/respond.h"
#include "auth/authenticator.h"
#include "auth/password.h"

namespace narad::api {
namespace {

using nlohmann::json;
using ordered = nlohmann::ordered_json;

// Narad's User object, its fields in Go's order: the password hash never leaves the node.
ordered user_json(const meta::User& user) {
    ordered body = {{"username", user.name}};
    if (!user.grants.empty()) {
        ordered grants = ordered::array();
        for (const meta::Grant& grant : user.grants) {
            ordered one = {{"action", std::string(meta::action_name(grant.action))}};
            if (!grant.patterns.empty()) one["patterns"] = grant.patterns;
            grants.push_back(std::move(one));
        }
        body["grants"] = std::move(grants);
    }
    if (user.root) body["root"] = true;
    if (user.created_at_ms != 0) body["created_at_ms"] = user.created_at_ms;
    if (user.updated_at_ms != 0) body["updated_at_ms"] = user.updated_at_ms;
    return body;
}

net::HttpResponse user_response(int status, const meta::User& user) {
    return json_response(status, user_json(user).dump() + "\n");
}

// Narad's audit outcomes, from the status the client got.
std::string outcome_of(int status) {
    if (status < 400) return "ok";
    if (status == 403) return "denied";
    if (status < 500) return "rejected";
    return "failed";
}

// Runs `work` on the blocking pool and records its answer as `event` on `target`.
void audited(const UserRouteContext* c, net::Responder respond, std::string event,
             std::string actor, std::string target, std::function<net::HttpResponse()> work) {
    answer_on_pool(c->blocking, std::move(respond),
                   [c, event = std::move(event), actor = std::move(actor),
                    target = std::move(target), work = std::move(work)] {
                       net::HttpResponse response = work();
                       if (c->audit != nullptr) {
                           std::string detail;
                           if (response.status >= 400) {
                               auto body = json::parse(response.body, nullptr, false);
                               if (body.is_object()) detail = body.value("error", "");
                           }
                           c->audit->record({event, actor, target, outcome_of(response.status),
                                             detail, response.status});
                       }
                       return response;
                   });
}

net::HttpResponse admin_required() {
    return error_response(Errc::forbidden, "admin privileges required");
}

net::HttpResponse user_store_error(const Status& status, std::string_view operation) {
    if (status.code() == Errc::not_implemented) {
        return error_response(Errc::unavailable, "users need the cluster metastore");
    }
    return domain_error_response(status, operation);
}

net::HttpResponse user_not_found() { return error_response(Errc::not_found, "user not found"); }

// A `{user}` that could not name a user is not looked up (nor put in a metastore key).
bool known_name(const std::string& name) { return auth::validate_username(name).is_ok(); }

void create_user(const UserRouteContext* c, net::HttpRequest r, const PathParams&,
                 net::Responder d) {
    auth::Principal caller = caller_of(c->access, r);
    if (!caller.admin()) return d(admin_required());
    auto request = decode_create_user(r.body);
    if (!request.is_ok()) return d(error_response(request.status()));
    for (const Status& check :
         {auth::validate_username(request->username), auth::validate_password(request->password),
          auth::validate_grants(request->grants)}) {
        if (!check.is_ok()) return d(error_response(check));
    }
    std::string target = request->username;
    audited(c, std::move(d), "user.create", actor_of(r), target,
            [c, caller, request = std::move(*request)]() mutable {
                if (!caller.can_delegate(request.grants)) {
                    return error_response(Errc::forbidden,
                                          "cannot grant permissions you do not hold");
                }
                auto hash = auth::hash_password(request.password, c->password_hash_cost);
                if (!hash.is_ok()) return error_response(Errc::internal, "hash password");
                int64_t now = c->clock.wall_ms();
                auto stored = c->store.change_user(
                    request.username,
                    [&](const std::optional<meta::User>& existing)
                        -> Result<std::optional<meta::User>> {
                        if (existing) {
                            return Status(Errc::already_exists, "user already exists");
                        }
                        meta::User user;
                        user.name = request.username;
                        user.password_hash = *hash;
                        user.grants = request.grants;
                        user.created_at_ms = now;
                        user.updated_at_ms = now;
                        user.created_by = caller.name();
                        return std::optional<meta::User>(std::move(user));
                    });
                if (!stored.is_ok()) return user_store_error(stored.status(), "create user");
                return user_response(201, **stored);
            });
}

void list_users(const UserRouteContext* c, net::HttpRequest r, const PathParams&,
                net::Responder d) {
    if (!caller_of(c->access, r).admin()) return d(admin_required());
    ordered users = ordered::array();
    for (const auto& [name, user] : c->store.snapshot()->users) users.push_back(user_json(user));
    d(json_response(200, users.dump() + "\n"));
}

void get_user(const UserRouteContext* c, net::HttpRequest r, const PathParams& p,
              net::Responder d) {
    if (!caller_of(c->access, r).admin()) return d(admin_required());
    meta::MetaSnapshot snapshot = c->store.snapshot();
    const meta::User* user = snapshot->find_user(p.get("user"));
    if (user == nullptr) return d(user_not_found());
    d(user_response(200, *user));
}

void delete_user(const UserRouteContext* c, net::HttpRequest r, const PathParams& p,
                 net::Responder d) {
    auth::Principal caller = caller_of(c->access, r);
    if (!caller.admin()) return d(admin_required());
    std::string name = p.get("user");
    if (!known_name(name)) return d(user_not_found());
    audited(c, std::move(d), "user.delete", actor_of(r), name, [c, caller, name] {
        auto removed = c->store.change_user(
            name,
            [&](const std::optional<meta::User>& existing) -> Result<std::optional<meta::User>> {
                if (!existing) return Status(Errc::not_found, "user not found");
                if (existing->root) {
                    return Status(Errc::forbidden, "the root admin cannot be deleted");
                }
                if (existing->name == caller.name()) {
                    return Status(Errc::forbidden, "cannot delete your own account");
                }
                return std::optional<meta::User>();
            });
        if (!removed.is_ok()) return user_store_error(removed.status(), "delete user");
        return empty_response(204);
    });
}

void update_grants(const UserRouteContext* c, net::HttpRequest r, const PathParams& p,
                   net::Responder d) {
    auth::Principal caller = caller_of(c->access, r);
    if (!caller.admin()) return d(admin_required());
    auto grants = decode_grants_update(r.body);
    if (!grants.is_ok()) return d(error_response(grants.status()));
    if (Status valid = auth::validate_grants(*grants); !valid.is_ok()) {
        return d(error_response(valid));
    }
    std::string name = p.get("user");
    if (!known_name(name)) return d(user_not_found());
    audited(c, std::move(d), "user.grants", actor_of(r), name,
            [c, caller, name, grants = std::move(*grants)] {
                if (!caller.security_off() && name == caller.name()) {
                    return error_response(Errc::forbidden, "cannot modify your own grants");
                }
                if (!caller.can_delegate(grants)) {
                    return error_response(Errc::forbidden,
                                          "cannot grant permissions you do not hold");
                }
                int64_t now = c->clock.wall_ms();
                auto stored = c->store.change_user(
                    name,
                    [&](const std::optional<meta::User>& existing)
                        -> Result<std::optional<meta::User>> {
                        if (!existing) return Status(Errc::not_found, "user not found");
                        if (existing->root) {
                            return Status(Errc::forbidden, "the root admin's grants are immutable");
                        }
                        meta::User user = *existing;
                        user.grants = grants;
                        user.updated_at_ms = now;
                        return std::optional<meta::User>(std::move(user));
                    });
                if (!stored.is_ok()) return user_store_error(stored.status(), "update grants");
                return user_response(200, **stored);
            });
}

void change_password(const UserRouteContext* c, net::HttpRequest r, const PathParams& p,
                     net::Responder d) {
    auth::Principal caller = caller_of(c->access, r);
    std::string name = p.get("user");
    bool self = !caller.security_off() && name == caller.name();
    if (!self && !caller.admin()) return d(error_response(Errc::forbidden, "admin required"));
    auto request = decode_password_change(r.body);
    if (!request.is_ok()) return d(error_response(request.status()));
    if (request->new_password.empty()) {
        return d(error_response(Errc::invalid_argument, "new_password required"));
    }
    if (Status valid = auth::validate_password(request->new_password); !valid.is_ok()) {
        return d(error_response(valid));
    }
    if (!known_name(name)) return d(user_not_found());
    auto change = [c, caller, name, new_password = request->new_password] {
        meta::MetaSnapshot snapshot = c->store.snapshot();
        const meta::User* target = snapshot->find_user(name);
        if (target == nullptr) return user_not_found();
        if (target->root && !caller.root()) {
            return error_response(Errc::forbidden,
                                  "only the root admin may change the root password");
        }
        auto hash = auth::hash_password(new_password, c->password_hash_cost);
        if (!hash.is_ok()) return error_response(Errc::internal, "hash password");
        int64_t now = c->clock.wall_ms();
        auto stored = c->store.change_user(
            name,
            [&](const std::optional<meta::User>& existing) -> Result<std::optional<meta::User>> {
                if (!existing) return Status(Errc::not_found, "user not found");
                meta::User user = *existing;  // grants as they are now, not as read
                user.password_hash = *hash;
                user.updated_at_ms = now;
                return std::optional<meta::User>(std::move(user));
            });
        if (!stored.is_ok()) return user_store_error(stored.status(), "change password");
        return empty_response(204);
    };
    std::string actor = actor_of(r);
    if (!self || caller.admin()) {
        return audited(c, std::move(d), "user.password", actor, name, std::move(change));
    }
    // A user proves the password it replaces, through the sign-in throttle; an admin resets
    // without it.
    if (!request->current_password) {
        return audited(c, std::move(d), "user.password", actor, name, [] {
            return error_response(Errc::forbidden, "current password is incorrect");
        });
    }
    c->access.authenticator->check(
        name, *request->current_password,
        [c, d = std::move(d), actor, name, change](auth::AuthResult proof) mutable {
            audited(c, std::move(d), "user.password", actor, name, [proof, change] {
                switch (proof.outcome) {
                    case auth::AuthOutcome::ok:
                        return change();
                    case auth::AuthOutcome::throttled:
                        return error_response(Errc::too_many_requests,
                                              "too many failed authentication attempts");
                    case auth::AuthOutcome::unavailable:
                        return error_response(Errc::unavailable, "authentication unavailable");
                    case auth::AuthOutcome::unauthorized:
                        break;
                }
                return error_response(Errc::forbidden, "current password is incorrect");
            });
        });
}

}  // namespace

void register_user_routes(Router& router, UserRouteContext context) {
    auto c = std::make_shared<const UserRouteContext>(std::move(context));
    router.add("POST", "/v1/users", bind_route(c, create_user));
    router.add("GET", "/v1/users", bind_route(c, list_users));
    router.add("GET", "/v1/users/{user}", bind_route(c, get_user));
    router.add("DELETE", "/v1/users/{user}", bind_route(c, delete_user));
    router.add("PUT", "/v1/users/{user}/grants", bind_route(c, update_grants));
    router.add("PUT", "/v1/users/{user}/password", bind_route(c, change_password));
}

}  // namespace narad::api
