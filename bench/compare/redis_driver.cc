#include "compare/redis_driver.h"

#include <hiredis/hiredis.h>

#include <cstring>
#include <optional>
#include <thread>

#include "base/loopback_ports.h"
#include "cli/bench_engine.h"

namespace narad::compare {
namespace {

using cli::bench::mono_ns;

constexpr const char* kGroup = "workers";
constexpr const char* kBlockMs = "500";
constexpr int64_t kIoTimeoutMs = 10'000;

struct ReplyDeleter {
    void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

std::string context_error(const redisContext* context, std::string_view what) {
    return std::string(what) + ": " + (context->errstr[0] != '\0' ? context->errstr : "i/o error");
}

Result<Reply> command(redisContext* context, const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const std::string& arg : args) {
        argv.push_back(arg.data());
        lengths.push_back(arg.size());
    }
    auto* raw = static_cast<redisReply*>(
        redisCommandArgv(context, int(argv.size()), argv.data(), lengths.data()));
    if (raw == nullptr) return Status(Errc::peer_error, context_error(context, args.front()));
    Reply reply(raw);
    if (reply->type == REDIS_REPLY_ERROR) {
        return Status(Errc::peer_error, args.front() + ": " + std::string(reply->str, reply->len));
    }
    return reply;
}

void produce_loop(redisContext* context, const std::vector<std::string>& streams, uint32_t batch,
                  Flow& flow) {
    std::vector<std::string> payloads;
    while (auto claim = flow.claim(batch)) {
        payloads.clear();
        for (uint64_t id = claim->first; id < claim->first + claim->count; ++id) {
            payloads.push_back(flow.payload(id));
            const std::string& stream = streams[id % streams.size()];
            const char* argv[] = {"XADD", stream.data(), "*", "d", payloads.back().data()};
            const size_t lengths[] = {4, stream.size(), 1, 1, payloads.back().size()};
            redisAppendCommandArgv(context, 5, argv, lengths);
        }
        const int64_t sent_ns = mono_ns();
        uint64_t ok = 0;
        for (uint32_t i = 0; i < claim->count; ++i) {
            void* raw = nullptr;
            if (redisGetReply(context, &raw) != REDIS_OK) {
                flow.produce_failed(claim->count - i, context_error(context, "XADD"));
                flow.abort(context_error(context, "XADD"));
                break;
            }
            Reply reply(static_cast<redisReply*>(raw));
            if (reply->type == REDIS_REPLY_STRING) {
                ++ok;
            } else {
                flow.produce_failed(1, reply->type == REDIS_REPLY_ERROR
                                           ? std::string(reply->str, reply->len)
                                           : "unexpected reply");
            }
        }
        if (ok > 0) flow.produced(ok, mono_ns() - sent_ns);
        if (context->err != 0) return;
    }
}

// One XREADGROUP over every stream, then an XACK per stream that returned entries.
void consume_loop(redisContext* context, const std::vector<std::string>& streams,
                  const std::string& consumer, uint32_t batch, Flow& flow) {
    std::vector<const char*> argv = {"XREADGROUP", "GROUP", kGroup, consumer.c_str(), "COUNT"};
    const std::string count = std::to_string(batch);
    argv.push_back(count.c_str());
    argv.push_back("BLOCK");
    argv.push_back(kBlockMs);
    argv.push_back("STREAMS");
    for (const std::string& stream : streams) argv.push_back(stream.c_str());
    for (size_t i = 0; i < streams.size(); ++i) argv.push_back(">");
    std::vector<size_t> lengths;
    for (const char* arg : argv) lengths.push_back(std::strlen(arg));

    struct StreamAcks {
        std::vector<const char*> argv;
        std::vector<size_t> lengths;
        std::vector<std::optional<uint64_t>> ids;
    };
    std::vector<StreamAcks> acks;
    while (!flow.consumers_should_stop()) {
        auto* raw = static_cast<redisReply*>(
            redisCommandArgv(context, int(argv.size()), argv.data(), lengths.data()));
        if (raw == nullptr) {
            flow.consume_failed(context_error(context, "XREADGROUP"));
            flow.abort(context_error(context, "XREADGROUP"));
            return;
        }
        Reply reply(raw);
        if (reply->type == REDIS_REPLY_NIL) continue;  // BLOCK timed out
        if (reply->type != REDIS_REPLY_ARRAY) {
            flow.consume_failed(reply->type == REDIS_REPLY_ERROR
                                    ? std::string(reply->str, reply->len)
                                    : "unexpected XREADGROUP reply");
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            continue;
        }
        acks.clear();
        for (size_t s = 0; s < reply->elements; ++s) {
            const redisReply* stream = reply->element[s];
            if (stream->type != REDIS_REPLY_ARRAY || stream->elements != 2) continue;
            const redisReply* entries = stream->element[1];
            if (entries->type != REDIS_REPLY_ARRAY || entries->elements == 0) continue;
            StreamAcks& stream_acks = acks.emplace_back();
            stream_acks.argv = {"XACK", stream->element[0]->str, kGroup};
            stream_acks.lengths = {4, stream->element[0]->len, std::strlen(kGroup)};
            for (size_t e = 0; e < entries->elements; ++e) {
                const redisReply* entry = entries->element[e];
                if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2) continue;
                const redisReply* fields = entry->element[1];
                std::optional<uint64_t> id;
                if (fields->type == REDIS_REPLY_ARRAY && fields->elements == 2) {
                    id = flow.received(
                        std::string_view(fields->element[1]->str, fields->element[1]->len));
                }
                stream_acks.argv.push_back(entry->element[0]->str);
                stream_acks.lengths.push_back(entry->element[0]->len);
                stream_acks.ids.push_back(id);
            }
        }
        const int64_t sent_ns = mono_ns();
        for (StreamAcks& stream_acks : acks) {
            redisAppendCommandArgv(context, int(stream_acks.argv.size()), stream_acks.argv.data(),
                                   stream_acks.lengths.data());
        }
        uint64_t acked = 0;
        for (StreamAcks& stream_acks : acks) {
            void* ack_raw = nullptr;
            if (redisGetReply(context, &ack_raw) != REDIS_OK) {
                flow.ack_failed(stream_acks.ids.size(), context_error(context, "XACK"));
                flow.abort(context_error(context, "XACK"));
                return;
            }
            Reply ack(static_cast<redisReply*>(ack_raw));
            if (ack->type != REDIS_REPLY_INTEGER ||
                uint64_t(ack->integer) != stream_acks.ids.size()) {
                // Which entries failed is not said: count them all as not acked.
                flow.ack_failed(stream_acks.ids.size(), "XACK acked fewer entries than sent");
                continue;
            }
            acked += stream_acks.ids.size();
            for (const auto& id : stream_acks.ids) {
                if (id) flow.acked(*id);
            }
        }
        if (acked > 0) flow.acks_answered(acked, mono_ns() - sent_ns);
    }
}

}  // namespace

