#include "node/root_admin.h"

#include "auth/access.h"
#include "base/log.h"

namespace narad::node {

namespace {

constexpr std::string_view kPending = "admin-password.pending";
constexpr std::string_view kFinal = "admin-password";

// Writes `password` and a newline to a new file readable by its owner only, synced with its
// directory.
Status write_secret_file(io::FileSystem& fs, const std::string& directory, const std::string& path,
                         const std::string& password) {
    NARAD_ASSIGN_OR_RETURN(
        std::unique_ptr<io::File> file,
        fs.open(path, io::OpenOptions{
                          .write = true, .create = true, .exclusive = true, .owner_only = true}));
    Status written = file->write_at(0, password + "\n");
    if (written.is_ok()) written = file->sync();
    file.reset();
    if (!written.is_ok()) {
        (void)fs.remove(path);
        return written;
    }
    return fs.sync_directory(directory);
}

Status create_root(meta::MetaStore& store, Clock& clock, const std::string& hash, bool& created) {
    int64_t now = clock.wall_ms();
    auto stored = store.change_user(
        meta::kRootUser,
        [&](const std::optional<meta::User>& existing) -> Result<std::optional<meta::User>> {
            created = !existing;
            if (existing) return existing;  // unchanged: another node seeded it
            meta::User root;
            root.name = std::string(meta::kRootUser);
            root.password_hash = hash;
            root.root = true;
            root.created_at_ms = now;
            root.updated_at_ms = now;
            return std::optional<meta::User>(std::move(root));
        });
    return stored.status();
}

}  // namespace

Status seed_root_admin(meta::MetaStore& store, io::FileSystem& fs, Clock& clock,
                       const RootAdminOptions& options) {
    meta::MetaSnapshot snapshot = store.snapshot();
    if (!snapshot->users.empty()) {
        const meta::User* root = snapshot->find_user(meta::kRootUser);
        if (!options.password.empty() && root != nullptr &&
            !auth::verify_password(root->password_hash, options.password)) {
            NARAD_LOG_WARN(
                "NARAD_ADMIN_PASSWORD is set but ignored: the cluster already has users and it "
                "only seeds the root admin of a new cluster; change root's password with PUT "
                "/v1/users/admin/password signed in as admin");
        }
        return Status::ok();
    }
    bool generated = options.password.empty();
    std::string password = generated ? auth::generate_password() : options.password;
    if (Status valid = auth::validate_password(password); !valid.is_ok()) {
        return Status(Errc::invalid_argument, "NARAD_ADMIN_PASSWORD: " + valid.message());
    }
    NARAD_ASSIGN_OR_RETURN(std::string hash, auth::hash_password(password, options.cost));
    std::string pending = io::join_path(options.data_dir, std::string(kPending));
    if (generated) {
        (void)fs.remove(pending);  // one left by an attempt that failed before it created root
        Status written = write_secret_file(fs, options.data_dir, pending, password);
        if (!written.is_ok()) {
            NARAD_LOG_ERROR(
                "not seeding the root admin yet: its generated password could not be written to "
                "the data directory, and it is never logged; make the data directory writable "
                "or set NARAD_ADMIN_PASSWORD ({})",
                written.to_string());
            return written;
        }
    }
    bool created = false;
    Status seeded = create_root(store, clock, hash, created);
    if (!seeded.is_ok()) return seeded;  // the pending file stays for the next attempt
    if (!generated) {
        if (created) NARAD_LOG_INFO("seeded root admin component=audit username=admin");
        return Status::ok();
    }
    if (!created) {
        (void)fs.remove(pending);
        NARAD_LOG_INFO(
            "removed a pending generated password that is not the root admin's (another node "
            "seeded root)");
        return Status::ok();
    }
    std::string final_path = io::join_path(options.data_dir, std::string(kFinal));
    if (fs.stat(final_path).is_ok()) {
        final_path += "." + std::to_string(clock.wall_now().time_since_epoch().count());
    }
    Status renamed = fs.rename(pending, final_path);
    if (renamed.is_ok()) renamed = fs.sync_directory(options.data_dir);
    if (!renamed.is_ok()) {
        NARAD_LOG_ERROR(
            "seeded root admin with a generated password, but could not rename its pending "
            "file; it is not logged: read it from {} on this node, sign in, change it, then "
            "delete the file",
            pending);
        return Status::ok();
    }
    NARAD_LOG_WARN(
        "seeded root admin with a generated password; it is not logged: read it from {} on this "
        "node, sign in, change it, then delete the file component=audit username=admin node={}",
        final_path, options.node_id);
    return Status::ok();
}

}  // namespace narad::node
