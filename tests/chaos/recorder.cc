#include "chaos/recorder.h"

#include <cstdlib>

#include "base/mutex.h"

namespace narad::testing {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

History::History(const std::string& path)
    : path_(path), start_(std::chrono::steady_clock::now()), file_(std::fopen(path.c_str(), "w")) {
    if (file_ == nullptr) std::perror(path.c_str());
}

History::~History() {
    if (file_ != nullptr) std::fclose(file_);
}

HistoryTime History::now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
}

void History::record(json entry, HistoryTime call, HistoryTime returned) {
    entry["call_ns"] = call;
    entry["return_ns"] = returned;
    std::string line = entry.dump() + "\n";
    MutexLock lock(mutex_);
    if (file_ == nullptr) return;
    std::fwrite(line.data(), 1, line.size(), file_);
    ++lines_;
}

void History::meta(const std::string& event, json fields) {
    fields["op"] = "meta";
    fields["event"] = event;
    fields["client"] = "driver";
    HistoryTime at = now();
    record(std::move(fields), at, at);
    MutexLock lock(mutex_);
    if (file_ != nullptr) std::fflush(file_);
}

void History::fault(const std::string& kind, int node, HistoryTime start, HistoryTime end,
                    const std::string& detail) {
    record({{"op", "fault"},
            {"client", "nemesis"},
            {"kind", kind},
            {"node", node},
            {"start_ns", start},
            {"end_ns", end},
            {"detail", detail}},
           start, end);
}

int64_t History::lines() {
    MutexLock lock(mutex_);
    return lines_;
}

namespace {

// FNV-1a over the id and the pad, as 16 hex digits.
std::string checksum(int id, std::string_view pad) {
    uint64_t hash = 1469598103934665603ULL;
    auto mix = [&](std::string_view bytes) {
        for (unsigned char c : bytes) {
            hash ^= c;
            hash *= 1099511628211ULL;
        }
    };
    mix(std::to_string(id));
    mix(":");
    mix(pad);
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(hash));
    return out;
}

// 4xx and 503 are definite refusals; no answer or another 5xx may have taken effect.
std::string outcome_of(const Result<net::HttpResponse>& response, int ok_status) {
    if (!response.is_ok()) return "ambiguous";
    if (response->status == ok_status) return "ok";
    if ((response->status >= 400 && response->status < 500) || response->status == 503) {
        return "refused";
    }
    return "ambiguous";
}

int status_of(const Result<net::HttpResponse>& response) {
    return response.is_ok() ? response->status : 0;
}

}  // namespace

std::string checksummed_payload(int id, size_t pad_bytes) {
    std::mt19937 random(static_cast<uint32_t>(id));
    std::string pad(pad_bytes, 'a');
    for (char& c : pad) c = static_cast<char>('a' + random() % 26);
    return json{{"id", id}, {"pad", pad}, {"sum", checksum(id, pad)}}.dump();
}

PayloadCheck check_payload(const json& payload) {
    PayloadCheck out;
    if (!payload.is_object() || !payload.contains("id") || !payload["id"].is_number_integer()) {
        return out;
    }
    out.id = payload["id"].get<int>();
    if (payload.contains("pad") && payload["pad"].is_string() && payload.contains("sum") &&
        payload["sum"].is_string()) {
        out.checksum_ok = checksum(out.id, payload["pad"].get<std::string>()) ==
                          payload["sum"].get<std::string>();
    }
    return out;
}

RecordedTraffic::RecordedTraffic(Cluster& cluster, History& history, Ledger& ledger,
                                 TrafficOptions options)
    : cluster_(cluster), history_(history), ledger_(ledger), options_(std::move(options)) {}

RecordedTraffic::~RecordedTraffic() {
    stop_producers();
    stop_consumers();
}

void RecordedTraffic::produce(const std::vector<int>& nodes) {
    for (size_t start = 0; start < nodes.size(); ++start) {
        // Each producer starts on its own node and walks the list from there.
        std::vector<int> order(nodes.begin() + start, nodes.end());
        order.insert(order.end(), nodes.begin(), nodes.begin() + start);
        for (int copy = 0; copy < options_.producers_per_node; ++copy) {
            int slot = static_cast<int>(producers_.size());
            producers_.emplace_back([this, slot, order] { producer(slot, order); });
        }
    }
}

void RecordedTraffic::consume(const std::vector<int>& nodes) {
    for (int node : nodes) {
        int slot = static_cast<int>(consumers_.size());
        consumers_.emplace_back([this, slot, node] { consumer(slot, node); });
    }
}

