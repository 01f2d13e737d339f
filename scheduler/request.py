"""SchedulingRequest: the question filters and weighers answer for one instance.

It wraps the RequestSpec with what the scheduler works out while it runs:
the resources one instance needs, the hosts already chosen for earlier
instances of the same request (so affinity holds inside a multi-create), and
where the instances named in scheduler hints run.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Mapping

from rpc_schemas.request_spec import RequestSpec
from scheduler.host_state import HOST_LEVEL

DIFFERENT_HOST_HINT = 'different_host'
SAME_HOST_HINT = 'same_host'
# LEVEL:INSTANCE; Placement answers them (member_of, member_of=!in:).
DIFFERENT_DOMAIN_HINT = 'different_domain'
SAME_DOMAIN_HINT = 'same_domain'


@dataclasses.dataclass
class SchedulingRequest:
    spec: RequestSpec
    # Resource class -> amount one instance needs (from the candidates query).
    resources: Mapping[str, int]
    instance_uuid: str | None = None
    # Hosts claimed for the earlier instances of this request, in order.
    chosen_hosts: list[str] = dataclasses.field(default_factory=list)
    # Instance UUID -> host it runs on, for the instances scheduler hints name.
    instance_hosts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # (host, level) -> the host's failure-domain aggregate at that level.
    domain_of_host: Callable[[str, str], str | None] = lambda host, level: None
    # Where the group's other members are, read by the scheduler itself
    # (``scheduler.server_group``): domain -> members, and hosts whose domain
    # is unknown. None: only what the spec's group says (its ``hosts``).
    member_counts: Mapping[str, int] | None = None
    member_unknown: frozenset[str] = frozenset()
    # Domains another scheduler filled while this request ran.
    full_domains: frozenset[str] = frozenset()
    # group_domain_counts, worked out once: filters and weighers ask it for
    # every host, and nothing above changes while one instance is placed.
    _domain_counts: tuple[collections.Counter, set[str]] | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False)

    def hint(self, name: str) -> list[str]:
        return list(self.spec.scheduler_hints.get(name) or ())

    def hosts_of_hinted(self, name: str) -> set[str]:
        """Hosts of the instances listed in hint ``name`` that could be located."""
        return {self.instance_hosts[u] for u in self.hint(name)
                if u in self.instance_hosts}

    def group_hosts(self) -> set[str]:
        """Hosts of the server group's members, including this request's own choices."""
        group = self.spec.instance_group
        hosts = set(group.hosts) if group is not None else set()
        return hosts | set(self.chosen_hosts)

    def group_soft(self) -> bool:
        group = self.spec.instance_group
        return group is not None and group.soft

    def group_level(self) -> str | None:
        """The failure-domain level of the group's policy; None for the host level."""
        group = self.spec.instance_group
        level = group.level if group is not None else None
        return None if level in (None, HOST_LEVEL) else level

    def group_domain_of(self, host: str) -> str | None:
        level = self.group_level()
        return host if level is None else self.domain_of_host(host, level)

    def group_domain_counts(self) -> tuple[collections.Counter, set[str]]:
        """(domain -> members in it, this request's choices included; hosts whose domain is unknown).

        At the host level the domains are the hosts themselves.
        """
        if self._domain_counts is None:
            self._domain_counts = self._count_group_domains()
        return self._domain_counts

    def soft_group_members_near(self, host: str, policy: str) -> int | None:
        """For a soft group of ``policy``: its members in ``host``'s domain; None otherwise or if unknown."""
        group = self.spec.instance_group
        if group is None or not group.soft or group.policy != policy:
            return None
        domain = self.group_domain_of(host)
        if domain is None:
            return None
        counts, _ = self.group_domain_counts()
        return counts[domain]

    def _count_group_domains(self) -> tuple[collections.Counter, set[str]]:
        counts: collections.Counter = collections.Counter()
        unknown: set[str] = set()
        group = self.spec.instance_group
        if group is None:
            return counts, unknown
        if self.member_counts is not None:
            counts.update(self.member_counts)
            unknown |= set(self.member_unknown)
            hosts = list(self.chosen_hosts)
        else:
            hosts = list(group.hosts) + list(self.chosen_hosts)
        for host in hosts:
            domain = self.group_domain_of(host)
            if domain is None:
                unknown.add(host)
            else:
                counts[domain] += 1
        return counts, unknown

    def group_domains(self) -> tuple[set[str], set[str]]:
        """(domains at the group's level its members are in, hosts whose domain is unknown)."""
        counts, unknown = self.group_domain_counts()
        return set(counts), unknown

    def group_full(self, domain: str) -> bool:
        """Anti-affinity: the domain holds ``max_per_domain`` members already."""
        group = self.spec.instance_group
        if group is None:
            return False
        if domain in self.full_domains:
            return True
        counts, _ = self.group_domain_counts()
        return counts[domain] >= group.max_per_domain
