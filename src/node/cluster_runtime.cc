#include "node/cluster_runtime.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/log.h"
#include "base/mutex.h"
#include "base/names.h"
#include "base/url.h"
#include "io/file_system.h"
#include "meta/codec.h"
#include "meta/etcd_supervisor.h"
#include "meta/local_meta_store.h"
#include "net/etcd_transport.h"
#include "net/http_client.h"
#include "net/peer_pool.h"
#include "node/node.h"

namespace narad::node {
namespace {

using nlohmann::json;

// What <data>/cluster.json remembers.
struct SavedCluster {
    std::string cluster;
    bool hosts_etcd = false;
    std::vector<std::string> endpoints;
};

Result<std::optional<SavedCluster>> load_saved(io::FileSystem& fs, const std::string& path) {
    if (!fs.stat(path).is_ok()) return std::optional<SavedCluster>();
    NARAD_ASSIGN_OR_RETURN(std::string text, io::read_file(fs, path));
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return Status(Errc::corrupt, path + " is not a JSON object");
    SavedCluster saved;
    try {
        saved.cluster = j.at("cluster").get<std::string>();
        saved.hosts_etcd = j.at("hosts_etcd").get<bool>();
        saved.endpoints = j.at("endpoints").get<std::vector<std::string>>();
    } catch (const json::exception& e) {
        return Status(Errc::corrupt, path + ": " + e.what());
    }
    return std::optional<SavedCluster>(std::move(saved));
}

Status save(io::FileSystem& fs, const std::string& path, const SavedCluster& saved) {
    json j = {{"cluster", saved.cluster},
              {"hosts_etcd", saved.hosts_etcd},
              {"endpoints", saved.endpoints}};
    return io::write_file_atomically(fs, path, j.dump(2) + "\n");
}

void append_unique(std::vector<std::string>& list, const std::vector<std::string>& more) {
    for (const std::string& item : more) {
        if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
    }
}

std::string initial_cluster_of(const std::vector<meta::Member>& members, const std::string& name,
                               const std::string& peer_url) {
    std::string out;
    for (const meta::Member& member : members) {
        if (member.peer_urls.empty()) continue;
        bool is_new = std::find(member.peer_urls.begin(), member.peer_urls.end(), peer_url) !=
                      member.peer_urls.end();
        if (is_new) continue;
        if (!out.empty()) out += ",";
        out += (member.name.empty() ? "unnamed" + std::to_string(member.id) : member.name) + "=" +
               member.peer_urls.front();
    }
    if (!out.empty()) out += ",";
    return out + name + "=" + peer_url;
}

}  // namespace

class ClusterRuntime::Impl {
  public:
    Impl(ClusterRuntimeOptions options, Clock& clock)
        : options_(std::move(options)), clock_(clock) {}

    ~Impl() { stop(); }

