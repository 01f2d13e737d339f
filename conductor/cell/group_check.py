"""Before a reschedule uses an alternate: would it break the request's server group's hard policy?

The cell conductor never reads the API database, and members may run in
other cells. What it needs comes with the request spec (the super
conductor fills its server group: policy, level, ``max_per_domain``, the
members' instance uuids and the domains they held when the scheduler
chose), and the rest from Placement, which is no upcall: where each other
member's allocations are now (its compute node provider), and which
aggregates that provider and the alternate's are in. At a level above the
host the domains are the aggregates among the group's known domains; at
the host level they are the compute nodes themselves. A member with no
allocation (failed, deleted, between two hosts) holds nothing. Where an
instance is, is the scheduler's answer too (``ConsumerAllocations.node``),
and whether the alternate keeps the policy is the scheduler's rule
(``cellplane.server_group_policy``). Soft policies are never checked: they
are preferences.
"""
from __future__ import annotations

import collections

from cellplane import server_group_policy as policy
from placement.client import PlacementClient, PlacementClientError, PlacementUnreachable
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection


def breaks_group(placement: PlacementClient, spec: RequestSpec, instance_uuid: str,
                 alternate: Selection) -> str | None:
    """Why ``alternate`` breaks the group's hard policy for ``instance_uuid``; None if it does not."""
    group = spec.instance_group
    if group is None or not policy.is_hard(group):
        return None
    others = [m for m in group.members if m != instance_uuid]
    if not others:
        return None
    label = group.name or group.uuid
    level = group.level_name
    try:
        nodes = {m: node for m in others
                 if (node := placement.get_allocations(m).node()) is not None}
        if group.domain_level is None:
            where = {m: {node} for m, node in nodes.items()}
            alternate_domains = {alternate.compute_node_uuid}
        else:
            known = set(group.domains)
            aggregates = {}
            for node in {*nodes.values(), alternate.compute_node_uuid}:
                aggregates[node] = set(placement.get_aggregates(node)[0]) & known
            where = {m: aggregates[node] for m, node in nodes.items()}
            alternate_domains = aggregates[alternate.compute_node_uuid]
    except (PlacementUnreachable, PlacementClientError) as exc:
        return (f'{group.policy} at {level}: the members of group {label} could not be '
                f'located in Placement ({exc}), so the alternate cannot be shown to '
                f'keep the policy')
    counts = collections.Counter(d for domains in where.values() for d in domains)
    if policy.is_anti(group):
        full = policy.full_domains(group, counts) & alternate_domains
        if full:
            holders = sorted(m for m, domains in where.items() if domains & full)
            return (f'anti-affinity at {level}: {alternate.service_host} is in the '
                    f'{level} of member(s) {", ".join(holders)} of group {label}')
        return None
    if not counts and group.domain_level is not None:
        # No member located: the places they held when the scheduler chose.
        counts = collections.Counter(set(group.domains))
    if not policy.allows(group, counts, alternate_domains):
        return (f'affinity at {level}: {alternate.service_host} is outside the {level} '
                f'of the members of group {label}')
    return None
