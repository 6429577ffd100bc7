#include "cli/command.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/test_support.h"

namespace narad::cli {
namespace {

using testing::FakeApi;

class ForwardingApi final : public Api {
  public:
    explicit ForwardingApi(FakeApi& target) : target_(target) {}
    Result<net::HttpResponse> call(std::string_view method, std::string_view target,
                                   std::string_view body, std::string_view content_type) override {
        return target_.call(method, target, body, content_type);
    }

  private:
    FakeApi& target_;
};

// Runs whole `narad` command lines against a fake server, a fake sleeper and a private config dir.
class Cli {
  public:
    Cli() : env_{captured_.output, {}, in_, sleeper_, {}, {}, {}} {
        vars_["NARAD_CONFIG_DIR"] = dir_.path();
        env_.env = [this](std::string_view name) {
            auto it = vars_.find(std::string(name));
            return it == vars_.end() ? std::string() : it->second;
        };
        env_.api_factory = [this](const CliContext& connection) -> Result<std::unique_ptr<Api>> {
            connections.push_back(connection);
            return std::unique_ptr<Api>(std::make_unique<ForwardingApi>(api));
        };
        env_.serve = [this](const std::vector<std::string>& args) {
            serve_args = args;
            return serve_exit;
        };
    }

    int run(std::vector<std::string> args, std::string stdin_text = "") {
        captured_.out.str("");
        captured_.err.str("");
        in_.clear();
        in_.str(stdin_text);
        env_.exit_code = 0;
        return run_cli(std::move(args), env_);
    }
    void set_env(const std::string& name, const std::string& value) { vars_[name] = value; }
    std::string out() const { return captured_.out.str(); }
    std::string err() const { return captured_.err.str(); }

    FakeApi api;
    std::vector<CliContext> connections;
    std::vector<std::string> serve_args;
    int serve_exit = 0;
    testing::FakeSleeper& sleeper() { return sleeper_; }

  private:
    testing::TempDir dir_;
    std::map<std::string, std::string> vars_;
    testing::CapturedOutput captured_;
    std::istringstream in_;
    testing::FakeSleeper sleeper_;
    CommandEnv env_;
};

// Rule: positional-argument mistakes fail with cobra's texts, "narad: " prefixed, exit 1.
TEST(Commands, ArgumentCountErrorsUseCobraTexts) {
    Cli cli;
    EXPECT_EQ(cli.run({"topic", "add"}), 1);
    EXPECT_EQ(cli.err(), "narad: accepts 1 arg(s), received 0\n");
    EXPECT_EQ(cli.run({"topic", "ls", "extra"}), 1);
    EXPECT_EQ(cli.err(), "narad: unknown command \"extra\" for \"narad topic ls\"\n");
    EXPECT_EQ(cli.run({"pub", "a", "b", "c"}), 1);
    EXPECT_EQ(cli.err(), "narad: accepts between 1 and 2 arg(s), received 3\n");
    EXPECT_EQ(cli.run({"bogus"}), 1);
    EXPECT_EQ(cli.err(), "narad: unknown command \"bogus\" for \"narad\"\n");
    EXPECT_TRUE(cli.api.calls.empty());
}

// Rule: bad flags fail with pflag's texts (unknown flag, invalid int, invalid duration).
TEST(Commands, FlagErrorsUsePflagTexts) {
    Cli cli;
    EXPECT_EQ(cli.run({"topic", "ls", "--nope"}), 1);
    EXPECT_EQ(cli.err(), "narad: unknown flag: --nope\n");
    EXPECT_EQ(cli.run({"pub", "t", "m", "--count", "x"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: invalid argument \"x\" for \"--count\" flag: strconv.ParseInt: parsing "
              "\"x\": invalid syntax\n");
    EXPECT_EQ(cli.run({"topic", "add", "t", "--retention", "7x"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: invalid argument \"7x\" for \"--retention\" flag: time: unknown unit \"x\" "
              "in duration \"7x\"\n");
    EXPECT_EQ(cli.run({"pub", "t", "--partition"}), 1);
    EXPECT_EQ(cli.err(), "narad: flag needs an argument: --partition\n");
    EXPECT_TRUE(cli.api.calls.empty());
}

// Rule: bare `narad` and a group without a verb print help and succeed.
TEST(Commands, BareCommandsPrintHelp) {
    Cli cli;
    EXPECT_EQ(cli.run({}), 0);
    EXPECT_NE(cli.out().find("topic"), std::string::npos);
    EXPECT_EQ(cli.run({"topic"}), 0);
    EXPECT_NE(cli.out().find("add"), std::string::npos);
    EXPECT_EQ(cli.run({"topics", "ls", "--help"}), 0);
    EXPECT_NE(cli.out().find("--json"), std::string::npos);
}

// Rule: `topic add` sends only values > 0, durations in ms (7d included), keys sorted, and
// prints the answer pretty.
TEST(Commands, TopicAddSendsMillisecondsAndPrintsPretty) {
    Cli cli;
    cli.api.answer(201, "{\"name\":\"t\",\"partitions\":6}\n");
    EXPECT_EQ(cli.run({"topic", "add", "t", "--partitions", "6", "--retention", "7d",
                       "--visibility", "30s", "--max-in-flight", "10", "--delay", "0s"}),
              0)
        << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].method, "POST");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics");
    EXPECT_EQ(cli.api.calls[0].content_type, "application/json");
    EXPECT_EQ(cli.api.calls[0].body,
              "{\"max_in_flight_per_partition\":10,\"name\":\"t\",\"partitions\":6,"
              "\"retention_ms\":604800000,\"visibility_timeout_ms\":30000}");
    EXPECT_EQ(cli.out(), "{\n  \"name\": \"t\",\n  \"partitions\": 6\n}\n\n");
}

// Rule: --delay needs --parent; with a parent it becomes fanout_delay_ms.
TEST(Commands, TopicAddDelayNeedsParent) {
    Cli cli;
    EXPECT_EQ(cli.run({"topic", "add", "c", "--delay", "30s"}), 1);
    EXPECT_EQ(cli.err(), "narad: --delay requires --parent (delay lives on fan-out children)\n");
    cli.api.answer(201, "{}");
    EXPECT_EQ(cli.run({"topic", "add", "c", "--parent", "p", "--delay", "1m"}), 0);
    EXPECT_EQ(cli.api.calls.back().body,
              "{\"fanout_delay_ms\":60000,\"name\":\"c\",\"parent\":\"p\"}");
}

// Rule: `topic attach <parent> <child>` POSTs {"child"} to the parent's children, with delay_ms
// only for a --delay above zero, and prints the parent the node answers, pretty.
TEST(Commands, TopicAttachPostsTheChildAndPrintsTheParent) {
    Cli cli;
    cli.api.answer(200, R"({"name":"orders","role":"parent","children":["audit"]})");
    EXPECT_EQ(cli.run({"topic", "attach", "orders", "audit", "--delay", "1m30s"}), 0) << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].method, "POST");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics/orders/children");
    EXPECT_EQ(cli.api.calls[0].content_type, "application/json");
    EXPECT_EQ(cli.api.calls[0].body, R"({"child":"audit","delay_ms":90000})");
    EXPECT_EQ(cli.out(),
              "{\n  \"name\": \"orders\",\n  \"role\": \"parent\",\n  \"children\": [\n"
              "    \"audit\"\n  ]\n}\n");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topics", "attach", "orders", "audit", "--delay", "0s"}), 0);
    EXPECT_EQ(cli.api.calls.back().body, R"({"child":"audit"})");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "attach", "a b", "audit"}), 0);
    EXPECT_EQ(cli.api.calls.back().target, "/v1/topics/a%20b/children");
    EXPECT_EQ(cli.api.calls.back().body, R"({"child":"audit"})");

    const size_t sent = cli.api.calls.size();
    EXPECT_EQ(cli.run({"topic", "attach", "orders"}), 1);
    EXPECT_EQ(cli.err(), "narad: accepts 2 arg(s), received 1\n");
    EXPECT_EQ(cli.run({"topic", "attach", "orders", "audit", "--delay", "soon"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: invalid argument \"soon\" for \"--delay\" flag: time: invalid duration "
              "\"soon\"\n");
    EXPECT_EQ(cli.api.calls.size(), sent);
    cli.api.answer(409, R"({"error":"\"audit\" is already a child of \"orders\""})");
    EXPECT_EQ(cli.run({"topic", "attach", "orders", "audit"}), 1);
    EXPECT_EQ(cli.err(), "narad: http 409: \"audit\" is already a child of \"orders\"\n");
}