    Status start() {
        std::string saved_path = io::join_path(options_.data_dir, "cluster.json");
        NARAD_ASSIGN_OR_RETURN(std::optional<SavedCluster> saved, load_saved(fs_, saved_path));
        if (saved && saved->cluster != options_.cluster_name) {
            return Status(Errc::invalid_argument, "this data directory belongs to cluster '" +
                                                      saved->cluster + "', not '" +
                                                      options_.cluster_name + "'");
        }
        std::string etcd_dir = io::join_path(options_.data_dir, "etcd");
        bool has_member = fs_.stat(io::join_path(etcd_dir, "member")).is_ok();
        std::vector<std::string> endpoints;
        bool bootstrapped = false;
        if (!options_.meta_endpoints.empty()) {
            endpoints = options_.meta_endpoints;
        } else if (has_member) {
            // Restart of a node hosting a member: etcd ignores the initial-cluster flags.
            NARAD_RETURN_IF_ERROR(start_etcd(etcd_dir, {}, meta::InitialClusterState::new_cluster));
            endpoints.push_back(etcd_->client_url());
            if (saved) append_unique(endpoints, saved->endpoints);
        } else if (saved && !saved->hosts_etcd) {
            endpoints = saved->endpoints;
        } else if (!options_.join.empty()) {
            NARAD_ASSIGN_OR_RETURN(json answer, request_join());
            std::vector<std::string> theirs;
            std::string role;
            std::string initial_cluster;
            try {
                theirs = answer.at("endpoints").get<std::vector<std::string>>();
                role = answer.at("etcd_role").get<std::string>();
                if (role == "learner") {
                    initial_cluster = answer.at("initial_cluster").get<std::string>();
                }
            } catch (const json::exception& e) {
                return Status(Errc::peer_error,
                              std::string("the join answer has the wrong shape: ") + e.what());
            }
            if (role == "learner") {
                NARAD_RETURN_IF_ERROR(
                    start_etcd(etcd_dir, initial_cluster, meta::InitialClusterState::existing));
                // A learner serves no client requests: the voters first.
                endpoints = theirs;
                append_unique(endpoints, {etcd_->client_url()});
            } else {
                endpoints = theirs;
            }
        } else {
            NARAD_RETURN_IF_ERROR(start_etcd(etcd_dir, {}, meta::InitialClusterState::new_cluster));
            endpoints.push_back(etcd_->client_url());
            bootstrapped = true;
        }

        transport_ = std::make_unique<net::HttpEtcdTransport>(
            net::EtcdTransportOptions{.tls = options_.cluster_tls});
        client_ = std::make_unique<meta::EtcdClient>(
            *transport_, meta::EtcdClientOptions{.endpoints = endpoints}, clock_);
        NARAD_RETURN_IF_ERROR(open_store());
        if (bootstrapped) NARAD_RETURN_IF_ERROR(import_single_node_state());

        // Remember the cluster for restarts (with every voter's client URL we know of).
        SavedCluster next{options_.cluster_name, etcd_ != nullptr, endpoints};
        uint64_t etcd_member_id = 0;
        role_ = meta::EtcdRole::none;
        auto members = client_->member_list();
        if (members.is_ok()) {
            for (const meta::Member& member : *members) {
                if (!member.is_learner) append_unique(next.endpoints, member.client_urls);
                if (etcd_ && std::find(member.peer_urls.begin(), member.peer_urls.end(),
                                       etcd_->peer_url()) != member.peer_urls.end()) {
                    etcd_member_id = member.id;
                    role_ = member.is_learner ? meta::EtcdRole::learner : meta::EtcdRole::voter;
                }
            }
        }
        NARAD_RETURN_IF_ERROR(save(fs_, saved_path, next).with_context("writing " + saved_path));

        meta::MemberInfo self;
        self.id = options_.node_id;
        self.api_addr = options_.api_addr;
        self.cluster_addr = options_.cluster_addr;
        self.etcd_role = role_;
        self.etcd_member_id = etcd_member_id;
        self.joined_at = clock_.wall_ms() / 1000;
        meta::MetaSnapshot view = store_->snapshot();
        if (const meta::MemberInfo* known = view->find_member(self.id)) {
            self.joined_at = known->joined_at;
        }
        // Three keep-alives per TTL, so one lost keep-alive never lets the lease lapse.
        cluster::MembershipOptions membership_options;
        membership_options.lease_ttl_seconds = options_.lease_ttl_seconds;
        membership_options.keep_alive_interval =
            std::max(Millis(100), Millis(options_.lease_ttl_seconds * 1000 / 3));
        membership_options.fence_margin = options_.self_fence_margin;
        membership_ =
            std::make_unique<cluster::Membership>(*store_, clock_, self, membership_options);
        NARAD_RETURN_IF_ERROR(membership_->start());
        controller_ = std::make_unique<cluster::Controller>(*store_, *membership_, clock_,
                                                            options_.node_id, options_.controller);
        controller_->start();
        NARAD_LOG_INFO("node {} is in cluster '{}' (etcd member: {}, metastore at {})",
                       options_.node_id.value(), options_.cluster_name, meta::etcd_role_name(role_),
                       fmt::join(endpoints, ","));
        return Status::ok();
    }

    void stop() {
        if (controller_) controller_->stop();
        if (membership_) membership_->stop();
        store_.reset();
        MutexLock lock(host_mutex_);
        stopped_ = true;
        if (etcd_) etcd_->stop();
    }