void RedisDriver::ContextDeleter::operator()(redisContext* context) const { redisFree(context); }

RedisDriver::~RedisDriver() {
    disconnect();
    stop();
}

std::string RedisDriver::system() const {
    return fsync_ == Fsync::always ? "redis-always" : "redis-everysec";
}

std::string RedisDriver::durability() const {
    if (fsync_ == Fsync::always) {
        return "AOF, appendfsync always: each event-loop cycle's writes are fsynced before its "
               "replies are sent (group commit)";
    }
    return "AOF, appendfsync everysec: written to the page cache before the reply, fsynced once "
           "a second (up to ~1 s of acked writes lost on power failure)";
}

Result<RedisDriver::Context> RedisDriver::open() const {
    timeval connect_timeout{5, 0};
    Context context(redisConnectWithTimeout("127.0.0.1", port_, connect_timeout));
    if (!context) return Status(Errc::internal, "redis: out of memory");
    if (context->err != 0) return Status(Errc::peer_error, context_error(context.get(), "connect"));
    timeval io_timeout{kIoTimeoutMs / 1000, 0};
    redisSetTimeout(context.get(), io_timeout);
    return context;
}

Status RedisDriver::start(const DriverEnv& env) {
    port_ = unused_loopback_ports(1).front();
    ProcessSpec spec;
    spec.executable = env.redis_server_path;
    spec.args = {"--port",
                 std::to_string(port_),
                 "--bind",
                 "127.0.0.1",
                 "--dir",
                 env.data_dir,
                 "--appendonly",
                 "yes",
                 "--appendfsync",
                 fsync_ == Fsync::always ? "always" : "everysec",
                 "--save",
                 "",
                 "--protected-mode",
                 "no",
                 "--daemonize",
                 "no"};
    spec.log_path = env.data_dir + "/redis.log";
    NARAD_RETURN_IF_ERROR(server_.start(spec));
    const int64_t until = mono_ns() + env.start_timeout_ms * 1'000'000;
    Status last(Errc::timeout, "not tried");
    while (mono_ns() < until) {
        if (!server_.running()) {
            return Status(Errc::unavailable, "redis-server exited (" + server_.exit_description() +
                                                 "): " + server_.log_tail(300));
        }
        auto context = open();
        if (context.is_ok()) {
            auto pong = command(context->get(), {"PING"});
            if (pong.is_ok()) return Status::ok();
            last = pong.status();
        } else {
            last = context.status();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return Status(Errc::timeout, "redis-server not ready: " + last.message());
}

Status RedisDriver::prepare(const Workload& workload) {
    streams_.clear();
    for (uint32_t p = 0; p < workload.partitions; ++p) {
        streams_.push_back("bench:" + std::to_string(p));
    }
    NARAD_ASSIGN_OR_RETURN(Context admin, open());
    for (const std::string& stream : streams_) {
        auto r = command(admin.get(), {"XGROUP", "CREATE", stream, kGroup, "0", "MKSTREAM"});
        if (!r.is_ok()) return r.status();
    }
    return Status::ok();
}

Status RedisDriver::connect(const Workload& workload) {
    for (uint32_t i = 0; i < workload.producers; ++i) {
        NARAD_ASSIGN_OR_RETURN(Context context, open());
        producers_.push_back(std::move(context));
    }
    for (uint32_t i = 0; i < workload.consumers; ++i) {
        NARAD_ASSIGN_OR_RETURN(Context context, open());
        consumers_.push_back(std::move(context));
    }
    return Status::ok();
}

std::optional<int64_t> RedisDriver::persistence_field(const std::string& name) const {
    auto admin = open();
    if (!admin.is_ok()) return std::nullopt;
    auto info = command(admin->get(), {"INFO", "persistence"});
    if (!info.is_ok() || (*info)->type != REDIS_REPLY_STRING) return std::nullopt;
    const std::string text((*info)->str, (*info)->len);
    const size_t at = text.find(name + ":");
    if (at == std::string::npos) return std::nullopt;
    return std::strtoll(text.c_str() + at + name.size() + 1, nullptr, 10);
}

Status RedisDriver::run(const Workload& workload, Flow& flow) {
    notes_.clear();
    const auto rewrites_before = persistence_field("aof_rewrites");
    flow.start();
    std::vector<std::thread> consumer_threads;
    for (size_t i = 0; i < consumers_.size(); ++i) {
        // Built by appending: GCC 12 warns falsely (-Wrestrict) on "c" + std::to_string(i).
        std::string name = "c";
        name += std::to_string(i);
        consumer_threads.emplace_back([this, i, name, &workload, &flow] {
            consume_loop(consumers_[i].get(), streams_, name, workload.batch, flow);
        });
    }
    std::vector<std::thread> producer_threads;
    for (auto& context : producers_) {
        producer_threads.emplace_back([this, context = context.get(), &workload, &flow] {
            produce_loop(context, streams_, workload.batch, flow);
        });
    }
    for (std::thread& thread : producer_threads) thread.join();
    flow.producers_finished();
    for (std::thread& thread : consumer_threads) thread.join();
    // Redis rewrites a growing AOF in a forked child (auto-aof-rewrite-percentage 100): part of
    // its cost in this configuration, and worth knowing when reading its figures.
    const auto rewrites_after = persistence_field("aof_rewrites");
    if (rewrites_before && rewrites_after && *rewrites_after > *rewrites_before) {
        notes_.push_back(std::to_string(*rewrites_after - *rewrites_before) +
                         " AOF rewrite(s) (fork + RDB preamble) during the run, their CPU "
                         "counted in the server's");
    }
    return Status::ok();
}

void RedisDriver::disconnect() {
    producers_.clear();
    consumers_.clear();
}

void RedisDriver::stop() { server_.stop(10'000); }

}  // namespace narad::compare
