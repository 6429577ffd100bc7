#include "cluster/decommission.h"

#include <fmt/format.h>

namespace narad::cluster {
namespace {

bool dead_or_gone(const meta::MetaState& state, const NodeId& node, MonoTime now,
                  Millis dead_after) {
    return state.find_member(node) == nullptr || state.is_dead(node, now, dead_after);
}

bool receives(const meta::MetaState& state, const NodeId& node) {
    const meta::MemberInfo* member = state.find_member(node);
    return member != nullptr && !member->draining && state.is_live(node);
}

// Whether the drain is asked about before it starts (a refusal) or while it runs (a blocker).
enum class Drain { not_started, running };

void ownership_reasons(const DecommissionView& view, const NodeId& node, const DrainLoad& load,
                       Drain drain, std::vector<DecommissionReason>& out) {
    if (load.owned == 0) return;
    if (view.state.is_dead(node, view.now, view.dead_after)) {
        out.push_back({"owner_dead",
                       fmt::format("it is dead and owns {} partitions whose data is only on its "
                                   "disk; bring it back so they can move off, or cancel the "
                                   "decommission",
                                   load.owned)});
        return;
    }
    bool someone_receives = false;
    for (const auto& [other, member] : view.state.members) {
        if (other != node && receives(view.state, other)) someone_receives = true;
    }
    if (!someone_receives) {
        out.push_back({"no_receivers",
                       fmt::format("it owns {} partitions and no alive node that is not draining "
                                   "can take them; add a node or cancel a decommission",
                                   load.owned)});
        return;
    }
    if (drain == Drain::running && load.moving_off == 0 &&
        load.in_flight >= view.max_in_flight_moves) {
        out.push_back({"move_budget_full",
                       fmt::format("it owns {} partitions and all {} move slots are taken by other "
                                   "moves; it drains once they finish",
                                   load.owned, view.max_in_flight_moves)});
    }
}

void voter_reasons(const DecommissionView& view, const NodeId& node,
                   std::vector<DecommissionReason>& out) {
    if (view.etcd.voters.count(node) == 0) return;  // a learner or a plain client: no guard
    // A learner already catching up, or a node that can host one, takes the leaving voter's
    // place before it leaves.
    bool replaced = voter_replacement(view, node).has_value();
    for (const NodeId& learner : view.etcd.learners) {
        if (learner != node && view.state.is_live(learner)) replaced = true;
    }
    uint32_t remaining = static_cast<uint32_t>(view.etcd.voters.size()) - 1 + (replaced ? 1 : 0);
    uint32_t alive = replaced ? 1 : 0;
    for (const NodeId& voter : view.etcd.voters) {
        if (voter != node && view.state.is_live(voter)) ++alive;
    }
    if (remaining < view.min_voters) {
        out.push_back({"below_min_voters",
                       fmt::format("removing it would leave {} voters, fewer than the {} a cluster "
                                   "keeps; add a node first",
                                   remaining, view.min_voters)});
    }
    if (alive * 2 <= remaining) {
        out.push_back({"no_healthy_majority",
                       fmt::format("removing it would leave {} voters of which only {} are alive, "
                                   "not a majority; bring the dead voters back first",
                                   remaining, alive)});
    }
}

}  // namespace

DrainLoad drain_load(const meta::MetaState& state, const NodeId& node, MonoTime now,
                     Millis dead_after) {
    DrainLoad load;
    for (const auto& [key, assignment] : state.assignments) {
        bool moving = !assignment.target.value().empty();
        if (moving) ++load.in_flight;
        if (assignment.owner == node) {
            ++load.owned;
            if (moving) ++load.moving_off;
        }
        if (assignment.target == node) {
            ++load.inbound;
            if (dead_or_gone(state, assignment.owner, now, dead_after)) ++load.inbound_stuck;
        }
    }
    return load;
}

Result<EtcdConfiguration> read_etcd_configuration(meta::EtcdClient& client) {
    NARAD_ASSIGN_OR_RETURN(std::vector<meta::Member> members, client.member_list());
    EtcdConfiguration configuration;
    auto status = client.status();
    for (const meta::Member& member : members) {
        (member.is_learner ? configuration.learners : configuration.voters)
            .insert(NodeId(member.name));
        if (status.is_ok() && member.id == status->leader)
            configuration.leader = NodeId(member.name);
    }
    return configuration;
}

EtcdConfiguration configuration_from_records(const meta::MetaState& state) {
    EtcdConfiguration configuration;
    for (const auto& [node, member] : state.members) {
        if (member.etcd_role == meta::EtcdRole::voter) configuration.voters.insert(node);
        if (member.etcd_role == meta::EtcdRole::learner) configuration.learners.insert(node);
    }
    return configuration;
}

std::vector<DecommissionReason> node_status_reasons(const Result<NodeStatus>& status) {
    if (!status.is_ok()) {
        return {{"node_status_unavailable",
                 fmt::format("its dispatch backlog cannot be read ({}); records only its ingress "
                             "WAL holds would be lost with it; bring it back or cancel the "
                             "decommission",
                             status.status().to_string())}};
    }
    if (!status->draining) {
        return {{"dispatch_backlog",
                 "it does not refuse client produce yet (its replica has not applied the drain), "
                 "so its ingress WAL may still take records; it is removed once it does and its "
                 "WAL is empty"}};
    }
    if (status->produce_in_flight > 0) {
        return {{"dispatch_backlog",
                 fmt::format("it is still answering {} client produce requests it admitted before "
                             "it started refusing them; it is removed once they are answered and "
                             "its ingress WAL is empty",
                             status->produce_in_flight)}};
    }
    if (status->dispatch_backlog > 0) {
        return {{"dispatch_backlog",
                 fmt::format("its ingress WAL still holds {} accepted records not yet handed to "
                             "their owners; it is removed once they are",
                             status->dispatch_backlog)}};
    }
    return {};
}

bool reason_clears_by_itself(std::string_view code) {
    return code == "dispatch_backlog" || code == "move_target" || code == "move_budget_full" ||
           code == "leader_transfer";
}

std::optional<NodeId> voter_replacement(const DecommissionView& view, const NodeId& leaving) {
    for (const auto& [node, member] : view.state.members) {
        if (node == leaving || !receives(view.state, node)) continue;
        if (member.etcd_role != meta::EtcdRole::none) continue;
        if (view.etcd.voters.count(node) > 0 || view.etcd.learners.count(node) > 0) continue;
        return node;
    }
    return std::nullopt;
}

std::vector<DecommissionReason> decommission_refusals(const DecommissionView& view,
                                                      const NodeId& node) {
    std::vector<DecommissionReason> out;
    voter_reasons(view, node, out);
    DrainLoad load = drain_load(view.state, node, view.now, view.dead_after);
    ownership_reasons(view, node, load, Drain::not_started, out);
    return out;
}

std::vector<DecommissionReason> decommission_blockers(const DecommissionView& view,
                                                      const NodeId& node) {
    std::vector<DecommissionReason> out;
    DrainLoad load = drain_load(view.state, node, view.now, view.dead_after);
    ownership_reasons(view, node, load, Drain::running, out);
    if (load.inbound_stuck > 0) {
        out.push_back({"move_target",
                       fmt::format("{} moves aim at it, {} of them from a source that is dead or "
                                   "no longer a member; it may hold the only live copy of those "
                                   "partitions, so the leader does not clear them, and it waits "
                                   "for each copy to be force-promoted and moved off, or for the "
                                   "source to come back. If dropping that copy is really "
                                   "intended, abort the move by hand (narad cluster moves abort "
                                   "<topic> <partition>)",
                                   load.inbound, load.inbound_stuck)});
    } else if (load.inbound > 0) {
        out.push_back({"move_target",
                       fmt::format("{} moves still aim at it; the leader clears them and removes "
                                   "it once they are gone",
                                   load.inbound)});
    }
    voter_reasons(view, node, out);
    if (out.empty() && view.etcd.leader == node && view.etcd.voters.count(node) > 0) {
        out.push_back(
            {"leader_transfer", "it leads the cluster; leadership moves to another voter first"});
    }
    return out;
}

}  // namespace narad::cluster
