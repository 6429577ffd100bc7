#include "storage/producer_table.h"

#include <gtest/gtest.h>

namespace narad::storage {
namespace {

ProducerStamp stamp(uint64_t ingress, uint64_t sequence) {
    return ProducerStamp{IngressId(ingress), WalSeq(sequence)};
}

// Rule: a stamp at or below the committed sequence of its ingress is a duplicate; empty stamps
// never are.
TEST(ProducerTableTest, DuplicatesAreAtOrBelowTheCommittedSequence) {
    ProducerTable table;
    table.commit(stamp(1, 10));
    EXPECT_TRUE(table.is_duplicate(stamp(1, 10)));
    EXPECT_TRUE(table.is_duplicate(stamp(1, 3)));
    EXPECT_FALSE(table.is_duplicate(stamp(1, 11)));
    EXPECT_FALSE(table.is_duplicate(stamp(2, 1)));
    EXPECT_FALSE(table.is_duplicate(stamp(0, 0)));
    table.commit(stamp(1, 5));  // never lowers
    EXPECT_EQ(table.committed(IngressId(1)), WalSeq(10));
}

// Rule: beyond its capacity the table drops the least recently committed ingress.
TEST(ProducerTableTest, CapacityDropsTheLeastRecentlyCommittedIngress) {
    ProducerTable table(2);
    table.commit(stamp(1, 1));
    table.commit(stamp(2, 1));
    table.commit(stamp(1, 2));  // 1 is now more recent than 2
    table.commit(stamp(3, 1));
    EXPECT_EQ(table.size(), 2u);
    EXPECT_EQ(table.committed(IngressId(2)), WalSeq(0));
    EXPECT_EQ(table.committed(IngressId(1)), WalSeq(2));
    EXPECT_EQ(table.committed(IngressId(3)), WalSeq(1));
}

// Rule: the sidecar round-trips the table, its recency order and the covered offset, and any
// damage is detected.
TEST(ProducerTableTest, SidecarRoundTripsAndDetectsDamage) {
    ProducerTable table(3);
    table.commit(stamp(1, 5));
    table.commit(stamp(2, 6));
    table.commit(stamp(1, 7));
    std::string bytes = table.encode(Offset(99));
    ProducerTable loaded(3);
    auto covered = ProducerTable::decode(bytes, loaded);
    ASSERT_TRUE(covered.is_ok());
    EXPECT_EQ(*covered, Offset(99));
    EXPECT_EQ(loaded.committed(IngressId(1)), WalSeq(7));
    EXPECT_EQ(loaded.committed(IngressId(2)), WalSeq(6));
    loaded.commit(stamp(3, 1));
    loaded.commit(stamp(4, 1));  // drops 2, the least recent, as the original would have
    EXPECT_EQ(loaded.committed(IngressId(2)), WalSeq(0));
    EXPECT_EQ(loaded.committed(IngressId(1)), WalSeq(7));
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string damaged = bytes;
        damaged[i] = static_cast<char>(damaged[i] ^ 0x04);
        ProducerTable scratch;
        EXPECT_FALSE(ProducerTable::decode(damaged, scratch).is_ok()) << "byte " << i;
    }
    ProducerTable scratch;
    EXPECT_FALSE(ProducerTable::decode(bytes.substr(0, bytes.size() - 1), scratch).is_ok());
}

}  // namespace
}  // namespace narad::storage