void RecordedTraffic::producer(int slot, std::vector<int> nodes) {
    const std::string client_name = "p" + std::to_string(slot);
    const std::string target = "/v1/topics/" + options_.topic + "/produce";
    size_t at = 0;
    auto client = cluster_.node(nodes[at]).client(seconds(5));
    auto next = std::chrono::steady_clock::now();
    while (!stop_producing_) {
        next += std::chrono::microseconds(1'000'000 / options_.per_second);
        std::this_thread::sleep_until(next);  // the rate, not a synchronisation
        int id = next_id_++;
        if (id >= ledger_.capacity()) break;
        HistoryTime call = history_.now();
        auto response = client.post(target, checksummed_payload(id, options_.pad_bytes));
        HistoryTime returned = history_.now();
        std::string outcome = outcome_of(response, 202);
        if (outcome == "ok") {
            ledger_.accept(id);
            ++produced_ok_;
        }
        history_.record({{"op", "produce"},
                         {"client", client_name},
                         {"id", id},
                         {"topic", options_.topic},
                         {"node", nodes[at]},
                         {"status", status_of(response)},
                         {"outcome", outcome}},
                        call, returned);
        if (outcome != "ok") {
            at = (at + 1) % nodes.size();
            client = cluster_.node(nodes[at]).client(seconds(5));
        }
    }
}

void RecordedTraffic::consumer(int slot, int node) {
    const std::string client_name = "c" + std::to_string(slot);
    const std::string base = "/v1/topics/" + options_.topic;
    std::mt19937_64 random(options_.seed * 7919 + static_cast<uint64_t>(slot));
    std::bernoulli_distribution nack(options_.nack_fraction);
    auto client = cluster_.node(node).client(seconds(15));
    while (!stop_consuming_) {
        HistoryTime call = history_.now();
        auto response = client.get(base + "/consume?max=50&wait=500ms");
        HistoryTime returned = history_.now();
        json body = response.is_ok() && response->status == 200
                        ? json::parse(response->body, nullptr, false)
                        : json();
        if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array()) {
            if (!response.is_ok() || response->status != 204) {
                std::this_thread::sleep_for(milliseconds(100));  // retry pacing
                client = cluster_.node(node).client(seconds(15));
            }
            continue;
        }
        std::map<std::string, int> ids;  // handle -> id
        json acks = json::array();
        json nacks = json::array();
        for (const json& message : body["messages"]) {
            PayloadCheck checked =
                check_payload(message.contains("payload") ? message["payload"] : json());
            std::string handle = message.value("receipt_handle", "");
            history_.record({{"op", "deliver"},
                             {"client", client_name},
                             {"id", checked.id >= 0 ? json(checked.id) : json()},
                             {"topic", options_.topic},
                             {"partition", message.value("partition", -1)},
                             {"offset", message.value("offset", int64_t{-1})},
                             {"handle", handle},
                             {"checksum_ok", checked.checksum_ok},
                             {"node", node}},
                            call, returned);
            if (checked.id >= 0) ledger_.deliver(checked.id);
            ids[handle] = checked.id;
            (nack(random) ? nacks : acks).push_back(handle);
        }
        for (const auto& [kind, handles] : {std::pair{"ack", acks}, std::pair{"nack", nacks}}) {
            if (handles.empty()) continue;
            json request = {{"receipt_handles", handles}};
            if (std::string_view(kind) == "nack") request["extend"] = "0";
            HistoryTime ack_call = history_.now();
            auto answer = client.post(base + "/ack/batch", request.dump());
            HistoryTime ack_return = history_.now();
            json results = answer.is_ok() && answer->status == 200
                               ? json::parse(answer->body, nullptr, false)
                               : json();
            std::map<std::string, int> statuses;
            if (results.is_object() && results.contains("results")) {
                for (const json& result : results["results"]) {
                    statuses[result.value("receipt_handle", "")] = result.value("status", 0);
                }
            }
            for (const json& handle : handles) {
                std::string text = handle.get<std::string>();
                auto found = statuses.find(text);
                int status = found == statuses.end() ? 0 : found->second;
                std::string outcome = status == 204                     ? "ok"
                                      : (status >= 400 && status < 500) ? "refused"
                                                                        : "ambiguous";
                history_.record({{"op", "ack"},
                                 {"client", client_name},
                                 {"kind", kind},
                                 {"handle", text},
                                 {"id", ids[text] >= 0 ? json(ids[text]) : json()},
                                 {"status", status},
                                 {"outcome", outcome}},
                                ack_call, ack_return);
            }
        }
    }
}

void RecordedTraffic::stop_producers() {
    stop_producing_ = true;
    for (auto& thread : producers_) thread.join();
    producers_.clear();
}

void RecordedTraffic::stop_consumers() {
    stop_consuming_ = true;
    for (auto& thread : consumers_) thread.join();
    consumers_.clear();
}

bool RecordedTraffic::drain(milliseconds timeout) {
    stop_producers();
    bool complete = eventually([&] { return ledger_.nothing_lost(); }, timeout, milliseconds(200));
    stop_consumers();
    return complete;
}

int run_checker(const std::string& history_path) {
    std::string command = "python3 '" NARAD_CHAOS_DIR "/check_history.py' '" + history_path +
                          "' --json '" + history_path + ".verdict.json'";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace narad::testing
