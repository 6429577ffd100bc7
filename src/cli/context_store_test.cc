#include "cli/context_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <map>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using testing::TempDir;

GetEnv env_of(std::map<std::string, std::string> values) {
    return [values](std::string_view name) {
        auto it = values.find(std::string(name));
        return it == values.end() ? std::string() : it->second;
    };
}

mode_t mode_of(const std::string& path) {
    struct stat info {};
    EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
    return info.st_mode & 0777;
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

// Rule: the file lives in $NARAD_CONFIG_DIR, else $XDG_CONFIG_HOME/narad, else ~/.config/narad.
TEST(ContextFilePath, FollowsEnvironmentPrecedence) {
    EXPECT_EQ(*context_file_path(env_of({{"NARAD_CONFIG_DIR", "/c"}, {"XDG_CONFIG_HOME", "/x"}})),
              "/c/contexts.json");
    EXPECT_EQ(*context_file_path(env_of({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}})),
              "/x/narad/contexts.json");
    EXPECT_EQ(*context_file_path(env_of({{"HOME", "/h"}})), "/h/.config/narad/contexts.json");
    EXPECT_EQ(context_file_path(env_of({{"XDG_CONFIG_HOME", "rel"}})).status().message(),
              "resolve config dir: path in $XDG_CONFIG_HOME is relative");
    EXPECT_FALSE(context_file_path(env_of({})).is_ok());
}

// Rule: a saved store is written 0600 in a directory created 0700, in MarshalIndent's layout.
TEST(ContextStoreFile, SavesPrivatelyInGoLayout) {
    TempDir dir;
    const std::string path = dir.path() + "/cfg/narad/contexts.json";
    ContextStore store;
    store.current = "prod";
    store.contexts["prod"] = {"http://p:7942", "admin", "s3<cr>t&"};
    store.contexts["local"] = {"http://127.0.0.1:7942", "", ""};
    ASSERT_TRUE(save_context_store(path, store).is_ok());
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(mode_of(dir.path() + "/cfg/narad"), 0700u);
    EXPECT_EQ(mode_of(dir.path() + "/cfg"), 0700u);
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text,
              "{\n"
              "  \"current\": \"prod\",\n"
              "  \"contexts\": {\n"
              "    \"local\": {\n"
              "      \"server\": \"http://127.0.0.1:7942\"\n"
              "    },\n"
              "    \"prod\": {\n"
              "      \"server\": \"http://p:7942\",\n"
              "      \"user\": \"admin\",\n"
              "      \"password\": \"s3\\u003ccr\\u003et\\u0026\"\n"
              "    }\n"
              "  }\n"
              "}\n");
    auto loaded = load_context_store(path);
    ASSERT_TRUE(loaded.is_ok());
    EXPECT_EQ(loaded->current, "prod");
    EXPECT_EQ(loaded->contexts.at("prod").password, "s3<cr>t&");
    EXPECT_EQ(loaded->contexts.at("local").user, "");
}

// Rule: an existing file with loose permissions is replaced by a 0600 one.
TEST(ContextStoreFile, TightensLoosePermissionsOnSave) {
    TempDir dir;
    const std::string path = dir.path() + "/contexts.json";
    write_file(path, "{}");
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
    ASSERT_TRUE(save_context_store(path, ContextStore{}).is_ok());
    EXPECT_EQ(mode_of(path), 0600u);
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "{\n  \"contexts\": {}\n}\n");
}

// Rule: a missing file is an empty store; an unparsable one fails with "parse <path>: ...".
TEST(ContextStoreFile, MissingIsEmptyGarbageIsParseError) {
    TempDir dir;
    auto missing = load_context_store(dir.path() + "/none.json");
    ASSERT_TRUE(missing.is_ok());
    EXPECT_TRUE(missing->contexts.empty());
    const std::string path = dir.path() + "/contexts.json";
    write_file(path, "{not json");
    auto broken = load_context_store(path);
    ASSERT_FALSE(broken.is_ok());
    EXPECT_TRUE(broken.status().message().starts_with("parse " + path + ": "))
        << broken.status().message();
    write_file(path, "[]");
    EXPECT_FALSE(load_context_store(path).is_ok());
    write_file(path, "{\"contexts\":null}");
    EXPECT_TRUE(load_context_store(path)->contexts.empty());
}

// Rule: `ctx ls` marks the current context and pads as "%s%-16s %-40s user=%s".
TEST(ContextList, FormatsLikeGo) {
    EXPECT_EQ(format_context_list(ContextStore{}),
              "no contexts (narad ctx add <name> --server URL)\n");
    ContextStore store;
    store.current = "b";
    store.contexts["a"] = {"http://a:1", "", ""};
    store.contexts["b"] = {"http://b:2", "bob", "pw"};
    EXPECT_EQ(format_context_list(store),
              "  a                http://a:1                               user=-\n"
              "* b                http://b:2                               user=bob\n");
}

