#include "cli/calls.h"

#include "cli/output.h"
#include "cli/text.h"

namespace narad::cli {

std::string dump_json(const nlohmann::json& value) {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<net::HttpResponse> send_json(Api& api, std::string_view method, std::string_view target,
                                    const std::optional<nlohmann::json>& body) {
    if (!body) return send(api, method, target);
    return send(api, method, target, dump_json(*body), "application/json");
}

Status send_and_print(Api& api, std::ostream& out, std::string_view method, std::string_view target,
                      const std::optional<nlohmann::json>& body) {
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse response, send_json(api, method, target, body));
    if (response.status == 204) return Status::ok();
    print_response_body(out, response.body);
    return Status::ok();
}

Status send_silent(Api& api, std::string_view method, std::string_view target,
                   const std::optional<nlohmann::json>& body) {
    auto response = send_json(api, method, target, body);
    return response.is_ok() ? Status::ok() : response.status();
}

std::string topic_path(std::string_view topic) { return "/v1/topics/" + path_escape(topic); }

}  // namespace narad::cli
