#include "api/in_flight_limits.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "api/request_json.h"
#include "api/respond.h"
#include "base/metrics.h"
#include "base/mutex.h"

namespace narad::api {

struct InFlightLimits::State {
    explicit State(InFlightOptions o) : options(o) {}
    const InFlightOptions options;
    mutable Mutex mutex;
    std::map<std::string, int64_t> produce GUARDED_BY(mutex);
    std::map<std::string, int64_t> consume GUARDED_BY(mutex);
    int64_t body_bytes GUARDED_BY(mutex) = 0;

    std::map<std::string, int64_t>& held(Kind kind) {
        return kind == Kind::produce ? produce : consume;
    }
    int64_t cap(Kind kind) const {
        return kind == Kind::produce ? options.max_produce_per_identity
                                     : options.max_consume_per_identity;
    }
};

namespace {

using Kind = InFlightLimits::Kind;

metrics::Counter& budget_rejections() {
    static metrics::Counter& counter =
        metrics::Registry::global()
            .counter("narad_http_batch_body_budget_rejections_total",
                     "Batch produces refused because the node's batch body budget was full")
            .get();
    return counter;
}

// One request's hold: units under its identity's cap (if capped) and bytes of the body budget.
class Slot final : public net::Admission {
  public:
    Slot(std::shared_ptr<InFlightLimits::State> state, Kind kind, std::string identity,
         int64_t units, int64_t body_bytes)
        : state_(std::move(state)),
          kind_(kind),
          identity_(std::move(identity)),
          units_(units),
          body_bytes_(body_bytes) {}
    ~Slot() override { release(); }

    void release() override {
        MutexLock lock(state_->mutex);
        if (released_) return;
        released_ = true;
        if (units_ > 0) {
            auto& held = state_->held(kind_);
            auto it = held.find(identity_);
            if (it != held.end() && (it->second -= units_) <= 0) held.erase(it);
        }
        state_->body_bytes -= body_bytes_;
    }

    bool resize(uint64_t units) override {
        MutexLock lock(state_->mutex);
        int64_t cap = state_->cap(kind_);
        if (released_ || cap == 0) return true;
        int64_t wanted = std::clamp<int64_t>(static_cast<int64_t>(units), 1, cap);
        int64_t& held = state_->held(kind_)[identity_];
        if (held - units_ + wanted > cap) return false;
        held += wanted - units_;
        units_ = wanted;
        return true;
    }

  private:
    std::shared_ptr<InFlightLimits::State> state_;
    const Kind kind_;
    const std::string identity_;
    int64_t units_ GUARDED_BY(state_->mutex);
    const int64_t body_bytes_;  // charged to the budget
    bool released_ GUARDED_BY(state_->mutex) = false;
};

// The user ("user:<name>", so no name can pass for an address), or the client's IP address
// without the port.
std::string identity_of(const net::HttpRequest& head) {
    if (!head.user.empty()) return "user:" + head.user;
    const std::string& address = head.remote_address;
    auto colon = address.rfind(':');
    return colon == std::string::npos ? address : address.substr(0, colon);
}

struct Classified {
    Kind kind;
    int64_t units = 1;
    bool batch_body = false;
};

// Which capped route the head is for, if any: POST .../produce, POST .../produce/batch,
// GET .../consume, all under /v1/topics/{topic}/.
std::optional<Classified> classify(const net::HttpRequest& head) {
    std::string path;
    std::vector<std::pair<std::string, std::string>> query;
    if (!net::parse_target(head.target, path, query)) return std::nullopt;
    constexpr std::string_view kPrefix = "/v1/topics/";
    if (!path.starts_with(kPrefix)) return std::nullopt;
    std::string_view rest = std::string_view(path).substr(kPrefix.size());
    auto slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
    std::string_view action = rest.substr(slash + 1);
    if (head.method == "POST" && action == "produce") return Classified{Kind::produce};
    if (head.method == "POST" && action == "produce/batch") {
        return Classified{Kind::produce, 1, true};
    }
    if ((head.method == "GET" || head.method == "HEAD") && action == "consume") {
        Classified consume{Kind::consume};
        for (const auto& [name, value] : query) {
            if (name != "max") continue;
            int64_t max = 0;
            auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), max);
            if (error == std::errc() && end == value.data() + value.size() && max > 1) {
                consume.units = max;
            }
            break;
        }
        return consume;
    }
    return std::nullopt;
}

// The bytes a batch body is charged: its Content-Length, or the route's limit when it has none.
int64_t charged_body_bytes(const net::HttpRequest& head) {
    auto length = head.header("content-length");
    uint64_t bytes = kMaxBatchBodyBytes;
    if (length) {
        uint64_t parsed = 0;
        auto [end, error] =
            std::from_chars(length->data(), length->data() + length->size(), parsed);
        if (error == std::errc() && end == length->data() + length->size()) {
            bytes = std::min(parsed, kMaxBatchBodyBytes);
        }
    }
    return bytes > kBudgetedBatchBodyBytes ? static_cast<int64_t>(bytes) : 0;
}

net::HttpResponse retry_later(Errc code, std::string message) {
    net::HttpResponse response = error_response(code, message);
    response.headers.emplace_back("Retry-After", "1");
    return response;
}

}  // namespace

InFlightLimits::InFlightLimits(InFlightOptions options) : state_(std::make_shared<State>(options)) {
    budget_rejections();  // registered from the start, at 0
}

InFlightLimits::~InFlightLimits() = default;

std::optional<net::HttpResponse> InFlightLimits::screen(net::HttpRequest& head) {
    auto route = classify(head);
    if (!route) return std::nullopt;
    const InFlightOptions& options = state_->options;
    int64_t cap = state_->cap(route->kind);
    int64_t body =
        route->batch_body && options.max_batch_body_bytes > 0 ? charged_body_bytes(head) : 0;
    if (cap == 0 && body == 0) return std::nullopt;
    std::string identity = identity_of(head);
    int64_t units = cap == 0 ? 0 : std::min(route->units, cap);
    MutexLock lock(state_->mutex);
    if (units > 0) {
        auto held = state_->held(route->kind).find(identity);
        int64_t now = held == state_->held(route->kind).end() ? 0 : held->second;
        if (now + units > cap) {
            const char* what = route->kind == Kind::produce ? "produce" : "consume";
            return retry_later(Errc::too_many_requests, std::string("too many in-flight ") + what +
                                                            " requests for this identity (limit " +
                                                            std::to_string(cap) + " per node)");
        }
    }
    // A lone body larger than the whole budget still goes when nothing else is in flight.
    if (body > 0 && state_->body_bytes > 0 &&
        state_->body_bytes + body > options.max_batch_body_bytes) {
        budget_rejections().inc();
        return retry_later(Errc::unavailable,
                           "batch produce bodies in flight on this node are at their limit; "
                           "retry");
    }
    if (units > 0) state_->held(route->kind)[identity] += units;
    state_->body_bytes += body;
    head.admission = std::make_shared<Slot>(state_, route->kind, std::move(identity), units, body);
    return std::nullopt;
}

int64_t InFlightLimits::in_flight(Kind kind, const std::string& identity) const {
    MutexLock lock(state_->mutex);
    const auto& held = kind == Kind::produce ? state_->produce : state_->consume;
    auto it = held.find(identity);
    return it == held.end() ? 0 : it->second;
}

int64_t InFlightLimits::batch_body_bytes_in_flight() const {
    MutexLock lock(state_->mutex);
    return state_->body_bytes;
}

}  // namespace narad::api