// Rule: `topic detach <parent> <child>` DELETEs /v1/topics/{parent}/children/{child} (both
// escaped), prints nothing on 204 and fails with the node's error otherwise.
TEST(Commands, TopicDetachDeletesTheLinkSilently) {
    Cli cli;
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"topic", "detach", "orders", "audit"}), 0) << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].method, "DELETE");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics/orders/children/audit");
    EXPECT_EQ(cli.api.calls[0].body, "");
    EXPECT_EQ(cli.out(), "");
    EXPECT_EQ(cli.err(), "");
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"topic", "detach", "a b", "c d"}), 0);
    EXPECT_EQ(cli.api.calls.back().target, "/v1/topics/a%20b/children/c%20d");
    cli.api.answer(404, R"({"error":"\"x\" is not attached to \"orders\""})");
    EXPECT_EQ(cli.run({"topic", "detach", "orders", "x"}), 1);
    EXPECT_EQ(cli.err(), "narad: http 404: \"x\" is not attached to \"orders\"\n");
    EXPECT_EQ(cli.run({"topic", "detach", "orders", "x", "y"}), 1);
    EXPECT_EQ(cli.err(), "narad: accepts 2 arg(s), received 3\n");
}

// Rule: `topic children <parent>` GETs the parent's children and prints the answer as the node
// sent it, indented (Go's json.Indent: key order kept).
TEST(Commands, TopicChildrenPrintsTheListPretty) {
    Cli cli;
    cli.api.answer(200, R"({"parent":"orders","children":[{"name":"audit","delay_ms":0,)"
                        R"("lag_messages":12,"lag_complete":true}]})");
    EXPECT_EQ(cli.run({"topic", "children", "orders"}), 0) << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].method, "GET");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics/orders/children");
    EXPECT_EQ(cli.out(),
              "{\n"
              "  \"parent\": \"orders\",\n"
              "  \"children\": [\n"
              "    {\n"
              "      \"name\": \"audit\",\n"
              "      \"delay_ms\": 0,\n"
              "      \"lag_messages\": 12,\n"
              "      \"lag_complete\": true\n"
              "    }\n"
              "  ]\n"
              "}\n");
    EXPECT_EQ(cli.run({"topic", "children"}), 1);
    EXPECT_EQ(cli.err(), "narad: accepts 1 arg(s), received 0\n");
}

