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

Status send_text_and_print(Api& api, std::ostream& out, std::string_view method,
                           std::string_view target, std::string body) {
    NARAD_ASSIGN_OR_RETURN(net::HttpResponse response,
                           send(api, method, target, std::move(body), "application/json"));
    if (response.status == 204) return Status::ok();
    print_response_body(out, response.body);
    return Status::ok();
}

std::string with_raw_member(const nlohmann::json& body, std::string_view key,
                            std::string_view raw) {
    std::string out = dump_json(body);
    out.pop_back();  // the closing brace
    if (out.size() > 1) out += ',';
    out += dump_json(nlohmann::json(std::string(key)));
    out += ':';
    out += raw;
    out += '}';
    return out;
}

std::string topic_path(std::string_view topic) { return "/v1/topics/" + path_escape(topic); }

}  // namespace narad::cli
