#include "cli/http_api.h"

namespace narad::cli {
namespace {

class HttpApi final : public Api {
  public:
    HttpApi(net::ClientOptions options, std::string base_path)
        : client_(std::move(options)), base_path_(std::move(base_path)) {}

    Result<net::HttpResponse> call(std::string_view method, std::string_view target,
                                   std::string_view body, std::string_view content_type) override {
        const std::string full_target = base_path_ + std::string(target);
        auto response = client_.request(method, full_target, body, content_type);
        if (!response.is_ok()) {
            return Status(response.code(), "transport: " + response.status().message());
        }
        return response;
    }

  private:
    net::HttpClient client_;
    std::string base_path_;
};

}  // namespace

Result<net::ClientOptions> client_options(const CliContext& connection) {
    NARAD_ASSIGN_OR_RETURN(ServerAddress address, parse_server_url(connection.server));
    net::ClientOptions options;
    options.host = address.host;
    options.port = address.port;
    options.request_timeout = kRequestTimeout;
    if (address.https) options.tls = net::ClientTls{};  // the system's authorities, host checked
    if (!connection.user.empty()) options.basic_auth = connection.user + ":" + connection.password;
    return options;
}

Result<std::unique_ptr<Api>> make_http_api(const CliContext& connection) {
    NARAD_ASSIGN_OR_RETURN(net::ClientOptions options, client_options(connection));
    NARAD_ASSIGN_OR_RETURN(ServerAddress address, parse_server_url(connection.server));
    return std::unique_ptr<Api>(std::make_unique<HttpApi>(std::move(options), address.base_path));
}

}  // namespace narad::cli