// Rule: --max-deliveries and --dead-letter (ours) go into the create and PATCH bodies as
// max_deliveries and dead_letter_topic exactly when given (a 0 or an empty name included), and
// never otherwise.
TEST(Commands, TopicDeadLetterFlagsAreSentOnlyWhenGiven) {
    Cli cli;
    cli.api.answer(201, "{}");
    EXPECT_EQ(cli.run({"topic", "add", "t"}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.back().body, R"({"name":"t"})");
    cli.api.answer(201, "{}");
    EXPECT_EQ(cli.run({"topic", "add", "t", "--max-deliveries", "5", "--dead-letter", "t-dead"}), 0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().body,
              R"({"dead_letter_topic":"t-dead","max_deliveries":5,"name":"t"})");
    cli.api.answer(201, "{}");
    EXPECT_EQ(cli.run({"topic", "add", "c", "--parent", "p", "--max-deliveries", "0"}), 0);
    EXPECT_EQ(cli.api.calls.back().body, R"({"max_deliveries":0,"name":"c","parent":"p"})");

    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--dead-letter", ""}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.back().method, "PATCH");
    EXPECT_EQ(cli.api.calls.back().target, "/v1/topics/t");
    EXPECT_EQ(cli.api.calls.back().body, R"({"dead_letter_topic":""})");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--max-deliveries", "3", "--retention", "2h"}), 0);
    EXPECT_EQ(cli.api.calls.back().body, R"({"max_deliveries":3,"retention_ms":7200000})");

    const size_t sent = cli.api.calls.size();
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--max-deliveries", "x"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: invalid argument \"x\" for \"--max-deliveries\" flag: strconv.ParseInt: "
              "parsing \"x\": invalid syntax\n");
    EXPECT_EQ(cli.api.calls.size(), sent);
}

// Rule: `topic edit` refuses an empty change and --visibility (never sent), and PATCHes the rest.
TEST(Commands, TopicEditRefusesVisibilityAndEmptyChange) {
    Cli cli;
    EXPECT_EQ(cli.run({"topic", "edit", "t"}), 1);
    EXPECT_EQ(cli.err(), "narad: nothing to change (see --help)\n");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--visibility", "30s", "--retention", "2h"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: visibility cannot be changed after create; the server does not accept "
              "visibility_timeout_ms in PATCH\n");
    EXPECT_TRUE(cli.api.calls.empty());
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--retention", "2h", "--partitions", "9",
                       "--max-in-flight", "5", "--max-acked-ahead", "7"}),
              0);
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].method, "PATCH");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics/t");
    EXPECT_EQ(cli.api.calls[0].body,
              "{\"max_acked_ahead_per_partition\":7,\"max_in_flight_per_partition\":5,"
              "\"partitions\":9,\"retention_ms\":7200000}");
}

// Rule: --schema takes the document inline, from @file or from stdin (-) and sends it verbatim
// (numbers and key order kept) as the body's `schema`; text that is not JSON is refused before
// any request; --schema-base-version needs --schema.
TEST(Commands, TopicSchemaFlags) {
    Cli cli;
    cli.api.answer(201, "{}");
    EXPECT_EQ(cli.run({"topic", "add", "t", "--schema",
                       R"({"type":"object","maximum":12345678901234567890123})"}),
              0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().body,
              R"({"name":"t","schema":{"type":"object","maximum":12345678901234567890123}})");
    std::string path = ::testing::TempDir() + "/schema.json";
    {
        std::ofstream file(path);
        file << "  {\"type\": \"string\"}\n";
    }
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--schema", "@" + path, "--schema-base-version", "2"}),
              0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().method, "PATCH");
    EXPECT_EQ(cli.api.calls.back().body,
              R"({"schema_base_version":2,"schema":{"type": "string"}})");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--schema", "-"}, "{\"type\":\"integer\"}"), 0);
    EXPECT_EQ(cli.api.calls.back().body, R"({"schema":{"type":"integer"}})");
    size_t sent = cli.api.calls.size();
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--schema", "{nope"}), 1);
    EXPECT_EQ(cli.err(), "narad: --schema is not valid JSON\n");
    EXPECT_EQ(cli.run({"topic", "edit", "t", "--schema-base-version", "1"}), 1);
    EXPECT_EQ(cli.err(), "narad: --schema-base-version requires --schema\n");
    EXPECT_EQ(cli.run({"topic", "add", "t", "--schema", "@/nonexistent/x.json"}), 1);
    EXPECT_EQ(cli.err(), "narad: --schema: cannot read /nonexistent/x.json\n");
    EXPECT_EQ(cli.api.calls.size(), sent);
}

