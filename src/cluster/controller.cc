#include "cluster/controller.h"

#include <algorithm>

#include "base/log.h"
#include "base/metrics.h"
#include "base/mutex.h"
#include "base/thread_pool.h"
#include "cluster/placement.h"
#include "cluster/planner.h"
#include "meta/codec.h"

namespace narad::cluster {
namespace {

// How long a decommissioned node's etcd member keeps serving it while it stops.
constexpr Millis kDepartureGrace{30'000};

bool dead_or_gone(const meta::MetaState& state, const NodeId& node, MonoTime now,
                  Millis dead_after) {
    return state.find_member(node) == nullptr || state.is_dead(node, now, dead_after);
}

// narad_colocated_child_partitions, from the view a planner pass reads (0 off the controller).
void report_colocation(const meta::MetaState& state) {
    static metrics::Gauge& colocated =
        metrics::Registry::global()
            .gauge("narad_colocated_child_partitions",
                   "Child partitions whose owner also owns the same-numbered partition of their "
                   "parent (on the controller).")
            .get();
    colocated.set(static_cast<double>(count_colocated_child_partitions(state)));
}

}  // namespace

Controller::Controller(meta::EtcdMetaStore& store, Membership& membership, Clock& clock,
                       NodeId self, ControllerOptions options)
    : store_(store),
      membership_(membership),
      clock_(clock),
      self_(std::move(self)),
      options_(options) {}

Controller::~Controller() { stop(); }

void Controller::start() {
    thread_ = named_thread("narad-control", [this] { run(); });
}

void Controller::stop() {
    {
        MutexLock lock(mutex_);
        if (stopping_ && !thread_.joinable()) return;
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void Controller::poke() {
    {
        MutexLock lock(mutex_);
        poked_ = true;
    }
    wake_.notify_all();
}

void Controller::set_hooks(ControllerHooks hooks) {
    MutexLock lock(hooks_mutex_);
    hooks_ = std::move(hooks);
}

ControllerHooks Controller::hooks() const {
    MutexLock lock(hooks_mutex_);
    return hooks_;
}

bool Controller::should_stand_aside(const meta::MetaState& state) const {
    const meta::MemberInfo* me = state.find_member(self_);
    if (me == nullptr || !me->draining) return false;
    for (const auto& [node, member] : state.members) {
        if (node != self_ && !member.draining && state.is_live(node)) return true;
    }
    return false;
}

bool Controller::pause(Millis delay) {
    MutexLock lock(mutex_);
    clock_.wait_for(lock, wake_, delay, [&]() REQUIRES(mutex_) { return stopping_ || poked_; });
    poked_ = false;
    return !stopping_;
}

void Controller::run() {
    while (true) {
        meta::LeaderInfo leadership;
        if (!campaign(leadership)) break;
        uint64_t generation = membership_.generation();
        Status took = take_office(leadership);
        if (!took.is_ok()) {
            NARAD_LOG_WARN("controller start-up reconcile failed: {}; resigning", took.to_string());
            store_.set_fence(std::nullopt);
            (void)store_.client().resign(leadership);
            if (!pause(Millis(1'000))) break;
            continue;
        }
        MonoTime next_tick = clock_.now();
        bool stopping = false;
        bool stepping_down = false;
        while (true) {
            if (!still_leading(leadership, generation)) {
                NARAD_LOG_WARN("node {} is no longer the controller", self_.value());
                break;
            }
            meta::MetaSnapshot view = store_.snapshot();
            if (should_stand_aside(*view)) {
                NARAD_LOG_INFO("node {} is draining: stepping down as controller", self_.value());
                stepping_down = true;
                break;
            }
            MonoTime now = clock_.now();
            if (now >= next_tick || view->members_version != planned_members_version_) {
                note_down_members(*view);
                planned_members_version_ = view->members_version;
                // The next tick counts from this one's start: time that passes during the pass
                // (a clock advanced meanwhile) is not skipped.
                next_tick = now + options_.tick;
                rebalance();
            }
            // Checked at the faster cadence: a joining node waits on its promotion (etcd takes
            // one learner at a time), and the check is one local member-list call.
            promote_learners();
            if (!pause(options_.leadership_check)) {
                stopping = true;
                break;
            }
        }
        leading_ = false;
        store_.set_fence(std::nullopt);
        report_blocked(meta::MetaState{}, {});  // only the controller reports its reasons
        report_colocation(meta::MetaState{});
        note_decommission_reasons({});
        if (stepping_down) {
            Status resigned = store_.client().resign(leadership);
            if (!resigned.is_ok()) {
                NARAD_LOG_WARN("stepping down as controller: {}", resigned.to_string());
            }
            if (!pause(options_.leadership_check)) break;
            continue;
        }
        if (stopping) {
            Status resigned = store_.client().resign(leadership);
            if (resigned.is_ok()) {
                NARAD_LOG_INFO("node {} resigned as controller", self_.value());
            } else {
                NARAD_LOG_WARN("resigning as controller failed: {}", resigned.to_string());
            }
            break;
        }
    }
}

bool Controller::campaign(meta::LeaderInfo& leadership) {
    while (true) {
        {
            MutexLock lock(mutex_);
            if (stopping_) return false;
        }
        int64_t lease = membership_.lease();
        if (lease == 0 || should_stand_aside(*store_.snapshot())) {
            if (!pause(Millis(500))) return false;
            continue;
        }
        auto elected = store_.client().campaign(store_.keys().election(), lease, self_.value(),
                                                options_.campaign_wait);
        if (elected.is_ok()) {
            leadership = std::move(*elected);
            return true;
        }
        if (elected.code() != Errc::timeout) {
            NARAD_LOG_DEBUG("controller campaign: {}", elected.status().to_string());
            if (!pause(Millis(1'000))) return false;
        }
    }
}

Status Controller::take_office(const meta::LeaderInfo& leadership) {
    store_.set_fence(meta::Fence{leadership.key, leadership.create_revision});
    NARAD_ASSIGN_OR_RETURN(meta::MetaSnapshot view, store_.sync());
    // The reconcile: every partition of every topic has an assignment (topic writes are single
    // txns, so a gap means a damaged store, which is reported rather than guessed at).
    for (const auto& [name, topic] : view->topics) {
        for (uint32_t p = 0; p < topic.partitions; ++p) {
            if (view->find_assignment(name, PartitionId(p)) == nullptr) {
                NARAD_LOG_ERROR("topic {} partition {} has no assignment in the metastore", name,
                                p);
            }
        }
    }
    note_down_members(*view);
    logged_blocked_.clear();  // a new term logs every blocked move once again
    std::string ready = store_.keys().ready();
    NARAD_ASSIGN_OR_RETURN(
        meta::TxnResult written,
        store_.client().txn(
            {meta::Compare::create_revision_is(leadership.key, leadership.create_revision)},
            {meta::TxnOp::put(ready,
                              meta::encode_controller_ready(self_, leadership.create_revision))}));
    if (!written.succeeded) {
        return Status(Errc::conflict, "lost the election before the start-up reconcile ended");
    }
    NARAD_RETURN_IF_ERROR(store_.wait_for_revision(written.revision, Millis(10'000)));
    leading_ = true;
    NARAD_LOG_INFO("node {} is the controller (election revision {})", self_.value(),
                   leadership.create_revision);
    return Status::ok();
}

bool Controller::still_leading(const meta::LeaderInfo& leadership, uint64_t generation) {
    if (membership_.generation() != generation) return false;  // our lease went
    auto read = store_.client().range(leadership.key);
    if (!read.is_ok()) {
        // Cannot tell: keep the fence (a write under it fails if we were deposed) and ask again.
        NARAD_LOG_DEBUG("controller leadership check: {}", read.status().to_string());
        return true;
    }
    return !read->kvs.empty() && read->kvs.front().create_revision == leadership.create_revision;
}

void Controller::note_down_members(const meta::MetaState& state) {
    MonoTime now = clock_.now();
    for (const auto& [node, since] : state.down_since) {
        bool dead = now - since >= options_.dead_after;
        if (dead && reported_dead_.insert(node).second) {
            NARAD_LOG_WARN("member {} is dead: its liveness key has been gone for {} s",
                           node.value(),
                           std::chrono::duration_cast<std::chrono::seconds>(now - since).count());
        }
    }
    for (auto it = reported_dead_.begin(); it != reported_dead_.end();) {
        if (state.is_live(*it)) {
            NARAD_LOG_INFO("member {} is alive again", it->value());
            it = reported_dead_.erase(it);
        } else {
            ++it;
        }
    }
}

void Controller::rebalance() {
    MutexLock planning(plan_mutex_);
    auto view = store_.sync();
    if (!view.is_ok()) {
        NARAD_LOG_WARN("controller: no linearizable view to plan moves from: {}",
                       view.status().to_string());
        return;
    }
    const meta::MetaState& state = **view;
    report_colocation(state);
    update_dead_verdicts(state);
    PlannerInput input;
    for (const auto& [name, topic] : state.topics) {
        if (topic.role == meta::TopicRole::child && !topic.parent.empty()) {
            input.parents[name] = topic.parent;
        }
    }
    input.assignments = clear_dead_targets(state);
    report_blocked(state, input.assignments);
    input.max_in_flight = options_.max_in_flight_moves;
    for (const auto& [node, member] : state.members) {
        if (state.is_live(node) && !member.draining) input.receivers.insert(node);
    }
    // Partitions of an owner that is down (or unknown) stay put: their bytes are on its disk.
    for (const auto& [key, assignment] : state.assignments) {
        if (!state.is_live(assignment.owner)) input.stay_put.insert(assignment.owner);
    }
    std::vector<PlannedMove> plan = plan_moves(input);
    if (plan.empty()) return drive_decommissions();
    std::vector<meta::TargetChange> changes;
    for (const PlannedMove& move : plan) {
        changes.push_back(
            meta::TargetChange{move.partition, input.assignments.at(move.partition), move.to});
    }
    auto applied = store_.set_targets(changes);
    if (!applied.is_ok()) {
        NARAD_LOG_WARN("controller: writing move targets failed: {}", applied.status().to_string());
        return;
    }
    for (const PlannedMove& move : plan) {
        NARAD_LOG_INFO("controller: move '{}' partition {} from {} to {}", move.partition.topic,
                       move.partition.partition.value(), move.from.value(), move.to.value());
    }
    if (*applied < changes.size()) {
        NARAD_LOG_INFO(
            "controller: {} of {} planned moves were outdated by the time they were "
            "written; the next pass re-plans",
            changes.size() - *applied, changes.size());
    }
    drive_decommissions();
}

void Controller::drive_decommissions() {
    meta::MetaSnapshot view = store_.snapshot();
    const meta::MetaState& state = *view;
    std::vector<NodeId> draining;
    for (const auto& [node, member] : state.members) {
        if (member.draining) draining.push_back(node);
    }
    // A departure still under way is finished first: one node leaves at a time.
    bool settled = finish_departures(state);
    if (draining.empty()) return note_decommission_reasons({});
    auto etcd = read_etcd_configuration(store_.client());
    if (!etcd.is_ok()) {
        NARAD_LOG_WARN("controller: cannot read etcd's configuration for the decommission pass: {}",
                       etcd.status().to_string());
        return;
    }
    DecommissionView dv{state,
                        *etcd,
                        clock_.now(),
                        options_.dead_after,
                        options_.min_voters,
                        options_.max_in_flight_moves};
    ControllerHooks ask = hooks();
    std::map<NodeId, std::vector<DecommissionReason>> reasons;
    std::vector<NodeId> ready;
    for (const NodeId& node : draining) {
        std::vector<DecommissionReason> blockers = decommission_blockers(dv, node);
        if (blockers.empty() && node == self_) {
            blockers.push_back({"leader_transfer",
                                "it leads the cluster; leadership moves to another voter first"});
        }
        bool holds_nothing =
            cluster::holds_nothing(drain_load(state, node, dv.now, options_.dead_after));
        if (!holds_nothing) {
            // Partitions still moving off are progress; leadership moves only at the end.
            std::erase_if(blockers, [](const DecommissionReason& reason) {
                return reason.code == "leader_transfer";
            });
            if (blockers.empty()) continue;
        }
        if (blockers.empty()) {
            blockers = node_status_reasons(
                ask.node_status
                    ? ask.node_status(node)
                    : Result<NodeStatus>(Status(Errc::unavailable, "node status is not wired")));
        }
        for (const DecommissionReason& reason : blockers) {
            if (reason.code == "leader_transfer" && etcd->leader == node) {
                transfer_etcd_leadership(node, state);
            }
        }
        if (blockers.empty()) ready.push_back(node);
        reasons[node] = std::move(blockers);
    }
    note_decommission_reasons(reasons);
    if (ready.empty() || !settled) return;
    // One node leaves per pass; a dead voter's vote goes before a live one's.
    std::stable_sort(ready.begin(), ready.end(), [&](const NodeId& a, const NodeId& b) {
        return state.is_dead(a, dv.now, dv.dead_after) && !state.is_dead(b, dv.now, dv.dead_after);
    });
    retire(ready.front(), dv);
}

void Controller::transfer_etcd_leadership(const NodeId& from, const meta::MetaState& state) {
    auto members = store_.client().member_list();
    if (!members.is_ok()) return;
    for (const meta::Member& member : *members) {
        NodeId node(member.name);
        const meta::MemberInfo* info = state.find_member(node);
        if (member.is_learner || node == from || info == nullptr || info->draining ||
            !state.is_live(node)) {
            continue;
        }
        Status moved = store_.client().transfer_leadership(member.id);
        if (moved.is_ok()) {
            NARAD_LOG_INFO("controller: moved etcd leadership from draining {} to {}", from.value(),
                           member.name);
        } else {
            NARAD_LOG_WARN("controller: moving etcd leadership off {} to {} failed: {}",
                           from.value(), member.name, moved.to_string());
        }
        return;
    }
}

void Controller::retire(const NodeId& node, const DecommissionView& view) {
    const EtcdConfiguration& etcd = view.etcd;
    bool voter = etcd.voters.count(node) > 0;
    if (voter && etcd.voters.size() - 1 < options_.voters) {
        // Keep the voter count: a learner already catching up is promoted by promote_learners;
        // otherwise a live node hosting no etcd member starts one.
        bool catching_up = false;
        for (const NodeId& learner : etcd.learners) catching_up |= learner != node;
        if (catching_up) {
            NARAD_LOG_INFO("controller: {} leaves etcd once the learner replacing it is promoted",
                           node.value());
            return;
        }
        if (auto replacement = voter_replacement(view, node)) {
            ControllerHooks ask = hooks();
            Status hosted = ask.host_etcd ? ask.host_etcd(*replacement)
                                          : Status(Errc::unavailable, "host_etcd is not wired");
            if (hosted.is_ok()) {
                NARAD_LOG_INFO(
                    "controller: {} started an etcd learner to take the vote of draining {}",
                    replacement->value(), node.value());
            } else {
                NARAD_LOG_WARN("controller: asking {} to host an etcd member failed: {}",
                               replacement->value(), hosted.to_string());
            }
            return;
        }
    }
    Status dropped = store_.remove_drained_member(node);
    if (!dropped.is_ok()) {
        NARAD_LOG_WARN("controller: removing {}'s member record failed: {}", node.value(),
                       dropped.to_string());
        return;
    }
    NARAD_LOG_INFO(
        "controller: {} is decommissioned: it owns no partition and its ingress WAL is empty; its "
        "member record is removed, and its etcd member once it has stopped",
        node.value());
}

bool Controller::finish_departures(const meta::MetaState& state) {
    auto departed = store_.departed_members();
    if (!departed.is_ok()) {
        NARAD_LOG_WARN("controller: reading decommissioned members failed: {}",
                       departed.status().to_string());
        return false;
    }
    MonoTime now = clock_.now();
    std::map<NodeId, MonoTime> pending;
    for (const NodeId& node : *departed) {
        auto since = departed_since_.find(node);
        MonoTime first = since == departed_since_.end() ? now : since->second;
        // Its etcd member serves the node until it has seen its record go and stopped (its
        // liveness key goes with it); one that does not stop is cut off after the grace.
        if (state.is_live(node) && now - first < kDepartureGrace) {
            pending[node] = first;
            continue;
        }
        auto members = store_.client().member_list();
        if (!members.is_ok()) {
            pending[node] = first;
            continue;
        }
        Status removed = Status::ok();
        for (const meta::Member& member : *members) {
            if (member.name != node.value()) continue;
            removed = store_.client().member_remove(member.id);
            if (removed.is_ok()) {
                NARAD_LOG_INFO("controller: removed decommissioned {}'s etcd {} (id {:x})",
                               node.value(), member.is_learner ? "learner" : "voter", member.id);
            }
        }
        if (removed.is_ok()) removed = store_.finish_departure(node);
        if (!removed.is_ok()) {
            NARAD_LOG_WARN("controller: finishing the departure of {} failed: {}", node.value(),
                           removed.to_string());
            pending[node] = first;
            continue;
        }
        NARAD_LOG_INFO("controller: {} has left the cluster", node.value());
    }
    departed_since_ = std::move(pending);
    return departed_since_.empty();
}

void Controller::note_decommission_reasons(
    const std::map<NodeId, std::vector<DecommissionReason>>& reasons) {
    auto& blocked = metrics::Registry::global().gauge(
        "narad_decommission_blocked",
        "1 for each reason a draining node cannot progress (on the controller).",
        {"node", "reason"});
    for (auto it = logged_decommission_.begin(); it != logged_decommission_.end();) {
        auto now = reasons.find(it->first);
        std::set<std::string> current;
        if (now != reasons.end()) {
            for (const DecommissionReason& reason : now->second) current.insert(reason.code);
        }
        for (const std::string& code : it->second) {
            if (current.count(code) == 0) blocked.remove({it->first.value(), code});
        }
        if (current.empty() && !it->second.empty() && now != reasons.end()) {
            NARAD_LOG_INFO("controller: decommission of {} no longer blocked", it->first.value());
        }
        if (now == reasons.end()) {
            it = logged_decommission_.erase(it);
        } else {
            std::set<std::string> kept;
            for (const std::string& code : it->second) {
                if (current.count(code) > 0) kept.insert(code);
            }
            it->second = std::move(kept);
            ++it;
        }
    }
    for (const auto& [node, list] : reasons) {
        std::set<std::string>& logged = logged_decommission_[node];
        for (const DecommissionReason& reason : list) {
            blocked.with({node.value(), reason.code}).set(1);
            if (!logged.insert(reason.code).second) continue;
            if (reason_clears_by_itself(reason.code) &&
                reason.message.find("dead or no longer a member") == std::string::npos) {
                NARAD_LOG_WARN("controller: decommission waiting: node={} reason={} detail={}",
                               node.value(), reason.code, reason.message);
            } else {
                NARAD_LOG_ERROR("controller: decommission blocked: node={} reason={} detail={}",
                                node.value(), reason.code, reason.message);
            }
        }
    }
}

void Controller::update_dead_verdicts(const meta::MetaState& state) {
    MonoTime now = clock_.now();
    for (const NodeId& node : state.declared_dead) {
        if (!state.is_live(node) && state.find_member(node) != nullptr) continue;
        Status cleared = store_.clear_dead(node);
        if (cleared.is_ok()) {
            NARAD_LOG_INFO("controller: member {} is back; its dead verdict is cleared",
                           node.value());
        }
    }
    for (const auto& [node, since] : state.down_since) {
        if (state.is_live(node) || state.declared_dead.count(node) > 0) continue;
        auto down = std::chrono::duration_cast<Millis>(now - since);
        if (down < options_.force_promote_after) continue;
        auto declared = store_.declare_dead(node, down.count());
        if (declared.is_ok() && *declared) {
            NARAD_LOG_WARN(
                "controller: member {} has been down for {} s on this controller's clock; "
                "declared dead (its partitions' moves may now force-promote a complete copy)",
                node.value(), down.count() / 1000);
        }
    }
}

std::map<meta::PartitionKey, meta::Assignment> Controller::clear_dead_targets(
    const meta::MetaState& state) {
    std::map<meta::PartitionKey, meta::Assignment> assignments = state.assignments;
    // etcd's configuration: the names of its voters and learners.
    std::set<std::string> configured;
    bool configuration_known = false;
    if (auto members = store_.client().member_list(); members.is_ok()) {
        configuration_known = true;
        for (const meta::Member& member : *members) configured.insert(member.name);
    }
    MonoTime now = clock_.now();
    std::vector<meta::TargetChange> clears;
    std::vector<std::string> why;
    for (const auto& [key, assignment] : state.assignments) {
        const NodeId& target = assignment.target;
        if (target.value().empty()) continue;
        const meta::MemberInfo* member = state.find_member(target);
        std::string reason;
        if (member == nullptr) {
            reason = "is no longer a member";
        } else if (!state.is_live(target)) {
            auto since = state.down_since.find(target);
            bool down_long = since != state.down_since.end() &&
                             now - since->second > options_.dead_target_abort_after;
            bool left_configuration = configuration_known &&
                                      member->etcd_role != meta::EtcdRole::none &&
                                      configured.count(target.value()) == 0;
            if (down_long) {
                reason = "has been dead for longer than the dead-target bound";
            } else if (left_configuration) {
                reason = "is out of etcd's configuration and dead";
            }
        } else if (member->draining &&
                   !dead_or_gone(state, assignment.owner, now, options_.dead_after)) {
            // A move from a dead or gone source is left alone: the draining node may hold the
            // only live copy, which it force-promotes and then drains off.
            reason = "is draining (decommission)";
        }
        if (reason.empty()) continue;
        clears.push_back(meta::TargetChange{key, assignment, NodeId()});
        why.push_back(std::move(reason));
    }
    if (clears.empty()) return assignments;
    auto applied = store_.set_targets(clears);
    if (!applied.is_ok()) {
        NARAD_LOG_WARN("controller: clearing the targets of moves to gone destinations failed: {}",
                       applied.status().to_string());
        return assignments;
    }
    // Read back which took (a change whose assignment moved on is skipped).
    meta::MetaSnapshot after = store_.snapshot();
    for (size_t i = 0; i < clears.size(); ++i) {
        const meta::TargetChange& change = clears[i];
        const meta::Assignment* now_assigned =
            after->find_assignment(change.partition.topic, change.partition.partition);
        if (now_assigned == nullptr || now_assigned->target == change.expected.target) continue;
        assignments[change.partition] = *now_assigned;
        NARAD_LOG_WARN(
            "controller: cleared the target of '{}' partition {}: its destination {} {}; the "
            "partition stays with {}",
            change.partition.topic, change.partition.partition.value(),
            change.expected.target.value(), why[i], change.expected.owner.value());
    }
    return assignments;
}

void Controller::report_blocked(const meta::MetaState& state,
                                const std::map<meta::PartitionKey, meta::Assignment>& assignments) {
    std::map<std::string, double> counts{
        {"source_dead", 0}, {"target_dead", 0}, {"target_not_member", 0}};
    MonoTime now = clock_.now();
    auto status = [&](const NodeId& node) -> std::string {
        if (state.find_member(node) == nullptr) return "not_a_member";
        return state.is_dead(node, now, options_.dead_after) ? "dead" : "alive";
    };
    for (const auto& [key, assignment] : assignments) {
        if (assignment.target.value().empty()) continue;
        std::string from = status(assignment.owner);
        std::string to = status(assignment.target);
        std::string reason = from != "alive"        ? "source_dead"
                             : to == "not_a_member" ? "target_not_member"
                             : to == "dead"         ? "target_dead"
                                                    : "";
        if (reason.empty()) continue;
        counts[reason] += 1;
        if (!logged_blocked_.insert({key, reason}).second) continue;
        if (reason == "source_dead") {
            NARAD_LOG_ERROR(
                "controller: move blocked: its source is dead ('{}' partition {} from {} to {}); "
                "it finishes only if the destination can force-promote a complete copy, or once "
                "the source returns; abort it with narad cluster moves abort to keep the "
                "partition where it is",
                key.topic, key.partition.value(), assignment.owner.value(),
                assignment.target.value());
        } else {
            NARAD_LOG_ERROR(
                "controller: move blocked: its destination is {} ('{}' partition {} from {} to "
                "{}); the controller clears the target if it stays so past the dead-target bound",
                reason == "target_dead" ? "dead" : "not a member", key.topic, key.partition.value(),
                assignment.owner.value(), assignment.target.value());
        }
    }
    auto& blocked = metrics::Registry::global().gauge(
        "narad_moves_blocked",
        "Moves that cannot finish on their own, by reason (the destination's reasons on the "
        "destination, the controller's on the controller).",
        {"reason"});
    for (const auto& [reason, count] : counts) blocked.with({reason}).set(count);
}

void Controller::promote_learners() {
    meta::EtcdClient& client = store_.client();
    auto members = client.member_list();
    if (!members.is_ok()) return;
    for (const meta::Member& member : *members) {
        if (!member.is_learner || member.client_urls.empty()) continue;
        auto leader = client.status();
        auto learner = client.status(member.client_urls.front());
        if (!leader.is_ok() || !learner.is_ok()) continue;
        if (learner->raft_index + options_.promote_lag_entries < leader->raft_index) continue;
        Status promoted = client.member_promote(member.id);
        if (!promoted.is_ok()) {
            NARAD_LOG_INFO("etcd learner {} not promoted yet: {}", member.name,
                           promoted.to_string());
            continue;
        }
        NARAD_LOG_INFO("promoted etcd learner {} to voter", member.name);
    }
    // Member records follow etcd's list. Checked every pass rather than once after a promotion:
    // a joining node writes its record when it starts, which may be just after its promotion,
    // with the role it saw a moment before.
    members = client.member_list();
    if (!members.is_ok()) return;
    meta::MetaSnapshot snapshot = store_.snapshot();
    for (const meta::Member& member : *members) {
        if (member.is_learner) continue;
        const meta::MemberInfo* info = snapshot->find_member(NodeId(member.name));
        if (info == nullptr ||
            (info->etcd_role == meta::EtcdRole::voter && info->etcd_member_id == member.id)) {
            continue;
        }
        meta::MemberInfo updated = *info;
        updated.etcd_role = meta::EtcdRole::voter;
        updated.etcd_member_id = member.id;
        Status recorded = store_.put_member(updated);
        if (!recorded.is_ok()) {
            NARAD_LOG_WARN("recording {} as an etcd voter failed: {}", member.name,
                           recorded.to_string());
        }
    }
}

}  // namespace narad::cluster
