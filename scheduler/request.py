"""SchedulingRequest: the question filters and weighers answer for one instance.

It wraps the RequestSpec with what the scheduler works out while it runs:
the resources one instance needs, the hosts already chosen for earlier
instances of the same request (so affinity holds inside a multi-create), and
where the instances named in scheduler hints run.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Mapping

from rpc_schemas.request_spec import RequestSpec
from scheduler.host_state import HOST_LEVEL

DIFFERENT_HOST_HINT = 'different_host'
SAME_HOST_HINT = 'same_host'


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

    def group_level(self) -> str | None:
        """The failure-domain level of the group's policy; None for the host level."""
        group = self.spec.instance_group
        level = group.level if group is not None else None
        return None if level in (None, HOST_LEVEL) else level

    def group_domains(self) -> tuple[set[str], set[str]]:
        """(domains at the group's level its hosts are in, hosts whose domain is unknown).

        At the host level the domains are the hosts themselves.
        """
        level = self.group_level()
        hosts = self.group_hosts()
        if level is None:
            return hosts, set()
        known, unknown = set(), set()
        for host in hosts:
            domain = self.domain_of_host(host, level)
            if domain is None:
                unknown.add(host)
            else:
                known.add(domain)
        return known, unknown