// Rule: `topic schema` prints the history from GET /v1/topics/{t}/schema; --current prints only
// the newest document, and a topic without one is an error.
TEST(Commands, TopicSchemaPrintsTheHistory) {
    Cli cli;
    const std::string history =
        R"({"topic":"t","version":2,"versions":[{"version":1,"schema":{"type":"integer"}},)"
        R"({"version":2,"schema":{"type":"number"}}]})";
    cli.api.answer(200, history);
    EXPECT_EQ(cli.run({"topic", "schema", "t"}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.back().target, "/v1/topics/t/schema");
    EXPECT_NE(cli.out().find("\"version\": 2"), std::string::npos) << cli.out();
    cli.api.answer(200, history);
    EXPECT_EQ(cli.run({"topic", "schema", "t", "--current"}), 0);
    EXPECT_EQ(cli.out(), "{\n  \"type\": \"number\"\n}\n");
    cli.api.answer(200, R"({"topic":"t","version":0,"versions":[]})");
    EXPECT_EQ(cli.run({"topic", "schema", "t", "--current"}), 1);
    EXPECT_EQ(cli.err(), "narad: topic \"t\" has no schema\n");
}

// Rule: `topic ls` follows next_page_token until it is empty and prints one table.
TEST(Commands, TopicLsPagesThroughEverything) {
    Cli cli;
    cli.api.answer(
        200,
        R"({"next_page_token":"a b","topics":[{"name":"a b","partitions":3,"retention_ms":0}]})");
    cli.api.answer(
        200,
        R"({"next_page_token":"","topics":[{"name":"c","partitions":4,"retention_ms":3600000,"role":"parent"}]})");
    EXPECT_EQ(cli.run({"topic", "ls"}), 0) << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 2u);
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics?limit=1000");
    EXPECT_EQ(cli.api.calls[1].target, "/v1/topics?limit=1000&page_token=a+b");
    EXPECT_NE(cli.out().find("a b                                       3      forever  -\n"),
              std::string::npos)
        << cli.out();
    EXPECT_NE(cli.out().find("c                                         4       1h0m0s  parent\n"),
              std::string::npos);
    cli.api.answer(200, R"({"next_page_token":"","topics":[]})");
    EXPECT_EQ(cli.run({"topic", "ls", "--json"}), 0);
    EXPECT_EQ(cli.out(), "null\n");
}

// Rule: `topic rm` asks first; only y, Y or yes deletes; the answer "aborted" is an error.
TEST(Commands, TopicRmConfirms) {
    Cli cli;
    EXPECT_EQ(cli.run({"topic", "rm", "t"}, "no\n"), 1);
    EXPECT_EQ(cli.out(), "delete topic \"t\" and all its data? [y/N] ");
    EXPECT_EQ(cli.err(), "narad: aborted\n");
    EXPECT_TRUE(cli.api.calls.empty());
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"topic", "rm", "t"}, "yes\n"), 0);
    EXPECT_EQ(cli.api.calls.back().method, "DELETE");
    EXPECT_TRUE(cli.out().ends_with("deleted t\n"));
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"topic", "rm", "-f", "u"}), 0);
    EXPECT_EQ(cli.out(), "deleted u\n");
}

// Rule: HTTP failures surface as "narad: http <code>: <msg>".
TEST(Commands, HttpErrorsAreReported) {
    Cli cli;
    cli.api.answer(404, "{\"error\":\"topic not found\"}\n");
    EXPECT_EQ(cli.run({"topic", "info", "nope"}), 1);
    EXPECT_EQ(cli.err(), "narad: http 404: topic not found\n");
    cli.api.fail("transport: cannot connect to 127.0.0.1:7942: Connection refused");
    EXPECT_EQ(cli.run({"topic", "children", "p"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: transport: cannot connect to 127.0.0.1:7942: Connection refused\n");
}

// Rule: persistent -s/-u/-p flags work after the subcommand too.
TEST(Commands, GlobalFlagsAnywhere) {
    Cli cli;
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "info", "t", "-s", "http://x:1", "--user", "bob", "-p", "pw"}), 0);
    ASSERT_EQ(cli.connections.size(), 1u);
    EXPECT_EQ(cli.connections[0].server, "http://x:1");
    EXPECT_EQ(cli.connections[0].user, "bob");
    EXPECT_EQ(cli.connections[0].password, "pw");
}

// Rule: `pub` posts the body as octet-stream and reports its size on stderr.
TEST(Commands, PubSendsOneMessage) {
    Cli cli;
    cli.api.answer(202);
    EXPECT_EQ(cli.run({"pub", "t", "{\"hello\":1}", "-k", "user-1", "--partition", "2"}), 0)
        << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 1u);
    EXPECT_EQ(cli.api.calls[0].target, "/v1/topics/t/produce?key=user-1&partition=2");
    EXPECT_EQ(cli.api.calls[0].body, "{\"hello\":1}");
    EXPECT_EQ(cli.api.calls[0].content_type, "application/octet-stream");
    EXPECT_EQ(cli.err(), "accepted (11 bytes)\n");
    cli.api.answer(202);
    EXPECT_EQ(cli.run({"pub", "t"}, "from stdin"), 0);
    EXPECT_EQ(cli.api.calls.back().body, "from stdin");
}

