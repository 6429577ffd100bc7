// `narad topic add|ls|info|edit|schema|rm|attach|detach|children` (alias `topics`): topic lifecycle
// with human units. Durations are sent as milliseconds and only when > 0, as in the Go CLI; the
// dead-letter flags (ours) are sent whenever they are given.
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>

#include "base/duration.h"
#include "cli/calls.h"
#include "cli/command.h"
#include "cli/output.h"
#include "cli/text.h"
#include "cli/topic_format.h"

namespace narad::cli {
namespace {

struct TopicFlags {
    std::vector<std::string> args;
    int64_t partitions = 0;
    int64_t retention_ns = 0;
    int64_t visibility_ns = 0;
    std::string parent;
    int64_t delay_ns = 0;
    int64_t max_in_flight = 0;
    int64_t max_acked_ahead = 0;
    int64_t max_deliveries = 0;  // sent only when given (cmd->count)
    std::string dead_letter;     // sent only when given, even empty
    bool json = false;
    bool force = false;
    std::string schema;  // inline JSON, @file, or - for standard input
    int64_t schema_base_version = 0;
    bool current = false;
};

// The --schema document: inline, from a file (@path) or from standard input (-); checked to be
// JSON here so a typo fails before any request.
Result<std::string> read_schema_flag(const std::string& value, std::istream& in) {
    std::string text;
    if (value == "-") {
        text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } else if (value.starts_with("@")) {
        std::ifstream file(value.substr(1), std::ios::binary);
        if (!file) {
            return Status(Errc::invalid_argument, "--schema: cannot read " + value.substr(1));
        }
        text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
    } else {
        text = value;
    }
    size_t start = text.find_first_not_of(" \t\r\n");
    size_t end = text.find_last_not_of(" \t\r\n");
    text = start == std::string::npos ? "" : text.substr(start, end - start + 1);
    if (!nlohmann::json::accept(text)) {
        return Status(Errc::invalid_argument, "--schema is not valid JSON");
    }
    return text;
}

// --max-deliveries and --dead-letter (ours; Narad has no such flags): declared on `add` and `edit`.
void add_dead_letter_flags(CommandTree& tree, CLI::App* cmd, TopicFlags& f) {
    tree.add_int(cmd, "max-deliveries", &f.max_deliveries,
                 "deliveries of a message before it goes to the dead-letter topic");
    cmd->add_option("--dead-letter", f.dead_letter,
                    "topic that receives messages delivered --max-deliveries times");
}

// Adds the dead-letter fields to `body`, each only when its flag is on the command line, so the
// node keeps its own value (or default) for the other.
void put_dead_letter_fields(const CLI::App& cmd, const TopicFlags& f, nlohmann::json& body) {
    if (cmd.count("--max-deliveries") > 0) body["max_deliveries"] = f.max_deliveries;
    if (cmd.count("--dead-letter") > 0) body["dead_letter_topic"] = f.dead_letter;
}

// Sends `body`, with the --schema document (if given) added verbatim, and prints the answer.
Status send_with_schema(CommandEnv& env, std::string_view method, const std::string& target,
                        const nlohmann::json& body, const std::string& schema_flag) {
    std::optional<std::string> schema;
    if (!schema_flag.empty()) {
        if (schema_flag == "-") NARAD_RETURN_IF_ERROR(env.claim_stdin("--schema -"));
        NARAD_ASSIGN_OR_RETURN(schema, read_schema_flag(schema_flag, env.in));
    }
    NARAD_ASSIGN_OR_RETURN(auto api, env.api());
    if (!schema) return send_and_print(*api, env.output.out, method, target, body);
    return send_text_and_print(*api, env.output.out, method, target,
                               with_raw_member(body, "schema", *schema));
}

void add_topic_add(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd =
        tree.add(topic, "add", "create a topic (or a fan-out/delay child with --parent)");
    tree.add_int(cmd, "partitions", &f->partitions, "partition count (0 = server default)");
    tree.add_duration(cmd, "retention", &f->retention_ns,
                      "retention window, e.g. 12h or 7d (0 = server default)");
    tree.add_duration(cmd, "visibility", &f->visibility_ns,
                      "visibility timeout, e.g. 30s (0 = server default)");
    cmd->add_option("--parent", f->parent,
                    "create as a fan-out child of this topic (replica pattern)");
    tree.add_duration(cmd, "delay", &f->delay_ns,
                      "delivery delay for a delayed child (requires --parent)");
    tree.add_int(cmd, "max-in-flight", &f->max_in_flight, "per-partition in-flight cap");
    tree.add_int(cmd, "max-acked-ahead", &f->max_acked_ahead, "per-partition out-of-order ack cap");
    cmd->add_option("--schema", f->schema,
                    "JSON Schema every payload must match: inline, @file, or - (stdin)");
    add_dead_letter_flags(tree, cmd, *f);
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, cmd, &env]() -> Status {
        nlohmann::json body = {{"name", f->args[0]}};
        if (f->partitions > 0) body["partitions"] = f->partitions;
        if (f->retention_ns > 0) body["retention_ms"] = f->retention_ns / kNanosPerMilli;
        if (f->visibility_ns > 0) body["visibility_timeout_ms"] = f->visibility_ns / kNanosPerMilli;
        if (f->max_in_flight > 0) body["max_in_flight_per_partition"] = f->max_in_flight;
        if (f->max_acked_ahead > 0) body["max_acked_ahead_per_partition"] = f->max_acked_ahead;
        put_dead_letter_fields(*cmd, *f, body);
        if (!f->parent.empty()) {
            body["parent"] = f->parent;
            if (f->delay_ns > 0) body["fanout_delay_ms"] = f->delay_ns / kNanosPerMilli;
        } else if (f->delay_ns > 0) {
            return Status(Errc::invalid_argument,
                          "--delay requires --parent (delay lives on fan-out children)");
        }
        return send_with_schema(env, "POST", "/v1/topics", body, f->schema);
    });
}

