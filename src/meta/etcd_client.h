// EtcdClient: etcd v3 spoken through its JSON gateway (notes in docs/metastore.md): key-value
// range/put/delete/txn, leases, watches, elections, cluster membership and maintenance. Keys and
// values are raw bytes here; the gateway's base64 and string-encoded numbers stay inside.
//
// Every call has a timeout. A call that fails before the request could have reached etcd
// (connection refused) is retried on the next endpoint; a mutation whose answer was lost
// (timeout or reset after the request was sent) is reported as Errc::unknown_outcome, never
// retried, so the caller resolves it by reading. etcd errors map onto Errc (a failed txn compare
// is not an error: TxnResult::succeeded is false).
//
// The transport is the EtcdTransport interface, so meta/ never includes Beast; net/ provides the
// real one (net/etcd_transport.h). Thread-safe: calls may be made from any thread at once; none
// may be made from an Asio thread serving clients (they block).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"

namespace narad::meta {

// One streamed response (a watch or an observe): chunks of newline-delimited JSON objects.
class EtcdStream {
  public:
    virtual ~EtcdStream() = default;
    // The next complete JSON object of the stream, waiting at most `timeout`. Errc::timeout when
    // nothing arrived in time (the stream stays usable); Errc::peer_error when it ended or broke.
    virtual Result<std::string> next(Millis timeout) = 0;
    // Makes a next() blocked in another thread return Errc::peer_error soon. Thread-safe.
    virtual void cancel() = 0;
};

// How the client reaches etcd: one JSON POST, or one streaming POST. Thread-safe.
class EtcdTransport {
  public:
    virtual ~EtcdTransport() = default;
    // POSTs `body` to `endpoint` + `path` ("/v3/kv/range") and returns the response body with its
    // HTTP status. Errc::peer_error when no connection could be made (nothing was sent);
    // Errc::unknown_outcome when the request may have been sent but no answer came.
    struct Reply {
        int status = 0;
        std::string body;
    };
    virtual Result<Reply> post(const std::string& endpoint, std::string_view path,
                               std::string_view body, Millis timeout) = 0;
    virtual Result<std::unique_ptr<EtcdStream>> open_stream(const std::string& endpoint,
                                                            std::string_view path,
                                                            std::string_view body,
                                                            Millis connect_timeout) = 0;
};

// Whether a request can change etcd's state. A mutation whose answer was lost may have been
// applied, so it is never sent again and its outcome is Errc::unknown_outcome; a read is asked
// of another member.
enum class Mutation { no, yes };

// How current a read must be: linearizable (through the raft leader) or serializable (the
// answering member's local copy, possibly stale).
enum class ReadConsistency { linearizable, serializable };

// The kind of member member_add adds: a learner only replicates until it is promoted.
enum class MemberKind { voter, learner };

struct KeyValue {
    std::string key;
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;
    int64_t lease = 0;
};

struct RangeResult {
    int64_t revision = 0;  // the store's revision the read reflects
    std::vector<KeyValue> kvs;
    bool more = false;  // a limited read stopped before the end of the range
};

// One page of a range read.
struct RangePage {
    int64_t limit = 0;     // at most this many keys (0: no limit)
    int64_t revision = 0;  // read the store as of this revision (0: the latest)
};

// A txn condition on one key.
struct Compare {
    enum class Target { value, mod_revision, create_revision, version };
    enum class Op { equal, not_equal, greater, less };
    std::string key;
    Target target = Target::value;
    Op op = Op::equal;
    std::string value;   // for Target::value
    int64_t number = 0;  // for the revision and version targets

    static Compare value_is(std::string key, std::string value);
    static Compare mod_revision_is(std::string key, int64_t revision);
    static Compare create_revision_is(std::string key, int64_t revision);
    // create_revision == 0: the key does not exist.
    static Compare missing(std::string key);
    // create_revision > 0: the key exists.
    static Compare present(std::string key);
};

// A txn operation.
struct TxnOp {
    enum class Kind { put, remove, range };
    Kind kind = Kind::put;
    std::string key;
    std::string value;      // put
    std::string range_end;  // remove/range: empty for the key alone
    int64_t lease = 0;      // put: attach to this lease

