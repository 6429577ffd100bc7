#include "meta/codec.h"

#include <nlohmann/json.hpp>

#include "base/checksum.h"

namespace narad::meta {
namespace {

using nlohmann::json;

constexpr int kStateVersion = 1;

json topic_to_json(const Topic& topic) {
    json j = {
        {"name", topic.name},
        {"incarnation", topic.incarnation.value()},
        {"partitions", topic.partitions},
        {"retention_ms", topic.retention_ms},
        {"visibility_timeout_ms", topic.visibility_timeout_ms},
        {"max_in_flight_per_partition", topic.max_in_flight_per_partition},
        {"max_acked_ahead_per_partition", topic.max_acked_ahead_per_partition},
        {"created_at", topic.created_at},
        {"owner", topic.owner},
        {"role", std::string(role_name(topic.role))},
        {"children", topic.children},
        {"parent", topic.parent},
        {"attach_epoch", topic.attach_epoch},
        {"fanout_delay_ms", topic.fanout_delay_ms},
        {"schema_versions", topic.schema_versions},
    };
    if (topic.max_deliveries != 0) {
        j["max_deliveries"] = topic.max_deliveries;
        j["dead_letter_topic"] = topic.dead_letter_topic;
    }
    return j;
}

Result<TopicRole> parse_role(const std::string& role) {
    if (role == "standalone" || role.empty()) return TopicRole::standalone;
    if (role == "parent") return TopicRole::parent;
    if (role == "child") return TopicRole::child;
    return Status(Errc::corrupt, "unknown topic role '" + role + "'");
}

Result<Topic> topic_from_json(const json& j) {
    Topic topic;
    try {
        topic.name = j.at("name").get<std::string>();
        topic.incarnation = IncarnationId(j.at("incarnation").get<std::string>());
        topic.partitions = j.at("partitions").get<uint32_t>();
        topic.retention_ms = j.at("retention_ms").get<int64_t>();
        topic.visibility_timeout_ms = j.at("visibility_timeout_ms").get<int64_t>();
        topic.max_in_flight_per_partition = j.at("max_in_flight_per_partition").get<int64_t>();
        topic.max_acked_ahead_per_partition = j.at("max_acked_ahead_per_partition").get<int64_t>();
        topic.created_at = j.at("created_at").get<int64_t>();
        topic.owner = j.value("owner", "");
        NARAD_ASSIGN_OR_RETURN(topic.role, parse_role(j.value("role", "")));
        topic.children = j.value("children", std::vector<std::string>{});
        topic.parent = j.value("parent", "");
        topic.attach_epoch = j.value("attach_epoch", "");
        topic.fanout_delay_ms = j.value("fanout_delay_ms", int64_t{0});
        topic.max_deliveries = j.value("max_deliveries", int64_t{0});
        topic.dead_letter_topic = j.value("dead_letter_topic", "");
        // Records written before histories were kept hold the current schema only: version 1.
        topic.schema_versions = j.value("schema_versions", std::vector<std::string>{});
        if (topic.schema_versions.empty()) {
            std::string schema = j.value("schema", "");
            if (!schema.empty()) topic.schema_versions.push_back(std::move(schema));
        }
    } catch (const json::exception& e) {
        return Status(Errc::corrupt, std::string("bad topic record: ") + e.what());
    }
    return topic;
}

}  // namespace

std::string encode_topic(const Topic& topic) { return topic_to_json(topic).dump(); }

Result<Topic> decode_topic(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object())
        return Status(Errc::corrupt, "topic record is not JSON");
    return topic_from_json(j);
}

std::string encode_assignment(const Assignment& assignment) {
    return json{{"owner", assignment.owner.value()}, {"target", assignment.target.value()}}.dump();
}

Result<Assignment> decode_assignment(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status(Errc::corrupt, "assignment record is not a JSON object");
    try {
        return Assignment{NodeId(j.at("owner").get<std::string>()), NodeId(j.value("target", ""))};
    } catch (const json::exception& e) {
        return Status(Errc::corrupt, std::string("bad assignment record: ") + e.what());
    }
}

std::string encode_member(const MemberInfo& member) {
    return json{{"id", member.id.value()},
                {"api_addr", member.api_addr},
                {"cluster_addr", member.cluster_addr},
                {"etcd_role", std::string(etcd_role_name(member.etcd_role))},
                {"etcd_member_id", std::to_string(member.etcd_member_id)},
                {"draining", member.draining},
                {"joined_at", member.joined_at}}
        .dump();
}