// Rule: `pub --count N --rate R` paces through the sleeper and summarises; a failure names the
// message number.
TEST(Commands, PubCountAndRate) {
    Cli cli;
    for (int i = 0; i < 3; ++i) cli.api.answer(202);
    EXPECT_EQ(cli.run({"pub", "t", "m", "--count", "3", "--rate", "10"}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.size(), 3u);
    EXPECT_EQ(cli.sleeper().sleeps.size(), 3u);
    EXPECT_TRUE(cli.err().starts_with("accepted 3 messages in ")) << cli.err();
    EXPECT_TRUE(cli.err().ends_with(" msg/s)\n"));
    cli.api.answer(202);
    cli.api.answer(503, "{\"error\":\"busy\"}");
    EXPECT_EQ(cli.run({"pub", "t", "m", "--count", "5"}), 1);
    EXPECT_EQ(cli.err(), "narad: message 2/5: http 503: busy\n");
}

// Rule: `ctx` adds (first becomes current), selects, lists and removes (clearing current).
TEST(Commands, ContextLifecycle) {
    Cli cli;
    EXPECT_EQ(cli.run({"ctx", "add", "x"}), 1);
    EXPECT_EQ(cli.err(), "narad: --server is required\n");
    EXPECT_EQ(cli.run({"ctx", "ls"}), 0);
    EXPECT_EQ(cli.out(), "no contexts (narad ctx add <name> --server URL)\n");
    EXPECT_EQ(cli.run({"ctx", "add", "a", "--server", "http://a:1"}), 0);
    EXPECT_EQ(cli.out(), "context \"a\" saved (current: a)\n");
    EXPECT_EQ(cli.run({"ctx", "add", "b", "--server", "http://b:2", "--user", "bob"}), 0);
    EXPECT_EQ(cli.out(), "context \"b\" saved (current: a)\n");
    EXPECT_EQ(cli.run({"ctx", "select", "c"}), 1);
    EXPECT_EQ(cli.err(), "narad: no context \"c\" (narad ctx ls)\n");
    EXPECT_EQ(cli.run({"ctx", "select", "b"}), 0);
    EXPECT_EQ(cli.out(), "current context: b\n");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"topic", "info", "t"}), 0);
    EXPECT_EQ(cli.connections.back().server, "http://b:2");
    EXPECT_EQ(cli.connections.back().user, "bob");
    EXPECT_EQ(cli.run({"ctx", "rm", "b"}), 0);
    EXPECT_EQ(cli.out(), "");
    EXPECT_EQ(cli.run({"ctx", "rm", "b"}), 1);
    EXPECT_EQ(cli.err(), "narad: no context \"b\"\n");
    EXPECT_EQ(cli.run({"ctx", "ls"}), 0);
    EXPECT_EQ(cli.out(), "  a                http://a:1                               user=-\n");
}

// Rule: `user add` needs one of --user-password and --user-password-stdin and sends parsed
// grants; `user grant` PUTs them.
TEST(Commands, UserCommands) {
    Cli cli;
    EXPECT_EQ(cli.run({"user", "add", "u"}), 1);
    EXPECT_EQ(cli.err(), "narad: one of --user-password or --user-password-stdin is required\n");
    EXPECT_EQ(cli.run({"user", "add", "u", "--user-password", "a", "--user-password-stdin"}, "b\n"),
              1);
    EXPECT_EQ(cli.err(),
              "narad: --user-password and --user-password-stdin are mutually exclusive\n");
    EXPECT_TRUE(cli.api.calls.empty());
    cli.api.answer(201, "{\"username\":\"u\"}");
    EXPECT_EQ(cli.run({"user", "add", "u", "--user-password-stdin"}, "from stdin\r\n"), 0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().body, "{\"password\":\"from stdin\",\"username\":\"u\"}");
    EXPECT_EQ(cli.run({"--password-stdin", "user", "add", "u", "--user-password-stdin"}, "x\ny\n"),
              1);
    EXPECT_NE(cli.err().find("both read standard input"), std::string::npos) << cli.err();
    cli.api.answer(201, "{\"username\":\"u\"}");
    EXPECT_EQ(cli.run({"user", "add", "u", "--user-password", "pw", "--grant", "produce:a-*, b",
                       "--grant", "admin"}),
              0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().body,
              "{\"grants\":[{\"action\":\"produce\",\"patterns\":[\"a-*\",\"b\"]},{\"action\":"
              "\"admin\"}],\"password\":\"pw\",\"username\":\"u\"}");
    EXPECT_EQ(cli.run({"user", "grant", "u", "--grant", "read:x"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: unknown action \"read\" in grant \"read:x\" (want "
              "produce|consume|create|admin)\n");
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"user", "grant", "u"}), 0);
    EXPECT_EQ(cli.api.calls.back().method, "PUT");
    EXPECT_EQ(cli.api.calls.back().target, "/v1/users/u/grants");
    EXPECT_EQ(cli.api.calls.back().body, "{\"grants\":[]}");
}

// Rule: `user revoke` reads the user, takes what --grant names and PUTs the rest; naming nothing
// the user holds changes nothing.
TEST(Commands, UserRevoke) {
    Cli cli;
    EXPECT_EQ(cli.run({"user", "revoke", "u"}), 1);
    EXPECT_EQ(cli.err(), "narad: name what to revoke with --grant\n");
    const std::string held =
        R"({"username":"u","grants":[{"action":"produce","patterns":["a","b"]},)"
        R"({"action":"consume","patterns":["c"]}]})";
    cli.api.answer(200, held);
    cli.api.answer(200, "{}");
    EXPECT_EQ(cli.run({"user", "revoke", "u", "--grant", "produce:a", "--grant", "consume"}), 0)
        << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 2u);
    EXPECT_EQ(cli.api.calls[0].method, "GET");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/users/u");
    EXPECT_EQ(cli.api.calls[1].method, "PUT");
    EXPECT_EQ(cli.api.calls[1].body, R"({"grants":[{"action":"produce","patterns":["b"]}]})");
    cli.api.answer(200, held);
    EXPECT_EQ(cli.run({"user", "revoke", "u", "--grant", "create:a"}), 1);
    EXPECT_EQ(cli.err(), "narad: the user holds none of the grants named\n");
    EXPECT_EQ(cli.api.calls.size(), 3u) << "nothing was written";
}

