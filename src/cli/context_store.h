// Named connection contexts (`narad ctx`): a JSON file mapping names to {server, user, password}
// plus the current selection, at $NARAD_CONFIG_DIR/contexts.json, else
// $XDG_CONFIG_HOME/narad/contexts.json, else ~/.config/narad/contexts.json. It may hold passwords,
// so it is written 0600 in a 0700 directory, atomically (temp file + rename). Also here: how the
// connection settings are resolved (flag > environment > current context > default).
// Values and free functions; the file is read and written by one process at a time.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace narad::cli {

inline constexpr std::string_view kDefaultServer = "http://127.0.0.1:7942";

struct CliContext {
    std::string server;
    std::string user;
    std::string password;
};

struct ContextStore {
    std::string current;
    std::map<std::string, CliContext> contexts;  // sorted by name, as `ctx ls` lists them
};

// Reads an environment variable; "" when unset. Injected so tests control the environment.
using GetEnv = std::function<std::string(std::string_view name)>;
GetEnv process_env();

// The path of the context file under the environment's rules (Go's os.UserConfigDir included:
// a relative $XDG_CONFIG_HOME is an error).
Result<std::string> context_file_path(const GetEnv& env);

// A missing file is an empty store. Unparsable JSON fails with `parse <path>: <why>`.
Result<ContextStore> load_context_store(const std::string& path);

// The file's bytes exactly as Go's json.MarshalIndent writes them (two-space indent, `current`,
// `user` and `password` omitted when empty), with a trailing newline.
std::string serialize_context_store(const ContextStore& store);

// Creates the directory (0700) if needed and replaces the file (0600).
Status save_context_store(const std::string& path, const ContextStore& store);

// `ctx ls`: one line per context sorted by name, "* " marking the current one (Go's
// "%s%-16s %-40s user=%s"), or the hint line when there are none.
std::string format_context_list(const ContextStore& store);

struct ConnectionFlags {
    std::string server;
    std::string user;
    std::string password;
    std::string context;          // --ctx: this context for this command only
    bool password_stdin = false;  // --password-stdin (read by CommandEnv, not here)
};

// Flag > NARAD_ADDR/NARAD_USER/NARAD_PASS (when non-empty) > the current context (its server only
// when non-empty; its user and password as they are) > http://127.0.0.1:7942. An unreadable
// context file is ignored here, as in Go. With `flags.context` the named context replaces the
// current one and the environment is not read: the three variables being set is an error (a
// command meant for one cluster must not reach another), as are an unknown context and an
// unreadable file.
Result<CliContext> resolve_connection(const ConnectionFlags& flags, const GetEnv& env);

}  // namespace narad::cli
