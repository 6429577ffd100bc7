// Validation of names that may reach the filesystem (topics) or the metastore (users), done before
// they are used anywhere. Pure functions.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/status.h"

namespace narad {

// Topic names: ^[A-Za-z0-9._-]{1,200}$ (Narad 3.2) and never "." or "..".
inline constexpr size_t kMaxTopicNameLength = 200;
Status validate_topic_name(std::string_view name);
// User names: ^[A-Za-z0-9._-]{1,64}$.
Status validate_user_name(std::string_view name);
// Node ids (they name etcd keys and members): ^[A-Za-z0-9._-]{1,255}$, never "." or "..".
Status validate_node_id(std::string_view name);

}  // namespace narad
