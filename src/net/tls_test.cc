#include "net/tls.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "net/http_client.h"
#include "net/http_server.h"
#include "net/test_support.h"

namespace narad::net {
namespace {

using testing::FunctionHandler;
using testing::text_response;

// One test PKI for the suite: authorities "ca" and "other-ca"; leaves "server" (127.0.0.1 and
// localhost), "elsewhere" (a name that is not this host), "client" (signed by ca) and "rogue"
// (signed by other-ca).
class TlsTest : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        char pattern[] = "/tmp/narad-tls-XXXXXX";
        dir_ = new std::string(::mkdtemp(pattern));
        ready_ = testing::make_test_certificates(*dir_, {"ca", "other-ca"},
                                                 {{"server", "ca", "IP:127.0.0.1,DNS:localhost"},
                                                  {"elsewhere", "ca", "DNS:elsewhere.example"},
                                                  {"client", "ca", "DNS:client"},
                                                  {"rogue", "other-ca", "DNS:rogue"},
                                                  {"renewed", "other-ca", "IP:127.0.0.1"}});
    }
    static void TearDownTestSuite() {
        if (std::getenv("NARAD_KEEP_PKI") == nullptr) std::filesystem::remove_all(*dir_);
        delete dir_;
    }
    void SetUp() override { ASSERT_TRUE(ready_) << "openssl could not make the test PKI"; }
    void TearDown() override {
        if (server_) server_->stop();
    }

