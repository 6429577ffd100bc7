// The user routes (Narad's): create, list, read, delete, replace grants, change a password
// (user_routes.cc). Thread-safe once registered.
#pragma once

#include "api/access.h"
#include "api/audit_log.h"
#include "api/router.h"
#include "auth/password.h"
#include "base/clock.h"
#include "base/thread_pool.h"

namespace narad::api {

struct UserRouteContext {
    Clock& clock;
    meta::MetaStore& store;
    ThreadPool& blocking;  // password hashes and metastore writes
    // Who asks; its authenticator also checks the current password a user's own change gives.
    AccessContext access;
    AuditLog* audit = nullptr;  // null: changes are not recorded
    auth::HashCost password_hash_cost = auth::HashCost::interactive;
};

void register_user_routes(Router& router, UserRouteContext context);

}  // namespace narad::api
