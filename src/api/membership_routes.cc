#include "api/membership_routes.h"

#include <memory>

#include "api/respond.h"

namespace narad::api {
namespace {

constexpr std::string_view kJoinPath = "/internal/v1/join";
constexpr std::string_view kHostEtcdPath = "/internal/v1/etcd/host";

}  // namespace

void register_membership_routes(Router& internal, MembershipRouteContext context) {
    auto c = std::make_shared<const MembershipRouteContext>(std::move(context));
    internal.add("POST", std::string(kJoinPath),
                 [c](net::HttpRequest r, const PathParams&, net::Responder d) {
                     answer_on_pool(c->pool, std::move(d), [c, body = std::move(r.body)] {
                         auto answer = c->join(body);
                         return answer.is_ok() ? json_response(200, *answer)
                                               : error_response(answer.status());
                     });
                 });
    internal.add("POST", std::string(kHostEtcdPath),
                 [c](net::HttpRequest, const PathParams&, net::Responder d) {
                     answer_on_pool(c->pool, std::move(d), [c] {
                         Status hosted = c->host_etcd();
                         return hosted.is_ok() ? empty_response(204) : error_response(hosted);
                     });
                 });
}

Status ask_to_host_etcd(PeerClient& peers, const NodeId& node, Millis timeout) {
    auto reply = peers.call(node, "POST", kHostEtcdPath, "", "", timeout);
    if (!reply.is_ok()) return reply.status();
    if (reply->status != 204) {
        return Status(Errc::peer_error,
                      "answered " + std::to_string(reply->status) + ": " + reply->body);
    }
    return Status::ok();
}

}  // namespace narad::api
