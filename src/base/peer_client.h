// PeerClient: how a domain module calls another node's cluster port (node-to-node routes under
// /internal/v1/) without knowing about HTTP stacks or addresses. node/ wires the real one (net/,
// which resolves a node id to its cluster address through the metastore and adds the cluster
// secret); tests wire fakes. Thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/ids.h"
#include "base/status.h"

namespace narad {

struct PeerReply {
    int status = 0;
    std::string body;
    std::string content_type;
};

class PeerClient {
  public:
    virtual ~PeerClient() = default;
    // One request to `node`'s cluster port. Errc::peer_error when it could not be reached (nothing
    // was delivered), Errc::unknown_outcome when the request may have been delivered but no answer
    // came (lost reply, timeout), Errc::not_found when the node is not a known member. Any HTTP
    // status is a successful Result.
    virtual Result<PeerReply> call(const NodeId& node, std::string_view method,
                                   std::string_view target, std::string_view body,
                                   std::string_view content_type, Millis timeout) = 0;
};

}  // namespace narad