    static TxnOp put(std::string key, std::string value, int64_t lease = 0);
    static TxnOp remove(std::string key, std::string range_end = {});
    static TxnOp range(std::string key, std::string range_end = {});
};

struct TxnResult {
    bool succeeded = false;
    int64_t revision = 0;
    // The results of the range ops of the branch that ran, in order.
    std::vector<RangeResult> ranges;
};

struct WatchEvent {
    enum class Type { put, remove };
    Type type = Type::put;
    KeyValue kv;  // for remove: key and mod_revision only
};

struct WatchBatch {
    // Every change up to this revision has been delivered (the last event's mod_revision, or a
    // progress notification's revision).
    int64_t revision = 0;
    std::vector<WatchEvent> events;
};

// A running watch; destroying it cancels it and waits for its thread.
class EtcdWatch {
  public:
    virtual ~EtcdWatch() = default;
};

struct LeaderInfo {
    std::string name;
    std::string key;  // the leader's election key: fence writes by its create_revision
    int64_t create_revision = 0;
    int64_t lease = 0;
    std::string value;
};

struct Member {
    uint64_t id = 0;
    std::string name;
    std::vector<std::string> peer_urls;
    std::vector<std::string> client_urls;
    bool is_learner = false;
};

struct EtcdStatus {
    uint64_t member_id = 0;  // the member that answered
    uint64_t leader = 0;
    uint64_t raft_index = 0;
    uint64_t raft_term = 0;
    int64_t db_size = 0;
    bool is_learner = false;
};

struct EtcdClientOptions {
    std::vector<std::string> endpoints;  // "http://127.0.0.1:7944"
    Millis call_timeout{5'000};
    Millis connect_timeout{2'000};
};

class EtcdClient {
  public:
    // The back-offs of watches and observers between reconnects are waited for on `clock`.
    EtcdClient(EtcdTransport& transport, EtcdClientOptions options,
               Clock& clock = SystemClock::instance());
    ~EtcdClient();

    // Reads one key, or [key, range_end) when range_end is given ("\0" = every key >= key).
    Result<RangeResult> range(std::string key, std::string range_end = {},
                              ReadConsistency consistency = ReadConsistency::linearizable);
    // A linearizable read of one page of [key, range_end).
    Result<RangeResult> range_page(std::string key, std::string range_end, RangePage page);
    // Every key of [key, range_end) as of one revision, read in pages of at most `page_keys` keys
    // so that no answer approaches the transport's body limit however large the range grows. A
    // page that fails other than by a refused connection is asked again with half as many keys
    // (large values); a revision compacted away between pages starts the read again (up to 3
    // times).
    Result<RangeResult> range_all(std::string key, std::string range_end,
                                  int64_t page_keys = kRangePageKeys);
    static constexpr int64_t kRangePageKeys = 1000;
    // The end of the range of every key starting with `prefix`.
    static std::string prefix_end(std::string_view prefix);

    Result<int64_t> put(std::string key, std::string value, int64_t lease = 0);
    // Returns how many keys were deleted.
    Result<int64_t> remove(std::string key, std::string range_end = {});
    Result<TxnResult> txn(std::vector<Compare> compare, std::vector<TxnOp> success,
                          std::vector<TxnOp> failure = {});

    // Leases. keep_alive returns the remaining TTL in seconds; Errc::not_found when the lease is
    // gone (expired or revoked).
    Result<int64_t> lease_grant(int64_t ttl_seconds);
    Result<int64_t> lease_keep_alive(int64_t lease);
    Status lease_revoke(int64_t lease);

    // Watches [key, range_end) from `start_revision` (0: from now). `on_batch` runs on the watch's
    // own thread, in revision order. After a disconnect the watch reconnects (cycling endpoints,
    // backing off up to a second) and resumes after the last revision it delivered, so no event is
    // lost or repeated. If etcd compacted past that revision, `on_error` gets Errc::gone once and
    // the watch ends: the caller re-reads and starts a new watch.
    Result<std::unique_ptr<EtcdWatch>> watch(std::string key, std::string range_end,
                                             int64_t start_revision,
                                             std::function<void(const WatchBatch&)> on_batch,
                                             std::function<void(const Status&)> on_error);

    // Elections. campaign blocks until this value leads `election` (or `timeout`: Errc::timeout)
    // and returns the leadership to fence writes with.
    Result<LeaderInfo> campaign(std::string election, int64_t lease, std::string value,
                                Millis timeout);
    Status resign(const LeaderInfo& leadership);
    // The current leader; Errc::not_found when there is none.
    Result<LeaderInfo> leader(std::string election);
    // Follows the election: `on_leader` runs on the observer's own thread with the current leader
    // and then with every new one (a leader is reported once, even across reconnects). Destroying
    // the handle stops it.
    std::unique_ptr<EtcdWatch> observe(std::string election,
                                       std::function<void(const LeaderInfo&)> on_leader);

    // Cluster membership and maintenance.
    Result<std::vector<Member>> member_list();
    // Adds a member; returns it with its id.
    Result<Member> member_add(std::vector<std::string> peer_urls, MemberKind kind);
    Status member_promote(uint64_t id);
    Status member_remove(uint64_t id);
    // Moves raft leadership to `target` (sent to the current leader, found by status()).
    Status transfer_leadership(uint64_t target);
    // The status of the member behind `endpoint` (or the first endpoint that answers).
    Result<EtcdStatus> status(std::optional<std::string> endpoint = std::nullopt);

    const EtcdClientOptions& options() const { return options_; }

  private:
    class WatchImpl;
    class ObserveImpl;
    // POSTs to the endpoints in turn until one is reached; decodes gateway errors.
    Result<std::string> call(std::string_view path, const std::string& body, Mutation mutation,
                             std::optional<Millis> timeout = std::nullopt);
    // One POST to one endpoint, its answer decoded (no failover).
    Result<std::string> call_endpoint(const std::string& endpoint, std::string_view path,
                                      const std::string& body, Mutation mutation, Millis timeout);

    EtcdTransport& transport_;
    EtcdClientOptions options_;
    Clock& clock_;
    std::atomic<size_t> preferred_{0};  // index of the endpoint that answered last
};

}  // namespace narad::meta
