#include "storage/producer_table.h"

#include "base/bytes.h"
#include "base/checksum.h"

namespace narad::storage {
namespace {

constexpr size_t kChecksumAt = 16;

uint64_t sidecar_checksum(std::string_view bytes) {
    Checksummer sum;
    sum.update(bytes.substr(0, kChecksumAt));
    sum.update(bytes.substr(kProducersHeaderBytes));
    return sum.digest();
}

}  // namespace

WalSeq ProducerTable::committed(IngressId ingress) const {
    auto it = map_.find(ingress.value());
    return it == map_.end() ? WalSeq(0) : WalSeq(it->second->sequence);
}

bool ProducerTable::is_duplicate(ProducerStamp stamp) const {
    if (stamp.empty()) return false;
    auto it = map_.find(stamp.ingress.value());
    return it != map_.end() && stamp.sequence.value() <= it->second->sequence;
}

void ProducerTable::commit(ProducerStamp stamp) {
    if (stamp.empty()) return;
    auto it = map_.find(stamp.ingress.value());
    if (it != map_.end()) {
        it->second->sequence = std::max(it->second->sequence, stamp.sequence.value());
        order_.splice(order_.end(), order_, it->second);
        return;
    }
    order_.push_back(Entry{stamp.ingress.value(), stamp.sequence.value()});
    map_.emplace(stamp.ingress.value(), std::prev(order_.end()));
    if (map_.size() > capacity_) {
        map_.erase(order_.front().ingress);
        order_.pop_front();
    }
}

void ProducerTable::clear() {
    map_.clear();
    order_.clear();
}

std::string ProducerTable::encode(Offset covered) const {
    std::string out;
    out.reserve(kProducersHeaderBytes + order_.size() * kProducersEntryBytes);
    out.append(kProducersMagic);
    out.push_back(static_cast<char>(kProducersVersion));
    put_u32(out, static_cast<uint32_t>(order_.size()));
    put_u64(out, covered.value());
    put_u64(out, 0);  // checksum, below
    for (const Entry& entry : order_) {
        put_u64(out, entry.ingress);
        put_u64(out, entry.sequence);
    }
    store_u64(out.data() + kChecksumAt, sidecar_checksum(out));
    return out;
}

Result<Offset> ProducerTable::decode(std::string_view bytes, ProducerTable& table) {
    auto bad = [](const char* why) {
        return Status(Errc::corrupt, std::string("producers sidecar: ") + why);
    };
    if (bytes.size() < kProducersHeaderBytes) return bad("shorter than its header");
    if (bytes.substr(0, 3) != kProducersMagic ||
        static_cast<uint8_t>(bytes[3]) != kProducersVersion) {
        return bad("wrong magic or version");
    }
    uint32_t count = load_u32(bytes.data() + 4);
    if (bytes.size() != kProducersHeaderBytes + uint64_t{count} * kProducersEntryBytes) {
        return bad("short or long");
    }
    if (load_u64(bytes.data() + kChecksumAt) != sidecar_checksum(bytes)) {
        return bad("checksum mismatch");
    }
    if (count > table.capacity_) return bad("more entries than the table holds");
    table.clear();
    const char* p = bytes.data() + kProducersHeaderBytes;
    for (uint32_t i = 0; i < count; ++i, p += kProducersEntryBytes) {
        ProducerStamp stamp{IngressId(load_u64(p)), WalSeq(load_u64(p + 8))};
        if (stamp.empty()) return bad("an entry has ingress 0");
        table.commit(stamp);  // entries are stored least recently used first
    }
    return Offset(load_u64(bytes.data() + 8));
}

}  // namespace narad::storage
