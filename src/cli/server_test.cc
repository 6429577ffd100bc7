#include "cli/server.h"

#include <gtest/gtest.h>

#include <map>

namespace narad::cli {
namespace {

GetEnv env_of(std::map<std::string, std::string> values) {
    return [values](std::string_view name) {
        auto it = values.find(std::string(name));
        return it == values.end() ? std::string() : it->second;
    };
}

// Rule: without --dev, start passes --data-dir if given and --port only when not 7942.
TEST(ServerStart, PlainModePassesThrough) {
    auto plain = plan_server_start(ServerMode::configured, 7942, "", env_of({}));
    ASSERT_TRUE(plain.is_ok());
    EXPECT_TRUE(plain->args.empty());
    EXPECT_TRUE(plain->set_env.empty());
    EXPECT_FALSE(plain->banner);
    auto custom = plan_server_start(ServerMode::configured, 8000, "/d", env_of({}));
    const std::vector<std::string> expected{"--data-dir", "/d", "--port", "8000"};
    EXPECT_EQ(custom->args, expected);
}

// Rule: --dev turns auth off, pins the cluster address to loopback port+1 unless already set,
// binds the API to loopback, keeps data in ~/.narad/data, logs text, and puts the local etcd
// member on port+2 (client) and port+3 (peer).
TEST(ServerStart, DevModePlansPlayground) {
    auto dev = plan_server_start(ServerMode::dev, 7942, "", env_of({{"HOME", "/home/me"}}));
    ASSERT_TRUE(dev.is_ok());
    const std::vector<std::pair<std::string, std::string>> env{
        {"NARAD_SECURITY_ENABLED", "false"}, {"NARAD_CLUSTER_ADDR", "127.0.0.1:7943"}};
    EXPECT_EQ(dev->set_env, env);
    const std::vector<std::string> args{
        "--addr", "127.0.0.1:7942",     "--data-dir", "/home/me/.narad/data", "--log-format",
        "text",   "--etcd-client-port", "7944",       "--etcd-peer-port",     "7945"};
    EXPECT_EQ(dev->args, args);
    EXPECT_TRUE(dev->banner);

    auto pinned = plan_server_start(ServerMode::dev, 9000, "/data",
                                    env_of({{"NARAD_CLUSTER_ADDR", "10.0.0.1:1"}}));
    ASSERT_TRUE(pinned.is_ok());
    ASSERT_EQ(pinned->set_env.size(), 1u);
    EXPECT_EQ(pinned->args[1], "127.0.0.1:9000");
    EXPECT_EQ(pinned->args[3], "/data");
    EXPECT_FALSE(plan_server_start(ServerMode::dev, 7942, "", env_of({})).is_ok());
}

// Rule: the dev banner is Go's, line for line, with "narad" bold on a terminal.
TEST(ServerStart, DevBannerMatchesGo) {
    EXPECT_EQ(
        dev_banner(7942, Style(Color::off)),
        "\n"
        "  narad  dev mode: auth OFF, bound to loopback only\n"
        "\n"
        "  Try it from another terminal:\n"
        "\n"
        "    narad topic add demo\n"
        "    narad sub demo --peek        # terminal B: watch messages flow\n"
        "    narad pub demo '{\"hello\":\"narad\"}' --count 100 --rate 20\n"
        "\n"
        "  Or plain curl:\n"
        "\n"
        "    curl -X POST 'http://127.0.0.1:7942/v1/topics' -H 'Content-Type: application/json' -d "
        "'{\"name\":\"demo\"}'\n"
        "\n");
    EXPECT_TRUE(dev_banner(1, Style(Color::on)).starts_with("\n  \x1b[1mnarad\x1b[0m  dev mode"));
}

}  // namespace
}  // namespace narad::cli
