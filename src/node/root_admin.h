// Seeds the root user `admin` of a secured cluster that has no users yet, as Narad 3.1 does:
// its password is NARAD_ADMIN_PASSWORD, or one generated here that is never logged. A generated
// password is written (mode 0600, synced) to <data>/admin-password.pending before the user is
// created, then renamed to admin-password (or admin-password.<ns> when that name is taken), so
// the password of a root user that exists is always on disk somewhere an operator can read it.
// A node that loses the race to another node's seed removes its pending file. Every node tries
// until the root user exists; the metastore's compare-and-swap lets exactly one create it.
#pragma once

#include <string>

#include "auth/password.h"
#include "base/clock.h"
#include "base/status.h"
#include "io/file_system.h"
#include "meta/meta_store.h"

namespace narad::node {

struct RootAdminOptions {
    std::string data_dir;
    std::string password;  // NARAD_ADMIN_PASSWORD; empty: generate one
    std::string node_id;
    auth::HashCost cost = auth::HashCost::interactive;
};

// One attempt: ok once the cluster has its root user (made now or before), else why not yet.
Status seed_root_admin(meta::MetaStore& store, io::FileSystem& fs, Clock& clock,
                       const RootAdminOptions& options);

}  // namespace narad::node
