// The node-to-node commit (docs/formats/commit-rpc.md) against hostile input on both sides: the
// owner's decoder of a commit body (commit_codec::decode), fed mutated bodies resealed with a
// valid checksum so the structural checks are what stands (wild counts and lengths, tears,
// trailing bytes), and the sender's reading of the owner's answer (RoutingCommitter), fed any
// status, any body and every transport failure. Neither crashes or throws; the decoder accepts
// only a body that is exactly the encoding of what it returns; the sender reports success only
// for 200/204 and maps every other answer as documented. Fixed seeds and iteration counts.
#include <gtest/gtest.h>

#include <deque>
#include <exception>
#include <random>

#include "base/bytes.h"
#include "base/checksum.h"
#include "meta/fake_meta_store.h"
#include "wal/commit_codec.h"
#include "wal/routing_committer.h"
#include "wal/wal_test_util.h"

namespace narad::wal {
namespace {

using Rng = std::mt19937_64;

size_t pick(Rng& rng, size_t n) { return static_cast<size_t>(rng() % n); }

std::string random_bytes(Rng& rng, size_t size) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    return bytes;
}

// A valid body of 1 to 8 records (keys and values of random bytes, also empty) and its parts.
std::string valid_body(Rng& rng) {
    std::vector<std::string> storage;
    size_t count = 1 + pick(rng, 8);
    for (size_t i = 0; i < 2 * count; ++i) storage.push_back(random_bytes(rng, pick(rng, 40)));
    std::vector<storage::Record> records;
    for (size_t i = 0; i < count; ++i) {
        records.push_back({storage[2 * i],
                           storage[2 * i + 1],
                           static_cast<int64_t>(rng()),
                           {IngressId(rng()), WalSeq(rng())}});
    }
    return commit_codec::encode(records).value();
}

// Replaces the checksum with the right one for the tampered bytes before it.
std::string reseal(std::string body) {
    if (body.size() < commit_codec::kTrailerBytes) return body;
    body.resize(body.size() - commit_codec::kTrailerBytes);
    put_u64(body, checksum64(body));
    return body;
}

// One to three edits aimed at the format: bytes flipped, cut, inserted or repeated, and the
// count or a length field overwritten with a value near a limit or far past it.
std::string mutate(std::string body, Rng& rng) {
    static constexpr uint32_t kLengths[] = {
        0, 1, 7, 0xffffffffu, 0x7fffffffu, 0x04000000u, 0x04000001u, 100'000, 100'001, 32, 33};
    for (int e = 0, n = 1 + static_cast<int>(pick(rng, 3)); e < n; ++e) {
        if (body.empty()) break;
        size_t at = pick(rng, body.size());
        switch (pick(rng, 6)) {
            case 0:
                body[at] = static_cast<char>(body[at] ^ (1 << pick(rng, 8)));
                break;
            case 1:
                body.resize(at);
                break;
            case 2:
                body.insert(at, random_bytes(rng, 1 + pick(rng, 16)));
                break;
            case 3:
                body.insert(at, body.substr(pick(rng, body.size()), 1 + pick(rng, 48)));
                break;
            case 4:  // the record count
                if (body.size() >= commit_codec::kHeaderBytes) {
                    store_u32(body.data() + 8, kLengths[pick(rng, std::size(kLengths))]);
                }
                break;
            default:  // a 32-bit field anywhere (a key or value length, most likely)
                if (at + 4 <= body.size()) {
                    store_u32(body.data() + at, kLengths[pick(rng, std::size(kLengths))]);
                }
                break;
        }
    }
    return body;
}

Result<std::vector<storage::Record>> decode(const std::string& body) {
    try {
        return commit_codec::decode(body);
    } catch (const std::exception& e) {
        ADD_FAILURE() << "decode threw " << e.what();
        return Status(Errc::internal, "threw");
    }
}

// Rule: an owner never crashes on a commit body and takes it only when it is exactly the
// encoding of the records it returns (so nothing was skipped, padded or read past), every key and
// value inside the body; an edited body without a fresh checksum is always refused.
TEST(CommitRpcFuzzTest, CommitBodiesAreRefusedOrDecodedCanonically) {
    Rng rng(271828);
    size_t accepted = 0;
    constexpr int kIterations = 100'000;
    for (int i = 0; i < kIterations; ++i) {
        std::string original = valid_body(rng);
        std::string body;
        bool stale = false;  // edited, the checksum left as it was
        switch (pick(rng, 8)) {
            case 0:
                body = random_bytes(rng, pick(rng, 120));
                if (pick(rng, 2) == 0 && body.size() >= 8) body.replace(0, 8, original, 0, 8);
                break;
            case 1:
                body = original;
                break;
            case 2:  // mutated, checksum left stale
                body = mutate(original, rng);
                stale = body != original;
                break;
            default:  // mutated and resealed: the structure alone must hold
                body = reseal(mutate(original, rng));
                break;
        }
        auto decoded = decode(body);
        if (!decoded.is_ok()) {
            ASSERT_EQ(decoded.code(), Errc::invalid_argument) << decoded.status().to_string();
            ASSERT_NE(body, original) << "refused a valid body at iteration " << i;
            continue;
        }
        ++accepted;
        ASSERT_FALSE(stale) << "accepted an edited body whose checksum is stale, iteration " << i;
        ASSERT_GE(decoded->size(), 1u);
        ASSERT_LE(decoded->size(), commit_codec::kMaxRecords);
        for (const auto& record : *decoded) {
            ASSERT_GE(record.key.data(), body.data());
            ASSERT_LE(record.value.data() + record.value.size(), body.data() + body.size());
            ASSERT_LE(record.key.size() + record.value.size(),
                      commit_codec::kMaxRecordPayloadBytes);
        }
        auto again = commit_codec::encode(*decoded);
        ASSERT_TRUE(again.is_ok()) << again.status().to_string();
        ASSERT_EQ(*again, body) << "accepted a body that is not the encoding of what it read, "
                                << "iteration " << i;
    }
    EXPECT_GT(accepted, static_cast<size_t>(kIterations / 10));
    ::testing::Test::RecordProperty("accepted", static_cast<int>(accepted));
}

// Answers each call with the next scripted reply.
class ScriptedPeers final : public PeerClient {
  public:
    Result<PeerReply> call(const NodeId&, std::string_view, std::string_view, std::string_view,
                           std::string_view, Millis) override {
        return reply;
    }
    Result<PeerReply> reply = PeerReply{204, "", ""};
};

// Rule: whatever the owner answers, the sender never crashes, reports success only for 200 and
// 204, and maps the rest as routing_committer.h documents: 404 not_found (drop), 421 not_owner,
// 423 frozen, any other status unavailable, and the transport's failures as they came (an
// unknown member as unavailable, never not_found); an error quotes at most 200 bytes of the body.
TEST(CommitRpcFuzzTest, OwnerAnswersMapOntoTheDocumentedOutcomes) {
    meta::FakeMetaStore store;
    ASSERT_TRUE(store.create_topic_owned_by("t", {"a", "b", "c"}).is_ok());
    store.update([](meta::MetaState& state) {
        for (const char* node : {"a", "b", "c"}) {
            state.members[NodeId(node)] = meta::MemberInfo{.id = NodeId(node)};
        }
    });
    testing::FakeCommitter local;
    ScriptedPeers peers;
    RoutingCommitter routing(store, NodeId("a"), local, peers);
    std::vector<storage::Record> records{{"k", "v", 1, {IngressId(9), WalSeq(1)}}};

    Rng rng(161803);
    static constexpr int kStatuses[] = {200, 204, 404, 421, 423, 500, 503, 409,
                                        0,   -1,  100, 302, 429, 999, 201, 400};
    for (int i = 0; i < 5'000; ++i) {
        Errc expected = Errc::ok;
        if (pick(rng, 10) == 0) {
            static constexpr Errc kFailures[] = {Errc::peer_error, Errc::unknown_outcome,
                                                 Errc::not_found, Errc::timeout};
            Errc failure = kFailures[pick(rng, std::size(kFailures))];
            peers.reply = Status(failure, "transport");
            expected = failure == Errc::not_found ? Errc::unavailable : failure;
        } else {
            int status = kStatuses[pick(rng, std::size(kStatuses))];
            std::string body = random_bytes(rng, pick(rng, 50) == 0 ? 100'000 : pick(rng, 400));
            peers.reply = PeerReply{status, body, "application/json"};
            switch (status) {
                case 200:
                case 204:
                    expected = Errc::ok;
                    break;
                case 404:
                    expected = Errc::not_found;
                    break;
                case 421:
                    expected = Errc::not_owner;
                    break;
                case 423:
                    expected = Errc::frozen;
                    break;
                default:
                    expected = Errc::unavailable;
                    break;
            }
        }
        Status status;
        try {
            status = routing.commit("t", "inc-1", PartitionId(1 + pick(rng, 2)), records);
        } catch (const std::exception& e) {
            FAIL() << "commit threw " << e.what() << " at iteration " << i;
        }
        ASSERT_EQ(status.code(), expected) << status.to_string() << " at iteration " << i;
        ASSERT_LE(status.message().size(), 300u) << "iteration " << i;
    }
    EXPECT_EQ(local.committed(), 0u) << "a remote partition was committed locally";
}

}  // namespace
}  // namespace narad::wal
