// EtcdClient::observe: one thread per observer reading the gateway's election observe stream
// (/v3/election/observe), which sends the current leader at once and then every new one. After a
// break it reopens the stream on the next endpoint (backing off up to a second); the stream starts
// again with the current leader, so a leader already reported is not reported twice.
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "base/json_scan.h"
#include "base/log.h"
#include "meta/etcd_client.h"
#include "meta/etcd_client_json.h"
#include "meta/etcd_stream_reader.h"

namespace narad::meta {
namespace {

constexpr Millis kBackoffFirst{50};
constexpr Millis kBackoffMax{1'000};
constexpr Millis kPoll{500};  // how often a blocked read looks at the stop flag

}  // namespace

class EtcdClient::ObserveImpl final : public EtcdWatch {
  public:
    ObserveImpl(EtcdTransport& transport, const EtcdClientOptions& options, Clock& clock,
                size_t first_endpoint, std::string election,
                std::function<void(const LeaderInfo&)> on_leader)
        : transport_(transport),
          options_(options),
          endpoint_(first_endpoint),
          election_(std::move(election)),
          on_leader_(std::move(on_leader)),
          reader_(clock) {
        reader_.start("narad-etcd-obs", [this] { run(); });
    }

    ~ObserveImpl() override { reader_.stop(); }

  private:
    void run() {
        Millis backoff = kBackoffFirst;
        while (!reader_.stopping()) {
            Status ended = follow_one_stream();
            if (reader_.stopping()) return;
            NARAD_LOG_DEBUG("election observe of {} ended ({}); reopening", election_,
                            ended.to_string());
            endpoint_ = (endpoint_ + 1) % options_.endpoints.size();
            if (!reader_.wait_backoff(backoff)) return;
            backoff = std::min(backoff * 2, kBackoffMax);
        }
    }

    // Reads one stream until it breaks or the observer stops.
    Status follow_one_stream() {
        nlohmann::json request = {{"name", base64_encode(election_)}};
        auto opened = transport_.open_stream(options_.endpoints[endpoint_], "/v3/election/observe",
                                             request.dump(), options_.connect_timeout);
        if (!opened.is_ok()) return opened.status();
        NARAD_RETURN_IF_ERROR(reader_.install(std::move(*opened)));
        Status ended;
        while (!reader_.stopping()) {
            auto line = reader_.stream()->next(kPoll);
            if (!line.is_ok()) {
                if (line.code() == Errc::timeout) continue;
                ended = line.status();
                break;
            }
            auto leader = parse_line(*line);
            if (!leader.is_ok()) {
                ended = leader.status();
                break;
            }
            if (leader->key == last_key_ && leader->create_revision == last_revision_) continue;
            last_key_ = leader->key;
            last_revision_ = leader->create_revision;
            on_leader_(*leader);
        }
        reader_.close();
        return ended;
    }

    Result<LeaderInfo> parse_line(std::string_view line) {
        // Dumped again below, which recurses once per level: a line nested deeper than any etcd
        // answer is refused first.
        if (json_scan::nests_deeper_than(line, 64)) {
            return Status(Errc::peer_error, "observe: an answer nested too deeply");
        }
        nlohmann::json message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (!message.is_object()) return Status(Errc::peer_error, "observe: not a JSON object");
        if (message.contains("error")) return gateway::decode_error(200, line, Mutation::no);
        if (!message.contains("result")) return Status(Errc::peer_error, "observe: no result");
        return gateway::parse_leader(message["result"].dump(), election_);
    }

    EtcdTransport& transport_;
    const EtcdClientOptions& options_;
    size_t endpoint_;  // only touched by the observer thread
    std::string election_;
    std::function<void(const LeaderInfo&)> on_leader_;
    std::string last_key_;       // only touched by the observer thread
    int64_t last_revision_ = 0;  // only touched by the observer thread
    EtcdStreamReader reader_;
};

std::unique_ptr<EtcdWatch> EtcdClient::observe(std::string election,
                                               std::function<void(const LeaderInfo&)> on_leader) {
    return std::make_unique<ObserveImpl>(transport_, options_, clock_, preferred_.load(),
                                         std::move(election), std::move(on_leader));
}

}  // namespace narad::meta