// Rule: `user passwd` PUTs the new password (and the current one when given), from flags or
// stdin (current first, then new), and says so.
TEST(Commands, UserPasswd) {
    Cli cli;
    EXPECT_EQ(cli.run({"user", "passwd", "u"}), 1);
    EXPECT_EQ(cli.err(), "narad: one of --new-password or --new-password-stdin is required\n");
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"user", "passwd", "u", "--new-password", "n1"}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.back().method, "PUT");
    EXPECT_EQ(cli.api.calls.back().target, "/v1/users/u/password");
    EXPECT_EQ(cli.api.calls.back().body, R"({"new_password":"n1"})");
    EXPECT_EQ(cli.out(), "password of \"u\" changed\n");
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"user", "passwd", "u", "--current-password-stdin", "--new-password-stdin"},
                      "old\nnew\n"),
              0)
        << cli.err();
    EXPECT_EQ(cli.api.calls.back().body, R"({"current_password":"old","new_password":"new"})");
    cli.api.answer(403, R"({"error":"current password is incorrect"})");
    EXPECT_EQ(cli.run({"user", "passwd", "u", "--new-password", "x", "--current-password", "bad"}),
              1);
    EXPECT_NE(cli.err().find("current password is incorrect"), std::string::npos) << cli.err();
}

// Rule: `cluster decommission` POSTs, or DELETEs with --cancel, silently.
TEST(Commands, ClusterDecommission) {
    Cli cli;
    cli.api.answer(204);
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"cluster", "decommission", "n1"}), 0);
    EXPECT_EQ(cli.run({"cluster", "decommission", "n1", "--cancel"}), 0);
    EXPECT_EQ(cli.api.calls[0].method, "POST");
    EXPECT_EQ(cli.api.calls[0].target, "/v1/cluster/members/n1/decommission");
    EXPECT_EQ(cli.api.calls[1].method, "DELETE");
    EXPECT_EQ(cli.out(), "");
}

// Rule: our cluster additions are thin calls: moves --detail, moves abort, decommission --dry-run.
TEST(Commands, ClusterAdditions) {
    Cli cli;
    for (int i = 0; i < 4; ++i) cli.api.answer(200, "{\"ok\":true}");
    EXPECT_EQ(cli.run({"cluster", "moves", "--detail"}), 0);
    EXPECT_EQ(cli.run({"cluster", "moves", "abort", "orders", "3", "--target", "n2"}), 0)
        << cli.err();
    EXPECT_EQ(cli.run({"cluster", "decommission", "n1", "--dry-run"}), 0);
    EXPECT_EQ(cli.run({"cluster", "moves"}), 0);
    ASSERT_EQ(cli.api.calls.size(), 4u);
    EXPECT_EQ(cli.api.calls[0].target, "/v1/cluster/moves?detail=true");
    EXPECT_EQ(cli.api.calls[1].method, "POST");
    EXPECT_EQ(cli.api.calls[1].target, "/v1/cluster/moves/orders/3/abort?target=n2");
    EXPECT_EQ(cli.api.calls[2].target, "/v1/cluster/members/n1/decommission?dry_run=true");
    EXPECT_EQ(cli.api.calls[3].target, "/v1/cluster/moves");
    EXPECT_EQ(cli.out(), "{\n  \"ok\": true\n}\n");
}

// Rule: `cluster moves abort` refuses a partition that is not a number before any request.
TEST(Commands, ClusterMovesAbortNeedsAPartitionNumber) {
    Cli cli;
    EXPECT_EQ(cli.run({"cluster", "moves", "abort", "orders", "three"}), 1);
    EXPECT_EQ(cli.err(), "narad: partition must be a number, got \"three\"\n");
    EXPECT_TRUE(cli.api.calls.empty());
}

