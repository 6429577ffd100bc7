// Strong types for the numbers and names that must never be mixed up: an offset is not a partition
// index, a WAL sequence is not an offset (Redpanda's named_type). Plain values, any thread.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace narad {

template <typename T, typename Tag>
class NamedType {
  public:
    using value_type = T;

    constexpr NamedType() = default;
    constexpr explicit NamedType(T value) : value_(std::move(value)) {}

    constexpr const T& value() const { return value_; }
    constexpr auto operator<=>(const NamedType&) const = default;

  private:
    T value_{};
};

// A record's position in a partition log. Offsets are dense: every offset below the high watermark
// names exactly one record.
class Offset : public NamedType<uint64_t, struct OffsetTag> {
  public:
    using NamedType::NamedType;
    constexpr Offset operator+(uint64_t delta) const { return Offset(value() + delta); }
    constexpr Offset operator-(uint64_t delta) const { return Offset(value() - delta); }
    // The number of offsets in [other, *this).
    constexpr uint64_t distance_from(Offset other) const { return value() - other.value(); }
    constexpr Offset next() const { return Offset(value() + 1); }
};

// A partition's index within its topic (0-based).
using PartitionId = NamedType<uint32_t, struct PartitionIdTag>;

// The sequence number of a record in this node's ingress WAL; increases by one per record.
using WalSeq = NamedType<uint64_t, struct WalSeqTag>;

// Identifies one ingress WAL for deduplication: random, fixed when the WAL directory is created, so
// a node that comes back with an empty WAL never collides with its earlier sequence numbers.
using IngressId = NamedType<uint64_t, struct IngressIdTag>;

// One reservation of one offset by one consume: unique per reservation, never reused (also across
// restarts), so a receipt handle names exactly one delivery. 0 names none (a read-only replay).
using LeaseId = NamedType<uint64_t, struct LeaseIdTag>;

// Names one freeze of a partition for a move: random, fresh each time the source freezes the
// partition, held in the metastore's freeze key; the flip compares it. Empty names none.
using FreezeToken = NamedType<std::string, struct FreezeTokenTag>;

// A node's name in the cluster (defaults to the host name).
using NodeId = NamedType<std::string, struct NodeIdTag>;

// A topic's incarnation: a fresh random id each time a name is created, so a deleted and recreated
// topic never serves the old one's data.
using IncarnationId = NamedType<std::string, struct IncarnationIdTag>;

}  // namespace narad

template <typename T, typename Tag>
struct std::hash<narad::NamedType<T, Tag>> {
    size_t operator()(const narad::NamedType<T, Tag>& v) const { return std::hash<T>()(v.value()); }
};
template <>
struct std::hash<narad::Offset> {
    size_t operator()(const narad::Offset& v) const { return std::hash<uint64_t>()(v.value()); }
};
