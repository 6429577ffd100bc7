#include "cli/context_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "cli/text.h"

namespace narad::cli {
namespace {

// A context file is a handful of entries; anything this large is not one.
constexpr size_t kMaxContextFileBytes = 16 * 1024 * 1024;

std::string parent_directory(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

Status errno_status(std::string_view what, const std::string& path) {
    return Status(Errc::io_error, std::string(what) + " " + path + ": " + std::strerror(errno));
}

// mkdir -p with mode 0700 for the directories it creates.
Status make_directories(const std::string& path) {
    if (path.empty() || path == "/" || path == ".") return Status::ok();
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode)) return Status::ok();
        return Status(Errc::io_error, "mkdir " + path + ": not a directory");
    }
    NARAD_RETURN_IF_ERROR(make_directories(parent_directory(path)));
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return errno_status("mkdir", path);
    return Status::ok();
}

Status write_all(int fd, std::string_view data, const std::string& path) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno_status("write", path);
        }
        data.remove_prefix(size_t(n));
    }
    return Status::ok();
}

std::string string_field(const nlohmann::json& object, const char* name) {
    auto it = object.find(name);
    if (it == object.end() || it->is_null()) return "";
    return it->get<std::string>();
}

}  // namespace

GetEnv process_env() {
    return [](std::string_view name) {
        const char* value = std::getenv(std::string(name).c_str());
        return value == nullptr ? std::string() : std::string(value);
    };
}

Result<std::string> context_file_path(const GetEnv& env) {
    if (std::string dir = env("NARAD_CONFIG_DIR"); !dir.empty()) return dir + "/contexts.json";
    std::string base = env("XDG_CONFIG_HOME");
    if (!base.empty()) {
        if (base.front() != '/') {
            return Status(Errc::invalid_argument,
                          "resolve config dir: path in $XDG_CONFIG_HOME is relative");
        }
    } else {
        const std::string home = env("HOME");
        if (home.empty()) {
            return Status(Errc::invalid_argument,
                          "resolve config dir: neither $XDG_CONFIG_HOME nor $HOME are defined");
        }
        base = home + "/.config";
    }
    return base + "/narad/contexts.json";
}

Result<ContextStore> load_context_store(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return ContextStore{};
        return errno_status("open", path);
    }
    std::string text;
    char buffer[16 * 1024];
    while (true) {
        const ssize_t n = ::read(fd, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            Status status = errno_status("read", path);
            ::close(fd);
            return status;
        }
        if (n == 0) break;
        text.append(buffer, size_t(n));
        if (text.size() > kMaxContextFileBytes) {
            ::close(fd);
            return Status(Errc::invalid_argument, "parse " + path + ": file too large");
        }
    }
    ::close(fd);
    ContextStore store;
    try {
        const nlohmann::json doc = nlohmann::json::parse(text);
        if (!doc.is_object()) {
            return Status(Errc::invalid_argument, "parse " + path + ": json: cannot unmarshal " +
                                                      std::string(doc.type_name()) +
                                                      " into Go value of type main.contextStore");
        }
        store.current = string_field(doc, "current");
        if (auto it = doc.find("contexts"); it != doc.end() && !it->is_null()) {
            for (const auto& [name, value] : it->items()) {
                CliContext context;
                if (!value.is_null()) {
                    context.server = string_field(value, "server");
                    context.user = string_field(value, "user");
                    context.password = string_field(value, "password");
                }
                store.contexts[name] = std::move(context);
            }
        }
    } catch (const nlohmann::json::exception& e) {
        return Status(Errc::invalid_argument, "parse " + path + ": " + e.what());
    }
    return store;
}

std::string serialize_context_store(const ContextStore& store) {
    std::string out = "{\n";
    if (!store.current.empty()) out += "  \"current\": " + json_string(store.current) + ",\n";
    out += "  \"contexts\": {";
    bool first = true;
    for (const auto& [name, context] : store.contexts) {
        out += first ? "\n" : ",\n";
        first = false;
        out += "    " + json_string(name) + ": {\n";
        out += "      \"server\": " + json_string(context.server);
        if (!context.user.empty()) out += ",\n      \"user\": " + json_string(context.user);
        if (!context.password.empty()) {
            out += ",\n      \"password\": " + json_string(context.password);
        }
        out += "\n    }";
    }
    out += first ? "}\n" : "\n  }\n";
    out += "}\n";
    return out;
}

Status save_context_store(const std::string& path, const ContextStore& store) {
    const std::string directory = parent_directory(path);
    NARAD_RETURN_IF_ERROR(make_directories(directory));
    const std::string temp = path + ".tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno_status("open", temp);
    // The temp file may predate us with looser bits; the credentials must never be readable.
    Status status = ::fchmod(fd, 0600) == 0 ? Status::ok() : errno_status("chmod", temp);
    if (status.is_ok()) status = write_all(fd, serialize_context_store(store), temp);
    if (status.is_ok() && ::fsync(fd) != 0) status = errno_status("sync", temp);
    ::close(fd);
    if (status.is_ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
        status = errno_status("rename", temp);
    }
    if (!status.is_ok()) ::unlink(temp.c_str());
    return status;
}

std::string format_context_list(const ContextStore& store) {
    if (store.contexts.empty()) return "no contexts (narad ctx add <name> --server URL)\n";
    std::string out;
    for (const auto& [name, context] : store.contexts) {
        out += (name == store.current ? "* " : "  ") + pad_right(name, 16) + " " +
               pad_right(context.server, 40) +
               " user=" + (context.user.empty() ? "-" : context.user) + "\n";
    }
    return out;
}

Result<CliContext> resolve_connection(const ConnectionFlags& flags, const GetEnv& env) {
    CliContext resolved{std::string(kDefaultServer), "", ""};
    const auto apply = [&resolved](const CliContext& context) {
        if (!context.server.empty()) resolved.server = context.server;
        resolved.user = context.user;
        resolved.password = context.password;
    };
    if (!flags.context.empty()) {
        for (const char* name : {"NARAD_ADDR", "NARAD_USER", "NARAD_PASS"}) {
            if (!env(name).empty()) {
                return Status(Errc::invalid_argument, std::string("--ctx ") +
                                                          go_quote(flags.context) +
                                                          " cannot be used while " + name +
                                                          " is set: unset it, or drop --ctx");
            }
        }
        NARAD_ASSIGN_OR_RETURN(std::string path, context_file_path(env));
        NARAD_ASSIGN_OR_RETURN(ContextStore store, load_context_store(path));
        auto it = store.contexts.find(flags.context);
        if (it == store.contexts.end()) {
            return Status(Errc::not_found,
                          "--ctx: no context " + go_quote(flags.context) + " (narad ctx ls)");
        }
        apply(it->second);
    } else {
        if (auto path = context_file_path(env); path.is_ok()) {
            if (auto store = load_context_store(*path); store.is_ok() && !store->current.empty()) {
                if (auto it = store->contexts.find(store->current); it != store->contexts.end()) {
                    apply(it->second);
                }
            }
        }
        if (std::string v = env("NARAD_ADDR"); !v.empty()) resolved.server = v;
        if (std::string v = env("NARAD_USER"); !v.empty()) resolved.user = v;
        if (std::string v = env("NARAD_PASS"); !v.empty()) resolved.password = v;
    }
    if (!flags.server.empty()) resolved.server = flags.server;
    if (!flags.user.empty()) resolved.user = flags.user;
    if (!flags.password.empty()) resolved.password = flags.password;
    return resolved;
}

}  // namespace narad::cli