// Every topic, following next_page_token until it is empty.
Result<std::vector<TopicItem>> list_all_topics(Api& api) {
    std::vector<TopicItem> all;
    std::string token;
    // A limit on pages, not on topics: a server that repeats a token must not loop us forever.
    for (int page_count = 0; page_count < 1'000'000; ++page_count) {
        std::string target = "/v1/topics?limit=1000";
        if (!token.empty()) target += "&page_token=" + query_escape(token);
        NARAD_ASSIGN_OR_RETURN(net::HttpResponse response, send(api, "GET", target));
        auto page = parse_topic_page(response.body);
        if (!page.is_ok()) {
            return Status(Errc::invalid_argument,
                          "parse topics response: " + page.status().message());
        }
        for (TopicItem& item : page->topics) all.push_back(std::move(item));
        if (page->next_page_token.empty() || page->next_page_token == token) break;
        token = page->next_page_token;
    }
    return all;
}

void add_topic_ls(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd = tree.add(topic, "ls", "list topics");
    cmd->add_flag("--json", f->json, "raw JSON output");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::none(), [f, &env]() -> Status {
        NARAD_ASSIGN_OR_RETURN(auto api, env.api());
        NARAD_ASSIGN_OR_RETURN(std::vector<TopicItem> all, list_all_topics(*api));
        env.output.out << (f->json ? format_topics_json(all)
                                   : format_topic_table(all, env.output.style));
        return Status::ok();
    });
}

void add_topic_info(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd = tree.add(topic, "info", "topic config + per-partition stats");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
        NARAD_ASSIGN_OR_RETURN(auto api, env.api());
        return send_and_print(*api, env.output.out, "GET", topic_path(f->args[0]));
    });
}

void add_topic_edit(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd = tree.add(
        topic, "edit", "alter retention, partition count, the per-partition caps or the schema");
    tree.add_duration(cmd, "retention", &f->retention_ns, "new retention window, e.g. 7d");
    tree.add_duration(cmd, "visibility", &f->visibility_ns,
                      "not changeable after create (refused; kept for compatibility)");
    tree.add_int(cmd, "partitions", &f->partitions, "new partition count (grow only)");
    tree.add_int(cmd, "max-in-flight", &f->max_in_flight, "new per-partition in-flight cap");
    tree.add_int(cmd, "max-acked-ahead", &f->max_acked_ahead,
                 "new per-partition out-of-order ack cap");
    cmd->add_option("--schema", f->schema,
                    "a new schema version (a widening of the current one): inline, @file, or -");
    tree.add_int(cmd, "schema-base-version", &f->schema_base_version,
                 "apply --schema only while this is the current version (0 = any)");
    add_dead_letter_flags(tree, cmd, *f);
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, cmd, &env]() -> Status {
        // Deliberate deviation from Go, which sent the field and got a 400 back.
        if (cmd->count("--visibility") > 0) {
            return Status(Errc::invalid_argument,
                          "visibility cannot be changed after create; the server does not accept "
                          "visibility_timeout_ms in PATCH");
        }
        nlohmann::json body = nlohmann::json::object();
        if (f->retention_ns > 0) body["retention_ms"] = f->retention_ns / kNanosPerMilli;
        if (f->partitions > 0) body["partitions"] = f->partitions;
        if (f->max_in_flight > 0) body["max_in_flight_per_partition"] = f->max_in_flight;
        if (f->max_acked_ahead > 0) body["max_acked_ahead_per_partition"] = f->max_acked_ahead;
        put_dead_letter_fields(*cmd, *f, body);
        if (f->schema_base_version > 0) {
            if (f->schema.empty()) {
                return Status(Errc::invalid_argument, "--schema-base-version requires --schema");
            }
            body["schema_base_version"] = f->schema_base_version;
        }
        if (body.empty() && f->schema.empty()) {
            return Status(Errc::invalid_argument, "nothing to change (see --help)");
        }
        return send_with_schema(env, "PATCH", topic_path(f->args[0]), body, f->schema);
    });
}

