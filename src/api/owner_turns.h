// OwnerTurns: the order in which a topic-wide consume on one node asks the sources of a topic
// whose partitions are spread over several owners (api/message_routes.cc). This node's own
// partitions come first, so consumers on every node drain their own node's partitions without a
// hop; but an owner not asked for kRemoteTurn is asked before them, so a consumer that calls
// only this node still reaches every partition however full this node's own stay.
//
// Thread-safe; header only. Times come from the caller's clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "base/mutex.h"

namespace narad::api {

// How long a topic-wide consume on one node may go without asking another owner of the topic's
// partitions: past this, that owner is asked before this node's own partitions.
inline constexpr Millis kRemoteTurn{50};

// When each (topic, other owner) was last asked by a topic-wide consume on this node.
class OwnerTurns {
  public:
    // The sources of one topic-wide consume in the order to ask them: the owners (indexes into
    // `owners`) whose turn is due, never asked or not for kRemoteTurn, then this node (kLocal),
    // then the other owners.
    static constexpr size_t kLocal = SIZE_MAX;
    std::vector<size_t> order(const std::string& topic, const std::vector<NodeId>& owners,
                              MonoTime now) {
        std::vector<size_t> due;
        std::vector<size_t> rest;
        MutexLock lock(mutex_);
        for (size_t i = 0; i < owners.size(); ++i) {
            auto it = last_asked_.find(key(topic, owners[i]));
            (it == last_asked_.end() || now - it->second >= kRemoteTurn ? due : rest).push_back(i);
        }
        due.push_back(kLocal);
        due.insert(due.end(), rest.begin(), rest.end());
        return due;
    }
    void asked(const std::string& topic, const NodeId& owner, MonoTime now) {
        MutexLock lock(mutex_);
        if (last_asked_.size() >= kMaxEntries) last_asked_.clear();  // deleted topics, old owners
        last_asked_[key(topic, owner)] = now;
    }

  private:
    static std::string key(const std::string& topic, const NodeId& owner) {
        return topic + '\0' + owner.value();
    }
    static constexpr size_t kMaxEntries = 4096;
    Mutex mutex_;
    std::map<std::string, MonoTime> last_asked_ GUARDED_BY(mutex_);
};

}  // namespace narad::api
