// Encoding of metastore records as JSON text: the local state file and, in a cluster, the values
// stored in etcd (docs/formats/metastore.md). Pure functions.
#pragma once

#include <string>

#include "base/status.h"
#include "meta/topic.h"

namespace narad::meta {

std::string encode_topic(const Topic& topic);
Result<Topic> decode_topic(std::string_view json);

// The whole state, for the single-node state file.
std::string encode_state(const MetaState& state);
Result<MetaState> decode_state(std::string_view json);

}  // namespace narad::meta