    Status host_etcd() {
        MutexLock lock(host_mutex_);
        if (stopped_) return Status(Errc::shutting_down, "the node is stopping");
        if (etcd_) return Status::ok();
        if (!options_.meta_endpoints.empty()) {
            return Status(Errc::conflict, "this node uses an external etcd (--meta-endpoints)");
        }
        std::string peer_url =
            etcd_scheme() + options_.etcd_host + ":" + std::to_string(options_.etcd_peer_port);
        NARAD_ASSIGN_OR_RETURN(std::vector<meta::Member> members, client_->member_list());
        for (const meta::Member& member : members) {
            if (member.is_learner) {
                return Status(Errc::unavailable,
                              "another node's metastore member is still catching up; retry");
            }
        }
        // Nothing of an earlier, failed attempt may be reused: etcd would ignore the flags.
        std::string etcd_dir = io::join_path(options_.data_dir, "etcd");
        if (fs_.stat(etcd_dir).is_ok()) NARAD_RETURN_IF_ERROR(fs_.remove_all(etcd_dir));
        NARAD_ASSIGN_OR_RETURN(meta::Member added,
                               client_->member_add({peer_url}, meta::MemberKind::learner));
        members.push_back(added);
        Status started =
            start_etcd(etcd_dir, initial_cluster_of(members, options_.node_id.value(), peer_url),
                       meta::InitialClusterState::existing);
        if (!started.is_ok()) {
            etcd_.reset();
            Status undone = client_->member_remove(added.id);
            NARAD_LOG_WARN("hosting an etcd learner failed ({}); removing it again: {}",
                           started.to_string(), undone.to_string());
            return started;
        }
        std::string saved_path = io::join_path(options_.data_dir, "cluster.json");
        SavedCluster next{options_.cluster_name, true, client_->options().endpoints};
        NARAD_RETURN_IF_ERROR(save(fs_, saved_path, next).with_context("writing " + saved_path));
        role_ = meta::EtcdRole::learner;
        meta::MemberInfo self = membership_->self();
        if (auto stored = store_->snapshot()->find_member(self.id)) self = *stored;
        self.etcd_role = meta::EtcdRole::learner;
        self.etcd_member_id = added.id;
        NARAD_RETURN_IF_ERROR(store_->put_member(self).with_context("recording the learner"));
        NARAD_LOG_INFO("started an etcd learner (id {:x}) at {} to keep the cluster's voter count",
                       added.id, peer_url);
        return Status::ok();
    }

    Result<std::string> handle_join(std::string_view body) {
        json request = json::parse(body, nullptr, /*allow_exceptions=*/false);
        if (!request.is_object() || !request.contains("node_id") ||
            !request["node_id"].is_string()) {
            return Status(Errc::invalid_argument, "join request needs node_id");
        }
        std::string node_id = request["node_id"].get<std::string>();
        NARAD_RETURN_IF_ERROR(validate_node_id(node_id));
        if (request.contains("etcd_peer_url") && !request["etcd_peer_url"].is_string()) {
            return Status(Errc::invalid_argument, "etcd_peer_url must be a string");
        }
        std::string peer_url = request.value("etcd_peer_url", "");
        MutexLock lock(join_mutex_);
        NARAD_ASSIGN_OR_RETURN(std::vector<meta::Member> members, client_->member_list());
        json answer = {{"cluster", options_.cluster_name}, {"etcd_role", "none"}};
        std::vector<std::string> endpoints;
        uint32_t voters = 0;
        uint32_t learners = 0;
        const meta::Member* existing = nullptr;
        for (const meta::Member& member : members) {
            if (member.is_learner) {
                ++learners;
            } else {
                ++voters;
                append_unique(endpoints, member.client_urls);
            }
            if (!peer_url.empty() && std::find(member.peer_urls.begin(), member.peer_urls.end(),
                                               peer_url) != member.peer_urls.end()) {
                existing = &member;
            }
        }
        answer["endpoints"] = endpoints;
        if (existing != nullptr) {
            if (!existing->is_learner) {
                return Status(Errc::conflict, "an etcd voter already uses peer URL " + peer_url +
                                                  "; remove that member before joining again");
            }
            // The joiner crashed after it was added: let it start its member again.
            answer["etcd_role"] = "learner";
            answer["initial_cluster"] = initial_cluster_of(members, node_id, peer_url);
            return answer.dump();
        }
        bool host = !peer_url.empty() && voters + learners < options_.voters;
        if (!host) return answer.dump();
        if (learners > 0) {
            return Status(Errc::unavailable,
                          "another node's metastore member is still catching up; retry");
        }
        NARAD_ASSIGN_OR_RETURN(meta::Member added,
                               client_->member_add({peer_url}, meta::MemberKind::learner));
        NARAD_LOG_INFO("added {} as an etcd learner (id {:x}) for joining node {}", peer_url,
                       added.id, node_id);
        members.push_back(added);
        answer["etcd_role"] = "learner";
        answer["initial_cluster"] = initial_cluster_of(members, node_id, peer_url);
        return answer.dump();
    }