    static std::string file(const std::string& name) { return *dir_ + "/" + name; }
    static TlsFiles leaf(const std::string& name, const std::string& ca = "") {
        return {file(name + ".pem"), file(name + ".key"), ca.empty() ? "" : file(ca + ".pem")};
    }
    void start(TlsFiles tls) {
        ServerOptions options;
        options.address = "127.0.0.1";
        options.port = 0;
        options.shutdown_grace = Millis(100);
        options.tls = std::move(tls);
        server_ = std::make_unique<HttpServer>(options, handler_);
        Status started = server_->start();
        ASSERT_TRUE(started.is_ok()) << started.to_string();
    }
    ClientOptions client(std::optional<ClientTls> tls) const {
        ClientOptions options;
        options.host = "127.0.0.1";
        options.port = server_->port();
        options.connect_timeout = Millis(5'000);
        options.request_timeout = Millis(5'000);
        options.tls = std::move(tls);
        return options;
    }
    static ClientTls trusting(const std::string& ca, TlsFiles identity = {}) {
        identity.ca_file = file(ca + ".pem");
        return ClientTls{identity, HostCheck::name};
    }

    FunctionHandler handler_{[](HttpRequest request, Responder respond) {
        respond(text_response(200, "secure " + request.body));
    }};
    std::unique_ptr<HttpServer> server_;
    static std::string* dir_;
    static bool ready_;
};

std::string* TlsTest::dir_ = nullptr;
bool TlsTest::ready_ = false;

// Rule: a client that trusts the server's authority speaks HTTP over TLS, keep-alive included.
TEST_F(TlsTest, TrustedServerServesOverTls) {
    start(leaf("server"));
    HttpClient https(client(trusting("ca")));
    for (int i = 0; i < 3; ++i) {
        auto reply = https.post("/x", std::to_string(i));
        ASSERT_TRUE(reply.is_ok()) << reply.status().to_string();
        EXPECT_EQ(reply->body, "secure " + std::to_string(i));
    }
    EXPECT_EQ(server_->stats().connections_open, 1u) << "the TLS connection was kept alive";
}

// Rule: the client refuses a server its authorities did not sign, and one whose certificate
// names another host (unless told not to check the name); a plain client gets no answer from a
// TLS port. None of it harms the server.
TEST_F(TlsTest, UntrustedOrMisnamedServersAreRefused) {
    start(leaf("elsewhere"));
    auto untrusted = HttpClient(client(trusting("other-ca"))).get("/x");
    ASSERT_FALSE(untrusted.is_ok());
    EXPECT_NE(untrusted.status().message().find("certificate"), std::string::npos)
        << untrusted.status().to_string();
    auto misnamed = HttpClient(client(trusting("ca"))).get("/x");
    ASSERT_FALSE(misnamed.is_ok());
    EXPECT_NE(misnamed.status().message().find("IP address mismatch"), std::string::npos)
        << misnamed.status().to_string();
    ClientTls unnamed = trusting("ca");
    unnamed.host_check = HostCheck::signature_only;
    auto signed_only = HttpClient(client(unnamed)).get("/x");
    ASSERT_TRUE(signed_only.is_ok()) << signed_only.status().to_string();
    EXPECT_FALSE(HttpClient(client(std::nullopt)).get("/x").is_ok());
    auto still = HttpClient(client(unnamed)).get("/x");
    ASSERT_TRUE(still.is_ok()) << still.status().to_string();
}

// Rule: with a CA file the server takes only clients presenting a certificate that CA signed.
TEST_F(TlsTest, MutualTlsNeedsACertificateFromTheAuthority) {
    start(leaf("server", "ca"));
    EXPECT_FALSE(HttpClient(client(trusting("ca"))).get("/x").is_ok()) << "no client certificate";
    EXPECT_FALSE(HttpClient(client(trusting("ca", leaf("rogue")))).get("/x").is_ok())
        << "a certificate from another authority";
    auto member = HttpClient(client(trusting("ca", leaf("client")))).get("/x");
    ASSERT_TRUE(member.is_ok()) << member.status().to_string();
    EXPECT_EQ(member->status, 200);
}

// Rule: reload_tls() puts new files in force for new connections and keeps open ones; files that
// do not load change nothing and say why.
TEST_F(TlsTest, ReloadSwapsTheCertificateForNewConnections) {
    std::filesystem::copy_file(file("server.pem"), file("live.pem"),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(file("server.key"), file("live.key"),
                               std::filesystem::copy_options::overwrite_existing);
    start(leaf("live"));
    HttpClient before(client(trusting("ca")));
    ASSERT_TRUE(before.get("/x").is_ok());

    std::filesystem::copy_file(file("renewed.pem"), file("live.pem"),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::copy_file(file("renewed.key"), file("live.key"),
                               std::filesystem::copy_options::overwrite_existing);
    Status reloaded = server_->reload_tls();
    ASSERT_TRUE(reloaded.is_ok()) << reloaded.to_string();
    auto renewed = HttpClient(client(trusting("other-ca"))).get("/x");
    ASSERT_TRUE(renewed.is_ok()) << renewed.status().to_string();
    EXPECT_FALSE(HttpClient(client(trusting("ca"))).get("/x").is_ok()) << "the old certificate";
    EXPECT_TRUE(before.get("/x").is_ok()) << "an open connection keeps its session";

    std::filesystem::copy_file(file("server.key"), file("live.key"),
                               std::filesystem::copy_options::overwrite_existing);
    Status mismatched = server_->reload_tls();
    ASSERT_FALSE(mismatched.is_ok());
    EXPECT_NE(mismatched.message().find("live.key"), std::string::npos) << mismatched.to_string();
    EXPECT_TRUE(HttpClient(client(trusting("other-ca"))).get("/x").is_ok())
        << "a failed reload keeps the certificate in force";
}

// Rule: a server whose files do not load does not start, and says which file.
TEST_F(TlsTest, MissingFilesAreAClearError) {
    ServerOptions options;
    options.port = 0;
    options.tls = TlsFiles{file("absent.pem"), file("server.key"), ""};
    HttpServer server(options, handler_);
    Status started = server.start();
    ASSERT_FALSE(started.is_ok());
    EXPECT_NE(started.message().find("absent.pem"), std::string::npos) << started.to_string();
    ClientOptions bad;
    bad.tls = ClientTls{{"", "", file("absent-ca.pem")}, HostCheck::name};
    auto refused = HttpClient(bad).get("/x");
    ASSERT_FALSE(refused.is_ok());
    EXPECT_NE(refused.status().message().find("absent-ca.pem"), std::string::npos);
}

}  // namespace
}  // namespace narad::net