Result<MemberInfo> decode_member(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status(Errc::corrupt, "member record is not a JSON object");
    MemberInfo member;
    try {
        member.id = NodeId(j.at("id").get<std::string>());
        member.api_addr = j.value("api_addr", "");
        member.cluster_addr = j.value("cluster_addr", "");
        std::string role = j.value("etcd_role", "none");
        member.etcd_role = role == "voter"     ? EtcdRole::voter
                           : role == "learner" ? EtcdRole::learner
                                               : EtcdRole::none;
        member.etcd_member_id = std::stoull(j.value("etcd_member_id", "0"));
        member.draining = j.value("draining", false);
        member.joined_at = j.value("joined_at", int64_t{0});
    } catch (const std::exception& e) {
        return Status(Errc::corrupt, std::string("bad member record: ") + e.what());
    }
    return member;
}

std::string encode_user(const User& user) {
    json grants = json::array();
    for (const Grant& grant : user.grants) {
        grants.push_back(
            {{"action", std::string(action_name(grant.action))}, {"patterns", grant.patterns}});
    }
    return json{{"name", user.name},
                {"password_hash", user.password_hash},
                {"grants", std::move(grants)},
                {"root", user.root},
                {"created_at_ms", user.created_at_ms},
                {"updated_at_ms", user.updated_at_ms},
                {"created_by", user.created_by}}
        .dump();
}

Result<User> decode_user(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status(Errc::corrupt, "user record is not a JSON object");
    User user;
    try {
        user.name = j.at("name").get<std::string>();
        user.password_hash = j.at("password_hash").get<std::string>();
        for (const json& grant : j.value("grants", json::array())) {
            auto action = parse_action(grant.at("action").get<std::string>());
            if (!action) return Status(Errc::corrupt, "user record has an unknown grant action");
            user.grants.push_back(
                Grant{*action, grant.value("patterns", std::vector<std::string>{})});
        }
        user.root = j.value("root", false);
        user.created_at_ms = j.value("created_at_ms", int64_t{0});
        user.updated_at_ms = j.value("updated_at_ms", int64_t{0});
        user.created_by = j.value("created_by", "");
    } catch (const std::exception& e) {
        return Status(Errc::corrupt, std::string("bad user record: ") + e.what());
    }
    return user;
}

std::string encode_controller_ready(const NodeId& controller, int64_t term) {
    return json{{"controller", controller.value()}, {"term", term}}.dump();
}

Result<NodeId> decode_controller_ready(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("controller") || !j["controller"].is_string()) {
        return Status(Errc::corrupt, "controller record is not valid");
    }
    return NodeId(j["controller"].get<std::string>());
}

// The state file is {"version":1,"revision":R,"topics":[...],"assignments":[...],"checksum":"hex"},
// where the checksum is XXH3 of the same document dumped without the checksum field.
std::string encode_state(const MetaState& state) {
    json j;
    j["version"] = kStateVersion;
    j["revision"] = state.revision;
    j["topics"] = json::array();
    for (const auto& [name, topic] : state.topics) j["topics"].push_back(topic_to_json(topic));
    j["assignments"] = json::array();
    for (const auto& [key, assignment] : state.assignments) {
        j["assignments"].push_back({{"topic", key.topic},
                                    {"partition", key.partition.value()},
                                    {"owner", assignment.owner.value()},
                                    {"target", assignment.target.value()}});
    }
    std::string body = j.dump();
    j["checksum"] = std::to_string(checksum64(body));
    return j.dump();
}

Result<MetaState> decode_state(std::string_view text) {
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return Status(Errc::corrupt, "state is not JSON");
    if (!j.contains("checksum") || !j["checksum"].is_string()) {
        return Status(Errc::corrupt, "state has no checksum");
    }
    std::string expected = j["checksum"].get<std::string>();
    j.erase("checksum");
    if (std::to_string(checksum64(j.dump())) != expected) {
        return Status(Errc::corrupt, "state checksum mismatch");
    }
    MetaState state;
    try {
        if (j.at("version").get<int>() != kStateVersion) {
            return Status(Errc::corrupt, "unsupported state version");
        }
        state.revision = j.at("revision").get<uint64_t>();
        for (const auto& t : j.at("topics")) {
            NARAD_ASSIGN_OR_RETURN(Topic topic, topic_from_json(t));
            std::string name = topic.name;
            state.topics.emplace(std::move(name), std::move(topic));
        }
        for (const auto& a : j.at("assignments")) {
            PartitionKey key{a.at("topic").get<std::string>(),
                             PartitionId(a.at("partition").get<uint32_t>())};
            state.assignments[key] = Assignment{NodeId(a.at("owner").get<std::string>()),
                                                NodeId(a.at("target").get<std::string>())};
        }
    } catch (const json::exception& e) {
        return Status(Errc::corrupt, std::string("bad state: ") + e.what());
    }
    state.topics_version = state.revision;
    state.assignments_version = state.revision;
    return state;
}

}  // namespace narad::meta