void add_topic_schema(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd = tree.add(topic, "schema", "print a topic's schema history, oldest first");
    cmd->add_flag("--current", f->current, "print only the current schema document");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
        NARAD_ASSIGN_OR_RETURN(auto api, env.api());
        const std::string& name = f->args[0];
        NARAD_ASSIGN_OR_RETURN(net::HttpResponse response,
                               send(*api, "GET", topic_path(name) + "/schema"));
        if (!f->current) {
            print_response_body(env.output.out, response.body);
            return Status::ok();
        }
        auto history = nlohmann::json::parse(response.body, nullptr, false);
        if (!history.is_object() || !history.contains("versions") ||
            !history["versions"].is_array()) {
            return Status(Errc::invalid_argument, "parse schema response: not a schema history");
        }
        if (history["versions"].empty()) {
            return Status(Errc::not_found, "topic " + go_quote(name) + " has no schema");
        }
        print_response_body(env.output.out, dump_json(history["versions"].back()["schema"]));
        return Status::ok();
    });
}

// Reads the first word of one line, as fmt.Scanln(&answer) does.
std::string read_answer(std::istream& in) {
    std::string line;
    std::getline(in, line);
    const size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string::npos) return "";
    const size_t end = line.find_first_of(" \t\r", start);
    return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

void add_topic_rm(CommandTree& tree, CLI::App* topic) {
    auto f = std::make_shared<TopicFlags>();
    CLI::App* cmd = tree.add(topic, "rm", "delete a topic and ALL its data");
    cmd->add_flag("-f,--force", f->force, "skip confirmation");
    CommandEnv& env = tree.env();
    tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
        const std::string& name = f->args[0];
        if (!f->force) {
            NARAD_RETURN_IF_ERROR(env.claim_stdin("the confirmation prompt (use -f)"));
            env.output.out << "delete topic " << go_quote(name) << " and all its data? [y/N] "
                           << std::flush;
            const std::string answer = read_answer(env.in);
            if (answer != "y" && answer != "Y" && answer != "yes") {
                return Status(Errc::invalid_argument, "aborted");
            }
        }
        NARAD_ASSIGN_OR_RETURN(auto api, env.api());
        NARAD_RETURN_IF_ERROR(send_silent(*api, "DELETE", topic_path(name)));
        env.output.out << "deleted " << name << "\n";
        return Status::ok();
    });
}

void add_topic_children_commands(CommandTree& tree, CLI::App* topic) {
    CommandEnv& env = tree.env();
    {
        auto f = std::make_shared<TopicFlags>();
        CLI::App* cmd =
            tree.add(topic, "attach", "attach an existing topic as a fan-out (or delayed) child");
        tree.add_duration(cmd, "delay", &f->delay_ns, "delivery delay, e.g. 30s");
        tree.set_action(cmd, f, ArgRule::exact(2), [f, &env]() -> Status {
            nlohmann::json body = {{"child", f->args[1]}};
            if (f->delay_ns > 0) body["delay_ms"] = f->delay_ns / kNanosPerMilli;
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "POST",
                                  topic_path(f->args[0]) + "/children", body);
        });
    }
    {
        auto f = std::make_shared<TopicFlags>();
        CLI::App* cmd =
            tree.add(topic, "detach", "detach a child (the child topic and its data remain)");
        tree.set_action(cmd, f, ArgRule::exact(2), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_silent(*api, "DELETE",
                               topic_path(f->args[0]) + "/children/" + path_escape(f->args[1]));
        });
    }
    {
        auto f = std::make_shared<TopicFlags>();
        CLI::App* cmd = tree.add(topic, "children", "list a parent's children with fan-out lag");
        tree.set_action(cmd, f, ArgRule::exact(1), [f, &env]() -> Status {
            NARAD_ASSIGN_OR_RETURN(auto api, env.api());
            return send_and_print(*api, env.output.out, "GET",
                                  topic_path(f->args[0]) + "/children");
        });
    }
}

}  // namespace

void register_topic_commands(CommandTree& tree) {
    CLI::App* topic = tree.add(nullptr, "topic", "create, inspect, and manage topics");
    topic->alias("topics");
    add_topic_add(tree, topic);
    add_topic_ls(tree, topic);
    add_topic_info(tree, topic);
    add_topic_edit(tree, topic);
    add_topic_schema(tree, topic);
    add_topic_rm(tree, topic);
    add_topic_children_commands(tree, topic);
}

}  // namespace narad::cli
