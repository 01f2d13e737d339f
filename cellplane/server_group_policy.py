"""The hard server-group policies as one rule: from members per domain, which domains a member may join.

Pure (no I/O): the scheduler (its filters, the Placement query, the places
it takes) and the cell conductor (an alternate before a reschedule) count
the members per domain each from what it can read, and ask this module the
same two questions:

- ``full_domains``: under hard anti-affinity, the domains holding
  ``max_per_domain`` members already (no further member may join them);
- ``allows``: may a member go to a host in these domains (at the group's
  level: one domain, or none known to hold a member)?

Under hard affinity a member must join a domain that holds members, unless
none does (the first member goes anywhere). Soft policies are preferences:
they allow everything. The database keeps the same rule under concurrency
with ``place_limit`` slots per domain (``cellplane.objects.server_group_places``).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from rpc_schemas.request_spec import ANTI_AFFINITY, InstanceGroup


def is_hard(group: InstanceGroup) -> bool:
    return not group.soft


def is_anti(group: InstanceGroup) -> bool:
    return group.policy == ANTI_AFFINITY


def full_domains(group: InstanceGroup, counts: Mapping[str, int]) -> set[str]:
    """Hard anti-affinity: the domains that hold ``max_per_domain`` members (none otherwise)."""
    if not (is_hard(group) and is_anti(group)):
        return set()
    return {d for d, n in counts.items() if n >= group.max_per_domain}


def member_domains(group: InstanceGroup, counts: Mapping[str, int]) -> set[str]:
    """Hard affinity: the domains holding members, one of which a new member must join (none otherwise)."""
    if not is_hard(group) or is_anti(group):
        return set()
    return {d for d, n in counts.items() if n > 0}


def allows(group: InstanceGroup, counts: Mapping[str, int], domains: Iterable[str]) -> bool:
    """Whether a member may go to a host that is in ``domains`` at the group's level.

    ``counts`` is the other members per domain. A host is normally in one
    domain of a level; ``domains`` empty means it is in none that holds a
    member.
    """
    if not is_hard(group):
        return True
    domains = set(domains)
    if is_anti(group):
        return not (domains & full_domains(group, counts))
    joined = member_domains(group, counts)
    return not joined or bool(domains & joined)


def place_limit(group: InstanceGroup) -> int | None:
    """Places one domain offers the members: ``max_per_domain`` under anti-affinity, None (no limit) under affinity."""
    return group.max_per_domain if is_anti(group) else None
