// Encoding of metastore records as JSON text: the local state file and, in a cluster, the values
// stored in etcd (docs/formats/metastore.md). Pure functions.
#pragma once

#include <string>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::meta {

std::string encode_topic(const Topic& topic);
Result<Topic> decode_topic(std::string_view json);

// An assignment's value in etcd: {"owner":..,"target":..}.
std::string encode_assignment(const Assignment& assignment);
Result<Assignment> decode_assignment(std::string_view json);

// A member's record in etcd.
std::string encode_member(const MemberInfo& member);
Result<MemberInfo> decode_member(std::string_view json);

// A user's value in etcd (the password hash included: the record never leaves the metastore).
std::string encode_user(const User& user);
Result<User> decode_user(std::string_view json);

// The controller's "ready" record: the node that finished its start-up reconcile.
std::string encode_controller_ready(const NodeId& controller, int64_t term);
Result<NodeId> decode_controller_ready(std::string_view json);

// The whole state, for the single-node state file.
std::string encode_state(const MetaState& state);
Result<MetaState> decode_state(std::string_view json);

}  // namespace narad::meta