// Rule: each connection field is flag > environment (non-empty) > current context > default.
TEST(ResolveConnection, AppliesPrecedencePerField) {
    TempDir dir;
    ContextStore store;
    store.current = "ctx";
    store.contexts["ctx"] = {"http://ctx:1", "ctx-user", "ctx-pass"};
    ASSERT_TRUE(save_context_store(dir.path() + "/contexts.json", store).is_ok());

    const CliContext from_context =
        resolve_connection({}, env_of({{"NARAD_CONFIG_DIR", dir.path()}})).value();
    EXPECT_EQ(from_context.server, "http://ctx:1");
    EXPECT_EQ(from_context.user, "ctx-user");
    EXPECT_EQ(from_context.password, "ctx-pass");

    const CliContext from_env = resolve_connection({}, env_of({{"NARAD_CONFIG_DIR", dir.path()},
                                                               {"NARAD_ADDR", "http://env:2"},
                                                               {"NARAD_USER", ""},
                                                               {"NARAD_PASS", "env-pass"}}))
                                    .value();
    EXPECT_EQ(from_env.server, "http://env:2");
    EXPECT_EQ(from_env.user, "ctx-user");  // an empty variable does not override
    EXPECT_EQ(from_env.password, "env-pass");

    const CliContext from_flags =
        resolve_connection(
            {"http://flag:3", "flag-user", ""},
            env_of({{"NARAD_CONFIG_DIR", dir.path()}, {"NARAD_ADDR", "http://env:2"}}))
            .value();
    EXPECT_EQ(from_flags.server, "http://flag:3");
    EXPECT_EQ(from_flags.user, "flag-user");
    EXPECT_EQ(from_flags.password, "ctx-pass");

    const CliContext defaults =
        resolve_connection({}, env_of({{"NARAD_CONFIG_DIR", dir.path() + "/x"}})).value();
    EXPECT_EQ(defaults.server, "http://127.0.0.1:7942");
    EXPECT_EQ(defaults.user, "");
}

// Rule: a current context with an empty server keeps the default server but its credentials.
TEST(ResolveConnection, EmptyContextServerKeepsDefault) {
    TempDir dir;
    ContextStore store;
    store.current = "c";
    store.contexts["c"] = {"", "u", "p"};
    ASSERT_TRUE(save_context_store(dir.path() + "/contexts.json", store).is_ok());
    const CliContext resolved =
        resolve_connection({}, env_of({{"NARAD_CONFIG_DIR", dir.path()}})).value();
    EXPECT_EQ(resolved.server, "http://127.0.0.1:7942");
    EXPECT_EQ(resolved.user, "u");
}

// Rule: --ctx uses the named context instead of the current one, flags still win, and the
// environment is not read: a set NARAD_ADDR, NARAD_USER or NARAD_PASS refuses the command, as do
// an unknown name and an unreadable file.
TEST(ResolveConnection, CtxNamesTheContextAndRefusesTheEnvironment) {
    TempDir dir;
    ContextStore store;
    store.current = "prod";
    store.contexts["prod"] = {"http://prod:1", "p-user", "p-pass"};
    store.contexts["stage"] = {"http://stage:2", "s-user", "s-pass"};
    ASSERT_TRUE(save_context_store(dir.path() + "/contexts.json", store).is_ok());
    const auto config = std::pair<std::string, std::string>{"NARAD_CONFIG_DIR", dir.path()};

    ConnectionFlags flags;
    flags.context = "stage";
    auto stage = resolve_connection(flags, env_of({config}));
    ASSERT_TRUE(stage.is_ok()) << stage.status().to_string();
    EXPECT_EQ(stage->server, "http://stage:2");
    EXPECT_EQ(stage->user, "s-user");
    EXPECT_EQ(stage->password, "s-pass");

    flags.user = "flag-user";
    EXPECT_EQ(resolve_connection(flags, env_of({config}))->user, "flag-user");

    for (const char* name : {"NARAD_ADDR", "NARAD_USER", "NARAD_PASS"}) {
        auto refused = resolve_connection(flags, env_of({config, {name, "x"}}));
        ASSERT_FALSE(refused.is_ok()) << name;
        EXPECT_NE(refused.status().message().find(name), std::string::npos)
            << refused.status().message();
    }
    flags.context = "nope";
    auto unknown = resolve_connection(flags, env_of({config}));
    ASSERT_FALSE(unknown.is_ok());
    EXPECT_EQ(unknown.status().message(), "--ctx: no context \"nope\" (narad ctx ls)");

    write_file(dir.path() + "/contexts.json", "{not json");
    flags.context = "stage";
    EXPECT_FALSE(resolve_connection(flags, env_of({config})).is_ok());
}

}  // namespace
}  // namespace narad::cli