// Rule: `cluster moves --watch` polls with detail (even without --detail) every --interval and
// --until-done ends it with status 0; the watch flags alone and out-of-range intervals are
// refused before any request.
TEST(Commands, ClusterMovesWatch) {
    Cli cli;
    EXPECT_EQ(cli.run({"cluster", "moves", "--until-done"}), 1);
    EXPECT_EQ(cli.err(), "narad: --interval and --until-done need --watch\n");
    EXPECT_EQ(cli.run({"cluster", "moves", "--interval", "5s"}), 1);
    EXPECT_EQ(cli.run({"cluster", "moves", "--watch", "--interval", "10ms"}), 1);
    EXPECT_EQ(cli.err(), "narad: --interval must be between 100ms and 1h0m0s\n");
    EXPECT_EQ(cli.run({"cluster", "moves", "--watch", "--interval", "soon"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: invalid argument \"soon\" for \"--interval\" flag: time: invalid duration "
              "\"soon\"\n");
    EXPECT_TRUE(cli.api.calls.empty());

    cli.api.answer(200, "{\"moves\":[{\"topic\":\"orders\",\"partition\":3}]}");
    cli.api.answer(200, "{\"moves\":[]}");
    EXPECT_EQ(cli.run({"cluster", "moves", "--watch", "--until-done", "--interval", "2s"}), 0)
        << cli.err();
    ASSERT_EQ(cli.api.calls.size(), 2u);
    EXPECT_EQ(cli.api.calls[0].target, "/v1/cluster/moves?detail=true");
    EXPECT_EQ(cli.api.calls[1].target, "/v1/cluster/moves?detail=true");
    EXPECT_EQ(cli.sleeper().sleeps,
              (std::vector<std::chrono::nanoseconds>{std::chrono::seconds(2)}));
    EXPECT_NE(cli.out().find("  1 move in flight\nMOVE"), std::string::npos) << cli.out();
    EXPECT_TRUE(cli.out().ends_with("  no moves in flight\n\n")) << cli.out();
}

// Rule: `sub --from` without --peek is refused before any request.
TEST(Commands, SubFromNeedsPeek) {
    Cli cli;
    EXPECT_EQ(cli.run({"sub", "t", "--from", "3"}), 1);
    EXPECT_EQ(cli.err(), "narad: --from is a --peek flag (queue mode has no position)\n");
    EXPECT_EQ(cli.run({"replay", "t"}), 1);
    EXPECT_EQ(cli.err(), "narad: --partition is required (replay is a positional read)\n");
    EXPECT_TRUE(cli.api.calls.empty());
}

// Rule: `version` prints "narad <version>"; `server start` runs serve with the planned args and
// exits with its code.
TEST(Commands, VersionAndServerStart) {
    Cli cli;
    EXPECT_EQ(cli.run({"version"}), 0);
    EXPECT_EQ(cli.out(), "narad 3.1.0\n");
    cli.serve_exit = 3;
    EXPECT_EQ(cli.run({"server", "start", "--port", "9000", "--data-dir", "/d"}), 3);
    const std::vector<std::string> expected{"--data-dir", "/d", "--port", "9000"};
    EXPECT_EQ(cli.serve_args, expected);
    cli.serve_exit = 0;
    EXPECT_EQ(cli.run({"-s", "http://x:1", "serve", "--port", "1", "-help"}), 0);
    const std::vector<std::string> passed{"--port", "1", "-help"};
    EXPECT_EQ(cli.serve_args, passed);
}

// Rule: `server report` prints one row per topic from one list page plus a total.
TEST(Commands, ServerReport) {
    Cli cli;
    cli.api.answer(
        200,
        R"({"next_page_token":"x","topics":[{"name":"a","partitions":3},{"name":"b","partitions":3}]})");
    cli.api.answer(
        200,
        R"({"name":"a","partition_stats":[{"index":0,"high_watermark":4,"size_bytes":2048,"owner_node":"n1"}]})");
    cli.api.answer(421, "{\"error\":\"this node does not own the requested partition\"}");
    EXPECT_EQ(cli.run({"server", "report"}), 0) << cli.err();
    EXPECT_EQ(cli.api.calls.size(), 3u);
    EXPECT_NE(
        cli.out().find("a                                 3            4     2.0KiB       1  -\n"),
        std::string::npos)
        << cli.out();
    EXPECT_NE(cli.out().find("b                             (stats unavailable: http 421: this "
                             "node does not own the requested partition)\n"),
              std::string::npos);
    cli.api.answer(200, R"({"next_page_token":"","topics":[]})");
    EXPECT_EQ(cli.run({"server", "report"}), 0);
    EXPECT_EQ(cli.out(), "no topics\n");
}

// Runs `script` in `shell` with the generated completion in the file $NARAD_COMPLETION; returns
// what it printed.
std::string run_shell(const std::string& shell, const std::string& completion,
                      const std::string& script) {
    testing::TempDir dir;
    const std::string path = dir.path() + "/completion";
    std::ofstream(path) << completion;
    const std::string command = "NARAD_COMPLETION='" + path + "' " + shell + " -c '" + script + "'";
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[4096];
        size_t n;
        while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
        EXPECT_EQ(::pclose(pipe), 0) << command << "\n" << out;
    }
    return out;
}

// Rule: the completion scripts, loaded in real bash and fish, offer the subcommands of the path
// typed so far (flags before it skipped) and a command's flags; an unknown shell is refused.
TEST(Commands, CompletionScriptsCompleteInRealShells) {
    Cli cli;
    ASSERT_EQ(cli.run({"completion", "bash"}), 0);
    const std::string bash = cli.out();
    const std::string bash_topic =
        run_shell("bash", bash,
                  "source \"$NARAD_COMPLETION\"; COMP_WORDS=(narad -s x topic a); COMP_CWORD=4; "
                  "_narad; printf \"%s\\n\" \"${COMPREPLY[@]}\"");
    EXPECT_EQ(bash_topic, "add\nattach\n");
    const std::string bash_flags =
        run_shell("bash", bash,
                  "source \"$NARAD_COMPLETION\"; COMP_WORDS=(narad topic add t --ret); "
                  "COMP_CWORD=4; _narad; printf \"%s\\n\" \"${COMPREPLY[@]}\"");
    EXPECT_EQ(bash_flags, "--retention\n");

    ASSERT_EQ(cli.run({"completion", "fish"}), 0);
    const std::string fish = cli.out();
    EXPECT_EQ(
        run_shell("fish", fish, "source $NARAD_COMPLETION; complete -C \"narad -s x topic a\""),
        "add\nattach\n");
    EXPECT_EQ(run_shell("fish", fish,
                        "source $NARAD_COMPLETION; complete -C \"narad topic add t --ret\""),
              "--retention\n");
    const std::string top =
        run_shell("fish", fish, "source $NARAD_COMPLETION; complete -C \"narad \"");
    EXPECT_NE(top.find("cluster\n"), std::string::npos) << top;
    EXPECT_NE(top.find("topic\n"), std::string::npos) << top;

    ASSERT_EQ(cli.run({"completion", "zsh"}), 0);
    EXPECT_TRUE(cli.out().starts_with("autoload -U +X bashcompinit && bashcompinit\n"));
    EXPECT_EQ(cli.run({"completion", "tcsh"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: completion for \"tcsh\" is not available (supported: bash, zsh, fish)\n");
}

// Rule: --password-stdin takes the password from the first line of standard input (a trailing
// CR LF dropped), is refused together with -p and with an empty line, and the global flags may
// come anywhere.
TEST(Commands, PasswordStdinReadsTheFirstLine) {
    Cli cli;
    cli.api.answer(200, R"({"topics":[]})");
    EXPECT_EQ(cli.run({"--password-stdin", "-u", "alice", "topic", "ls"}, "s3 cret\r\nnext\n"), 0)
        << cli.err();
    ASSERT_EQ(cli.connections.size(), 1u);
    EXPECT_EQ(cli.connections[0].user, "alice");
    EXPECT_EQ(cli.connections[0].password, "s3 cret");

    EXPECT_EQ(cli.run({"topic", "ls", "--password-stdin", "-p", "x"}, "pw\n"), 1);
    EXPECT_EQ(cli.err(), "narad: --password and --password-stdin are mutually exclusive\n");
    EXPECT_EQ(cli.run({"topic", "ls", "--password-stdin"}, "\n"), 1);
    EXPECT_EQ(cli.err(), "narad: --password-stdin: no password on stdin\n");
    EXPECT_EQ(cli.connections.size(), 1u);
    EXPECT_EQ(cli.api.calls.size(), 1u);
}

// Rule: standard input has one reader per command: --password-stdin with a message, a schema or
// the delete prompt from stdin is refused before anything is sent.
TEST(Commands, PasswordStdinRefusesASecondStdinReader) {
    Cli cli;
    EXPECT_EQ(cli.run({"--password-stdin", "pub", "t"}, "pw\nbody\n"), 1);
    EXPECT_EQ(cli.err(),
              "narad: a message from standard input and --password-stdin both read standard "
              "input; give one of them another way\n");
    EXPECT_EQ(cli.run({"--password-stdin", "topic", "add", "t", "--schema", "-"}, "pw\n{}\n"), 1);
    EXPECT_NE(cli.err().find("--schema - and --password-stdin"), std::string::npos) << cli.err();
    EXPECT_EQ(cli.run({"--password-stdin", "topic", "rm", "t"}, "pw\ny\n"), 1);
    EXPECT_NE(cli.err().find("both read standard input"), std::string::npos) << cli.err();
    EXPECT_TRUE(cli.api.calls.empty());
    // -f needs no prompt, so the password may come from stdin.
    cli.api.answer(204);
    EXPECT_EQ(cli.run({"--password-stdin", "topic", "rm", "t", "-f"}, "pw\n"), 0) << cli.err();
    EXPECT_EQ(cli.connections.back().password, "pw");
}

// Rule: --ctx uses a named context for one command (not the selected one), and is refused while
// NARAD_ADDR/USER/PASS is set; `ctx add --password-stdin` stores the password from stdin.
TEST(Commands, CtxSelectsAContextForOneCommand) {
    Cli cli;
    ASSERT_EQ(cli.run({"ctx", "add", "prod", "--server", "http://127.0.0.1:1"}), 0);
    ASSERT_EQ(cli.run({"ctx", "add", "stage", "--server", "http://127.0.0.2:2", "--user", "bob",
                       "--password-stdin"},
                      "stage-pw\n"),
              0)
        << cli.err();
    cli.api.answer(200, R"({"topics":[]})");
    ASSERT_EQ(cli.run({"--ctx", "stage", "topic", "ls"}), 0) << cli.err();
    ASSERT_EQ(cli.connections.size(), 1u);
    EXPECT_EQ(cli.connections[0].server, "http://127.0.0.2:2");
    EXPECT_EQ(cli.connections[0].user, "bob");
    EXPECT_EQ(cli.connections[0].password, "stage-pw");
    cli.api.answer(200, R"({"topics":[]})");
    ASSERT_EQ(cli.run({"topic", "ls"}), 0);
    EXPECT_EQ(cli.connections[1].server, "http://127.0.0.1:1");  // prod stays selected

    cli.set_env("NARAD_ADDR", "http://elsewhere:3");
    EXPECT_EQ(cli.run({"topic", "ls", "--ctx=stage"}), 1);
    EXPECT_EQ(cli.err(),
              "narad: --ctx \"stage\" cannot be used while NARAD_ADDR is set: unset it, or drop "
              "--ctx\n");
    EXPECT_EQ(cli.connections.size(), 2u);
}

// Rule: credentials about to go over plain http:// to another machine draw a warning on stderr;
// the command still runs.
TEST(Commands, WarnsBeforePlaintextCredentialsToAnotherHost) {
    Cli cli;
    cli.api.answer(200, R"({"topics":[]})");
    ASSERT_EQ(
        cli.run({"-s", "http://broker.example:7942", "-u", "alice", "-p", "pw", "topic", "ls"}), 0);
    EXPECT_EQ(cli.err(),
              "warning: sending credentials for \"alice\" over plain http to broker.example; use "
              "an https:// server URL\n");
    cli.api.answer(200, R"({"topics":[]})");
    ASSERT_EQ(cli.run({"-s", "http://127.0.0.1:7942", "-u", "alice", "-p", "pw", "topic", "ls"}),
              0);
    EXPECT_EQ(cli.err(), "");
}

}  // namespace
}  // namespace narad::cli