    ClusterRuntimeOptions options_;
    Clock& clock_;
    io::FileSystem& fs_ = io::posix_file_system();
    std::unique_ptr<meta::EtcdSupervisor> etcd_;
    std::unique_ptr<net::HttpEtcdTransport> transport_;
    std::unique_ptr<meta::EtcdClient> client_;
    std::unique_ptr<meta::EtcdMetaStore> store_;
    std::unique_ptr<cluster::Membership> membership_;
    std::unique_ptr<cluster::Controller> controller_;
    meta::EtcdRole role_ = meta::EtcdRole::none;
    Mutex join_mutex_;  // one join at a time: it orders member-list changes, it guards no field
    Mutex host_mutex_;  // host_etcd and stop
    bool stopped_ GUARDED_BY(host_mutex_) = false;

  private:
    // A data directory written by the single-node release keeps its topics in <data>/meta/state.
    // The first start of a new cluster on it moves them into etcd (every partition owned here,
    // where its data is), so its topics and the records still in its ingress WAL are not lost;
    // the file is then renamed so it is imported once.
    Status import_single_node_state() {
        std::string directory = io::join_path(options_.data_dir, "meta");
        std::string state_path = io::join_path(directory, "state");
        if (!fs_.stat(state_path).is_ok()) return Status::ok();
        NARAD_ASSIGN_OR_RETURN(auto local, meta::LocalMetaStore::open(fs_, directory));
        meta::MetaSnapshot old_state = local->snapshot();
        const meta::Keys& keys = store_->keys();
        for (const auto& [name, topic] : old_state->topics) {
            std::vector<meta::TxnOp> puts{
                meta::TxnOp::put(keys.topic(name), meta::encode_topic(topic))};
            for (uint32_t p = 0; p < topic.partitions; ++p) {
                puts.push_back(meta::TxnOp::put(
                    keys.assignment(name, PartitionId(p)),
                    meta::encode_assignment(meta::Assignment{options_.node_id, {}})));
            }
            NARAD_ASSIGN_OR_RETURN(
                meta::TxnResult written,
                client_->txn({meta::Compare::missing(keys.topic(name))}, std::move(puts)));
            if (written.succeeded) {
                NARAD_RETURN_IF_ERROR(store_->wait_for_revision(written.revision, Millis(10'000)));
            }
        }
        NARAD_RETURN_IF_ERROR(fs_.rename(state_path, state_path + ".imported"));
        NARAD_RETURN_IF_ERROR(fs_.sync_directory(directory));
        NARAD_LOG_INFO("imported {} topics of the single-node metastore {} into the cluster",
                       old_state->topics.size(), state_path);
        return Status::ok();
    }

    // The scheme of this node's etcd URLs: https with cluster TLS.
    std::string etcd_scheme() const { return options_.cluster_tls ? "https://" : "http://"; }

    Status start_etcd(const std::string& directory, std::string initial_cluster,
                      meta::InitialClusterState state) {
        meta::EtcdSupervisorOptions etcd;
        etcd.binary = options_.etcd_binary;
        etcd.name = options_.node_id.value();
        etcd.data_dir = directory;
        etcd.host = options_.etcd_host;
        etcd.client_port = options_.etcd_client_port;
        etcd.peer_port = options_.etcd_peer_port;
        etcd.initial_cluster = std::move(initial_cluster);
        etcd.initial_cluster_state = state;
        etcd.cluster_token = options_.cluster_name;
        etcd.max_txn_ops = options_.etcd_max_txn_ops;
        etcd.log_path = io::join_path(options_.data_dir, "etcd.log");
        if (options_.cluster_tls) {
            // The member takes the cluster port's certificate for its client and peer URLs.
            const net::TlsFiles& files = options_.cluster_tls->files;
            etcd.tls_cert_file = files.cert_file;
            etcd.tls_key_file = files.key_file;
            etcd.tls_ca_file = files.ca_file;
            etcd.probe = [this](Millis timeout) -> Status {
                net::ClientOptions probe;
                probe.host = options_.etcd_host;
                probe.port = options_.etcd_client_port;
                probe.connect_timeout = timeout;
                probe.request_timeout = timeout;
                probe.client_name.clear();
                probe.tls = options_.cluster_tls;
                // Any answer means the member serves (healthy or not, as the plain probe).
                return net::HttpClient(probe).get("/health").status();
            };
        }
        etcd_ = std::make_unique<meta::EtcdSupervisor>(etcd, clock_);
        return etcd_->start().with_context("starting the local etcd member");
    }

    // Opens the replica, retrying while etcd has no leader yet (a member that just started).
    Status open_store() {
        MonoTime deadline = clock_.now() + options_.join_timeout;
        while (true) {
            auto store = meta::EtcdMetaStore::open(
                *client_, clock_,
                meta::EtcdMetaStoreOptions{.cluster = options_.cluster_name,
                                           .require_fence = true});
            if (store.is_ok()) {
                store_ = std::move(*store);
                return Status::ok();
            }
            if (clock_.now() >= deadline) {
                return store.status().with_context("reaching the metastore");
            }
            NARAD_LOG_INFO("waiting for the metastore: {}", store.status().to_string());
            clock_.sleep_for(Millis(200));
        }
    }

    // Asks the --join node to let this node in; retries while it answers 503 or cannot be
    // reached, up to join_timeout.
    Result<json> request_join() {
        auto target = split_host_port(options_.join);
        if (!target.is_ok()) return target.status().with_context("--join");
        net::ClientOptions client_options;
        client_options.host = target->first;
        client_options.port = target->second;
        client_options.request_timeout = Millis(15'000);
        if (!options_.cluster_secrets.empty()) {
            client_options.on_connect = net::cluster_handshake(options_.cluster_secrets);
        }
        client_options.tls = options_.cluster_tls;
        net::HttpClient http(client_options);
        json request = {{"node_id", options_.node_id.value()},
                        {"etcd_peer_url", etcd_scheme() + options_.etcd_host + ":" +
                                              std::to_string(options_.etcd_peer_port)},
                        {"etcd_client_url", etcd_scheme() + options_.etcd_host + ":" +
                                                std::to_string(options_.etcd_client_port)}};
        MonoTime deadline = clock_.now() + options_.join_timeout;
        Status last;
        while (clock_.now() < deadline) {
            auto reply = http.request("POST", "/internal/v1/join", request.dump());
            if (reply.is_ok() && reply->status == 200) {
                json answer = json::parse(reply->body, nullptr, false);
                if (answer.is_object() && answer.contains("endpoints")) return answer;
                return Status(Errc::peer_error, "join answer is not valid: " + reply->body);
            }
            if (!reply.is_ok() && reply.status().code() == Errc::forbidden) {
                return reply.status().with_context(
                    "joining through " + options_.join +
                    " (every node needs the same NARAD_CLUSTER_SECRET)");
            }
            if (reply.is_ok() && reply->status != 503) {
                return Status(Errc::peer_error,
                              "joining through " + options_.join + " was refused (" +
                                  std::to_string(reply->status) + "): " + reply->body);
            }
            last = reply.is_ok() ? Status(Errc::unavailable, reply->body) : reply.status();
            NARAD_LOG_INFO("join through {} not possible yet: {}", options_.join, last.to_string());
            clock_.sleep_for(Millis(500));
        }
        return last.with_context("joining through " + options_.join);
    }
};

Result<std::unique_ptr<ClusterRuntime>> ClusterRuntime::start(ClusterRuntimeOptions options,
                                                              Clock& clock) {
    auto impl = std::make_unique<Impl>(std::move(options), clock);
    NARAD_RETURN_IF_ERROR(impl->start());
    std::unique_ptr<ClusterRuntime> runtime(new ClusterRuntime(std::move(impl)));
    return runtime;
}

ClusterRuntime::ClusterRuntime(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    store_ = impl_->store_.get();
    controller_ = impl_->controller_.get();
    membership_ = impl_->membership_.get();
    client_ = impl_->client_.get();
}

ClusterRuntime::~ClusterRuntime() { stop(); }

void ClusterRuntime::stop() { impl_->stop(); }

Result<std::string> ClusterRuntime::handle_join(std::string_view request) {
    return impl_->handle_join(request);
}

Status ClusterRuntime::host_etcd() { return impl_->host_etcd(); }

}  // namespace narad::node
