"""A server group as one instance's filters and weighers see it: members per domain, this request's choices included.

The members' counts come from ``GroupPlaces`` (the claim walk puts them on
the ``SchedulingRequest``), else from the hosts the spec's group names; the
hosts this request already chose for its earlier instances are added, so a
multi-create keeps the policy among its own instances. Whether a domain
may take the member is ``cellplane.server_group_policy``'s answer.
"""
from __future__ import annotations

import collections

from cellplane import server_group_policy as policy
from scheduler.request import SchedulingRequest


def domain_of(request: SchedulingRequest, host: str) -> str | None:
    """The host's domain at the group's level (the host itself at the host level)."""
    group = request.spec.instance_group
    level = group.domain_level if group is not None else None
    return host if level is None else request.domain_of_host(host, level)


def domain_counts(request: SchedulingRequest) -> tuple[collections.Counter, set[str]]:
    """(domain -> members in it, this request's choices included; hosts whose domain is unknown)."""
    if request.group_counts is None:
        request.group_counts = _count(request)
    return request.group_counts


def allows(request: SchedulingRequest, domain: str) -> bool:
    """Whether the hard policy lets the member join ``domain`` (another scheduler's filling included)."""
    group = request.spec.instance_group
    if group is None:
        return True
    if policy.is_anti(group) and domain in request.full_domains:
        return False
    counts, _ = domain_counts(request)
    return policy.allows(group, counts, [domain])


def soft_members_near(request: SchedulingRequest, host: str, policy_name: str) -> int | None:
    """For a soft group of ``policy_name``: its members in ``host``'s domain; None otherwise or if unknown."""
    group = request.spec.instance_group
    if group is None or not group.soft or group.policy != policy_name:
        return None
    domain = domain_of(request, host)
    if domain is None:
        return None
    counts, _ = domain_counts(request)
    return counts[domain]


def _count(request: SchedulingRequest) -> tuple[collections.Counter, set[str]]:
    counts: collections.Counter = collections.Counter()
    unknown: set[str] = set()
    group = request.spec.instance_group
    if group is None:
        return counts, unknown
    if request.member_counts is not None:
        counts.update(request.member_counts)
        unknown |= set(request.member_unknown)
        hosts = list(request.chosen_hosts)
    else:
        hosts = list(group.hosts) + list(request.chosen_hosts)
    for host in hosts:
        domain = domain_of(request, host)
        if domain is None:
            unknown.add(host)
        else:
            counts[domain] += 1
    return counts, unknown
