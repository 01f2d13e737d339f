"""SchedulingRequest: the question filters and weighers answer for one instance.

It wraps the RequestSpec with what the scheduler works out while it runs:
the resources one instance needs, the hosts already chosen for earlier
instances of the same request (so affinity holds inside a multi-create), and
where the instances named in scheduler hints run.
"""
from __future__ import annotations

import dataclasses
from typing import Mapping

from rpc_schemas.request_spec import RequestSpec

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
