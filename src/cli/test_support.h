// Test doubles for the CLI's unit tests: a scripted Api that records every request, a Sleeper
// that records pauses instead of sleeping, captured output, and a temporary directory.
#pragma once

#include <stdlib.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/api.h"
#include "cli/output.h"
#include "cli/sleeper.h"

namespace narad::cli::testing {

struct Call {
    std::string method;
    std::string target;
    std::string body;
    std::string content_type;
};

inline net::HttpResponse response(int status, std::string body = "") {
    net::HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

class FakeApi final : public Api {
  public:
    using Handler = std::function<Result<net::HttpResponse>(const Call&)>;

    Result<net::HttpResponse> call(std::string_view method, std::string_view target,
                                   std::string_view body, std::string_view content_type) override {
        calls.push_back({std::string(method), std::string(target), std::string(body),
                         std::string(content_type)});
        if (handler) return handler(calls.back());
        if (script.empty()) return Status(Errc::peer_error, "transport: no scripted answer");
        Result<net::HttpResponse> next = std::move(script.front());
        script.pop_front();
        return next;
    }

    void answer(int status, std::string body = "") { script.emplace_back(response(status, body)); }
    void fail(std::string message) { script.emplace_back(Status(Errc::peer_error, message)); }

    std::vector<Call> calls;
    std::deque<Result<net::HttpResponse>> script;
    Handler handler;
};

class FakeSleeper final : public Sleeper {
  public:
    bool sleep_for(std::chrono::nanoseconds duration) override {
        sleeps.push_back(duration);
        if (on_sleep) on_sleep();
        return !stopped_;
    }
    bool stopped() const override { return stopped_; }
    void stop() { stopped_ = true; }

    std::vector<std::chrono::nanoseconds> sleeps;
    std::function<void()> on_sleep;

  private:
    bool stopped_ = false;
};

struct CapturedOutput {
    std::ostringstream out;
    std::ostringstream err;
    Output output{out, err, Style(Color::off)};
};

class TempDir {
  public:
    TempDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "narad-cli-test-XXXXXX").string();
        path_ = ::mkdtemp(pattern.data());
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

}  // namespace narad::cli::testing
